"""The one build skeleton under both compiler families (GTFN's CMake, DaCe).

compiler_step  CompilerStep, the base of both compilers: plan, then build through the cache
plan           the identity of a build: entry point, cache key, module name, build context
cached_build   a build through the build cache: load, discard a damaged folder, rebuild
tools          the tools of a build and their cheap identities (part of every key)
runner         the processes of a build, with an explicit environment, and its build.log
validation     the checks of a compiler's settings, run once in its __post_init__
precompiled    a unit's system headers, precompiled once per build context (a `pch-*` folder)
linker         GNU gold for the links, where the compiler has it
"""
