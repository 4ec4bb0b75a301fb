"""`gt4py.next.constructors`: the field and connectivity constructors."""

from stencilchain.compat.gt4py._connectivity import as_connectivity
from stencilchain.compat.gt4py._fields import as_field, empty, full, ones, zeros

__all__ = ["as_connectivity", "as_field", "empty", "full", "ones", "zeros"]
