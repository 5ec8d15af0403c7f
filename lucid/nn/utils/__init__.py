"""Training utilities over parameters, as ``torch.nn.utils``: gradient clipping and
flattening parameters to one vector.

Example::

    loss.backward()
    lucid.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    opt.step()
"""

from .clip_grad import (
           clip_grad_norm,
           clip_grad_norm_,
           clip_grad_value_,
           clip_grads_with_norm_,
           get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
