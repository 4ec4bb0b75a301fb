"""`gt4py.next.experimental`: where gt4py 1.2 keeps `concat_where` and `as_offset`."""

from stencilchain.compat.gt4py._functions import as_offset, concat_where

__all__ = ["as_offset", "concat_where"]
