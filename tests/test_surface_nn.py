"""The public surface of ``lucid.nn``: every ``F.*`` name is written out in
nn/functional.py, and the import paths of the nn files keep working."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import lucid.nn as nn
import lucid.nn.functional as F

# What ``lucid.nn.functional`` exports (each name written out in functional.py).
_F_NAMES = {
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "avg_pool2d", "batch_norm", "bilinear", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "celu", "conv1d", "conv2d", "conv_transpose1d",
    "conv_transpose2d", "cross_entropy", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "elu", "embedding", "fold", "gelu", "glu", "group_norm", "hardshrink", "hardsigmoid",
    "hardswish", "hardtanh", "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "linear", "log_softmax", "logsigmoid", "max_pool1d",
    "max_pool2d", "mish", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "prelu",
    "relu", "relu6", "relu_", "rms_norm", "scaled_dot_product_attention", "selu", "sigmoid",
    "silu", "smooth_l1_loss", "softmax", "softmin", "softplus", "softshrink", "softsign",
    "tanh", "tanhshrink", "threshold", "unfold",
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "cosine_similarity",
    "pairwise_distance", "embedding_bag", "affine_grid", "grid_sample", "gumbel_softmax",
    "local_response_norm", "ctc_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "margin_ranking_loss", "cosine_embedding_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "gaussian_nll_loss", "poisson_nll_loss",
    "elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_", "threshold_", "rrelu", "rrelu_",
    "alpha_dropout", "feature_alpha_dropout", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "multi_head_attention_forward",
    "native_channel_shuffle", "pdist", "upsample", "upsample_bilinear", "upsample_nearest",
    "linear_cross_entropy",
}


def _explicit_names(path: Path) -> set[str]:
    """Names bound in a file by ``def``, ``class``, assignment or ``from ... import``."""
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            assert all(a.name != "*" for a in node.names), "star import in " + str(path)
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_functional_names_are_written_out():
    src = Path(F.__file__)
    text = src.read_text()
    assert "importlib" not in text and "globals()" not in text
    missing = set(F.__all__) - _explicit_names(src)
    assert not missing, f"not defined or imported by name in functional.py: {sorted(missing)}"
    assert len(F.__all__) == len(set(F.__all__))


def test_functional_surface_unchanged():
    assert set(F.__all__) == _F_NAMES
    for name in F.__all__:
        assert callable(getattr(F, name)), name


@pytest.mark.parametrize("path, name", [
    ("lucid.nn", "Module"),
    ("lucid.nn", "Parameter"),
    ("lucid.nn", "Buffer"),
    ("lucid.nn.module", "Module"),
    ("lucid.nn.parameter", "Parameter"),
    ("lucid.nn.parameter", "Buffer"),
    ("lucid.nn.modules", "Linear"),
    ("lucid.nn.modules.module", "Module"),
    ("lucid.nn.modules.module", "_IncompatibleKeys"),
    ("lucid.nn.modules.activation", "ReLU"),
    ("lucid.nn.modules.activation", "GELU"),
    ("lucid.nn.modules.activation", "Softmax"),
    ("lucid.nn.modules.activation", "MultiheadAttention"),
    ("lucid.nn.modules.activation", "LogSoftmax"),
    ("lucid.nn.modules.attention", "MultiheadAttention"),
    ("lucid.nn.modules.container_param", "ParameterDict"),
    ("lucid.nn.modules.container", "Sequential"),
    ("lucid.nn.modules.container", "ParameterList"),
    ("lucid.nn.modules.container", "ParameterDict"),
    ("lucid.nn.modules.linear", "Linear"),
    ("lucid.nn.modules.linear", "Identity"),
    ("lucid.nn.modules.transformer", "TransformerEncoderLayer"),
    ("lucid.nn.modules.transformer", "MultiheadAttention"),
    ("lucid.nn.utils", "clip_grad_norm_"),
])
def test_import_paths(path, name):
    assert hasattr(importlib.import_module(path), name)


def test_every_layer_is_exported_once():
    assert len(nn.__all__) == len(set(nn.__all__))
    for name in nn.__all__:
        assert getattr(nn, name) is not None


def test_layer_classes_are_found_where_they_are_defined():
    """Every layer class is defined by a ``class`` statement in the file its ``__module__``
    names (no classes built by ``type()``)."""
    for name in nn.__all__:
        obj = getattr(nn, name)
        if not isinstance(obj, type):
            continue
        src = Path(importlib.import_module(obj.__module__).__file__)
        text = src.read_text()
        assert f"class {name}(" in text or f"class {name}:" in text, (name, src)


def test_nn_files_stay_small():
    root = Path(nn.__file__).parent
    sizes = {p.relative_to(root): len(p.read_text().splitlines()) for p in root.rglob("*.py")}
    assert max(sizes.values()) <= 500, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
