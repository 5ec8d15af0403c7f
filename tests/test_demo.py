"""The main job and a PyTorch-style script that runs with only its imports changed."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import pytest

import lucid
import lucid.demo


@pytest.mark.slow
def test_demo_short_run_learns_and_reloads(tmp_path):
    out = io.StringIO()
    res = lucid.demo.train(epochs=3, checkpoint=str(tmp_path / "d.lucid"), out=out)
    text = out.getvalue()
    assert "test accuracy" in text and "identical" in text
    assert res["test_accuracy"] > 0.9
    assert res["reloaded_accuracy"] == res["test_accuracy"]
    h = res["history"]
    assert h[-1]["train_loss"] < h[0]["train_loss"]
    assert os.path.exists(tmp_path / "d.lucid")


SCRIPT = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    device = "cpu"
    x = torch.randn(256, 1, 8, 8)
    y = (x.mean(dim=(1, 2, 3)) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.drop = nn.Dropout(0.1)
            self.fc = nn.Linear(8 * 4 * 4, 2)

        def forward(self, x):
            x = self.pool(F.relu(self.bn(self.conv(x))))
            return self.fc(self.drop(torch.flatten(x, 1)))

    model = Net().to(device)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(4):
        model.train()
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += loss.item()
        sched.step()
        losses.append(total / len(loader))
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, CKPT)
    ckpt = torch.load(CKPT)
    model2 = Net()
    model2.load_state_dict(ckpt["model"])
    opt2 = optim.SGD(model2.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(ckpt["opt"])
    model.eval(); model2.eval()
    with torch.no_grad():
        same = torch.allclose(model(x), model2(x))
        acc = (model(x).argmax(1) == y).float().mean().item()
    print("RESULT", losses[0], losses[-1], same, acc)
''')


def _port(src: str) -> str:
    return (src.replace("import torch.nn.functional as F", "import lucid.nn.functional as F")
               .replace("import torch.nn as nn", "import lucid.nn as nn")
               .replace("import torch.optim as optim", "import lucid.optim as optim")
               .replace("from torch.utils.data import", "from lucid.utils.data import")
               .replace("import torch\n", "import lucid as torch\n"))


def _run(src: str, tmp_path, name: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text(f"CKPT = {str(tmp_path / (name + '.ckpt'))!r}\n" + src)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.split("RESULT")[-1].split()


def test_pytorch_script_runs_with_imports_swapped(tmp_path):
    ported = _port(SCRIPT)
    assert "torch." in ported and "import lucid as torch" in ported
    first, last, same, acc = _run(ported, tmp_path, "lucid_script")
    assert float(last) < float(first)
    assert same == "True"
    assert float(acc) > 0.8


@pytest.mark.parity
def test_same_script_runs_on_pytorch(tmp_path):
    pytest.importorskip("torch")
    first, last, same, acc = _run(SCRIPT, tmp_path, "torch_script")
    assert float(last) < float(first) and same == "True"
