"""Module attribute routing and registration: registries, validation, errors."""

from __future__ import annotations

import pytest
from nn_util import catch

import lucid
import lucid.nn as nn


def M(fw=lucid, nn_=nn):
    """A module with a parameter ``w``, a buffer ``b`` and a child ``l`` (in ``fw``)."""

    class M(nn_.Module):
        def __init__(self):
            super().__init__()
            self.w = nn_.Parameter(fw.zeros(2))
            self.register_buffer("b", fw.zeros(2))
            self.l = nn_.Linear(2, 2)

    return M()


def test_assignment_routes_into_registries():
    m = M()
    assert list(m._parameters) == ["w"] and list(m._buffers) == ["b"]
    assert list(m._modules) == ["l"]
    assert "w" not in m.__dict__ and "b" not in m.__dict__ and "l" not in m.__dict__
    assert m.w is m._parameters["w"] and m.l is m._modules["l"]


def test_plain_tensor_attribute_is_never_registered():
    m = M()
    m.t = lucid.zeros(3)
    assert "t" in m.__dict__ and "t" not in m._buffers and "t" not in m._parameters
    assert [n for n, _ in m.named_buffers()] == ["b"]


def test_buffer_object_assignment_registers_with_its_persistence():
    m = M()
    m.nb = nn.Buffer(lucid.zeros(1), persistent=False)
    m.pb = nn.Buffer(lucid.zeros(1))
    assert "nb" in m._buffers and "nb" in m._non_persistent_buffers_set
    assert list(m.state_dict()) == ["w", "b", "pb", "l.weight", "l.bias"]


def test_assigning_a_tensor_to_a_buffer_name_updates_the_buffer():
    m = M()
    t = lucid.ones(2)
    m.b = t
    assert m._buffers["b"] is t and m.b is t


def test_assigning_none_keeps_the_slot_and_is_skipped():
    m = M()
    m.w = None
    m.l = None
    m.b = None
    assert "w" in m._parameters and m.w is None and m.l is None and m.b is None
    assert list(m.state_dict()) == []
    assert list(m.parameters()) == [] and list(m.buffers()) == []
    assert list(m.children()) == []
    m.to(lucid.float64)  # None slots skipped


def test_reassigning_a_name_moves_it_between_registries():
    m = M()
    m.b = nn.Linear(1, 1)
    assert "b" not in m._buffers and "b" in m._modules
    m.x = 3
    m.x = nn.Parameter(lucid.zeros(1))
    assert "x" not in m.__dict__ and "x" in m._parameters


def test_delattr_removes_from_registries():
    m = M()
    m.nb = nn.Buffer(lucid.zeros(1), persistent=False)
    del m.w, m.b, m.l, m.nb
    assert not m._parameters and not m._buffers and not m._modules
    assert not m._non_persistent_buffers_set
    with pytest.raises(AttributeError):
        del m.nope


def test_register_module_and_set_submodule():
    m = M()
    m.register_module("extra", nn.ReLU())
    assert isinstance(m.extra, nn.ReLU)
    m.set_submodule("l", nn.Identity())
    assert isinstance(m.l, nn.Identity)
    s = nn.Sequential(nn.Sequential(nn.ReLU()))
    s.set_submodule("0.0", nn.Tanh())
    assert isinstance(s[0][0], nn.Tanh)
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        s.set_submodule("0.zz", nn.Tanh(), strict=True)
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name"):
        s.set_submodule("", nn.Tanh())


def test_call_super_init_false_rejects_arguments():
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)


def _scenario_setattr(fw, nn_):
    out = []
    m = M(fw, nn_)
    values = [fw.zeros(2), fw.zeros(2, dtype=fw.float64), fw.zeros(2, dtype=fw.int64), 3, "s",
              fw.zeros(2, dtype=fw.bool), fw.zeros(2, dtype=fw.float16),
              fw.zeros(2, dtype=fw.int32), fw.zeros(2, dtype=fw.uint8),
              fw.zeros(2, dtype=fw.int8), fw.zeros(2, dtype=fw.int16)]
    for v in values:
        out.append(catch(lambda v=v: setattr(m, "w", v)))
    out.append(catch(lambda: setattr(m, "l", 3)))
    out.append(catch(lambda: setattr(m, "b", 3)))
    m.x = 3
    out.append(catch(lambda: setattr(m, "x", nn_.Buffer(fw.zeros(1)))))
    out.append(catch(lambda: setattr(m, "w", nn_.Buffer(fw.zeros(1)))))
    out.append(catch(lambda: setattr(m, "l", nn_.Buffer(fw.zeros(1)))))
    out.append(catch(lambda: m.nothere))
    return out


def test_setattr_errors_match_torch(both):
    both(_scenario_setattr)


def _scenario_register(fw, nn_):
    out = []
    m = M(fw, nn_)
    m.plain = fw.ones(2)
    for args in [(1, fw.zeros(1)), ("a.b", fw.zeros(1)), ("", fw.zeros(1)),
                 ("w", fw.zeros(1)), ("l", None), ("x", 3), ("plain", fw.zeros(1))]:
        out.append("buf " + catch(lambda args=args: m.register_buffer(*args)))
    for args in [(1, None), ("a.b", None), ("", None), ("b", None), ("x", fw.zeros(1)),
                 ("y", 3), ("z", nn_.Parameter(fw.zeros(2)) * 2)]:
        out.append("par " + catch(lambda args=args: m.register_parameter(*args)))
    for args in [(1, nn_.ReLU()), ("a.b", nn_.ReLU()), ("", nn_.ReLU()), ("w", nn_.ReLU()),
                 ("y", 3), ("q", None)]:
        out.append("mod " + catch(lambda args=args: m.add_module(*args)))
    return out


def test_register_validation_matches_torch(both):
    both(_scenario_register)


def _scenario_before_init(fw, nn_):
    class P(nn_.Module):
        def __init__(self):
            self.w = nn_.Parameter(fw.zeros(1))

    class C(nn_.Module):
        def __init__(self):
            self.l = nn_.ReLU()

    class B(nn_.Module):
        def __init__(self):
            self.register_buffer("b", fw.zeros(1))

    class B2(nn_.Module):
        def __init__(self):
            self.x = 3
            self.t = fw.zeros(1)
            self.b = nn_.Buffer(fw.zeros(1))

    class R(nn_.Module):
        def __init__(self):
            self.register_parameter("w", None)

    return [catch(cls) for cls in (P, C, B, B2, R)] + [
        catch(lambda: nn_.Module()(1)), catch(lambda: nn_.Module(a=1)),
        catch(lambda: nn_.Module(1)),
    ]


def test_use_before_init_and_missing_forward_match_torch(both):
    both(_scenario_before_init)


def _scenario_lookup(fw, nn_):
    m = M(fw, nn_)
    m.register_buffer("nb", fw.zeros(1), persistent=False)
    out = []
    for t in ["", "l", "l.weight", "nope", "l.nope", "w.x", "b", "nb"]:
        for f in ["get_submodule", "get_parameter", "get_buffer"]:
            out.append(f"{f} {t} " + catch(lambda f=f, t=t: type(getattr(m, f)(t)).__name__))
    return out


def test_dotted_lookup_matches_torch(both):
    both(_scenario_lookup)


def test_dir_lists_registered_names():
    m = M()
    d = dir(m)
    assert {"w", "b", "l", "forward", "state_dict"} <= set(d)
    assert d == sorted(d)
    assert "0" not in dir(nn.Sequential(nn.ReLU()))
