"""Enumerated settings shared by steps and configuration."""

from __future__ import annotations

import enum


class BuildType(enum.Enum):
    DEBUG = "debug"
    RELEASE = "release"
    RELWITHDEBINFO = "relwithdebinfo"
    MINSIZEREL = "minsizerel"

    @property
    def cmake_name(self) -> str:
        return {
            "debug": "Debug",
            "release": "Release",
            "relwithdebinfo": "RelWithDebInfo",
            "minsizerel": "MinSizeRel",
        }[self.value]


class CacheLifetime(enum.Enum):
    SESSION = "session"  # a temporary folder removed at exit
    PERSISTENT = "persistent"  # the configured cache dir, kept between runs


class DataLayout(enum.Enum):
    STRIDED = "strided"  # any strides
    UNIT_STRIDE = "unit_stride"  # the innermost dimension has unit stride
