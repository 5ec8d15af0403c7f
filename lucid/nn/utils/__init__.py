"""Training utilities over parameters, as ``torch.nn.utils``: gradient clipping, flattening
parameters to one vector, weight re-parametrisations (``parametrize``, ``parametrizations``,
the legacy ``weight_norm`` / ``spectral_norm`` hooks), BatchNorm fusion,
``stateless.functional_call``, ``rnn`` (padding and packing variable-length batches),
``init.skip_init`` and ``memory_format`` (storing convolution weights channels-last).

Example::

    loss.backward()
    lucid.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    opt.step()
"""

from . import fusion, init, memory_format, parametrizations, parametrize, rnn, stateless
from .clip_grad import (
           clip_grad_norm,
           clip_grad_norm_,
           clip_grad_value_,
           clip_grads_with_norm_,
           get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
           fuse_conv_bn_eval,
           fuse_conv_bn_weights,
           fuse_linear_bn_eval,
           fuse_linear_bn_weights,
)
from .init import skip_init
from .memory_format import (
           convert_conv2d_weight_memory_format,
           convert_conv3d_weight_memory_format,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "parametrizations", "parametrize", "fusion", "stateless",
           "remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm", "rnn",
           "init", "memory_format", "skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]
