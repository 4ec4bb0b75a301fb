"""gt4py's declarations: `Dimension(name, kind=DimensionKind.VERTICAL)`, `Dims[...]`,
`Field[Dims[Cell, K], float64]` and its scalar types (NumPy's, as in gt4py), each turned
into stencilchain's own (a Dimension, an ir.FieldType, a ScalarType)."""

from __future__ import annotations

import builtins
import enum
import typing
from typing import Any

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program import dimensions, dtypes, ir
from stencilchain.program.types import Field as _ScField


class DimensionKind(enum.Enum):
    """gt4py's kinds of dimension; each is stencilchain's kind of the same name."""

    HORIZONTAL = dimensions.HORIZONTAL
    VERTICAL = dimensions.VERTICAL
    LOCAL = dimensions.LOCAL


class GridType(enum.Enum):
    """gt4py's `grid_type=` of a program: informative here (the dimensions say it all)."""

    CARTESIAN = "cartesian"
    UNSTRUCTURED = "unstructured"


def Dimension(
    value: str, kind: DimensionKind | str = DimensionKind.HORIZONTAL
) -> dimensions.Dimension:
    """`Dimension("K", kind=DimensionKind.VERTICAL)`: stencilchain's Dimension of that kind."""
    if isinstance(kind, DimensionKind):
        kind = kind.value
    return dimensions.Dimension(value, kind=kind)


def flip_staggered(dim: dimensions.Dimension) -> dimensions.Dimension:
    """gt4py's `flip_staggered(I)`: the staggered counterpart of `dim` (stencilchain's
    `sc.staggered`, named `IHalf`), or of a staggered one its base."""
    return dimensions.staggered(dim)


def is_staggered(dim: dimensions.Dimension) -> builtins.bool:
    """gt4py's `is_staggered(dim)`: whether `dim` is a staggered dimension."""
    return dim.is_staggered


def as_non_staggered(dim: dimensions.Dimension) -> dimensions.Dimension:
    """gt4py's `as_non_staggered(dim)`: `dim`, or of a staggered one its base."""
    return dimensions.non_staggered(dim)


class Dims:
    """`Dims[Cell, K]`: the dimensions of a field type, `Field[Dims[Cell, K], float64]`."""

    __slots__ = ("dims",)

    def __init__(self, dims: tuple[dimensions.Dimension, ...]) -> None:
        self.dims = dims

    def __class_getitem__(cls, item: Any) -> Dims:
        items = item if isinstance(item, tuple) else (item,)
        for d in items:
            if not isinstance(d, dimensions.Dimension):
                raise DefinitionError(f"Dims[...]: expected Dimensions, got {d!r}")
        return cls(items)

    def __repr__(self) -> str:
        return f"Dims[{', '.join(d.name for d in self.dims)}]"


# gt4py's scalar types are NumPy's (so `np.zeros(n, dtype=float64)` works on them); those
# stencilchain has map to its own, the others are named where they are refused.
_SCALARS: dict[object, dtypes.ScalarType] = {
    np.float64: dtypes.float64,
    np.float32: dtypes.float32,
    np.int32: dtypes.int32,
    np.int64: dtypes.int64,
    np.bool_: dtypes.bool_,
    builtins.float: dtypes.float64,
    builtins.int: dtypes.int64,
    builtins.bool: dtypes.bool_,
}
_REFUSED = (np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64)


def scalar_type(dtype: object, where: str) -> dtypes.ScalarType:
    """stencilchain's dtype for a gt4py one (a NumPy type or its name, `float`, `int`,
    `bool`, or stencilchain's own); others are a DefinitionError naming them."""
    if isinstance(dtype, dtypes.ScalarType):
        return dtype
    if isinstance(dtype, str):  # gt4py also reads a dtype's name, `Field[[I], "float64"]`
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise DefinitionError(f"{where}: {dtype!r} names no dtype") from None
    found = _SCALARS.get(dtype)
    if found is not None:
        return found
    if isinstance(dtype, np.dtype):
        by_name = dtypes.from_numpy(dtype)
        if by_name is not None:
            return by_name
    if dtype in _REFUSED:
        name = getattr(dtype, "__name__", repr(dtype))
        raise DefinitionError(
            f"{where}: dtype {name} is not supported by stencilchain (its dtypes are "
            "float32, float64, int32, int64 and bool); use one of those"
        )
    raise DefinitionError(f"{where}: expected a dtype such as float64, got {dtype!r}")


class Field:
    """`Field[Dims[Cell, K], float64]`: the annotation of a field, as stencilchain's
    `sc.Field[[Cell, K], sc.float64]` (zero dimensions, `Field[Dims[()], ...]`, with the
    field values of the language issue)."""

    def __class_getitem__(cls, item: Any) -> ir.FieldType | GenericField:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise DefinitionError("write a field type as Field[Dims[I, J], float64]")
        dims, dtype = item
        if isinstance(dtype, typing.TypeVar):  # a generic alias, `CellKField[float64]` later
            return GenericField(dims, dtype)
        if isinstance(dims, Dims):
            dims = list(dims.dims)
        elif isinstance(dims, dimensions.Dimension):
            dims = [dims]
        elif not isinstance(dims, (list, tuple)):
            raise DefinitionError(f"Field[...]: expected Dims[...], got {dims!r}")
        made: ir.FieldType = _ScField.__class_getitem__(
            (list(dims), scalar_type(dtype, "Field[...]"))
        )
        return made


class GenericField:
    """`Field[Dims[Cell, K], T]` over a TypeVar `T`: a generic alias (icon4py's
    `CellKField = Field[Dims[CellDim, KDim], T]`), a field type once given its dtype,
    `CellKField[float64]`."""

    __slots__ = ("dims", "dtype")

    def __init__(self, dims: object, dtype: typing.TypeVar) -> None:
        self.dims, self.dtype = dims, dtype

    def __getitem__(self, dtype: object) -> ir.FieldType:
        constraints = self.dtype.__constraints__
        if constraints and dtype not in constraints:
            allowed = ", ".join(getattr(c, "__name__", repr(c)) for c in constraints)
            raise DefinitionError(
                f"{self!r}[{getattr(dtype, '__name__', dtype)!s}]: {self.dtype.__name__} is "
                f"one of {allowed}"
            )
        made = Field.__class_getitem__((self.dims, dtype))
        assert isinstance(made, ir.FieldType)
        return made

    def __repr__(self) -> str:
        return f"Field[{self.dims!r}, {self.dtype!r}]"


def annotation(value: object, where: str) -> object:
    """A gt4py annotation in stencilchain's terms: a dtype mapped (`float64`, `float`), a
    tuple annotation element by element, anything else as it is."""
    if isinstance(value, (ir.FieldType, dtypes.ScalarType)) or value is None:
        return value
    origin = getattr(value, "__origin__", None)
    args = getattr(value, "__args__", None)
    if origin is tuple and args is not None:
        return tuple.__class_getitem__(tuple(annotation(a, where) for a in args))
    if value in _SCALARS and value not in (builtins.float, builtins.int, builtins.bool):
        return _SCALARS[value]
    if value in _REFUSED:
        scalar_type(value, where)
    return value
