"""``python -m lucid.demo``: train a small two-layer network on a spiral data set and print
its loss falling.

Everything here is plain lucid: tensors, autograd and a hand-written SGD step.
"""

from __future__ import annotations

import argparse
import math
import time

import lucid


def spirals(n_per_class: int = 200, classes: int = 3, seed: int = 0
            ) -> tuple[lucid.Tensor, lucid.Tensor]:
    """Interleaved 2-D spirals, one arm per class."""
    g = lucid.Generator().manual_seed(seed)
    xs, ys = [], []
    for c in range(classes):
        r = lucid.linspace(0.0, 1.0, n_per_class)
        theta = lucid.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + \
            lucid.randn(n_per_class, generator=g) * 0.2
        xs.append(lucid.stack([r * lucid.sin(theta), r * lucid.cos(theta)], 1))
        ys.append(lucid.full((n_per_class,), c))
    return lucid.cat(xs), lucid.cat(ys)


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    lucid.manual_seed(args.seed)
    x, y = spirals(seed=args.seed)
    n, classes = x.shape[0], 3
    w1 = (lucid.randn(2, args.hidden) * math.sqrt(2 / 2)).requires_grad_()
    b1 = lucid.zeros(args.hidden, requires_grad=True)
    w2 = (lucid.randn(args.hidden, classes) * math.sqrt(1 / args.hidden)).requires_grad_()
    b2 = lucid.zeros(classes, requires_grad=True)
    params = [w1, b1, w2, b2]
    onehot = (y.unsqueeze(1) == lucid.arange(classes)).float()

    t0 = time.perf_counter()
    loss_v = float("nan")
    for step in range(args.steps + 1):
        logits = (x @ w1 + b1).relu() @ w2 + b2
        logp = logits - lucid.logsumexp(logits, dim=1, keepdim=True)
        loss = -(logp * onehot).sum() / n
        for prm in params:
            prm.grad = None
        loss.backward()
        with lucid.no_grad():
            for prm in params:
                prm -= args.lr * prm.grad
        loss_v = loss.item()
        if step % (args.steps // 10 or 1) == 0:
            acc = (logits.argmax(1) == y).float().mean().item()
            print(f"step {step:4d}  loss {loss_v:.4f}  accuracy {acc:.3f}")
    print(f"trained {args.steps} steps in {time.perf_counter() - t0:.2f} s")
    return loss_v


if __name__ == "__main__":
    main()
