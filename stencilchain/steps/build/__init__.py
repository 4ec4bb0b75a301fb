"""The one build skeleton under both compiler families.

plan          the identity of a build: entry point, cache key, module name, build context
cached_build  a build through the build cache: load, discard a damaged folder, rebuild
tools         the tools of a build and their cheap identities (part of every key)
runner        the processes of a build and its log (build.log)
validation    the checks of a compiler's settings, run once in its __post_init__
"""
