"""What a toolchain does around its workflow's builds, as one value the container wires:
after a new build, keep the persistent caches under their size limit; a cached module that
cannot be loaded (damaged on disk) is discarded and built again, once."""

from __future__ import annotations

import dataclasses
import logging

from stencilchain.steps.caches.cache_root import CacheLocation
from stencilchain.steps.stages import CompiledArtifact

_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class BuildPolicy:
    """`prune`: the persistent caches to keep under `max_size` bytes after each new build
    (None: never pruned, e.g. a session cache, which is removed at exit). `rebuild_damaged`:
    whether a cached module that cannot be loaded is built again (once) instead of failing."""

    prune: CacheLocation | None = None
    max_size: int | None = None
    rebuild_damaged: bool = True

    def after_build(self, artifact: CompiledArtifact) -> None:
        """Prune after the new build `artifact`, if it is in the pruned caches' build folder
        (not for a compilation step overridden to build elsewhere)."""
        location, limit = self.prune, self.max_size
        if location is None or limit is None or not artifact.built:
            return
        if artifact.build_dir.parent != location.builds:
            return
        from stencilchain.steps.caches.pruning import prune_after_build  # only with a limit

        result = prune_after_build(location, limit, artifact.build_dir)
        if result is not None and result.removal.removed:
            _log.info(
                "pruned %d cache entries (%d bytes) to keep %s under %d bytes; %d bytes left",
                len(result.removal.removed),
                result.removal.freed,
                location.root,
                limit,
                result.remaining,
            )

    def discard_unloadable(self, artifact: CompiledArtifact, error: Exception) -> bool:
        """Whether to build `artifact` again after loading it failed with `error`: only a
        module found in the cache (one just built that cannot load is an error), which is
        discarded first."""
        if artifact.built or not self.rebuild_damaged:
            return False
        _log.warning(
            "build cache entry %s: its module cannot be loaded (%s); it is built again",
            artifact.build_dir,
            error,
        )
        from stencilchain.steps.build.cached_build import discard_build

        discard_build(artifact)
        return True
