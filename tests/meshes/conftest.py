from __future__ import annotations

import pytest

from stencilchain import meshes

from ._support import ALL, IDS, build


@pytest.fixture(params=ALL, ids=IDS)
def mesh(request: pytest.FixtureRequest) -> meshes.Mesh:
    kind, size = request.param
    return build(kind, size)
