"""kernel-select's conv pool family: 2-D convolution (and its gradients) and pooling."""

from __future__ import annotations

from collections.abc import Sequence

from deeploy_mlir.dialects import training as T
from deeploy_mlir.kernels.fields import (
    Call,
    Fields,
    ptr_or_null,
    u32,
)


def _window_fields(win: T.Window2d) -> Fields:
    return [
        ("stride_h", u32(win.strides[0])),
        ("stride_w", u32(win.strides[1])),
        ("dil_h", u32(win.dilations[0])),
        ("dil_w", u32(win.dilations[1])),
        ("pad_top", u32(win.pads[0])),
        ("pad_left", u32(win.pads[1])),
    ]


def _conv_geometry_fields(g: T.ConvGeometry) -> Fields:
    sizes = [
        ("batch", g.n),
        ("in_ch", g.c),
        ("in_h", g.h),
        ("in_w", g.w),
        ("out_ch", g.m),
        ("k_h", g.kh),
        ("k_w", g.kw),
        ("out_h", g.oh),
        ("out_w", g.ow),
        ("groups", g.groups),
    ]
    return [(k, u32(v)) for k, v in sizes] + _window_fields(g.window)


def _pool_fields(op: T.PoolOp, x: Sequence[int], y: Sequence[int]) -> Fields:
    """Geometry of a pooling kernel call: X (or dX) of shape x, Y (or dY) y."""
    win = op.window()
    inc = isinstance(op, T.AvgPool2dOp | T.AvgPool2dGradOp) and op.count_include_pad is not None
    sizes = [
        ("planes", x[0] * x[1]),
        ("in_h", x[2]),
        ("in_w", x[3]),
        ("out_h", y[2]),
        ("out_w", y[3]),
        ("k_h", win.kernel[0]),
        ("k_w", win.kernel[1]),
    ]
    return (
        [(k, u32(v)) for k, v in sizes]
        + _window_fields(win)
        + [("count_include_pad", u32(int(inc)))]
    )


def _conv_grad_calls(op: T.Conv2dGradOp) -> list[Call]:
    ins, outs, note = op.base_ins(), list(op.outs), op.name
    grads = dict(zip(op.grads(), outs, strict=True))
    f: Fields = [("dY", ins[0]), ("X", ins[1]), ("W", ins[2])]
    f += [(k, ptr_or_null(grads.get(k))) for k in T.CONV_GRADS]
    f += _conv_geometry_fields(op.geometry())
    # a tile of a reduction after the first: add to the sums so far
    f += [(f"acc_{op.grads()[k]}", u32(1)) for k in op.accumulated()]
    # accumulate-fuse: dW / dB are gradient buffers (old value + sum unless reset)
    f += [(f"reset_{op.grads()[k]}", op.ins[-1]) for k in op.onto_outputs()]
    calls: list[Call] = []
    if "dX" in grads:
        calls.append(Call("dm_conv2d_grad_input_fp32", "dm_conv2d_grad_args_t", f, note))
    if "dW" in grads or "dB" in grads:
        calls.append(
            Call("dm_conv2d_grad_weight_fp32", "dm_conv2d_grad_args_t", f, f"{note} (dW, dB)")
        )
    return calls


def _pool_call(op: T.MaxPool2dOp | T.AvgPool2dOp) -> Call:
    ins, outs = list(op.ins), list(op.outs)
    x, y = T.shape_of(ins[0].type), T.shape_of(outs[0].type)
    idx = outs[1] if len(outs) == 2 else None
    f: Fields = [("X", ins[0]), ("Y", outs[0]), ("indices", ptr_or_null(idx))]
    f += _pool_fields(op, x, y)
    if isinstance(op, T.MaxPool2dOp) and len(outs) == 2 and len(op.origin) == 4:
        # a tile: Indices count in the whole input, from the tile's origin
        fc, fh, fw = op.frame()
        f += [("tile_ch", u32(x[1]))]
        f += [(f"frame_{k}", u32(v)) for k, v in zip("chw", (fc, fh, fw), strict=True)]
        f += [(f"org_{k}", v) for k, v in zip("nchw", op.origin, strict=True)]
    if isinstance(op, T.MaxPool2dOp) and op.relu_mask is not None:
        f += [("relu_mask", u32(1))]
    kernel = "dm_maxpool2d_fp32" if isinstance(op, T.MaxPool2dOp) else "dm_avgpool2d_fp32"
    return Call(kernel, "dm_pool2d_args_t", f, op.name)


def calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Convolutions and their gradients (dm_conv.h), pooling and its gradients
    (dm_pool.h); the geometry is the operands' own (a tile's, when tiled)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.Conv2dOp():
            b = ins[2] if len(ins) == 3 else None
            f: Fields = [("X", ins[0]), ("W", ins[1]), ("B", ptr_or_null(b)), ("Y", outs[0])]
            f += _conv_geometry_fields(op.geometry())
            f += [("relu", u32(1))] if op.relu is not None else []
            return [Call("dm_conv2d_fp32", "dm_conv2d_args_t", f, note)]
        case T.Conv2dGradOp():
            return _conv_grad_calls(op)
        case T.MaxPool2dOp() | T.AvgPool2dOp():
            return [_pool_call(op)]
        case T.MaxPool2dGradOp() | T.AvgPool2dGradOp():
            dy, dx = T.shape_of(ins[0].type), T.shape_of(outs[0].type)
            idx = ins[1] if isinstance(op, T.MaxPool2dGradOp) else None
            f = [("dY", ins[0]), ("indices", ptr_or_null(idx)), ("dX", outs[0])]
            f += _pool_fields(op, dx, dy)
            kernel = (
                "dm_maxpool2d_grad_fp32"
                if isinstance(op, T.MaxPool2dGradOp)
                else "dm_avgpool2d_grad_fp32"
            )
            return [Call(kernel, "dm_pool2d_grad_args_t", f, note)]
        case T.GlobalAvgPoolOp():
            n, c, h, w = T.shape_of(ins[0].type)
            f = [("X", ins[0]), ("Y", outs[0]), ("planes", u32(n * c)), ("size", u32(h * w))]
            return [Call("dm_global_avgpool_fp32", "dm_global_avgpool_args_t", f, note)]
        case T.GlobalAvgPoolGradOp():
            n, c, h, w = T.shape_of(outs[0].type)
            f = [("dY", ins[0]), ("dX", outs[0]), ("planes", u32(n * c)), ("size", u32(h * w))]
            return [Call("dm_global_avgpool_grad_fp32", "dm_global_avgpool_grad_args_t", f, note)]
        case _:
            return None
