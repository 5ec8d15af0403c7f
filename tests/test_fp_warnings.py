"""IEEE results without numpy's warnings: ``x / 0``, ``log(0)``, an overflow or the mean of
an empty tensor give inf/NaN silently inside lucid, as in torch, on every device, while a
user's own numpy calls still warn."""

from __future__ import annotations

import subprocess
import sys

import pytest
from devices import DEVICES

SCRIPT = """
import math, numpy as np, lucid
dev = {dev!r}
x = lucid.tensor([1.0, 0.0, -1.0], device=dev)
for dt in (lucid.float32, lucid.float64):
    if dev == "gpu" and dt is lucid.float64:
        continue
    y = x.to(dt)
    r = [y / 0, y.log(), y.sqrt(), y.reciprocal(), (y * 1e30) * 1e30, y.exp() ** 1e6,
         lucid.zeros(0, dtype=dt, device=dev).mean(), lucid.zeros(0, 3, dtype=dt,
         device=dev).mean(0), lucid.ones(1, dtype=dt, device=dev).var(),
         lucid.zeros(0, dtype=dt, device=dev).std(), y / y]
    vals = [t.tolist() for t in r]
    assert vals[0][0] == math.inf and math.isnan(vals[0][1]) and vals[0][2] == -math.inf
    assert vals[1][:2] == [0.0, -math.inf] and math.isnan(vals[1][2])
    assert math.isnan(vals[6]) and math.isnan(vals[8]) and math.isnan(vals[9]), vals
np.array([1.0]) / 0
"""


@pytest.mark.parametrize("dev", DEVICES)
def test_no_numpy_warning_from_lucid_internals(dev: str) -> None:
    r = subprocess.run([sys.executable, "-W", "default", "-c", SCRIPT.format(dev=dev)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "Warning" in ln and "MLX" not in ln]
    # the one warning left is the user's own numpy division, after lucid's work
    assert len(lines) == 1 and "divide by zero encountered in divide" in lines[0], r.stderr
    assert "lucid" not in lines[0]
