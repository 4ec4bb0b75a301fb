"""Workflow vocabulary: a typed step protocol, chaining, and a cached step."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

StartT = TypeVar("StartT")
StartT_contra = TypeVar("StartT_contra", contravariant=True)
EndT = TypeVar("EndT")
EndT_co = TypeVar("EndT_co", covariant=True)
MidT = TypeVar("MidT")


class Step(Protocol[StartT_contra, EndT_co]):
    """One stage of a toolchain: a pure callable from one stage value to the next."""

    def __call__(self, inp: StartT_contra, /) -> EndT_co: ...


@dataclasses.dataclass(frozen=True)
class ChainedStep(Generic[StartT, MidT, EndT]):
    """`first` then `second`."""

    first: Step[StartT, MidT]
    second: Step[MidT, EndT]

    def __call__(self, inp: StartT, /) -> EndT:
        return self.second(self.first(inp))


def chain(first: Step[StartT, MidT], second: Step[MidT, EndT]) -> ChainedStep[StartT, MidT, EndT]:
    """Compose two steps into one."""
    return ChainedStep(first, second)


class TextCache(Protocol):
    """A persistent store of text entries (the translation cache satisfies it)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str) -> None: ...


@dataclasses.dataclass(frozen=True)
class CachedStep(Generic[StartT, EndT]):
    """Wraps `step` in a persistent cache.

    `key` maps an input to a content hash of everything that changes the output;
    `encode`/`decode` turn the output into text and back (never pickle).
    """

    step: Step[StartT, EndT]
    cache: TextCache
    key: Callable[[StartT], str]
    encode: Callable[[EndT], str]
    decode: Callable[[StartT, str], EndT]

    def __call__(self, inp: StartT, /) -> EndT:
        key = self.key(inp)
        text = self.cache.get(key)
        if text is not None:
            try:
                return self.decode(inp, text)
            except (ValueError, KeyError, TypeError):
                pass  # an entry we cannot read is a miss; it is overwritten below
        out = self.step(inp)
        self.cache.put(key, self.encode(out))
        return out
