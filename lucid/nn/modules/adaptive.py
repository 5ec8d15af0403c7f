"""``AdaptiveLogSoftmaxWithLoss``, as ``torch.nn.AdaptiveLogSoftmaxWithLoss`` (Grave et al.,
"Efficient softmax approximation for GPUs"): a head over the frequent classes plus one
cluster token per tail cluster, each tail cluster a low-rank two-layer projection."""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ... import ops
from ..._tensor import Tensor
from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax, as ``torch.nn.AdaptiveLogSoftmaxWithLoss``: same parameters
    (``head``, ``tail.i.0``, ``tail.i.1``), same outputs.

    ``forward(input, target)`` returns a named tuple ``(output, loss)``: the target
    log-probability of every row and the mean negative log-likelihood; ``log_prob`` gives the
    full (N, n_classes) log-probabilities and ``predict`` the most likely class.

    Example::

        asm = nn.AdaptiveLogSoftmaxWithLoss(64, 1000, cutoffs=[10, 100], div_value=4.0)
        out, loss = asm(lucid.randn(32, 64), lucid.randint(0, 1000, (32,)))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Re-initialise the head and every tail projection.

        Example::

            asm.reset_parameters()
        """
        self.head.reset_parameters()
        for i2h, h2o in self.tail:  # type: ignore[misc]
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """``(output, loss)``: each row's target log-probability and their mean NLL.

        Example::

            out, loss = asm(x, y)
        """
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.shape}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        used_rows = 0
        batch_size = int(target.shape[0])
        output = input.new_zeros(batch_size)
        gather_inds = target.new_zeros(batch_size)
        cutoff_values = [0] + self.cutoffs
        for i in range(len(cutoff_values) - 1):
            low, high = cutoff_values[i], cutoff_values[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds = gather_inds.index_copy(0, rows, target[mask])
            else:
                relative = target[mask] - low
                cluster_output = self.tail[i - 1](input.index_select(0, rows))
                gather_inds = gather_inds.index_fill(0, rows, self.shortlist_size + i - 1)
                logprob = F.log_softmax(cluster_output, dim=1)
                local = logprob.gather(1, relative.unsqueeze(1))
                output = output.index_copy(0, rows, local.squeeze(1))
            used_rows += int(rows.numel())
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, _ in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ops.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of all ``n_classes`` classes, (N, in_features) -> (N, n_classes).

        Example::

            asm.log_prob(lucid.randn(4, 64)).exp().sum(1)     # ones
        """
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (``log_prob(input).argmax(1)``, computing the
        tail clusters only for rows whose head prediction is a cluster).

        Example::

            asm.predict(lucid.randn(4, 64))
        """
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist],
                                           head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(dim=1)
        return output
