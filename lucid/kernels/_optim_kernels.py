"""njit update rules of the optimizers: one fused pass per parameter (optim.py wraps them).

Every kernel reads the parameter, its gradient and its state buffers once and writes them
once, all flat, C-contiguous and of one dtype. Hyper-parameters arrive as float64 and are
rounded to the array dtype first, as PyTorch does for Python scalars, and each expression
is PyTorch's per-element arithmetic in PyTorch's order. Options travel in ``flags`` (bit
values below); a branch on a flag is loop-invariant and LLVM unswitches it.

Rounding: PyTorch's compiled CPU kernels fuse ``a + b*c`` into one FMA (lerp, ``add`` with
alpha, ``addcmul``), while a product computed by a separate in-place op (``v.mul_(beta2)``)
is rounded first. The kernels therefore compile without fastmath (no contraction, no
reassociation) and call ``fma`` exactly where PyTorch's arithmetic fuses. Fifty steps of
every optimizer on float32 with injected gradients then give parameters bit-identical to
torch 2.13 for almost every element. With LLVM free to contract (fastmath ``contract``), 7-78%
of the elements differed in the last bits, since LLVM fused other products than PyTorch.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange
from numba.core import types as nbt
from numba.core.extending import intrinsic, overload

from ._jit import helper, kernel

MAXIMIZE = 1
# sgd
NESTEROV = 2
FIRST = 4
MOMENTUM = 8
# adam
AMSGRAD = 2
# rmsprop
CENTERED = 2
# MOMENTUM = 8 as for sgd
# radam
RECTIFY = 2

_F = nbt.float64
_I = nbt.int64


def _sig(n_arrays: int, n_floats: int):
    return lambda T: (T[::1],) * n_arrays + (_F,) * n_floats + (_I,)


def fma(a, b, c):
    """a*b + c rounded once (llvm.fma in compiled code; two roundings as plain Python)."""
    return a * b + c


@intrinsic
def _fma(typingctx, a, b, c):
    if not (isinstance(a, nbt.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


@overload(fma)
def _fma_overload(a, b, c):
    if isinstance(a, nbt.Float) and a == b == c:
        return lambda a, b, c: _fma(a, b, c)
    return None


@helper
def _lerp(s, e, w, c, small):
    """torch.lerp(s, e, w): fma(w, e-s, s) for |w| < 0.5, else fma(w-1, e-s, e) (c = w or w-1)."""
    if small:
        return fma(c, e - s, s)
    return fma(c, e - s, e)


def _exact(fn):
    """njit a callee of these kernels under their own policy: no fastmath, so what it
    computes is rounded exactly as the same lines written inside the kernel."""
    # NOTE: not _jit.helper: its fastmath flags let LLVM fold (1 - b) - 1 into -b once
    # inlined (float64 Adam with beta1 = 0.3 then differed in the last bit).
    return numba.njit(cache=False, fastmath=False, nogil=True, error_model="numpy",
                      inline="always")(fn)


@_exact
def _lerp_coeff(w, one):
    """(small, c) for ``_lerp`` with weight w: small = |w| < 0.5, c = w if small else w-1."""
    small = abs(w) < 0.5
    return small, (w if small else w - one)


@_exact
def _grad_in(g, p, neg, l2, wd, dec, dk):
    """The gradient prologue every rule shares: (gi, pi), the gradient and the parameter the
    update reads.

    gi = -g if maximize else g;  pi = p * decay if decoupled decay else p
    gi = fma(wd, pi, gi) if L2 weight decay
    """
    gi = -g if neg else g
    pi = p * dk if dec else p
    if l2:
        gi = fma(wd, pi, gi)
    return gi, pi


@_exact
def _moments(m, v, g, w, c, small, b2, b2c):
    """Adam's moment updates: (lerp(m, g, 1-b1), v*b2 + (1-b2)*g*g), the second as one FMA."""
    return _lerp(m, g, w, c, small), fma(b2c * g, g, v * b2)


@helper
def _maximum(a, b):
    """torch.maximum: the larger value, NaN when either is NaN."""
    if a > b or a != a:
        return a
    return b


def _build(fn, sig):
    name = "optim." + fn.__name__.lstrip("_")
    ser = kernel(fn, name=name, fastmath=False, signatures=[sig])
    par = kernel(fn, name=name + "[par]", parallel=True, fastmath=False, signatures=[sig])
    return ser, par


def _sgd(p, g, buf, lr, momentum, dampening, weight_decay, flags):
    """SGD with momentum, dampening, nesterov, L2 weight decay; buf is unused without MOMENTUM.

    for i in prange(n):
        gi = -g[i] if maximize else g[i];  gi += wd * p[i] if wd
        if momentum: b = gi if first else buf[i]*mom + (1-damp)*gi;  buf[i] = b
                     gi = gi + mom*b if nesterov else b
        p[i] += -lr * gi
    """
    T = p.dtype.type
    one = T(1.0)
    nlr = T(-lr)
    mom = T(momentum)
    dmp = T(1.0 - dampening)
    wd = T(weight_decay)
    neg = (flags & MAXIMIZE) != 0
    nesterov = (flags & NESTEROV) != 0
    first = (flags & FIRST) != 0
    has_mom = (flags & MOMENTUM) != 0
    l2 = weight_decay != 0.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, False, one)
        if has_mom:
            if first:
                b = gi
            else:
                b = fma(dmp, gi, buf[i] * mom)
            buf[i] = b
            if nesterov:
                gi = fma(mom, b, gi)
            else:
                gi = b
        p[i] = fma(nlr, gi, pi)


def _adam(p, g, m, v, vmax, beta1, beta2, eps, weight_decay, decay, step_size, bc2_sqrt, flags):
    """Adam / AdamW (decay = 1 - lr*wd, decoupled) / AMSGrad; vmax is unused without AMSGRAD.

    for i in prange(n):
        gi = ±g[i];  pi = p[i] * decay;  gi += wd * pi
        m[i] = lerp(m[i], gi, 1-b1);  v[i] = v[i]*b2 + (1-b2)*gi*gi
        vh = vmax[i] = maximum(vmax[i], v[i]) if amsgrad else v[i]
        p[i] = pi + -step_size * m[i] / (sqrt(vh)/bc2_sqrt + eps)
    """
    T = p.dtype.type
    one = T(1.0)
    w = T(1.0 - beta1)
    small, c = _lerp_coeff(w, one)
    b2 = T(beta2)
    b2c = T(1.0 - beta2)
    e = T(eps)
    wd = T(weight_decay)
    dk = T(decay)
    nss = T(-step_size)
    bc = T(bc2_sqrt)
    neg = (flags & MAXIMIZE) != 0
    ams = (flags & AMSGRAD) != 0
    l2 = weight_decay != 0.0
    dec = decay != 1.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, dec, dk)
        mi, vi = _moments(m[i], v[i], gi, w, c, small, b2, b2c)
        m[i] = mi
        v[i] = vi
        if ams:
            vi = _maximum(vmax[i], vi)
            vmax[i] = vi
        d = np.sqrt(vi) / bc + e
        p[i] = pi + nss * mi / d


def _adamax(p, g, m, u, beta1, beta2, eps, weight_decay, clr, flags):
    """Adamax: m = lerp(m, g, 1-b1); u = maximum(u*b2, |g|+eps); p += -clr * m / u.

    for i in prange(n):
        gi = ±g[i] (+ wd*p[i]);  m[i] = lerp(m[i], gi, 1-b1)
        u[i] = maximum(u[i]*b2, |gi| + eps);  p[i] += -clr * m[i] / u[i]
    """
    T = p.dtype.type
    one = T(1.0)
    w = T(1.0 - beta1)
    small, c = _lerp_coeff(w, one)
    b2 = T(beta2)
    e = T(eps)
    wd = T(weight_decay)
    nclr = T(-clr)
    neg = (flags & MAXIMIZE) != 0
    l2 = weight_decay != 0.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, False, one)
        mi = _lerp(m[i], gi, w, c, small)
        ui = _maximum(u[i] * b2, abs(gi) + e)
        m[i] = mi
        u[i] = ui
        p[i] = pi + nclr * mi / ui


def _adagrad(p, g, s, eps, weight_decay, clr, flags):
    """Adagrad: s += g*g; p += -clr * g / (sqrt(s) + eps).

    for i in prange(n):
        gi = ±g[i] (+ wd*p[i]);  s[i] += gi*gi;  p[i] += -clr * gi / (sqrt(s[i]) + eps)
    """
    T = p.dtype.type
    one = T(1.0)
    e = T(eps)
    wd = T(weight_decay)
    nclr = T(-clr)
    neg = (flags & MAXIMIZE) != 0
    l2 = weight_decay != 0.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, False, one)
        si = fma(gi, gi, s[i])
        s[i] = si
        d = np.sqrt(si) + e
        p[i] = pi + nclr * gi / d


def _rmsprop(p, g, sq, ga, buf, lr, alpha, eps, weight_decay, momentum, flags):
    """RMSprop, optionally centered (ga) and with momentum (buf); unused buffers are ignored.

    for i in prange(n):
        gi = ±g[i] (+ wd*p[i]);  sq[i] = sq[i]*a + (1-a)*gi*gi
        avg = sqrt(sq[i] - ga[i]*ga[i]) + eps with ga[i] = lerp(ga[i], gi, 1-a)  if centered
              sqrt(sq[i]) + eps                                                  otherwise
        momentum: buf[i] = buf[i]*mom + gi/avg;  p[i] += -lr * buf[i]
        else:     p[i] += -lr * gi / avg
    """
    T = p.dtype.type
    one = T(1.0)
    a = T(alpha)
    w = T(1.0 - alpha)
    small, c = _lerp_coeff(w, one)
    e = T(eps)
    wd = T(weight_decay)
    mom = T(momentum)
    nlr = T(-lr)
    neg = (flags & MAXIMIZE) != 0
    centered = (flags & CENTERED) != 0
    has_mom = (flags & MOMENTUM) != 0
    l2 = weight_decay != 0.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, False, one)
        si = fma(w * gi, gi, sq[i] * a)
        sq[i] = si
        if centered:
            gai = _lerp(ga[i], gi, w, c, small)
            ga[i] = gai
            avg = np.sqrt(fma(-gai, gai, si)) + e
        else:
            avg = np.sqrt(si) + e
        if has_mom:
            b = buf[i] * mom
            b = b + one * gi / avg
            buf[i] = b
            p[i] = fma(nlr, b, pi)
        else:
            p[i] = pi + nlr * gi / avg


def _nadam(p, g, m, v, beta1, beta2, eps, weight_decay, decay, bc2, c_grad, c_avg, flags):
    """NAdam: two addcdiv steps over one denominator, as PyTorch's single-tensor loop.

    for i in prange(n):
        gi = ±g[i];  pi = p[i] * decay;  gi += wd * pi
        m[i] = lerp(m[i], gi, 1-b1);  v[i] = v[i]*b2 + (1-b2)*gi*gi
        d = sqrt(v[i] / bc2) + eps;  p[i] = (pi + c_grad*gi/d) + c_avg*m[i]/d
    """
    T = p.dtype.type
    one = T(1.0)
    w = T(1.0 - beta1)
    small, c = _lerp_coeff(w, one)
    b2 = T(beta2)
    b2c = T(1.0 - beta2)
    e = T(eps)
    wd = T(weight_decay)
    dk = T(decay)
    bc = T(bc2)
    cg = T(c_grad)
    ca = T(c_avg)
    neg = (flags & MAXIMIZE) != 0
    l2 = weight_decay != 0.0
    dec = decay != 1.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, dec, dk)
        mi, vi = _moments(m[i], v[i], gi, w, c, small, b2, b2c)
        m[i] = mi
        v[i] = vi
        d = np.sqrt(vi / bc) + e
        pi = pi + cg * gi / d
        p[i] = pi + ca * mi / d


def _radam(p, g, m, v, beta1, beta2, eps, weight_decay, decay, lr, bc1, bc2_sqrt, rect, flags):
    """RAdam: the rectified adaptive step once rho_t > 5 (RECTIFY), else bias-corrected SGD.

    for i in prange(n):
        gi = ±g[i];  pi = p[i] * decay;  gi += wd * pi
        m[i] = lerp(m[i], gi, 1-b1);  v[i] = v[i]*b2 + (1-b2)*gi*gi
        u = m[i] / bc1 * lr
        if rectify: u = u * (1/(sqrt(v[i]) + eps) * bc2_sqrt) * rect
        p[i] = pi - u
    """
    T = p.dtype.type
    one = T(1.0)
    w = T(1.0 - beta1)
    small, c = _lerp_coeff(w, one)
    b2 = T(beta2)
    b2c = T(1.0 - beta2)
    e = T(eps)
    wd = T(weight_decay)
    dk = T(decay)
    lrt = T(lr)
    b1t = T(bc1)
    bcs = T(bc2_sqrt)
    rt = T(rect)
    neg = (flags & MAXIMIZE) != 0
    rectify = (flags & RECTIFY) != 0
    l2 = weight_decay != 0.0
    dec = decay != 1.0
    for i in prange(p.shape[0]):
        gi, pi = _grad_in(g[i], p[i], neg, l2, wd, dec, dk)
        mi, vi = _moments(m[i], v[i], gi, w, c, small, b2, b2c)
        m[i] = mi
        v[i] = vi
        u = mi / b1t
        u = u * lrt
        if rectify:
            r = one / (np.sqrt(vi) + e)
            u = u * (r * bcs)
            u = u * rt
        p[i] = pi - u


SGD = _build(_sgd, _sig(3, 4))
ADAM = _build(_adam, _sig(5, 7))
ADAMAX = _build(_adamax, _sig(4, 5))
ADAGRAD = _build(_adagrad, _sig(3, 3))
RMSPROP = _build(_rmsprop, _sig(5, 5))
NADAM = _build(_nadam, _sig(4, 8))
RADAM = _build(_radam, _sig(4, 9))
