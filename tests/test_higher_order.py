"""Higher-order gradients: ``create_graph=True`` through ``backward`` and ``autograd.grad``,
``gradgradcheck``, ``lucid.autograd.functional``, and the uses that need them (a WGAN-GP
gradient penalty, a MAML step, the Hessian of a small network's loss), against numpy
references and, where installed, torch."""

from __future__ import annotations

import numpy as np
import pytest
from devices import DEVICES

import lucid
import lucid.nn.functional as F
from lucid.autograd import functional as AF
from lucid.autograd import gradgradcheck

RNG = np.random.default_rng(7)
X3 = np.array([0.5, -1.2, 2.0])


def _t(m, a, grad=False):
    return m.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


@pytest.mark.parametrize("device", DEVICES)
def test_second_derivative_of_sin_against_numpy(device: str) -> None:
    if device == "gpu":
        pytest.importorskip("mlx.core")
    x = lucid.tensor(X3, dtype=lucid.float32, device=device, requires_grad=True)
    (g,) = lucid.autograd.grad(x.sin().sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), np.cos(X3), rtol=1e-5)
    (h,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), -np.sin(X3), rtol=1e-5)


def test_third_derivative() -> None:
    x = _t(lucid, X3, True)
    (g,) = lucid.autograd.grad((x ** 4).sum(), x, create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = lucid.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(t.numpy(), 24 * X3)


def test_backward_create_graph_leaves_differentiable_grad() -> None:
    x = _t(lucid, X3, True)
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.detach().numpy(), 3 * X3 ** 2)
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * X3)


def test_create_graph_retains_the_graph() -> None:
    x = _t(lucid, X3, True)
    y = (x.exp() * x).sum()
    lucid.autograd.grad(y, x, create_graph=True)
    (g,) = lucid.autograd.grad(y, x)  # retain_graph defaulted to create_graph
    np.testing.assert_allclose(g.numpy(), np.exp(X3) * (1 + X3))


def test_grad_outputs_that_require_grad_double_vjp() -> None:
    """Differentiating a vjp with respect to its vector gives the Jacobian-vector product."""
    x = _t(lucid, X3, True)
    y = x.tanh()
    u = lucid.zeros(3, dtype=lucid.float64, requires_grad=True)
    (vjp,) = lucid.autograd.grad(y, x, u, create_graph=True)
    (jvp,) = lucid.autograd.grad(vjp, u, lucid.ones(3, dtype=lucid.float64))
    np.testing.assert_allclose(jvp.numpy(), 1 - np.tanh(X3) ** 2)


def test_user_function_double_backward() -> None:
    class Cube(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = _t(lucid, X3, True)
    (g,) = lucid.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * X3)


def test_gradgradcheck_catches_a_wrong_second_derivative() -> None:
    class Wrong(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x.detach() * g  # first derivative right, second lost

    x = _t(lucid, X3, True)
    assert gradgradcheck(lambda t: (t * t).sum(), (x,))
    assert not gradgradcheck(lambda t: Wrong.apply(t).sum(), (x,), raise_exception=False)


def test_grad_runs_only_what_reaches_the_inputs() -> None:
    """A node beyond the captured input is not run (torch prunes the same way), so a freed
    part of the graph behind the inputs does not matter."""
    a = _t(lucid, X3, True)
    h = a.exp()
    h.sum().backward()  # frees exp's saved output
    y = (h * h).sum()
    (g,) = lucid.autograd.grad(y, h)
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(X3))


def test_double_backward_refuses_a_backward_that_leaves_the_graph() -> None:
    """A backward that computes through host arrays cannot be recorded: create_graph says so
    (naming the backend function) instead of returning a wrong second derivative."""
    from lucid.autograd import Op

    class HostSquare(Op):
        def forward(self, x):
            self.saved = (x,)
            return self.be.mul(x, x)

        def backward(self, g):
            be = self.be
            return be.mul(g, be.from_numpy(2 * be.to_numpy(self.saved[0])))

    x = _t(lucid, X3, True)
    (g,) = lucid.autograd.grad(HostSquare.apply(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), 2 * X3)
    with pytest.raises(NotImplementedError, match="'to_numpy' has no differentiable form"):
        lucid.autograd.grad(HostSquare.apply(x).sum(), x, create_graph=True)


# ---- against torch --------------------------------------------------------------------------

def _mlp(m, ws):
    w1, b1, w2, b2 = ws
    return lambda x: F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2) if m is lucid else \
        m.nn.functional.linear(m.nn.functional.gelu(m.nn.functional.linear(x, w1, b1)), w2, b2)


def _params(m, shapes, seed=0):
    r = np.random.default_rng(seed)
    return [m.tensor(r.standard_normal(s) * 0.5, dtype=m.float64, requires_grad=True)
            for s in shapes]


SHAPES = [(6, 4), (6,), (1, 6), (1,)]


def _wgan_gp_step(m, steps=2):
    """Critic steps of WGAN-GP: loss = D(fake) - D(real) + 10 (||grad D(interp)|| - 1)^2."""
    r = np.random.default_rng(1)
    ws = _params(m, SHAPES)
    opt = m.optim.Adam(ws, lr=1e-2, betas=(0.5, 0.9))
    crit = _mlp(m, ws)
    for _ in range(steps):
        real = m.tensor(r.standard_normal((8, 4)), dtype=m.float64)
        fake = m.tensor(r.standard_normal((8, 4)) + 1, dtype=m.float64)
        eps = m.tensor(r.random((8, 1)), dtype=m.float64)
        inter = (eps * real + (1 - eps) * fake).requires_grad_(True)
        (g,) = m.autograd.grad(crit(inter).sum(), inter, create_graph=True)
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = crit(fake).mean() - crit(real).mean() + 10 * gp
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [w.detach().numpy() for w in ws]


def test_wgan_gp_step_matches_torch(torch) -> None:
    for a, b in zip(_wgan_gp_step(lucid), _wgan_gp_step(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def _maml_step(m):
    """One meta-step: an inner SGD step with create_graph, then the outer loss's gradient
    with respect to the initial weights."""
    r = np.random.default_rng(2)
    ws = _params(m, SHAPES, seed=3)
    xs, ys = (m.tensor(r.standard_normal((5, 4)), dtype=m.float64),
              m.tensor(r.standard_normal((5, 1)), dtype=m.float64))
    xq, yq = (m.tensor(r.standard_normal((5, 4)), dtype=m.float64),
              m.tensor(r.standard_normal((5, 1)), dtype=m.float64))
    inner = ((_mlp(m, ws)(xs) - ys) ** 2).mean()
    grads = m.autograd.grad(inner, ws, create_graph=True)
    fast = [w - 0.1 * g for w, g in zip(ws, grads)]
    outer = ((_mlp(m, fast)(xq) - yq) ** 2).mean()
    outer.backward()
    return [outer.item()] + [w.grad.numpy() for w in ws]


def test_maml_meta_gradient_matches_torch(torch) -> None:
    for a, b in zip(_maml_step(lucid), _maml_step(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def _mlp_loss_hessian(m):
    r = np.random.default_rng(4)
    x = m.tensor(r.standard_normal((6, 4)), dtype=m.float64)
    y = m.tensor(r.integers(0, 3, 6), dtype=m.int64)
    w0 = [m.tensor(r.standard_normal(s) * 0.5, dtype=m.float64) for s in [(5, 4), (5,), (3, 5)]]

    def loss(w1, b1, w2):
        f = lucid.nn.functional if m is lucid else m.nn.functional
        return f.cross_entropy(f.linear(f.tanh(f.linear(x, w1, b1)), w2), y)

    return m.autograd.functional.hessian(loss, tuple(w0))


def test_hessian_of_mlp_loss_matches_torch(torch) -> None:
    a, b = _mlp_loss_hessian(lucid), _mlp_loss_hessian(torch)
    for i in range(3):
        for j in range(3):
            assert tuple(a[i][j].shape) == tuple(b[i][j].shape)
            np.testing.assert_allclose(a[i][j].numpy(), b[i][j].numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose2d", "batch_norm", "layer_norm",
                                  "softmax", "max_pool2d", "avg_pool2d", "cross_entropy",
                                  "group_norm", "embedding"])
def test_double_backward_of_nn_ops_matches_torch(torch, name: str) -> None:
    r = np.random.default_rng(5)
    x0 = r.standard_normal((2, 3, 5, 5))
    w0 = r.standard_normal((4, 3, 3, 3)) * 0.3

    def run(m):
        f = lucid.nn.functional if m is lucid else m.nn.functional
        x = m.tensor(x0, dtype=m.float64, requires_grad=True)
        w = m.tensor(w0, dtype=m.float64, requires_grad=True)
        v = m.tensor(r0.standard_normal((4,)), dtype=m.float64, requires_grad=True)
        out = {
            "conv2d": lambda: f.conv2d(x, w, v, stride=2, padding=1),
            "conv_transpose2d": lambda: f.conv_transpose2d(x, w.transpose(0, 1), v, stride=2,
                                                           output_padding=1),
            "batch_norm": lambda: f.batch_norm(x, None, None, v[:3], v[1:], training=True),
            "layer_norm": lambda: f.layer_norm(x, (5,), v[:1].expand(5), v[1:2].expand(5)),
            "softmax": lambda: f.softmax(x, 1) * x,
            "max_pool2d": lambda: f.max_pool2d(x * x, 2),
            "avg_pool2d": lambda: f.avg_pool2d(x * x, 3, stride=2, padding=1),
            "cross_entropy": lambda: f.cross_entropy(x.reshape(-1, 5) * v[0],
                                                     m.tensor([0, 4, 2, 1, 3, 2] * 5),
                                                     label_smoothing=0.1),
            "group_norm": lambda: f.group_norm(x, 3, v[:3], v[1:]),
            "embedding": lambda: f.embedding(m.tensor([[0, 2], [3, 0]]), w.reshape(4, -1)) ** 2,
        }[name]()
        ins = [x, w, v]
        gs = m.autograd.grad((out * out).sum(), ins, create_graph=True, allow_unused=True)
        total = sum((g * g).sum() for g in gs if g is not None)
        hs = m.autograd.grad(total, ins, allow_unused=True)
        return [None if h is None else h.numpy() for h in hs]

    r0 = np.random.default_rng(6)
    a = run(lucid)
    r0 = np.random.default_rng(6)
    b = run(torch)
    for ha, hb in zip(a, b):
        assert (ha is None) == (hb is None) or (ha is not None and not ha.any()) or \
            (hb is not None and not hb.any())
        if ha is not None and hb is not None:
            np.testing.assert_allclose(ha, hb, rtol=1e-7, atol=1e-9)


def test_functional_against_torch(torch) -> None:
    def run(m):
        A = m.autograd.functional
        x = m.tensor(X3, dtype=m.float64)
        w = m.tensor(RNG_W, dtype=m.float64)
        f = lambda t: (t.sin() * t).sum()  # noqa: E731
        g = lambda t: (t @ w).tanh()  # noqa: E731
        one3, one2 = m.ones(3, dtype=m.float64), m.ones(2, dtype=m.float64)
        res = [A.jacobian(g, x), A.hessian(f, x), A.vjp(g, x, one2)[1], A.jvp(g, x, one3)[1],
               A.hvp(f, x, one3)[1], A.vhp(f, x, one3)[1],
               A.jacobian(lambda a, b: (a * b, a + b), (x, x * 2))[1][0],
               A.hessian(lambda a, b: (a * b * b).sum(), (x, x + 1))[0][1],
               A.jacobian(lambda a, b: a.exp(), (x, x))[1]]
        return [t.numpy() for t in res]

    for a, b in zip(run(lucid), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


RNG_W = np.random.default_rng(8).standard_normal((3, 2))


def test_functional_against_numpy() -> None:
    x = lucid.tensor(X3, dtype=lucid.float64)
    w = lucid.tensor(RNG_W, dtype=lucid.float64)
    j = AF.jacobian(lambda t: (t @ w).tanh(), x).numpy()
    d = 1 - np.tanh(X3 @ RNG_W) ** 2
    np.testing.assert_allclose(j, d[:, None] * RNG_W.T)
    h = AF.hessian(lambda t: (t ** 3).sum(), x).numpy()
    np.testing.assert_allclose(h, np.diag(6 * X3))
    out, v = AF.hvp(lambda t: (t ** 3).sum(), x, lucid.ones(3, dtype=lucid.float64))
    np.testing.assert_allclose(v.numpy(), 6 * X3)
    assert out.item() == pytest.approx((X3 ** 3).sum())
    out, t = AF.jvp(lambda t: t * t, x, lucid.ones(3, dtype=lucid.float64))
    np.testing.assert_allclose(t.numpy(), 2 * X3)
    assert not t.requires_grad and not out.requires_grad


def test_functional_errors_and_strict() -> None:
    x = lucid.tensor(X3, dtype=lucid.float64)
    with pytest.raises(RuntimeError, match="can only be None"):
        AF.vjp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (x, x), strict=True)
    z = AF.jacobian(lambda a, b: a * 2, (x, x))[1]
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 3)))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple"):
        AF.jacobian(lambda a: a, [1.0])
    with pytest.raises(RuntimeError, match="single Tensor with a single element"):
        AF.hessian(lambda t: t * 2, x)


def test_functional_create_graph_reaches_inputs() -> None:
    x = lucid.tensor(X3, dtype=lucid.float64, requires_grad=True)
    h = AF.hessian(lambda t: (t ** 4).sum(), x, create_graph=True)
    (d,) = lucid.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(d.numpy(), 24 * X3)


# ---- the engine's callbacks and gradient readiness --------------------------------------------

def test_leaf_gradients_are_ready_during_backward_and_callbacks_run_after() -> None:
    """A parameter's post-accumulate hook runs as soon as its gradient is complete, before
    the rest of backward; a queued callback runs once backward has finished."""
    from lucid.autograd.engine import queue_callback

    w1 = lucid.randn(4, 4, requires_grad=True)
    w2 = lucid.randn(4, 4, requires_grad=True)
    events = []

    def hook(name):
        def h(p):
            events.append((name, p.grad is not None))
            if name == "w2":
                queue_callback(lambda: events.append(("done", w1.grad is not None)))
        return h

    w1.register_post_accumulate_grad_hook(hook("w1"))
    w2.register_post_accumulate_grad_hook(hook("w2"))
    ((lucid.randn(2, 4) @ w1).relu() @ w2).sum().backward()
    assert events == [("w2", True), ("w1", True), ("done", True)]
    with pytest.raises(RuntimeError, match="during backward"):
        queue_callback(lambda: None)


def test_shared_leaf_gets_its_summed_gradient_once() -> None:
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    w.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.numpy().copy()))
    ((w * 3) + (w * w)).sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], 3 + 2 * np.array([1.0, 2.0]))
