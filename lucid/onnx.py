"""``lucid.onnx``: ONNX export is not available in lucid.

lucid runs eagerly and records no graph that could be written as ONNX. To move a model
elsewhere, save its weights (``lucid.save(model.state_dict(), "model.pt")`` or
``lucid.save_file(model.state_dict(), "model.safetensors")``) and load them into the same
architecture in the target framework (PyTorch's ``load_state_dict`` reads both).

Example::

    lucid.save_file(model.state_dict(), "model.safetensors")
"""

from __future__ import annotations

from typing import Any

__all__ = ["export", "is_in_onnx_export"]


def export(model: Any, args: Any = (), f: Any = None, **kwargs: Any) -> None:
    """Always raises NotImplementedError (see this module's docstring for the alternative)."""
    raise NotImplementedError(
        "lucid.onnx.export is not supported: lucid runs eagerly and records no graph to "
        "export. Save the weights instead, with lucid.save(model.state_dict(), f) or "
        "lucid.save_file(model.state_dict(), 'model.safetensors') (safetensors), and load "
        "them into the same architecture in the target framework.")


def is_in_onnx_export() -> bool:
    """False: lucid never exports ONNX."""
    return False
