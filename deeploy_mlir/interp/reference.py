"""numpy semantics of every `training` compute op: the specification the C
kernels and every pass are checked against."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp import families as _families  # noqa: F401  (registers them)
from deeploy_mlir.interp.registry import lookup

F32 = np.float32


def _gemm(
    op: T.GemmOp, ins: Sequence[np.ndarray], start: np.ndarray | None = None
) -> list[np.ndarray]:
    """Y = alpha * A' B' + beta * C; a K tile: the sums go on from `start`
    (Y's partial sums, `accumulate`), and a `partial` one stops at the raw
    sums (alpha and C come on the last K tile)."""
    a = ins[0].T if op.trans_a is not None else ins[0]
    b = ins[1].T if op.trans_b is not None else ins[1]
    acc = (a.astype(F32) @ b.astype(F32)).astype(F32)
    if start is not None:
        acc = (start + acc).astype(F32)
    if op.partial is not None:
        return [acc]
    y = F32(op.alpha.value.data) * acc
    if len(ins) == 3:
        y = y + F32(op.beta.value.data) * ins[2]
    return [y.astype(F32)]


def gemm_onto(op: T.GemmOp, ins: Sequence[np.ndarray], y: np.ndarray) -> np.ndarray:
    """A gemm K tile that adds into Y (`accumulate`): Y's partial sums plus
    this tile's, then alpha and C unless the tile is `partial`."""
    return _gemm(op, ins, y)[0]


def _binary(op: T.BinaryOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    a, b = ins
    fn = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.divide,
        "pow": np.power,
    }[op.kind.data]
    return [fn(a, b).astype(F32)]


def _kept(
    op: T.SoftmaxCrossEntropyLossOp | T.SoftmaxCrossEntropyLossGradOp, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Which rows count (all but those labelled ignore_index) and their labels
    (an ignored row's label replaced by 0, so that indexing stays in range)."""
    labels = labels.astype(np.int64)
    if op.ignore_index is None:
        return np.ones(labels.shape, dtype=bool), labels
    kept = labels != op.ignore_index.value.data
    return kept, np.where(kept, labels, 0)


def _sce(op: T.SoftmaxCrossEntropyLossOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    x, labels = ins
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    log_prob = (x - m - lse).astype(F32)
    kept, lab = _kept(op, labels)
    picked = -log_prob[np.arange(x.shape[0]), lab][kept]
    loss = picked.sum(dtype=F32)
    if op.reduction.data == "mean":
        with np.errstate(invalid="ignore"):  # every row ignored: 0 / 0, NaN (as torch)
            loss = loss / F32(kept.sum())
    return [np.asarray(loss, dtype=F32), log_prob]


def _sce_grad(op: T.SoftmaxCrossEntropyLossGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    dy, log_prob, labels = ins
    kept, lab = _kept(op, labels)
    g = np.exp(log_prob).astype(F32)
    g[np.arange(g.shape[0]), lab] -= F32(1.0)
    scale = F32(dy.reshape(-1)[0])
    if op.reduction.data == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = scale / F32(kept.sum())
    out = (g * scale).astype(F32)
    out[~kept] = F32(0.0)
    return [out]


def _reduce_sum(op: T.ReduceSumOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    axes = tuple(op.axes_list())
    return [ins[0].sum(axis=axes, keepdims=op.keepdims is not None, dtype=F32)]


def _accumulate(ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    buf, grad, reset = ins
    return [(grad.copy() if bool(reset.reshape(-1)[0]) else buf + grad).astype(F32)]


# -- convolution and pooling (NCHW); sums in float64, results in float32 -------


def _pad(x: np.ndarray, win: T.Window2d) -> np.ndarray:
    t, left, b, r = win.pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)))


def _tap(win: T.Window2d, kh: int, kw: int, oh: int, ow: int) -> tuple[slice, ...]:
    """Index of a padded NCHW array: the input element that tap (kh, kw) reads
    for every output position, as an [N, C, oh, ow] view."""
    (sh, sw), (dh, dw) = win.strides, win.dilations
    return (
        slice(None),
        slice(None),
        slice(kh * dh, kh * dh + sh * (oh - 1) + 1, sh),
        slice(kw * dw, kw * dw + sw * (ow - 1) + 1, sw),
    )


def _rows(win: T.Window2d, axis: int, k: int, n_out: int, size: int) -> tuple[np.ndarray, ...]:
    """(input positions of tap k for the n_out outputs, whether each is inside
    the input, the positions clipped into it)."""
    pos = np.arange(n_out) * win.strides[axis] + k * win.dilations[axis] - win.pads[axis]
    inside = (pos >= 0) & (pos < size)
    return pos, inside, np.clip(pos, 0, size - 1)


def _conv2d(op: T.Conv2dOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    g = op.geometry()
    groups, mg = g.groups, g.m // g.groups
    xp = _pad(ins[0].astype(np.float64), g.window)
    w = ins[1].astype(np.float64).reshape(groups, mg, g.cg, g.kh, g.kw)
    y = np.zeros((g.n, groups, mg, g.oh, g.ow))
    for kh in range(g.kh):
        for kw in range(g.kw):
            patch = xp[_tap(g.window, kh, kw, g.oh, g.ow)].reshape(g.n, groups, g.cg, g.oh, g.ow)
            y += np.einsum("ngchw,gmc->ngmhw", patch, w[:, :, :, kh, kw])
    y = y.reshape(g.n, g.m, g.oh, g.ow)
    if len(ins) == 3:
        y = y + ins[2].astype(np.float64).reshape(1, g.m, 1, 1)
    if op.relu is not None:  # relu-fuse: training.relu's max(Y, 0) on the float32 result
        return [np.maximum(y.astype(F32), F32(0)).astype(F32)]
    return [y.astype(F32)]


def _conv2d_grad(op: T.Conv2dGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    g = op.geometry()
    groups, mg = g.groups, g.m // g.groups
    dy = ins[0].astype(np.float64).reshape(g.n, groups, mg, g.oh, g.ow)
    xp = _pad(ins[1].astype(np.float64), g.window)
    w = ins[2].astype(np.float64).reshape(groups, mg, g.cg, g.kh, g.kw)
    dxp = np.zeros_like(xp)
    dw = np.zeros((groups, mg, g.cg, g.kh, g.kw))
    for kh in range(g.kh):
        for kw in range(g.kw):
            at = _tap(g.window, kh, kw, g.oh, g.ow)
            shape = (g.n, groups, g.cg, g.oh, g.ow)
            dxp[at] += np.einsum("ngmhw,gmc->ngchw", dy, w[:, :, :, kh, kw]).reshape(
                g.n, g.c, g.oh, g.ow
            )
            dw[:, :, :, kh, kw] = np.einsum("ngmhw,ngchw->gmc", dy, xp[at].reshape(shape))
    t, left = g.window.pads[0], g.window.pads[1]
    out = {
        "dX": dxp[:, :, t : t + g.h, left : left + g.w],
        "dW": dw.reshape(g.m, g.cg, g.kh, g.kw),
        "dB": dy.sum(axis=(0, 3, 4)).reshape(g.m),
    }
    return [out[k].astype(F32) for k in op.grads()]


def _maxpool2d(
    op: T.MaxPool2dOp, ins: Sequence[np.ndarray], origin: Sequence[int] = ()
) -> list[np.ndarray]:
    """Indices count in the whole input: a tile's (`origin` and the op's
    index_frame) start at its origin."""
    x = ins[0]
    win = op.window()
    n, c, oh, ow = op.pooled(x.shape, "X")
    h, w = x.shape[2], x.shape[3]
    n0, c0, h0, w0 = (int(v) for v in origin) if origin else (0, 0, 0, 0)
    fc, fh, fw = op.frame()
    best = np.zeros((n, c, oh, ow), F32)
    idx = np.full((n, c, oh, ow), -1, np.int64)
    planes = (np.arange(n, dtype=np.int64)[:, None] + n0) * fc + np.arange(c) + c0
    base = planes.reshape(n, c, 1, 1) * fh
    for kh in range(win.kernel[0]):
        ih, hin, hc = _rows(win, 0, kh, oh, h)
        for kw in range(win.kernel[1]):
            iw, w_in, wc = _rows(win, 1, kw, ow, w)
            vals = x[:, :, hc[:, None], wc[None, :]]
            # the first valid tap, then any strictly larger one, wins
            take = (hin[:, None] & w_in[None, :]) & ((idx < 0) | (vals > best))
            best = np.where(take, vals, best)
            at = (base + (ih[:, None] + h0)) * fw + (iw[None, :] + w0)
            idx = np.where(take, at, idx)
    if op.relu_mask is not None:  # relu-fuse: no gradient where the max is not > 0
        idx = np.where(best > 0, idx, np.int64(-1))
    return [best.astype(F32), idx][: op.n_outs()]


def _maxpool2d_grad(op: T.MaxPool2dGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    dy, idx = ins
    (dx_shape,) = op.infer_shapes()
    n, c, h, w = dx_shape
    dx = np.zeros((n * c, h * w), F32)
    planes = np.repeat(np.arange(n * c), dy[0, 0].size)
    flat = idx.reshape(-1)
    keep = flat >= 0  # an empty window's -1 adds nothing
    # in increasing output order, in float32, as onnxruntime's MaxPoolGrad
    np.add.at(dx, (planes[keep], flat[keep] % (h * w)), dy.reshape(-1)[keep].astype(F32))
    return [dx.reshape(dx_shape)]


def _avg_divisor(op: T.AvgPool2dOp | T.AvgPool2dGradOp, h: int, w: int) -> np.ndarray:
    """Each window's divisor, [oh, ow]."""
    win = op.window()
    _, _, oh, ow = op.pooled((1, 1, h, w), "X")
    if op.count_include_pad is not None:
        return np.full((oh, ow), float(win.kernel[0] * win.kernel[1]))
    count = np.zeros((oh, ow))
    for kh in range(win.kernel[0]):
        hin = _rows(win, 0, kh, oh, h)[1]
        for kw in range(win.kernel[1]):
            count += hin[:, None] & _rows(win, 1, kw, ow, w)[1][None, :]
    return count


def _avgpool2d(op: T.AvgPool2dOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    x = ins[0]
    win = op.window()
    _, _, oh, ow = op.pooled(x.shape, "X")
    xp = _pad(x.astype(np.float64), win)
    total = sum(
        xp[_tap(win, kh, kw, oh, ow)] for kh in range(win.kernel[0]) for kw in range(win.kernel[1])
    )
    return [(total / _avg_divisor(op, x.shape[2], x.shape[3])).astype(F32)]


def _avgpool2d_grad(op: T.AvgPool2dGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    (dx_shape,) = op.infer_shapes()
    _, _, h, w = dx_shape
    win = op.window()
    _, _, oh, ow = ins[0].shape
    share = ins[0].astype(np.float64) / _avg_divisor(op, h, w)
    dxp = _pad(np.zeros(dx_shape), win)
    for kh in range(win.kernel[0]):
        for kw in range(win.kernel[1]):
            dxp[_tap(win, kh, kw, oh, ow)] += share
    t, left = win.pads[0], win.pads[1]
    return [dxp[:, :, t : t + h, left : left + w].astype(F32)]


def _global_avgpool_grad(op: T.GlobalAvgPoolGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    (dx_shape,) = op.infer_shapes()
    size = F32(dx_shape[2] * dx_shape[3])
    return [np.broadcast_to(ins[0].astype(F32) / size, dx_shape).astype(F32)]


def _windowed(
    op: T.TrainingComputeOp, ins: Sequence[np.ndarray], origin: Sequence[int] = ()
) -> list[np.ndarray]:
    match op:
        case T.Conv2dOp():
            return _conv2d(op, ins)
        case T.Conv2dGradOp():
            return _conv2d_grad(op, ins)
        case T.MaxPool2dOp():
            return _maxpool2d(op, ins, origin)
        case T.MaxPool2dGradOp():
            return _maxpool2d_grad(op, ins)
        case T.AvgPool2dOp():
            return _avgpool2d(op, ins)
        case T.AvgPool2dGradOp():
            return _avgpool2d_grad(op, ins)
        case T.GlobalAvgPoolOp():
            return [ins[0].astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(F32)]
        case T.GlobalAvgPoolGradOp():
            return _global_avgpool_grad(op, ins)
        case _:
            raise NotImplementedError(f"no reference semantics for {op.name}")


# -- transformer ops; sums in float64, results in float32 ----------------------


def _batch_matmul(op: T.BatchMatmulOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    a, b = (x.astype(np.float64) for x in ins[:2])
    if op.trans_a is not None:
        a = np.swapaxes(a, -1, -2)
    if op.trans_b is not None:
        b = np.swapaxes(b, -1, -2)
    y = op.alpha.value.data * np.matmul(a, b)
    if len(ins) == 3:
        y = y + op.beta.value.data * ins[2].astype(np.float64)
    return [y.astype(F32)]


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _norm_axes(op: T.NormOp) -> tuple[int, ...]:
    return tuple(range(op.norm_axis(), len(op.x_shape())))


def _layer_norm(op: T.LayerNormOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    x = ins[0].astype(np.float64)
    axes = _norm_axes(op)
    mean = x.mean(axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(
        ((x - mean) ** 2).mean(axis=axes, keepdims=True) + op.epsilon.value.data
    )
    norm = x.shape[op.norm_axis() :]
    y = (x - mean) * inv_std * ins[1].astype(np.float64).reshape(norm)
    if len(ins) == 3:
        y = y + ins[2].astype(np.float64).reshape(norm)
    stats = [mean.astype(F32), inv_std.astype(F32)][: op.n_outs() - 1]
    return [y.astype(F32), *stats]


def _layer_norm_grad(op: T.LayerNormGradOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    dy, x = (v.astype(np.float64) for v in ins[:2])
    axes = _norm_axes(op)
    norm = x.shape[op.norm_axis() :]
    stats = x.shape[: op.norm_axis()] + (1,) * len(norm)
    if len(ins) == 5:
        mean = ins[3].astype(np.float64).reshape(stats)
        inv_std = ins[4].astype(np.float64).reshape(stats)
    else:
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        inv_std = 1.0 / np.sqrt(var + op.epsilon.value.data)
    xhat = (x - mean) * inv_std
    g = dy * ins[2].astype(np.float64).reshape(norm)
    dx = inv_std * (
        g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True)
    )
    outer = tuple(range(op.norm_axis()))
    scale_shape = ins[2].shape
    out = {
        "dX": dx,
        "dScale": (dy * xhat).sum(axis=outer).reshape(scale_shape),
        "dBias": dy.sum(axis=outer).reshape(scale_shape),
    }
    return [out[k].astype(F32) for k in op.grads()]


def _erf(x: np.ndarray) -> np.ndarray:
    import math

    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _transformer(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    match op:
        case T.BatchMatmulOp():
            return _batch_matmul(op, ins)
        case T.SoftmaxOp():
            return [_softmax(ins[0].astype(np.float64), op.axis.value.data).astype(F32)]
        case T.SoftmaxGradOp():
            dy, y = (v.astype(np.float64) for v in ins)
            s = (dy * y).sum(axis=op.axis.value.data, keepdims=True)
            return [(y * (dy - s)).astype(F32)]
        case T.LayerNormOp():
            return _layer_norm(op, ins)
        case T.LayerNormGradOp():
            return _layer_norm_grad(op, ins)
        case T.GeluOp():
            x = ins[0].astype(np.float64)
            return [(0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))).astype(F32)]
        case T.GeluGradOp():
            dy, x = (v.astype(np.float64) for v in ins)
            cdf = 0.5 * (1.0 + _erf(x / np.sqrt(2.0)))
            pdf = np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
            return [(dy * (cdf + x * pdf)).astype(F32)]
        case T.TransposeOp():
            return [np.ascontiguousarray(np.transpose(ins[0], op.perm_list()))]
        case T.ReduceMeanOp():
            axes = tuple(op.axes_list())
            keep = op.keepdims is not None
            return [ins[0].astype(np.float64).mean(axis=axes, keepdims=keep).astype(F32)]
        case _:
            raise NotImplementedError(f"no reference semantics for {op.name}")


def compute(
    op: T.TrainingComputeOp, ins: Sequence[np.ndarray], origin: Sequence[int] = ()
) -> list[np.ndarray]:
    """The outputs of `op` for input arrays `ins` (new arrays, inputs untouched);
    `origin`: a maxpool2d tile's origin operands."""
    registered = lookup(op)
    if registered is not None:
        return registered(op, ins)
    match op:
        case T.GemmOp():
            return _gemm(op, ins)
        case T.MatmulOp():
            return [(ins[0] @ ins[1]).astype(F32)]
        case T.BinaryOp():
            return _binary(op, ins)
        case T.ReluOp():
            return [np.maximum(ins[0], F32(0)).astype(F32)]
        case T.ReluGradOp():
            return [np.where(ins[1] > 0, ins[0], F32(0)).astype(F32)]
        case T.SoftmaxCrossEntropyLossOp():
            return _sce(op, ins)
        case T.SoftmaxCrossEntropyLossGradOp():
            return _sce_grad(op, ins)
        case T.ReduceSumOp():
            return _reduce_sum(op, ins)
        case T.AccumulateOp():
            return _accumulate(ins)
        case T.SgdOp():
            return [(ins[0] - F32(ins[2].reshape(-1)[0]) * ins[1]).astype(F32)]
        case T.CopyOp():
            return [ins[0].copy()]
        case T.ReshapeOp():
            return [ins[0].reshape(op.infer_shapes()[0]).copy()]
        case T.WindowedOp() | T.GlobalAvgPoolOp() | T.GlobalAvgPoolGradOp():
            return _windowed(op, ins, origin)
        case _:
            return _transformer(op, ins)
