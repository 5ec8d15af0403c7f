"""Training loop of the demo, written as a PyTorch user would write it."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.optim as optim
from lucid import _background_compile, _first_run
from lucid.data import DataLoader, TensorDataset


class DigitsNet(nn.Module):
    """conv3x3 1->16, BN, ReLU, maxpool2, conv3x3 16->32, BN, ReLU, maxpool2, dropout,
    linear 32*2*2 -> 10, for 8x8 single-channel images.

    Example::

        net = DigitsNet()
        net(lucid.randn(4, 1, 8, 8)).shape      # lucid.Size([4, 10])
    """

    def __init__(self, dropout: float = 0.25) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        return self.fc(self.dropout(self.features(x).flatten(1)))


def evaluate(model: nn.Module, x: lucid.Tensor, y: lucid.Tensor, batch_size: int = 512
             ) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of ``model`` on ``(x, y)`` in eval mode.

    Example::

        loss, acc = evaluate(model, x_test, y_test)
    """
    model.eval()
    total_loss, correct = 0.0, 0
    with lucid.no_grad():
        for i in range(0, x.shape[0], batch_size):
            xb, yb = x[i:i + batch_size], y[i:i + batch_size]
            logits = model(xb)
            total_loss += F.cross_entropy(logits, yb, reduction="sum").item()
            correct += int((logits.argmax(1) == yb).sum().item())
    return total_loss / x.shape[0], correct / x.shape[0]


def _bar(done: int, total: int, width: int = 24) -> str:
    n = int(width * done / max(total, 1))
    return "[" + "#" * n + "-" * (width - n) + "]"


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def _compile_ahead() -> None:
    """On a cold kernel cache with the background compile off (``LUCID_BACKGROUND_COMPILE=0``,
    deterministic mode), compile the demo's kernels on every core before training; with it
    on, training starts at once and its kernels arrive from the background helper."""
    if _background_compile.mode() == "defer":
        return
    from lucid import _warmup_pool  # NOTE: loads numba and kernels: the cpu path only

    if _warmup_pool.default_jobs() < 2 or _warmup_pool.start_method() != "fork":
        return  # one core, or workers that would re-import lucid: compile on first use
    todo = _warmup_pool.missing(_warmup_pool.DEMO_KERNELS)
    if todo:
        _first_run.announce(_warmup_pool.cache_path(), True)
        _warmup_pool.warmup_parallel(kernels=todo, progress=False)


def train(epochs: int = 12, batch_size: int = 32, lr: float = 0.01, seed: int = 0,
          device: str = "cpu", checkpoint: str | None = None, plot: str | None = None,
          quiet: bool = False, out: Any = None) -> dict[str, Any]:
    """Train the demo CNN; returns the history and final figures.

    Example::

        result = lucid.demo.train(epochs=2, quiet=True)
        result["test_accuracy"]
    """
    out = out or sys.stdout
    live = _is_terminal(out)  # a bar redrawn per step; one line per epoch in logs and pipes

    def say(msg: str, end: str = "\n") -> None:
        if not quiet:
            out.write(msg + end)
            out.flush()

    if device == "cpu":
        _compile_ahead()

    lucid.manual_seed(seed)
    (x_train, y_train), (x_test, y_test) = lucid.datasets.load_digits(seed=seed, device=device)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True)
    model = DigitsNet().to(device)
    opt = optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, epochs=epochs,
                                          steps_per_epoch=len(loader))
    say(f"lucid {lucid.__version__}: training a small CNN on {x_train.shape[0]} handwritten "
        f"digits (8x8), {epochs} epochs, device {device}")
    history: list[dict[str, float]] = []
    t_start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        t0 = time.perf_counter()
        seen, loss_sum, correct = 0, 0.0, 0
        for step, (xb, yb) in enumerate(loader, 1):
            opt.zero_grad()
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            loss.backward()
            opt.step()
            sched.step()
            n = xb.shape[0]
            seen += n
            loss_sum += loss.item() * n
            correct += int((logits.argmax(1) == yb).sum().item())
            if live or step == len(loader):
                rate = seen / max(time.perf_counter() - t0, 1e-9)
                say(("\r" if live else "") + f"epoch {epoch:2d}/{epochs} "
                    f"{_bar(step, len(loader))} loss {loss_sum / seen:.4f}  "
                    f"acc {correct / seen:.3f}  {rate:7.0f} samples/s", end="")
        test_loss, test_acc = evaluate(model, x_test, y_test)
        history.append({"epoch": epoch, "train_loss": loss_sum / seen,
                        "train_acc": correct / seen, "test_loss": test_loss,
                        "test_acc": test_acc})
        say(f"  | test loss {test_loss:.4f} acc {test_acc:.3f}")
    wall = time.perf_counter() - t_start
    test_loss, test_acc = evaluate(model, x_test, y_test)
    say(f"test accuracy {test_acc:.4f} ({int(round(test_acc * x_test.shape[0]))}/"
        f"{x_test.shape[0]}) after {wall:.1f} s of training")

    path = checkpoint or os.path.join(tempfile.mkdtemp(prefix="lucid-demo-"), "digits.lucid")
    lucid.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "epoch": epochs, "test_accuracy": test_acc},
               path)
    ckpt = lucid.load(path)
    fresh = DigitsNet().to(device)
    fresh.load_state_dict(ckpt["model"])
    _, reloaded_acc = evaluate(fresh, x_test, y_test)
    same = reloaded_acc == test_acc
    say(f"checkpoint saved to {path}; reloaded model accuracy {reloaded_acc:.4f} "
        f"({'identical' if same else 'DIFFERENT'})")
    if plot:
        _plot(history, plot, say)
    return {"history": history, "test_accuracy": test_acc, "reloaded_accuracy": reloaded_acc,
            "wall_time": wall, "checkpoint": path}


def _plot(history: list[dict[str, float]], path: str, say: Any) -> None:
    try:  # NOTE: matplotlib is optional (``--plot``)
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("--plot needs matplotlib (pip install matplotlib); no plot written")
        return
    ep = [h["epoch"] for h in history]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    a.plot(ep, [h["train_loss"] for h in history], label="train")
    a.plot(ep, [h["test_loss"] for h in history], label="test")
    a.set_xlabel("epoch")
    a.set_ylabel("cross-entropy")
    a.legend()
    b.plot(ep, [h["train_acc"] for h in history], label="train")
    b.plot(ep, [h["test_acc"] for h in history], label="test")
    b.set_xlabel("epoch")
    b.set_ylabel("accuracy")
    b.legend()
    fig.suptitle("lucid demo: CNN on the UCI digits")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    say(f"training curve written to {path}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lucid.demo",
                                description="Train a small CNN on the UCI handwritten digits.")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help='"cpu" or "gpu" (MLX)')
    p.add_argument("--checkpoint", default=None, help="where to save the checkpoint")
    p.add_argument("--plot", default=None, metavar="PNG", help="write a training-curve plot")
    args = p.parse_args(argv)
    result = train(args.epochs, args.batch_size, args.lr, args.seed, args.device,
                   args.checkpoint, args.plot)
    return 0 if result["reloaded_accuracy"] == result["test_accuracy"] else 1
