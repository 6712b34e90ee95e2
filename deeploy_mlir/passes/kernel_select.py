"""kernel-select: every buffer-form compute op becomes the runtime_c kernel
call(s) that implement it (`kernel.call`, deeploy_mlir/dialects/kernel.py).

One rewrite pattern per op family chooses the kernel and fills its argument
struct from the operands' own shapes (a tile's, when tiled) and the op's
attributes: elementwise (binary, ReLU, GELU and their gradients, copies),
matrix products (gemm, matmul, batched matmul), convolution and pooling,
normalization, softmax and loss, reductions and transposes, and the
optimizer (gradient accumulation, SGD). An op the kernels cannot run (an
operand in L3, a rank the kernel does not take) is an error naming it.

The C emitter runs this on a copy of the module as its first step and then
only prints: the pipeline's IR (`--emit-ir`, the interpreter, translation
validation) keeps the compute ops. `deeploy-opt -p kernel-select` shows the
choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from deeploy_mlir.dialects import kernel as K
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import BUFFER, MATERIALIZED, require
from deeploy_mlir.errors import DeeployError

#: (field name, value): an operand (pointer or index) or a typed attribute
Fields = list[tuple[str, Attribute | SSAValue]]


@dataclass(frozen=True)
class Call:
    kernel: str
    struct: str
    fields: Fields
    note: str


# ---------------------------------------------------------------- field values


def _u32(v: int) -> Attribute:
    if not 0 <= v < 1 << 32:
        raise DeeployError(f"kernel-select: {v} does not fit a kernel's uint32_t field")
    return K.u32(v)


def _arr(vals: Sequence[int], n: int = 4) -> Attribute:
    return K.u32_array([*vals, *[0] * (n - len(vals))])


def _float(x: float) -> Attribute:
    if not abs(float(x)) <= float(np.finfo(np.float32).max):  # NaN, Inf, or beyond float32
        raise DeeployError(f"cannot emit the float {x}: not finite as a float32")
    return K.f32_attr(x)


def _ptr_or_null(v: SSAValue | None) -> Attribute | SSAValue:
    return K.NULL if v is None else v


def _prod(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _size(v: SSAValue) -> int:
    return _prod(T.shape_of(v.type))


def _strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _bcast_strides(out: Sequence[int], shape: Sequence[int]) -> list[int]:
    pad = [1] * (len(out) - len(shape)) + list(shape)
    st = _strides(pad)
    return [0 if pad[i] == 1 and out[i] != 1 else st[i] for i in range(len(out))]


def _max_rank(op: Operation, rank: int, most: int, what: str = "rank") -> None:
    if rank > most:
        raise DeeployError(f"{op.name}: {what} {rank} > {most} is not supported by the kernel")


# ---------------------------------------------------------------- families


def elementwise_calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Binary ops (broadcast by strides), ReLU, GELU and their gradients, copies."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.BinaryOp():
            out = T.shape_of(outs[0].type)
            _max_rank(op, len(out), 4)
            f: Fields = [
                ("A", ins[0]),
                ("B", ins[1]),
                ("Y", outs[0]),
                ("rank", _u32(len(out))),
                ("shape", _arr(out)),
                ("a_strides", _arr(_bcast_strides(out, T.shape_of(ins[0].type)))),
                ("b_strides", _arr(_bcast_strides(out, T.shape_of(ins[1].type)))),
                ("op", StringAttr(f"DM_BINARY_{op.kind.data.upper()}")),
            ]
            return [Call("dm_binary_fp32", "dm_binary_args_t", f, note)]
        case T.ReluOp() | T.GeluOp():
            f = [("X", ins[0]), ("Y", outs[0]), ("size", _u32(_size(ins[0])))]
            if isinstance(op, T.ReluOp):
                return [Call("dm_relu_fp32", "dm_unary_args_t", f, note)]
            return [Call("dm_gelu_fp32", "dm_gelu_args_t", f, note)]
        case T.ReluGradOp() | T.GeluGradOp():
            f = [("dY", ins[0]), ("X", ins[1]), ("dX", outs[0]), ("size", _u32(_size(ins[0])))]
            if isinstance(op, T.ReluGradOp):
                return [Call("dm_relu_grad_fp32", "dm_relu_grad_args_t", f, note)]
            return [Call("dm_gelu_grad_fp32", "dm_gelu_grad_args_t", f, note)]
        case T.CopyOp() | T.ReshapeOp():
            nbytes = _size(ins[0]) * T.elem_bytes(ins[0].type)
            f = [("src", ins[0]), ("dst", outs[0]), ("bytes", _u32(nbytes))]
            return [Call("dm_copy", "dm_copy_args_t", f, note)]
        case _:
            return None


def _gemm_fields(
    ins: Sequence[SSAValue],
    y: SSAValue,
    mnk: tuple[int, int, int],
    trans: tuple[bool, bool],
    alpha: float,
    beta: float,
) -> Fields:
    """The fields of a dm_gemm_args_t: A, B and C (when there are three
    operands; its stride 0 broadcasts a dim of 1) and Y; sizes, flags, scales."""
    f: Fields = [("A", ins[0]), ("B", ins[1])]
    if len(ins) == 3:
        cm, cn = [1, 1, *T.shape_of(ins[2].type)][-2:]
        f += [
            ("C", ins[2]),
            ("c_stride_m", _u32(cn if cm != 1 else 0)),
            ("c_stride_n", _u32(1 if cn != 1 else 0)),
        ]
    else:
        f += [("C", K.NULL), ("c_stride_m", _u32(0)), ("c_stride_n", _u32(0))]
    m, n, k = mnk
    return [
        *f,
        ("Y", y),
        ("M", _u32(m)),
        ("N", _u32(n)),
        ("K", _u32(k)),
        ("trans_a", _u32(int(trans[0]))),
        ("trans_b", _u32(int(trans[1]))),
        ("alpha", _float(alpha)),
        ("beta", _float(beta)),
    ]


def _batch_matmul_call(op: T.BatchMatmulOp) -> Call:
    """dm_batch_matmul_fp32 over the operands' own shapes (a tile's, when tiled)."""
    ins, outs = list(op.ins), list(op.outs)
    batch, m, n, k = op.geometry()
    _max_rank(op, len(batch), 4, "batch dims")

    def batch_strides(t: Attribute, rank: int) -> list[int]:
        s = [1] * (rank - len(T.shape_of(t))) + list(T.shape_of(t))
        mat = s[-2] * s[-1]
        return [st * mat for st in _bcast_strides(batch, s[:-2])]

    trans = (op.trans_a is not None, op.trans_b is not None)
    gemm = _gemm_fields(ins, outs[0], (m, n, k), trans, op.alpha.value.data, op.beta.value.data)
    c_strides = batch_strides(ins[2].type, len(batch) + 2) if len(ins) == 3 else []
    f: Fields = [(f"gemm.{name}", v) for name, v in gemm] + [  # batch 0's product
        ("batch_rank", _u32(len(batch))),
        ("batch_shape", _arr(batch)),
        ("a_strides", _arr(batch_strides(ins[0].type, len(batch) + 2))),
        ("b_strides", _arr(batch_strides(ins[1].type, len(batch) + 2))),
        ("c_strides", _arr(c_strides)),
    ]
    return Call("dm_batch_matmul_fp32", "dm_batch_matmul_args_t", f, op.name)


def matmul_calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Gemm (transposes, alpha, beta, a broadcast C), matmul and batched matmul."""
    ins, outs = list(op.ins), list(op.outs)
    match op:
        case T.GemmOp():
            trans = (op.trans_a is not None, op.trans_b is not None)
            f = _gemm_fields(ins, outs[0], op.mnk(), trans, op.alpha.value.data, op.beta.value.data)
        case T.MatmulOp():
            a, b = T.shape_of(ins[0].type), T.shape_of(ins[1].type)
            f = _gemm_fields(ins, outs[0], (a[0], b[1], a[1]), (False, False), 1.0, 0.0)
        case T.BatchMatmulOp():
            return [_batch_matmul_call(op)]
        case _:
            return None
    return [Call("dm_gemm_fp32", "dm_gemm_args_t", f, op.name)]


def _window_fields(win: T.Window2d) -> Fields:
    return [
        ("stride_h", _u32(win.strides[0])),
        ("stride_w", _u32(win.strides[1])),
        ("dil_h", _u32(win.dilations[0])),
        ("dil_w", _u32(win.dilations[1])),
        ("pad_top", _u32(win.pads[0])),
        ("pad_left", _u32(win.pads[1])),
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
    return [(k, _u32(v)) for k, v in sizes] + _window_fields(g.window)


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
        [(k, _u32(v)) for k, v in sizes]
        + _window_fields(win)
        + [("count_include_pad", _u32(int(inc)))]
    )


def _conv_grad_calls(op: T.Conv2dGradOp) -> list[Call]:
    ins, outs, note = list(op.ins), list(op.outs), op.name
    grads = dict(zip(op.grads(), outs, strict=True))
    f: Fields = [("dY", ins[0]), ("X", ins[1]), ("W", ins[2])]
    f += [(k, _ptr_or_null(grads.get(k))) for k in T.CONV_GRADS]
    f += _conv_geometry_fields(op.geometry())
    # a tile of a reduction after the first: add to the sums so far
    f += [(f"acc_{op.grads()[k]}", _u32(1)) for k in op.accumulated()]
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
    f: Fields = [("X", ins[0]), ("Y", outs[0]), ("indices", _ptr_or_null(idx))]
    f += _pool_fields(op, x, y)
    if isinstance(op, T.MaxPool2dOp) and len(outs) == 2 and len(op.origin) == 4:
        # a tile: Indices count in the whole input, from the tile's origin
        fc, fh, fw = op.frame()
        f += [("tile_ch", _u32(x[1]))]
        f += [(f"frame_{k}", _u32(v)) for k, v in zip("chw", (fc, fh, fw), strict=True)]
        f += [(f"org_{k}", v) for k, v in zip("nchw", op.origin, strict=True)]
    kernel = "dm_maxpool2d_fp32" if isinstance(op, T.MaxPool2dOp) else "dm_avgpool2d_fp32"
    return Call(kernel, "dm_pool2d_args_t", f, op.name)


def conv_pool_calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Convolutions and their gradients (dm_conv.h), pooling and its gradients
    (dm_pool.h); the geometry is the operands' own (a tile's, when tiled)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.Conv2dOp():
            b = ins[2] if len(ins) == 3 else None
            f: Fields = [("X", ins[0]), ("W", ins[1]), ("B", _ptr_or_null(b)), ("Y", outs[0])]
            f += _conv_geometry_fields(op.geometry())
            return [Call("dm_conv2d_fp32", "dm_conv2d_args_t", f, note)]
        case T.Conv2dGradOp():
            return _conv_grad_calls(op)
        case T.MaxPool2dOp() | T.AvgPool2dOp():
            return [_pool_call(op)]
        case T.MaxPool2dGradOp() | T.AvgPool2dGradOp():
            dy, dx = T.shape_of(ins[0].type), T.shape_of(outs[0].type)
            idx = ins[1] if isinstance(op, T.MaxPool2dGradOp) else None
            f = [("dY", ins[0]), ("indices", _ptr_or_null(idx)), ("dX", outs[0])]
            f += _pool_fields(op, dx, dy)
            kernel = (
                "dm_maxpool2d_grad_fp32"
                if isinstance(op, T.MaxPool2dGradOp)
                else "dm_avgpool2d_grad_fp32"
            )
            return [Call(kernel, "dm_pool2d_grad_args_t", f, note)]
        case T.GlobalAvgPoolOp():
            n, c, h, w = T.shape_of(ins[0].type)
            f = [("X", ins[0]), ("Y", outs[0]), ("planes", _u32(n * c)), ("size", _u32(h * w))]
            return [Call("dm_global_avgpool_fp32", "dm_global_avgpool_args_t", f, note)]
        case T.GlobalAvgPoolGradOp():
            n, c, h, w = T.shape_of(outs[0].type)
            f = [("dY", ins[0]), ("dX", outs[0]), ("planes", _u32(n * c)), ("size", _u32(h * w))]
            return [Call("dm_global_avgpool_grad_fp32", "dm_global_avgpool_grad_args_t", f, note)]
        case _:
            return None


def _rows_cols(op: T.NormOp) -> tuple[int, int]:
    x, axis = op.x_shape(), op.norm_axis()
    return _prod(x[:axis]), _prod(x[axis:])


def _layernorm_grad_calls(op: T.LayerNormGradOp) -> list[Call]:
    ins, outs, note = list(op.ins), list(op.outs), op.name
    rows, cols = _rows_cols(op)
    grads = dict(zip(op.grads(), outs, strict=True))
    mean, inv = (ins[3], ins[4]) if len(ins) == 5 else (None, None)
    stats: Fields = [("mean", _ptr_or_null(mean)), ("inv_std", _ptr_or_null(inv))]
    size: Fields = [("rows", _u32(rows)), ("cols", _u32(cols))]
    calls: list[Call] = []
    if "dScale" in grads or "dBias" in grads:
        # first: the dX kernel below may overwrite dY in place
        f: Fields = [("dY", ins[0]), ("X", ins[1]), *stats]
        f += [(g, _ptr_or_null(grads.get(g))) for g in ("dScale", "dBias")]
        if op.accumulated():
            # a tile of the rows after the first: add to the sums so far
            f.append(("acc", _u32(1)))
        calls.append(
            Call(
                "dm_layernorm_grad_params_fp32",
                "dm_layernorm_grad_params_args_t",
                f + size,
                f"{note} (dScale, dBias)",
            )
        )
    if "dX" in grads:
        f = [("dY", ins[0]), ("X", ins[1]), ("scale", ins[2]), *stats, ("dX", grads["dX"])]
        f += [*size, ("epsilon", _float(op.epsilon.value.data))]
        calls.append(Call("dm_layernorm_grad_fp32", "dm_layernorm_grad_args_t", f, note))
    return calls


def _reduction(op: T.SoftmaxCrossEntropyLossOp | T.SoftmaxCrossEntropyLossGradOp) -> Attribute:
    mean = op.reduction.data == "mean"
    return StringAttr("DM_REDUCTION_MEAN" if mean else "DM_REDUCTION_SUM")


def norm_loss_calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Softmax, layer normalization, softmax cross-entropy and their gradients
    (dm_softmax.h, dm_layernorm.h, dm_loss.h)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.SoftmaxOp() | T.SoftmaxGradOp():
            shape = T.shape_of(outs[0].type)
            axis = op.axis.value.data
            geo: Fields = [
                ("outer", _u32(_prod(shape[:axis]))),
                ("len", _u32(shape[axis])),
                ("inner", _u32(_prod(shape[axis + 1 :]))),
            ]
            if isinstance(op, T.SoftmaxOp):
                f: Fields = [("X", ins[0]), ("Y", outs[0]), *geo]
                return [Call("dm_softmax_fp32", "dm_softmax_args_t", f, note)]
            f = [("dY", ins[0]), ("Y", ins[1]), ("dX", outs[0]), *geo]
            return [Call("dm_softmax_grad_fp32", "dm_softmax_grad_args_t", f, note)]
        case T.LayerNormOp():
            rows, cols = _rows_cols(op)
            stats = [*outs[1:], None, None][:2]
            f = [
                ("X", ins[0]),
                ("scale", ins[1]),
                ("bias", _ptr_or_null(ins[2] if len(ins) == 3 else None)),
                ("Y", outs[0]),
                ("mean", _ptr_or_null(stats[0])),
                ("inv_std", _ptr_or_null(stats[1])),
                ("rows", _u32(rows)),
                ("cols", _u32(cols)),
                ("epsilon", _float(op.epsilon.value.data)),
            ]
            return [Call("dm_layernorm_fp32", "dm_layernorm_args_t", f, note)]
        case T.LayerNormGradOp():
            return _layernorm_grad_calls(op)
        case T.SoftmaxCrossEntropyLossOp():
            b, c = T.shape_of(ins[0].type)
            f = [
                ("logits", ins[0]),
                ("labels", ins[1]),
                ("log_prob", outs[1]),
                ("row_loss", K.NULL),
                ("loss", outs[0]),
                ("batch", _u32(b)),
                ("classes", _u32(c)),
                ("reduction", _reduction(op)),
            ]
            return [
                Call("dm_sce_logprob_fp32", "dm_sce_args_t", f, note),
                Call("dm_sce_reduce_fp32", "dm_sce_args_t", f, f"{note} (reduce)"),
            ]
        case T.SoftmaxCrossEntropyLossGradOp():
            b, c = T.shape_of(ins[1].type)
            f = [
                ("dY", ins[0]),
                ("log_prob", ins[1]),
                ("labels", ins[2]),
                ("dX", outs[0]),
                ("batch", _u32(b)),
                ("classes", _u32(c)),
                ("reduction", _reduction(op)),
            ]
            return [Call("dm_sce_grad_fp32", "dm_sce_grad_args_t", f, note)]
        case _:
            return None


def layout_calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Sum and mean reductions over a set of axes (dm_reduce.h), transposes
    (dm_transpose.h)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.ReduceSumOp() | T.ReduceMeanOp():
            shape = T.shape_of(ins[0].type)
            _max_rank(op, len(shape), 4)
            f: Fields = [
                ("X", ins[0]),
                ("Y", outs[0]),
                ("rank", _u32(len(shape))),
                ("shape", _arr(shape)),
                ("reduce_mask", _u32(sum(1 << a for a in op.axes_list()))),
            ]
            kernel = (
                "dm_reduce_sum_fp32" if isinstance(op, T.ReduceSumOp) else "dm_reduce_mean_fp32"
            )
            return [Call(kernel, "dm_reduce_args_t", f, note)]
        case T.TransposeOp():
            shape = T.shape_of(ins[0].type)
            _max_rank(op, len(shape), 6)
            f = [
                ("X", ins[0]),
                ("Y", outs[0]),
                ("rank", _u32(len(shape))),
                ("shape", _arr(shape, 6)),
                ("perm", _arr(op.perm_list(), 6)),
            ]
            return [Call("dm_transpose_fp32", "dm_transpose_args_t", f, note)]
        case _:
            return None


def optimizer_calls(op: T.TrainingComputeOp) -> list[Call] | None:
    """Gradient accumulation and the SGD step (dm_optimizer.h)."""
    ins, outs, note = list(op.ins), list(op.outs), op.name
    match op:
        case T.AccumulateOp():
            f: Fields = [("buffer", ins[0]), ("grad", ins[1]), ("reset", ins[2])]
            f += [("out", outs[0]), ("size", _u32(_size(ins[0])))]
            return [Call("dm_accumulate_fp32", "dm_accumulate_args_t", f, note)]
        case T.SgdOp():
            f = [("weight", ins[0]), ("grad", ins[1]), ("lr", ins[2])]
            f += [("out", outs[0]), ("size", _u32(_size(ins[0])))]
            return [Call("dm_sgd_fp32", "dm_sgd_args_t", f, note)]
        case _:
            return None


# ---------------------------------------------------------------- patterns


def _check_operands(op: T.TrainingComputeOp) -> None:
    for v in (*op.ins, *op.outs):
        if not isinstance(v.type, MemRefType):
            raise DeeployError(
                f"kernel-select: {op.name} has a non-buffer operand (run training-bufferize first)"
            )
        space = v.type.memory_space
        if isinstance(space, StringAttr) and space.data == "L3":
            raise DeeployError(
                f"{op.name} reads or writes L3 directly; kernels run on L2/L1 "
                "buffers (run memory-home to stage L3 tensors through L2)"
            )


class _FamilyPattern(RewritePattern):
    """Replaces the ops of one family by their kernel calls."""

    family: Callable[[T.TrainingComputeOp], list[Call] | None]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, T.TrainingComputeOp):
            return
        _check_operands(op)
        calls = self.family(op)
        if calls is None:
            return
        rewriter.replace(
            op, [K.CallOp(c.kernel, c.struct, c.fields, c.note) for c in calls], new_results=[]
        )


class ElementwiseKernels(_FamilyPattern):
    def __init__(self) -> None:
        self.family = elementwise_calls


class MatmulKernels(_FamilyPattern):
    def __init__(self) -> None:
        self.family = matmul_calls


class ConvPoolKernels(_FamilyPattern):
    def __init__(self) -> None:
        self.family = conv_pool_calls


class NormLossKernels(_FamilyPattern):
    def __init__(self) -> None:
        self.family = norm_loss_calls


class LayoutKernels(_FamilyPattern):
    def __init__(self) -> None:
        self.family = layout_calls


class OptimizerKernels(_FamilyPattern):
    def __init__(self) -> None:
        self.family = optimizer_calls


PATTERNS: tuple[type[_FamilyPattern], ...] = (
    ElementwiseKernels,
    MatmulKernels,
    ConvPoolKernels,
    NormLossKernels,
    LayoutKernels,
    OptimizerKernels,
)


def select_kernels(root: Operation) -> None:
    """Every compute op under `root` replaced by its kernel calls, in place."""
    # no dead-code elimination: an unused constant or view stays (the C
    # printer's names count the values it has seen)
    walker = PatternRewriteWalker(
        GreedyRewritePatternApplier([p() for p in PATTERNS], dce_enabled=False),
        apply_recursively=False,
    )
    for region in root.regions:
        walker.rewrite_region(region)
    for op in root.walk():
        if isinstance(op, T.TrainingComputeOp):
            raise DeeployError(f"kernel-select: runtime_c has no kernel for {op.name}")


@dataclass(frozen=True)
class KernelSelect(ModulePass):
    name = "kernel-select"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require(op, self.name, BUFFER, MATERIALIZED)
        select_kernels(op)
