"""Modules on the "gpu" device: ``to`` keeps every Parameter and Buffer's identity, state
dicts and checkpoints cross devices (and load where MLX is missing), mixed devices raise."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 3)
        self.register_buffer("scratch", lucid.zeros(2), persistent=False)
        self.plain = lucid.zeros(1)  # a plain tensor attribute is not moved

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


def _tensors(m: nn.Module) -> dict:
    return dict(list(m.named_parameters()) + list(m.named_buffers()))


def _step(m: nn.Module, opt: lucid.optim.Optimizer, device: str) -> float:
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.standard_normal((2, 1, 8, 8)).astype(np.float32), device=device)
    opt.zero_grad()
    loss = F.cross_entropy(m(x), lucid.tensor([0, 2], device=device))
    loss.backward()
    opt.step()
    return loss.item()


def test_to_gpu_moves_everything_and_keeps_identity() -> None:
    lucid.manual_seed(0)
    m = Net()
    before = {k: id(v) for k, v in _tensors(m).items()}
    opt = lucid.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)  # built before the move
    assert m.to("gpu") is m
    now = _tensors(m)
    assert set(now) == set(before) and "scratch" in now
    assert all(id(v) == before[k] and v.device.type == "gpu" for k, v in now.items())
    assert m.plain.device.type == "cpu"
    w0 = m.fc.weight.detach().numpy().copy()
    _step(m, opt, "gpu")
    assert m.fc.weight.device.type == "gpu" and m.fc.weight.grad.device.type == "gpu"
    assert not np.allclose(m.fc.weight.detach().numpy(), w0)  # the optimizer saw the move
    assert opt.state[m.fc.weight]["momentum_buffer"].device.type == "gpu"
    m.cpu()
    assert all(id(v) == before[k] and v.device.type == "cpu" for k, v in _tensors(m).items())
    _step(m, opt, "cpu")  # and back
    for name in ("cuda", "mps"):
        assert m.to(name).fc.weight.device.type == "gpu"
    assert m.cpu().cuda().fc.bias.device.type == "gpu" and m.gpu().fc.bias.device == "gpu"


def test_state_dict_round_trips_across_devices() -> None:
    lucid.manual_seed(0)
    src = Net().to("gpu")
    _step(src, lucid.optim.Adam(src.parameters()), "gpu")
    sd = src.state_dict()
    assert list(sd) == list(Net().state_dict())
    assert all(v.device.type == "gpu" for v in sd.values())
    dst = Net()  # on cpu: loaded values move to each target's device
    ids = {k: id(v) for k, v in _tensors(dst).items()}
    dst.load_state_dict(sd)
    assert all(v.device.type == "cpu" and id(v) == ids[k] for k, v in _tensors(dst).items())
    for k, v in dst.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
    back = Net().to("gpu")
    back.load_state_dict(dst.state_dict())
    assert all(v.device.type == "gpu" for v in _tensors(back).values())
    x = lucid.randn(3, 1, 8, 8)
    for mm in (src, dst, back):
        mm.eval()
    np.testing.assert_allclose(back(x.to("gpu")).detach().numpy(), dst(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(src(x.gpu()).detach().numpy(), dst(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_load_torch_state_dict_into_gpu_model(torch: object) -> None:
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))  # type: ignore
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).to("gpu")
    m.load_state_dict(t.state_dict())
    assert all(v.device.type == "gpu" for v in m.state_dict().values())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    t.eval()
    m.eval()
    want = t(torch.tensor(x)).detach().numpy()  # type: ignore
    np.testing.assert_allclose(m(lucid.tensor(x, device="gpu")).detach().numpy(), want,
                               rtol=1e-5, atol=1e-6)


def test_mixed_device_model_and_input_raises() -> None:
    m = Net().to("gpu")
    with pytest.raises(RuntimeError, match="same device, but found at least two devices"):
        m(lucid.randn(1, 1, 8, 8))


def test_checkpoints_load_back_on_gpu_and_map_to_cpu(tmp_path: object) -> None:
    m = Net().to("gpu")
    buf = io.BytesIO()
    lucid.save({"model": m.state_dict(), "step": 3}, buf)
    buf.seek(0)
    ck = lucid.load(buf)
    assert ck["step"] == 3 and ck["model"]["fc.weight"].device.type == "gpu"
    buf.seek(0)
    ck = lucid.load(buf, map_location="cpu")
    assert ck["model"]["fc.weight"].device.type == "cpu"
    buf.seek(0)
    assert lucid.load(buf, map_location={"gpu": "cpu"})["model"]["bn.weight"].device == "cpu"


def test_gpu_checkpoint_loads_where_mlx_is_missing(tmp_path: object) -> None:
    lucid.manual_seed(0)
    m = Net().to("gpu")
    _step(m, lucid.optim.SGD(m.parameters(), lr=0.1), "gpu")
    path = os.path.join(str(tmp_path), "ck.lucid")
    lucid.save(m.state_dict(), path)
    want = float(sum(float(v.cpu().double().sum().item()) for v in m.state_dict().values()))
    code = (
        "import sys; sys.modules['mlx'] = None; sys.modules['mlx.core'] = None\n"
        f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
        "import lucid\nfrom test_gpu_modules import Net\n"
        f"sd = lucid.load({path!r})\n"
        "assert all(v.device.type == 'cpu' for v in sd.values())\n"
        "m = Net(); m.load_state_dict(sd)\n"
        "print(sum(float(v.double().sum().item()) for v in m.state_dict().values()))\n"
        "print('mlx' in sys.modules and sys.modules['mlx'] is not None)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    total, mlx_loaded = r.stdout.split()
    assert float(total) == pytest.approx(want, rel=1e-6) and mlx_loaded == "False"
