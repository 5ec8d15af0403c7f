"""load_state_dict: errors, atomicity, sources, identity, assign, overrides and hooks."""

from __future__ import annotations

import numpy as np
import pytest
from nn_util import arr, catch

import lucid
import lucid.nn as nn


def _net(fw, nn_):
    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn_.Linear(4, 3)
            self.register_buffer("rm", fw.zeros(3))
            self.register_buffer("np", fw.zeros(1), persistent=False)
            self.seq = nn_.Sequential(nn_.Linear(3, 3), nn_.ReLU())

    return Net()


def _snapshot(net):
    return {k: (arr(v), v._version) for k, v in net.state_dict(keep_vars=True).items()}


def _errors(fw, nn_):
    net = _net(fw, nn_)
    good = net.state_dict()
    bad = dict(good)
    del bad["rm"]
    bad["c"] = fw.zeros(1)
    bad["fc.weight"] = fw.zeros(3, 5)
    bad["seq.0.bias"] = fw.zeros(4)
    out = [catch(lambda: net.load_state_dict(bad)),
           catch(lambda: net.load_state_dict(bad, strict=False)),
           catch(lambda: net.load_state_dict(good)), str(net.load_state_dict(good))]
    g2 = dict(good)
    g2["extra"] = fw.zeros(1)
    g2["seq.1.weight"] = fw.zeros(1)
    g2["zz.weight"] = fw.zeros(1)
    del g2["rm"]
    r = net.load_state_dict(g2, strict=False)
    out += [repr(r), repr(r.missing_keys), repr(r.unexpected_keys)]
    out.append(catch(lambda: net.load_state_dict([1, 2])))
    g3 = dict(good)
    g3["rm"] = "abc"
    out.append(catch(lambda: net.load_state_dict(g3)))
    g3["rm"] = fw.tensor([1, 2, 3])
    net.load_state_dict(g3)
    out.append(repr(net.rm))
    g3["np"] = fw.zeros(1)
    out.append(catch(lambda: net.load_state_dict(g3)))
    s = nn_.Linear(1, 1)
    s.register_buffer("scalar", fw.tensor(0.0))
    s.load_state_dict({"weight": fw.ones(1, 1), "bias": fw.ones(1), "scalar": fw.ones(1) * 3})
    out.append(repr(s.scalar))
    s.register_buffer("nb", None)
    out.append(catch(lambda: s.load_state_dict(
        {"weight": fw.ones(1, 1), "bias": fw.ones(1), "scalar": fw.ones(()), "nb": fw.ones(1)})))
    return out


def test_errors_and_results_match_torch(both):
    both(_errors)


def test_failed_strict_load_is_atomic():
    net = _net(lucid, nn)
    before = _snapshot(net)
    ids = {k: id(v) for k, v in net.state_dict(keep_vars=True).items()}
    bad = {k: np.full(tuple(v.shape), 9.0) for k, v in net.state_dict().items()}
    del bad["seq.0.bias"]            # missing
    bad["extra.weight"] = np.zeros(2)  # unexpected
    bad["fc.weight"] = np.zeros((3, 5))  # wrong shape
    with pytest.raises(RuntimeError) as ei:
        net.load_state_dict(bad)
    msg = str(ei.value)
    assert msg.count("Error(s) in loading state_dict for Net") == 1
    assert 'Missing key(s) in state_dict: "seq.0.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight".' in msg
    assert "size mismatch for fc.weight: copying a param with shape lucid.Size([3, 5]) from " \
           "checkpoint, the shape in current model is lucid.Size([3, 4])." in msg
    after = _snapshot(net)
    for k, (a, v) in before.items():
        np.testing.assert_array_equal(after[k][0], a)  # every weight unchanged ...
        assert after[k][1] == v                        # ... and not even written
    assert {k: id(v) for k, v in net.state_dict(keep_vars=True).items()} == ids


def test_failed_non_strict_load_is_atomic():
    net = _net(lucid, nn)
    before = _snapshot(net)
    sd = {k: np.ones(tuple(v.shape)) for k, v in net.state_dict().items()}
    sd["seq.0.weight"] = np.ones((2, 2))
    with pytest.raises(RuntimeError, match="size mismatch for seq.0.weight"):
        net.load_state_dict(sd, strict=False)
    for k, (a, _) in before.items():
        np.testing.assert_array_equal(arr(net.state_dict()[k]), a)


def test_load_copies_into_existing_objects():
    net = _net(lucid, nn)
    params = list(net.parameters())  # what an optimizer holds
    w = net.fc.weight
    v0 = w._version
    src = _net(lucid, nn)
    net.load_state_dict(src.state_dict())
    assert list(net.parameters()) == params and all(
        a is b for a, b in zip(net.parameters(), params))
    assert net.fc.weight is w and w._version == v0 + 1 and w.requires_grad
    np.testing.assert_array_equal(arr(w), arr(src.fc.weight))
    assert not np.shares_memory(w.detach().numpy(), src.fc.weight.detach().numpy())


def test_load_accepts_numpy_lists_and_casts_and_moves():
    net = nn.Linear(2, 2).to("numpy")
    b = net.bias
    sd = {"weight": [[1, 2], [3, 4]], "bias": np.array([0.5, 1.5], dtype=np.float64)}
    net.load_state_dict(sd)
    assert net.bias is b and b.dtype == lucid.float32 and b.device == "numpy"
    np.testing.assert_array_equal(arr(net.weight), [[1.0, 2.0], [3.0, 4.0]])
    net.load_state_dict({"weight": lucid.ones(2, 2, dtype=lucid.float64), "bias": (1.0, 2.0)})
    assert net.weight.dtype == lucid.float32 and net.weight.device == "numpy"
    assert sd["weight"] == [[1, 2], [3, 4]]  # the caller's mapping is untouched


def test_load_accepts_torch_tensors(torch):
    tl = torch.nn.Linear(3, 2)
    ll = nn.Linear(3, 2)
    ll.load_state_dict(tl.state_dict())
    np.testing.assert_array_equal(arr(ll.weight), tl.weight.detach().numpy())
    with torch.no_grad():
        tl.bias.copy_(torch.tensor([1.0, 2.0], dtype=torch.float64))
    ll.load_state_dict({"weight": tl.weight.detach().double(), "bias": tl.bias.bfloat16()})
    np.testing.assert_allclose(arr(ll.bias), [1.0, 2.0])
    assert ll.weight.dtype == lucid.float32


def test_assign_replaces_objects_and_keeps_requires_grad():
    net = nn.Linear(2, 2)
    net.bias.requires_grad_(False)
    old_w = net.weight
    sd = {"weight": lucid.ones(2, 2, dtype=lucid.float64), "bias": np.zeros(2, np.float16)}
    net.load_state_dict(sd, assign=True)
    assert net.weight is not old_w and isinstance(net.weight, nn.Parameter)
    assert net.weight.dtype == lucid.float64 and net.weight.requires_grad
    assert isinstance(net.bias, nn.Parameter) and net.bias.dtype == lucid.float16
    assert not net.bias.requires_grad
    m = nn.Module()
    m.b = nn.Buffer(lucid.zeros(2))
    m.load_state_dict({"b": lucid.ones(2)}, assign=True)
    assert isinstance(m.b, nn.Buffer) and arr(m.b).tolist() == [1.0, 1.0]


def test_assign_is_atomic_too():
    net = nn.Linear(2, 2)
    w = net.weight
    with pytest.raises(RuntimeError, match="Missing key"):
        net.load_state_dict({"weight": lucid.ones(2, 2)}, assign=True)
    assert net.weight is w


def test_tied_weights_stay_tied_on_load():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    net[1].weight = net[0].weight
    sd = {k: np.full(tuple(v.shape), 2.0) for k, v in net.state_dict().items()}
    net.load_state_dict(sd)
    assert net[1].weight is net[0].weight
    np.testing.assert_array_equal(arr(net[0].weight), np.full((2, 2), 2.0))


def test_load_from_state_dict_override_upgrades_old_versions():
    class V2(nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lucid.zeros(2))

        def _load_from_state_dict(self, sd, prefix, meta, strict, missing, unexpected, errs):
            if meta.get("version", 1) < 2 and prefix + "w" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "w")
            super()._load_from_state_dict(sd, prefix, meta, strict, missing, unexpected, errs)

    net = nn.Sequential(V2())
    old = {"0.w": np.ones(2)}  # a version-1 checkpoint (no metadata)
    net.load_state_dict(old)
    assert arr(net[0].weight).tolist() == [1.0, 1.0]
    assert list(old) == ["0.w"]  # caller's dict untouched
    new = net.state_dict()
    assert new._metadata["0"] == {"version": 2}
    new["0.weight"] = lucid.full((2,), 3.0)
    net.load_state_dict(new)
    assert arr(net[0].weight).tolist() == [3.0, 3.0]


def test_load_pre_hook_can_rename_keys():
    fc = nn.Linear(1, 1)
    seen = []

    def rename(module, sd, prefix, meta, strict, missing, unexpected, errors):
        seen.append(module is fc)
        if prefix + "w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "w")

    h = fc.register_load_state_dict_pre_hook(rename)
    fc.load_state_dict({"w": [[5.0]], "bias": [1.0]})
    assert seen == [True] and arr(fc.weight).tolist() == [[5.0]]
    h.remove()
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "w"'):
        fc.load_state_dict({"w": [[5.0]], "bias": [1.0]})


def test_post_hook_clearing_keys_makes_a_strict_load_pass():
    fc = nn.Linear(1, 1)
    calls = []

    def post(module, keys):
        calls.append((list(keys.missing_keys), arr(module.weight).tolist()))
        keys.missing_keys.clear()

    fc.register_load_state_dict_post_hook(post)
    r = fc.load_state_dict({"weight": [[4.0]]})
    assert calls == [(["bias"], [[4.0]])]  # the hook sees the loaded values
    assert str(r) == "<All keys matched successfully>"


def test_failed_load_after_post_hooks_rolls_back():
    fc = nn.Linear(1, 1)
    w0 = arr(fc.weight)
    v0 = fc.weight._version
    fc.register_load_state_dict_post_hook(lambda m, keys: None)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        fc.load_state_dict({"weight": [[4.0]]})
    np.testing.assert_array_equal(arr(fc.weight), w0)
    assert fc.weight._version == v0
    fc2 = nn.Linear(1, 1)
    fc2.register_load_state_dict_post_hook(lambda m, keys: 1)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        fc2.load_state_dict({"weight": [[4.0]], "bias": [1.0]})


def test_load_hook_order():
    """Deliberate difference: pre-hooks run during validation (in traversal order, as in
    PyTorch), post-hooks only after every module validated and the values were applied
    (children before parents), so each post-hook sees the complete key lists."""
    out = []
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.Linear(1, 1)))
    for name, m in net.named_modules():
        m.register_load_state_dict_post_hook(
            lambda m, keys, name=name: out.append(f"post {name!r} {keys.missing_keys}"))
        m.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, *a, name=name: out.append(f"pre {name!r} {prefix!r}"))
    net.load_state_dict({"0.weight": lucid.ones(1, 1)}, strict=False)
    missing = ["0.bias", "1.0.weight", "1.0.bias"]
    assert out == ["pre '' ''", "pre '0' '0.'", "pre '1' '1.'", "pre '1.0' '1.0.'",
                   f"post '0' {missing}", f"post '1.0' {missing}", f"post '1' {missing}",
                   f"post '' {missing}"]


def test_direct_load_from_state_dict_applies_at_once():
    fc = nn.Linear(1, 1)
    missing, unexpected, errors = [], [], []
    fc._load_from_state_dict({"weight": lucid.ones(1, 1)}, "", {}, True, missing, unexpected,
                             errors)
    assert arr(fc.weight).tolist() == [[1.0]] and missing == ["bias"]


def test_load_accepts_anything_with_array_and_scalars():
    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.full((1, 1), 3.0)

    fc = nn.Linear(1, 1)
    fc.load_state_dict({"weight": ArrayLike(), "bias": [2.0]})
    assert arr(fc.weight).tolist() == [[3.0]] and arr(fc.bias).tolist() == [2.0]
    m = nn.Module()
    m.register_buffer("s", lucid.tensor(0.0))
    m.load_state_dict({"s": 4.0})
    assert float(m.s) == 4.0
    m.load_state_dict({"s": np.array([5.0])})  # shape (1,) into a 0-d tensor, as PyTorch
    assert float(m.s) == 5.0 and tuple(m.s.shape) == ()


def test_assign_never_aliases_a_numpy_checkpoint():
    a = np.ones(2, np.float32)
    m = nn.Module()
    m.p = nn.Parameter(lucid.zeros(2))
    m.load_state_dict({"p": a}, assign=True)
    a[0] = 7.0
    assert arr(m.p).tolist() == [1.0, 1.0]
    m.s = nn.Parameter(lucid.tensor(0.0))
    m.load_state_dict({"p": a, "s": lucid.tensor([5.0])}, assign=True)
    assert tuple(m.s.shape) == () and float(m.s) == 5.0


def test_load_rejects_int_checkpoint_for_trainable_param_with_assign():
    fc = nn.Linear(1, 1)
    w = fc.weight
    with pytest.raises(RuntimeError, match="floating point"):
        fc.load_state_dict({"weight": lucid.tensor([[1]]), "bias": [0.0]}, assign=True)
    assert fc.weight is w


# ---- extra state joins the atomic load --------------------------------------------------------

class _Counter(nn.Module):
    """A module with weights and extra state; ``set_extra_state`` refuses negative counts."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.count = 0
        self.log = ["init"]

    def get_extra_state(self):
        return {"count": self.count, "log": self.log}

    def set_extra_state(self, state):
        self.log.append(state["count"])  # mutates before it may refuse
        if state["count"] < 0:
            raise ValueError("negative count")
        self.count = state["count"]
        self.log = list(state["log"])


def _counters():
    lucid.manual_seed(0)
    return nn.Sequential(_Counter(), nn.Linear(2, 2), _Counter(), _Counter())


def _all_state(net):
    return ({k: (arr(v).copy(), v._version) for k, v in net.state_dict(keep_vars=True).items()
             if isinstance(v, lucid.Tensor)},
            [(m.count, list(m.log)) for m in net.modules() if isinstance(m, _Counter)])


@pytest.mark.parametrize("failing", [0, 2, 3])
def test_failing_set_extra_state_changes_nothing(failing):
    net = _counters()
    before = _all_state(net)
    sd = {k: (v + 5.0 if isinstance(v, lucid.Tensor) else {"count": 7, "log": ["new"]})
          for k, v in net.state_dict().items()}
    sd[f"{failing}._extra_state"] = {"count": -1, "log": []}
    with pytest.raises(ValueError, match="negative count"):
        net.load_state_dict(sd)
    tensors, extra = _all_state(net)
    for k, (a, version) in before[0].items():
        np.testing.assert_array_equal(tensors[k][0], a, err_msg=k)
        assert tensors[k][1] == version, k
    assert extra == before[1]  # counts and logs of every module as they were
    sd[f"{failing}._extra_state"] = {"count": 3, "log": ["ok"]}
    net.load_state_dict(sd)  # a good load still works afterwards
    assert [m.count for m in net.modules() if isinstance(m, _Counter)] == \
        [3 if i == failing else 7 for i in (0, 2, 3)]
    np.testing.assert_array_equal(arr(net[1].weight), before[0]["1.weight"][0] + 5.0)


def test_failing_set_extra_state_after_post_hooks_setup_rolls_back():
    net = _counters()
    net[1].register_load_state_dict_post_hook(lambda m, keys: None)
    before = _all_state(net)
    sd = dict(net.state_dict())
    sd = {k: (v * 0.0 if isinstance(v, lucid.Tensor) else v) for k, v in sd.items()}
    sd["3._extra_state"] = {"count": -2, "log": []}
    with pytest.raises(ValueError, match="negative count"):
        net.load_state_dict(sd)
    after = _all_state(net)
    assert after[1] == before[1]
    for k, (a, _) in before[0].items():
        np.testing.assert_array_equal(after[0][k][0], a, err_msg=k)


# ---- shape checks compare shapes, not element counts -----------------------------------------

@pytest.mark.parametrize("assign", [False, True])
def test_transposed_weight_is_a_size_mismatch(assign):
    lin = nn.Linear(3, 4)
    w0, b0, v0 = arr(lin.weight).copy(), arr(lin.bias).copy(), lin.weight._version
    with pytest.raises(RuntimeError) as ei:
        lin.load_state_dict({"weight": lucid.ones(3, 4), "bias": lucid.ones(4)}, assign=assign)
    assert "size mismatch for weight: copying a param with shape lucid.Size([3, 4]) from " \
           "checkpoint, the shape in current model is lucid.Size([4, 3])." in str(ei.value)
    np.testing.assert_array_equal(arr(lin.weight), w0)
    np.testing.assert_array_equal(arr(lin.bias), b0)
    assert lin.weight._version == v0 and isinstance(lin.weight, nn.Parameter)


@pytest.mark.parametrize("bad", [(6,), (2, 3, 1), (1, 6)])
def test_same_element_count_other_shapes_are_size_mismatches(bad):
    m = nn.Module()
    m.register_buffer("b", lucid.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"size mismatch for b: copying a param with shape "
                                           rf"lucid.Size\(\[{', '.join(map(str, bad))}\]\)"):
        m.load_state_dict({"b": np.ones(bad)})
    assert arr(m.b).tolist() == [[0.0] * 3] * 2


def test_size_mismatch_message_matches_torch_format():
    torch = pytest.importorskip("torch")
    tl = torch.nn.Linear(3, 4)
    with pytest.raises(RuntimeError) as te:
        tl.load_state_dict({"weight": torch.ones(3, 4), "bias": torch.ones(4)})
    with pytest.raises(RuntimeError) as le:
        nn.Linear(3, 4).load_state_dict({"weight": lucid.ones(3, 4), "bias": lucid.ones(4)})
    assert str(le.value).replace("lucid.Size", "torch.Size") == str(te.value)
