"""Layers over the functions in ``tests/op_db_nn_more.py`` and ``tests/op_db_loss_more.py``
(padding, upsampling, pixel / channel shuffle, distances, fold, bilinear, softmax2d, local
response norm, embedding bag, the margin / likelihood / CTC losses) against torch with the
same weights and against numpy; gumbel-softmax; CTC's gradient through log_softmax; and the
non-constant padding checks of ``F.pad``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from nn_util import arr

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck

RNG = np.random.default_rng(0)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def _backward_both(torch, ly, ty) -> None:
    """Backpropagate one random upstream gradient through the lucid and the torch output."""
    g = _x(*ty.shape)
    (ly * lucid.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()


# ---- padding ------------------------------------------------------------------------------------

PADS = [("ZeroPad1d", (1, 2), (2, 3, 4)), ("ZeroPad2d", 1, (1, 2, 3, 3)),
        ("ZeroPad3d", (1, 0, 0, 1, 2, 1), (1, 1, 2, 2, 2)),
        ("ConstantPad1d", 2, (2, 3)), ("ConstantPad2d", (1, 0, 2, 1), (2, 3, 3)),
        ("ConstantPad3d", 1, (1, 2, 2, 2)), ("ReflectionPad1d", (2, 1), (2, 3, 4)),
        ("ReflectionPad2d", 1, (1, 2, 3, 3)), ("ReflectionPad3d", (1, 1, 0, 1, 1, 0), (1, 2, 2, 3)),
        ("ReplicationPad1d", 3, (2, 4)), ("ReplicationPad2d", (0, 2, 1, 1), (1, 1, 2, 3)),
        ("ReplicationPad3d", 1, (1, 1, 2, 2, 2)), ("CircularPad1d", (1, 2), (1, 2, 3)),
        ("CircularPad2d", 1, (2, 3, 3)), ("CircularPad3d", (1, 0, 1, 1, 0, 1), (1, 1, 2, 2, 2))]


@pytest.mark.parametrize("name,padding,shape", PADS)
def test_padding_modules_match_torch(torch, name, padding, shape):
    x = _x(*shape)
    args = (padding, 1.5) if name.startswith("Constant") else (padding,)
    lm, tm = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(lm) == repr(tm)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, ty = lm(lx), tm(tx)
    np.testing.assert_allclose(arr(ly), arr(ty))
    _backward_both(torch, ly, ty)
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), atol=1e-12)


def test_padding_values_numpy():
    x = np.arange(4.0).reshape(1, 1, 4)
    np.testing.assert_array_equal(nn.ReflectionPad1d(2)(lucid.tensor(x)).numpy()[0, 0],
                                  [2, 1, 0, 1, 2, 3, 2, 1])
    np.testing.assert_array_equal(nn.ReplicationPad1d(1)(lucid.tensor(x)).numpy()[0, 0],
                                  [0, 0, 1, 2, 3, 3])
    np.testing.assert_array_equal(nn.CircularPad1d(1)(lucid.tensor(x)).numpy()[0, 0],
                                  [3, 0, 1, 2, 3, 0])
    np.testing.assert_array_equal(nn.ConstantPad1d(1, 9.0)(lucid.tensor(x)).numpy()[0, 0],
                                  [9, 0, 1, 2, 3, 9])


def test_padding_gradcheck(backend):
    x = lucid.tensor(_x(1, 2, 3, 3), device=backend, requires_grad=True)
    for m in (nn.ReflectionPad2d((1, 2, 0, 2)), nn.ReplicationPad2d(2), nn.CircularPad2d(1)):
        assert gradcheck(m, [x])


def test_pad_nonconstant_errors():
    with pytest.raises(NotImplementedError, match="Padding size 4 is not supported for 2D "
                                                  "input tensor"):
        F.pad(lucid.randn(4, 4), (1, 1, 1, 1), "reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than "
                                           "once"):
        F.pad(lucid.randn(1, 2), (3, 3), "circular")
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D \(batch mode\) tensor with "
                                           r"possibly 0 batch size and other non-zero "
                                           r"dimensions for input, but got: \[1, 2, 0, 3\]"):
        F.pad(lucid.randn(1, 2, 0, 3), (1, 1, 1, 1), "replicate")
    assert F.pad(lucid.randn(0, 2, 3), (1, 1), "replicate").shape == (0, 2, 5)
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(lucid.randn(3, 3))


# ---- upsampling, pixel / channel shuffle ---------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda m: m.Upsample(scale_factor=2, mode="nearest"),
    lambda m: m.Upsample(size=(5, 3), mode="bilinear", align_corners=False),
    lambda m: m.Upsample(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True),
    lambda m: m.Upsample(size=(2, 3), mode="area"),
    lambda m: m.UpsamplingNearest2d(scale_factor=3),
    lambda m: m.UpsamplingBilinear2d(size=(4, 7)),
])
def test_upsample_modules_match_torch(torch, make):
    x = _x(2, 3, 4, 5)
    lm, tm = make(nn), make(torch.nn)
    assert repr(lm) == repr(tm)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, ty = lm(lx), tm(tx)
    np.testing.assert_allclose(arr(ly), arr(ty), atol=1e-12)
    _backward_both(torch, ly, ty)
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), atol=1e-12)


def test_interpolate_bicubic_area_gradcheck(backend):
    x = lucid.tensor(_x(1, 2, 4, 3), device=backend, requires_grad=True)
    assert gradcheck(lambda t: F.interpolate(t, size=(5, 4), mode="bicubic"), [x])
    assert gradcheck(lambda t: F.interpolate(t, size=(3, 2), mode="area"), [x])


def test_interpolate_area_is_adaptive_avg_pool():
    x = lucid.tensor(_x(2, 3, 7, 5))
    np.testing.assert_allclose(F.interpolate(x, size=(3, 4), mode="area").numpy(),
                               F.adaptive_avg_pool2d(x, (3, 4)).numpy(), atol=1e-12)


def test_shuffle_modules(torch):
    x = _x(2, 8, 3, 3)
    for name, arg in (("PixelShuffle", 2), ("PixelUnshuffle", 3), ("ChannelShuffle", 4)):
        lm, tm = getattr(nn, name)(arg), getattr(torch.nn, name)(arg)
        assert repr(lm) == repr(tm)
        np.testing.assert_array_equal(arr(lm(lucid.tensor(x))), arr(tm(torch.tensor(x))))
    y = nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(lucid.tensor(x)))
    np.testing.assert_array_equal(y.numpy(), x)
    np.testing.assert_array_equal(
        F.channel_shuffle(lucid.arange(4.0).reshape(1, 4, 1), 2).numpy().ravel(), [0, 2, 1, 3])


# ---- bilinear, distances, fold, softmax2d, local response norm ---------------------------------


def test_bilinear_module_matches_torch(torch):
    lm = nn.Bilinear(3, 4, 2, dtype=lucid.float64)
    tm = torch.nn.Bilinear(3, 4, 2, dtype=torch.float64)
    assert repr(lm) == repr(tm)
    assert lm.weight.shape == (2, 3, 4) and lm.bias.shape == (2,)
    assert float(lm.weight.abs().max()) <= 1 / np.sqrt(3)
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lm.state_dict().items()})
    a, b = _x(5, 3), _x(5, 4)
    np.testing.assert_allclose(arr(lm(lucid.tensor(a), lucid.tensor(b))),
                               arr(tm(torch.tensor(a), torch.tensor(b))), atol=1e-12)
    assert nn.Bilinear(3, 4, 2, bias=False).bias is None
    with pytest.raises(ValueError, match=r"in1_features must be > 0, but got \(in1_features=0\)"):
        nn.Bilinear(0, 4, 2)


def test_distance_modules(torch):
    a, b = _x(4, 6), _x(4, 6)
    cos, pd = nn.CosineSimilarity(dim=1, eps=1e-6), nn.PairwiseDistance(p=1.0, keepdim=True)
    np.testing.assert_allclose(arr(cos(lucid.tensor(a), lucid.tensor(b))),
                               arr(torch.nn.CosineSimilarity(1, 1e-6)(torch.tensor(a),
                                                                      torch.tensor(b))))
    np.testing.assert_allclose(arr(pd(lucid.tensor(a), lucid.tensor(b))),
                               np.abs(a - b + 1e-6).sum(1, keepdims=True))
    assert repr(cos) == "CosineSimilarity()" and repr(pd) == "PairwiseDistance()"


def test_cosine_similarity_zero_vector_grad(torch):
    """A zero row is divided by eps, as torch does (no NaN)."""
    lx = lucid.zeros(2, 3, dtype=lucid.float64, requires_grad=True)
    tx = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    y = _x(2, 3)
    F.cosine_similarity(lx, lucid.tensor(y)).sum().backward()
    torch.nn.functional.cosine_similarity(tx, torch.tensor(y)).sum().backward()
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), rtol=1e-10)


def test_fold_unfold_modules(torch):
    x = _x(2, 3, 5, 4)
    lu, tu = nn.Unfold(2, padding=1, stride=2), torch.nn.Unfold(2, padding=1, stride=2)
    assert repr(lu) == repr(tu)
    cols = lu(lucid.tensor(x))
    np.testing.assert_allclose(arr(cols), arr(tu(torch.tensor(x))))
    lf, tf = nn.Fold((5, 4), 2, padding=1, stride=2), torch.nn.Fold((5, 4), 2, padding=1, stride=2)
    assert repr(lf) == repr(tf)
    np.testing.assert_allclose(arr(lf(cols)), arr(tf(torch.tensor(cols.numpy()))))


def test_softmax2d(torch):
    x = _x(2, 3, 4, 4)
    np.testing.assert_allclose(nn.Softmax2d()(lucid.tensor(x)).numpy(),
                               arr(torch.nn.Softmax2d()(torch.tensor(x))), atol=1e-12)
    np.testing.assert_allclose(nn.Softmax2d()(lucid.tensor(x[0])).numpy().sum(0), 1.0)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D "
                                         "instead"):
        nn.Softmax2d()(lucid.randn(2, 3))


def test_local_response_norm_module(torch):
    x = _x(2, 6, 3, 3)
    lm, tm = nn.LocalResponseNorm(3, 0.5, 0.6, 2.0), torch.nn.LocalResponseNorm(3, 0.5, 0.6, 2.0)
    assert repr(lm) == repr(tm)
    np.testing.assert_allclose(arr(lm(lucid.tensor(x))), arr(tm(torch.tensor(x))), atol=1e-12)


# ---- embedding bag ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module_matches_torch(torch, mode):
    lm = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2, dtype=lucid.float64)
    tm = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=2, dtype=torch.float64)
    assert repr(lm) == repr(tm)
    np.testing.assert_array_equal(lm.weight.detach().numpy()[2], 0)
    tm.load_state_dict({"weight": torch.tensor(lm.weight.detach().numpy())})
    idx, off = [1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3, 6]
    ly = lm(lucid.tensor(idx), lucid.tensor(off))
    ty = tm(torch.tensor(idx), torch.tensor(off))
    np.testing.assert_allclose(arr(ly), arr(ty), atol=1e-12)
    g = _x(4, 3)
    (ly * lucid.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(arr(lm.weight.grad), arr(tm.weight.grad), atol=1e-12)


def test_embedding_bag_from_pretrained_and_psw(torch):
    w = _x(6, 2)
    bag = nn.EmbeddingBag.from_pretrained(lucid.tensor(w), mode="sum")
    assert not bag.weight.requires_grad
    psw = _x(2, 3)
    out = bag(lucid.tensor([[0, 1, 5], [2, 2, 3]]), per_sample_weights=lucid.tensor(psw))
    ref = np.stack([(w[[0, 1, 5]] * psw[0][:, None]).sum(0), (w[[2, 2, 3]] * psw[1][:, None])
                    .sum(0)])
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-12)


def test_embedding_bag_gradcheck(backend):
    w = lucid.tensor(_x(6, 2), device=backend, requires_grad=True)
    idx = lucid.tensor([1, 2, 4, 5, 4, 3], device=backend)
    off = lucid.tensor([0, 2, 2], device=backend)
    for mode in ("sum", "mean", "max"):
        assert gradcheck(lambda t, m=mode: F.embedding_bag(idx, t, off, mode=m), [w])


# ---- losses -------------------------------------------------------------------------------------

LOSS_CASES = [
    ("TripletMarginLoss", dict(margin=0.5, swap=True), lambda: (_x(4, 3), _x(4, 3), _x(4, 3))),
    ("TripletMarginWithDistanceLoss", dict(margin=0.7), lambda: (_x(4, 3), _x(4, 3), _x(4, 3))),
    ("MarginRankingLoss", dict(margin=0.2), lambda: (_x(5), _x(5), np.sign(_x(5)))),
    ("CosineEmbeddingLoss", dict(margin=0.1), lambda: (_x(5, 3), _x(5, 3), np.sign(_x(5)))),
    ("HingeEmbeddingLoss", dict(margin=0.4), lambda: (_x(6), np.sign(_x(6)))),
    ("SoftMarginLoss", {}, lambda: (_x(2, 3), np.sign(_x(2, 3)))),
    ("MultiLabelSoftMarginLoss", {}, lambda: (_x(3, 4), (_x(3, 4) > 0).astype(float))),
    ("MultiMarginLoss", dict(p=2, margin=0.8), lambda: (_x(3, 4), np.array([0, 3, 1]))),
    ("MultiLabelMarginLoss", {}, lambda: (_x(2, 4), np.array([[3, 0, -1, 1], [1, -1, 0, 0]]))),
    ("GaussianNLLLoss", dict(full=True), lambda: (_x(4, 2), _x(4, 2), np.abs(_x(4, 2)) + 0.1)),
    ("PoissonNLLLoss", dict(full=True), lambda: (_x(4, 2), RNG.integers(0, 4, (4, 2)) * 1.0)),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,kw,make", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_modules_match_torch(torch, name, kw, make, reduction):
    vals = make()
    lm = getattr(nn, name)(reduction=reduction, **kw)
    tm = getattr(torch.nn, name)(reduction=reduction, **kw)
    assert repr(lm) == repr(tm)
    lx = [lucid.tensor(v, requires_grad=k == 0) for k, v in enumerate(vals)]
    tx = [torch.tensor(v, requires_grad=k == 0) for k, v in enumerate(vals)]
    ly, ty = lm(*lx), tm(*tx)
    assert tuple(ly.shape) == tuple(ty.shape)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-10, atol=1e-12)
    _backward_both(torch, ly, ty)
    np.testing.assert_allclose(arr(lx[0].grad), arr(tx[0].grad), rtol=1e-10, atol=1e-12)


def test_loss_legacy_reduction_and_errors():
    x, t = lucid.randn(4), lucid.tensor([1.0, -1.0, 1.0, -1.0])
    assert nn.SoftMarginLoss(size_average=False).reduction == "sum"
    assert nn.HingeEmbeddingLoss(reduce=False)(x, t).shape == (4,)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="MultiMarginLoss: expected weight to be None or 1D "
                                         "tensor, got 2D instead"):
        nn.MultiMarginLoss(weight=lucid.ones(2, 2))
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater "
                                         "than 0, got -1.0 instead"):
        nn.TripletMarginLoss(margin=-1.0)
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(lucid.randn(3), lucid.randn(3), -1.0)


def test_triplet_with_custom_distance(torch):
    a, p, n = _x(4, 3), _x(4, 3), _x(4, 3)

    def dist(fw):
        return lambda x, y: 1.0 - fw.nn.functional.cosine_similarity(x, y)

    ly = nn.TripletMarginWithDistanceLoss(distance_function=dist(lucid), swap=True)(
        lucid.tensor(a), lucid.tensor(p), lucid.tensor(n))
    ty = torch.nn.TripletMarginWithDistanceLoss(distance_function=dist(torch), swap=True)(
        torch.tensor(a), torch.tensor(p), torch.tensor(n))
    np.testing.assert_allclose(arr(ly), arr(ty), atol=1e-12)


# ---- CTC ----------------------------------------------------------------------------------------


def _ctc_case() -> tuple:
    return (_x(8, 3, 5), np.array([[1, 2, 2, 4], [3, 3, 0, 0], [4, 1, 2, 0]]), [8, 6, 7],
            [4, 2, 3])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_module_matches_torch(torch, reduction):
    x, tg, il, tl = _ctc_case()
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly = nn.CTCLoss(blank=0, reduction=reduction)(lx.log_softmax(2), lucid.tensor(tg), il, tl)
    ty = torch.nn.CTCLoss(blank=0, reduction=reduction)(tx.log_softmax(2), torch.tensor(tg), il,
                                                        tl)
    np.testing.assert_allclose(arr(ly), arr(ty), rtol=1e-10)
    _backward_both(torch, ly, ty)
    np.testing.assert_allclose(arr(lx.grad), arr(tx.grad), atol=1e-12)


def test_ctc_gradcheck_through_log_softmax(backend):
    x, tg, il, tl = _ctc_case()
    lx = lucid.tensor(x[:5, :2], device=backend, requires_grad=True)
    targets = lucid.tensor(tg[:2, :2], device=backend)
    assert gradcheck(lambda t: F.ctc_loss(t.log_softmax(2), targets, [5, 4], [2, 2]), [lx])


def test_ctc_zero_infinity_and_concatenated_targets(torch):
    x = _x(3, 2, 4)
    lp = lucid.tensor(x, requires_grad=True)
    impossible = lucid.tensor([[1, 1, 1], [1, 1, 1]])
    out = F.ctc_loss(lp.log_softmax(2), impossible, [3, 3], [3, 3], reduction="none")
    assert np.isinf(out.detach().numpy()).all()
    out = F.ctc_loss(lp.log_softmax(2), impossible, [3, 3], [3, 3], reduction="sum",
                     zero_infinity=True)
    out.backward()
    assert float(out) == 0.0 and not np.any(lp.grad.numpy())
    flat = F.ctc_loss(lp.log_softmax(2), lucid.tensor([1, 2, 3]), [3, 3], [2, 1])
    padded = F.ctc_loss(lp.log_softmax(2), lucid.tensor([[1, 2], [3, 0]]), [3, 3], [2, 1])
    np.testing.assert_allclose(flat.item(), padded.item())
    ref = torch.nn.functional.ctc_loss(torch.tensor(x).log_softmax(2), torch.tensor([1, 2, 3]),
                                       [3, 3], [2, 1])
    np.testing.assert_allclose(flat.item(), ref.item(), rtol=1e-10)


# ---- gumbel-softmax -----------------------------------------------------------------------------


def test_gumbel_softmax_soft_and_hard(backend):
    lucid.manual_seed(0)
    logits = lucid.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), device=backend, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1.0, rtol=1e-6)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True, dim=1)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(1) == 1).all()
    freq = h.mean(0)  # argmax of logits + Gumbel noise samples the softmax distribution
    np.testing.assert_allclose(freq, [0.7, 0.2, 0.1], atol=0.03)
    (hard * lucid.tensor(np.arange(3.0), device=backend)).sum().backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()
    assert np.abs(logits.grad.numpy()).sum() > 0  # straight-through: the soft sample's grad


def test_gumbel_softmax_eps_warns():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(lucid.randn(2, 3), eps=1e-5)


def test_affine_grid_warns_without_align_corners():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.affine_grid(lucid.randn(1, 2, 3), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.affine_grid(lucid.randn(1, 2, 3), (1, 1, 2, 2), align_corners=False)


def test_grid_sample_identity_and_gradcheck(backend):
    x = lucid.tensor(_x(1, 2, 4, 5), device=backend, requires_grad=True)
    theta = lucid.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], device=backend,
                         dtype=lucid.float64)
    for ac in (False, True):
        grid = F.affine_grid(theta, (1, 2, 4, 5), align_corners=ac)
        np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=ac).detach().numpy(),
                                   x.detach().numpy(), atol=1e-12)
    grid = lucid.tensor(RNG.uniform(-1.2, 1.2, (1, 3, 2, 2)), device=backend, requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        assert gradcheck(lambda a, g, p=pm: F.grid_sample(a, g, padding_mode=p,
                                                          align_corners=False), [x, grid])


# ---- lazy layers --------------------------------------------------------------------------------


def test_lazy_linear_materialises_on_first_call(torch):
    fc, tfc = nn.LazyLinear(4), torch.nn.LazyLinear(4)
    assert repr(fc) == repr(tfc) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    assert fc.has_uninitialized_params() and repr(fc.weight) == "<UninitializedParameter>"
    assert [repr(v) for v in fc.state_dict().values()] == ["<UninitializedParameter>"] * 2
    w = fc.weight
    y = fc(lucid.randn(2, 7))
    assert type(fc) is nn.Linear and repr(fc) == "Linear(in_features=7, out_features=4, bias=True)"
    assert fc.weight is w and type(w) is nn.Parameter and w.shape == (4, 7)
    assert y.shape == (2, 4) and float(w.abs().max()) <= 1 / np.sqrt(7)
    assert not fc._forward_pre_hooks


def test_lazy_linear_dtype_then_optimizer_built_before_dry_run():
    net = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(1))
    opt = lucid.optim.SGD(net.parameters(), lr=0.1)
    net.to(lucid.float64)
    x = lucid.randn(8, 3, dtype=lucid.float64)
    net(x)
    before = net[0].weight.detach().numpy().copy()
    net(x).pow(2).mean().backward()
    opt.step()
    assert net[0].weight.dtype == lucid.float64 and net[2].weight.shape == (1, 5)
    assert not np.allclose(before, net[0].weight.detach().numpy())


def test_lazy_state_dict_round_trips():
    src = nn.LazyLinear(4)
    src(lucid.randn(2, 7))
    dst = nn.LazyLinear(4)
    assert dst.load_state_dict(src.state_dict()) is not None
    assert type(dst.weight) is nn.Parameter and dst.weight.shape == (4, 7)
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy())
    dst(lucid.randn(3, 7))
    assert repr(dst) == "Linear(in_features=7, out_features=4, bias=True)"
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy())
    lazy = nn.LazyLinear(4)  # placeholders onto placeholders
    lazy.load_state_dict(nn.LazyLinear(4).state_dict())
    assert lazy.has_uninitialized_params()


def test_lazy_failed_load_leaves_placeholders():
    fc = nn.LazyLinear(4)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        fc.load_state_dict({"weight": lucid.randn(4, 7)})
    assert type(fc.weight) is nn.UninitializedParameter and fc.has_uninitialized_params()
    fc(lucid.randn(1, 3))
    assert fc.weight.shape == (4, 3)


def test_lazy_conv(torch):
    conv, tconv = nn.LazyConv2d(6, 3, padding=1), torch.nn.LazyConv2d(6, 3, padding=1)
    assert repr(conv) == repr(tconv)
    assert conv(lucid.randn(2, 3, 5, 5)).shape == (2, 6, 5, 5)
    assert repr(conv) == "Conv2d(3, 6, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    c1 = nn.LazyConv1d(4, 2, groups=2)
    assert c1(lucid.randn(6, 5)).shape == (4, 4) and c1.weight.shape == (4, 3, 2)
    assert type(c1) is nn.Conv1d
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d, but got input of size: \[3, 3\]"):
        nn.LazyConv2d(4, 3)(lucid.randn(3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 2, groups=2)(lucid.randn(1, 3, 5))


def test_uninitialized_parameter_materialize():
    p = nn.UninitializedParameter(dtype=lucid.float64)
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == lucid.float64
    assert p.requires_grad
