"""nn functional tests run on every device (``devices.DEVICES``: "gpu" too where MLX is
installed); on a gpu stream without float64 they are skipped, as they build float64 data
against float64 numpy references (the op table covers that stream in float32)."""

from __future__ import annotations

import pytest
from devices import DEVICES


@pytest.fixture(params=DEVICES)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param
