"""The `training` dialect: tensor- and buffer-level ops with ONNX-training meaning.

Every compute op has one shape in two forms, in the way of linalg's named ops:

* tensor form:  ``%y = training.relu ins(%x : tensor<4xf32>) -> tensor<4xf32>``
* buffer form:  ``training.relu ins(%x : memref<4xf32, "L2">) outs(%y : memref<4xf32, "L2">)``

The tensor form is what the importer writes and what the alias analysis reads;
`training-bufferize` turns it into the buffer form (destination-passing style),
on which memory planning, tiling and the C emitter work.

Each op states, as Python interfaces rather than lists inside passes:

* `AliasingInterface` -- which result may reuse which operand's storage, and
  whether the op is a *state update* (SGD writes the weight, accumulation
  writes its buffer) that should run in place.
* `IterationSpaceInterface` -- loop dims, one affine map per operand and
  result (linalg-style), and the dims that must stay whole.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------
# Types and small helpers
# --------------------------------------------------------------------------

ShapedT = TensorType[Attribute] | MemRefType[Attribute]


def shape_of(t: Attribute) -> tuple[int, ...]:
    if isinstance(t, TensorType | MemRefType):
        return tuple(t.get_shape())
    raise VerifyException(f"expected a tensor or memref type, got {t}")


def elem_of(t: Attribute) -> Attribute:
    if isinstance(t, TensorType | MemRefType):
        return t.get_element_type()
    raise VerifyException(f"expected a tensor or memref type, got {t}")


def elem_bytes(t: Attribute) -> int:
    """Bytes of one element of a shaped type (i1 takes a whole byte, as in C)."""
    return elem_type_bytes(elem_of(t))


def elem_type_bytes(e: Attribute) -> int:
    """Bytes of one value of element type `e`."""
    width = getattr(e, "bitwidth", None)
    if not isinstance(width, int) or width <= 0:
        raise VerifyException(f"element type {e} has no fixed size in memory")
    return (width + 7) // 8


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def is_f32(t: Attribute) -> bool:
    return isinstance(elem_of(t), Float32Type)


def is_int(t: Attribute, width: int) -> bool:
    e = elem_of(t)
    return isinstance(e, IntegerType) and e.width.data == width


def _same_shape(a: Attribute, a_name: str, b: Attribute, b_name: str) -> tuple[int, ...]:
    """The shape of `a` and `b`, which must be the same (`a_name`, `b_name`:
    what the message calls them)."""
    sa, sb = shape_of(a), shape_of(b)
    if sa != sb:
        raise VerifyException(
            f"{a_name} ({fmt_shape(sa)}) and {b_name} ({fmt_shape(sb)}) must have the same shape"
        )
    return sa


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """numpy broadcasting of two static shapes, None when incompatible."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and 1 not in (da, db):
            return None
        out.append(max(da, db))
    return tuple(reversed(out))


def gemm_shapes(
    a: Sequence[int], b: Sequence[int], trans_a: bool, trans_b: bool
) -> tuple[int, int, int]:
    """(M, N, K) of a Gemm, raising VerifyException with the mismatch."""
    if len(a) != 2 or len(b) != 2:
        raise VerifyException(
            f"operands A and B must be rank 2, got {fmt_shape(a)} and {fmt_shape(b)}"
        )
    m, k = (a[1], a[0]) if trans_a else (a[0], a[1])
    kb, n = (b[1], b[0]) if trans_b else (b[0], b[1])
    if k != kb:
        raise VerifyException(
            f"inner dimensions differ: A gives K={k} (trans_a={int(trans_a)}) but B gives "
            f"K={kb} (trans_b={int(trans_b)})"
        )
    return m, n, k


# --------------------------------------------------------------------------
# Interfaces
# --------------------------------------------------------------------------


class AliasingInterface(ABC):
    """Which results may share which operand's storage."""

    #: True for ops whose result is the new value of their first operand
    #: (SGD, gradient accumulation): bufferization writes them in place.
    STATE_UPDATE: ClassVar[bool] = False

    @abstractmethod
    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        """(result index, operand index) pairs: the result may be written into
        the operand's buffer when the operand dies at this op."""


@dataclass(frozen=True)
class IterationSpace:
    """Loop dims of an op, one affine map per operand (ins, then results) from
    the loop dims to the operand's indices, and the dims that must stay whole."""

    dims: tuple[int, ...]
    maps: tuple[AffineMap, ...]
    whole: frozenset[int]
    reduction: frozenset[int] = frozenset()
    #: sliding windows (conv, pooling): how an input position follows from an
    #: output position and a kernel tap; see `SlidingWindow`
    windows: tuple[SlidingWindow, ...] = ()
    #: reduction dims that may tile all the same: the op's kernel can add into
    #: its outputs (the `accumulate` property), so the tiles along such a dim
    #: run in order, the first writing the outputs that do not index it and
    #: the others adding to them. Each output indexes every one of these dims
    #: or none of them.
    accumulate: frozenset[int] = frozenset()
    #: inputs the kernels do not read (their shape only makes the op's
    #: geometry), each with the output whose tile has the same shape and
    #: stands in for it in a tile: no copy, no buffer of its own
    unread: tuple[tuple[int, int], ...] = ()

    def tiled_windows(self) -> tuple[SlidingWindow, ...]:
        """The windows whose output dim may tile (it is neither whole nor a
        reduction dim, or a reduction dim that accumulates): their input dim
        is then not free but follows from the output tile
        (`SlidingWindow.in_tile`, the tile plus its halo)."""
        fixed = self.whole | (self.reduction - self.accumulate)
        return tuple(w for w in self.windows if w.out_dim not in fixed)


@dataclass(frozen=True)
class SlidingWindow:
    """One spatial axis of a windowed op, in loop dims of its iteration space:
    input position = out * stride + tap * dilation - pad_before.

    The maps index the input by `in_dim`, a loop dim of its own (extent: the
    input's size) that stays whole together with `out_dim` and `tap_dim`, so
    that every map result is a single loop dim (what tile-select and
    tiling-materialize read). This record keeps the affine relation between the
    three, which tiling the spatial axes (with halos) needs."""

    out_dim: int
    tap_dim: int
    in_dim: int
    stride: int
    dilation: int
    pad_before: int
    pad_after: int

    def input_expr(self) -> AffineExpr:
        """out * stride + tap * dilation - pad_before, over the op's loop dims."""
        d = AffineExpr.dimension
        return d(self.out_dim) * self.stride + d(self.tap_dim) * self.dilation - self.pad_before

    def extent(self, dims: Sequence[int]) -> int:
        """The input positions one window spans, for loop dims of sizes `dims`."""
        return (dims[self.tap_dim] - 1) * self.dilation + 1

    def in_tile(self, dims: Sequence[int], t: int) -> int:
        """The input tile of an output tile of `t` positions: the whole input
        for the whole output, else the window's footprint (t - 1) * stride +
        extent (the tile and its halo), at most the input."""
        if t >= dims[self.out_dim]:
            return dims[self.in_dim]
        return min(dims[self.in_dim], (t - 1) * self.stride + self.extent(dims))

    def span(self, dims: Sequence[int], first: int, t: int) -> tuple[int, int, int, int]:
        """(input start, input size, pad before, pad after) of the output
        positions [first, first + t): the footprint clipped to the input (the
        padding is not stored) and the padding the clipping leaves on each
        side, so that the tile is again a window op with `t` outputs. The
        whole output keeps the whole input and the op's own pads."""
        n_in = dims[self.in_dim]
        if first == 0 and t >= dims[self.out_dim]:
            return 0, n_in, self.pad_before, self.pad_after
        start = first * self.stride - self.pad_before
        end = start + (t - 1) * self.stride + self.extent(dims)
        lo, hi = max(0, start), min(n_in, end)
        return lo, hi - lo, lo - start, end - hi


class IterationSpaceInterface(ABC):
    @abstractmethod
    def iteration_space(self) -> IterationSpace: ...


def _dims_map(n: int, idx: Sequence[int | None]) -> AffineMap:
    """Map from n loop dims to the listed dims (None = constant 0)."""
    exprs: list[AffineExpr] = [
        AffineExpr.constant(0) if i is None else AffineExpr.dimension(i) for i in idx
    ]
    return AffineMap(n, 0, tuple(exprs))


def _broadcast_map(out_shape: Sequence[int], shape: Sequence[int]) -> AffineMap:
    r = len(out_shape)
    off = r - len(shape)
    return _dims_map(
        r,
        [None if shape[i] == 1 and out_shape[i + off] != 1 else i + off for i in range(len(shape))],
    )


# --------------------------------------------------------------------------
# The common shape of compute ops
# --------------------------------------------------------------------------


class TrainingComputeOp(IRDLOperation, ABC):
    """Base of every compute op: `ins`, `outs` (buffer form) and `res` (tensor form)."""

    ins = var_operand_def()
    outs = var_operand_def()
    res = var_result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "`ins` `(` $ins `:` type($ins) `)` (`outs` `(` $outs^ `:` type($outs) `)`)? "
        "attr-dict (`->` type($res)^)?"
    )

    #: buffer form, inside a tile loop (tiling-materialize): the outputs (by
    #: position) that the op adds into instead of overwriting, for a
    #: reduction dim that tiles (`IterationSpace.accumulate`)
    accumulate = opt_prop_def(DenseArrayBase.constr(i64))

    #: number of inputs (min, max) and of outputs
    N_INS: ClassVar[tuple[int, int]] = (1, 1)
    N_OUTS: ClassVar[int] = 1

    def __init__(
        self,
        ins: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute] = (),
        outs: Sequence[SSAValue | Operation] = (),
        properties: Mapping[str, Attribute | None] | None = None,
    ):
        props = {k: v for k, v in (properties or {}).items() if v is not None}
        super().__init__(
            operands=[list(ins), list(outs)],
            result_types=[list(result_types)],
            properties=props,
        )

    # -- helpers for subclasses ------------------------------------------
    @property
    def is_buffer_form(self) -> bool:
        return len(self.outs) > 0

    def output_types(self) -> list[Attribute]:
        """Types of the op's outputs, whichever form it is in."""
        if self.is_buffer_form:
            return [o.type for o in self.outs]
        return [r.type for r in self.res]

    def output_values(self) -> list[SSAValue]:
        return list(self.outs) if self.is_buffer_form else list(self.res)

    def in_types(self) -> list[Attribute]:
        return [o.type for o in self.ins]

    @abstractmethod
    def infer_shapes(self) -> list[tuple[int, ...]]:
        """The output shapes implied by the inputs and properties; raises
        VerifyException naming the rule an operand breaks."""

    def check_inputs(self) -> None:
        """Element-type rules; default: every input f32."""
        for i, t in enumerate(self.in_types()):
            if not is_f32(t):
                raise VerifyException(f"input #{i} must have f32 elements, got {elem_of(t)}")

    def n_outs(self) -> int:
        """How many outputs this op has: N_OUTS unless the op's properties choose."""
        return self.N_OUTS

    def output_elem_types(self) -> list[Attribute]:
        return [f32] * self.n_outs()

    def accumulated(self) -> list[int]:
        """The positions of the outputs the op adds into (`accumulate`)."""
        if self.accumulate is None:
            return []
        return [int(v) for v in self.accumulate.get_values()]

    def accumulable(self) -> set[int]:
        """The outputs (by position) whose kernel can add into them."""
        return set()

    def verify_accumulate(self) -> None:
        acc = self.accumulated()
        if not acc:
            return
        if not self.is_buffer_form:
            raise VerifyException("accumulate needs the buffer form (outs): it adds into them")
        n = len(self.outs)
        if sorted(set(acc)) != acc or not all(0 <= k < n for k in acc):
            raise VerifyException(
                f"accumulate must list output positions in increasing order, each once and "
                f"below {n} (the number of outs), got {acc}"
            )
        bad = sorted(set(acc) - self.accumulable())
        if bad:
            raise VerifyException(
                f"accumulate lists output #{bad[0]} but {self.name} cannot add into it "
                "(conv2d_grad can into each output, layer_norm_grad into dScale and dBias)"
            )

    def verify_(self) -> None:
        lo, hi = self.N_INS
        if not lo <= len(self.ins) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise VerifyException(f"expects {want} inputs, got {len(self.ins)}")
        if len(self.outs) and len(self.res):
            raise VerifyException(
                "has both outs (buffer form) and results (tensor form): use one form"
            )
        outs = self.output_types()
        if len(outs) != self.n_outs():
            form = "outs" if self.is_buffer_form else "results"
            raise VerifyException(f"expects {self.n_outs()} {form}, got {len(outs)}")
        want_memref = self.is_buffer_form
        out_word = "output" if want_memref else "result"
        labelled = [(f"input #{i}", t) for i, t in enumerate(self.in_types())] + [
            (f"{out_word} #{i}", t) for i, t in enumerate(outs)
        ]
        for what, t in labelled:
            if want_memref and not isinstance(t, MemRefType):
                raise VerifyException(
                    f"{what} is {t}: in buffer form (with outs) all operands are memrefs"
                )
            if not want_memref and not isinstance(t, TensorType):
                raise VerifyException(
                    f"{what} is {t}: in tensor form (no outs) all operands and results are tensors"
                )
        self.check_inputs()
        self.verify_accumulate()
        for i, (t, shape, et) in enumerate(
            zip(outs, self.infer_shapes(), self.output_elem_types(), strict=True)
        ):
            if shape_of(t) != tuple(shape):
                raise VerifyException(
                    f"output #{i} has shape {fmt_shape(shape_of(t))} but the inputs give "
                    f"{fmt_shape(shape)}"
                )
            if elem_of(t) != et:
                raise VerifyException(f"output #{i} must have {et} elements, got {elem_of(t)}")


class ElementwiseAliasing(AliasingInterface):
    """Result 0 may reuse any input of the same shape and element type."""

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        assert isinstance(self, TrainingComputeOp)
        out = self.output_types()[0]
        return [
            (0, i)
            for i, t in enumerate(self.in_types())
            if shape_of(t) == shape_of(out) and elem_of(t) == elem_of(out)
        ]


class ElementwiseSpace(IterationSpaceInterface):
    def iteration_space(self) -> IterationSpace:
        assert isinstance(self, TrainingComputeOp)
        out = shape_of(self.output_types()[0])
        maps = [_broadcast_map(out, shape_of(t)) for t in self.in_types()]
        maps += [AffineMap.identity(len(out))] * self.N_OUTS
        return IterationSpace(out, tuple(maps), frozenset())


class ListedGradsOp(TrainingComputeOp, ABC):
    """A gradient op whose `outputs` lists the gradients it computes: some of
    GRADS, each once and in that order (default: all of them); one output
    each."""

    GRADS: ClassVar[tuple[str, ...]] = ()
    outputs = prop_def(ArrayAttr[StringAttr])

    def grads(self) -> list[str]:
        return [s.data for s in self.outputs.data]

    def n_outs(self) -> int:
        return len(self.outputs.data)

    def verify_grads(self) -> None:
        names = self.grads()
        if not names or [g for g in self.GRADS if g in names] != names:
            raise VerifyException(
                f"outputs must list some of {', '.join(self.GRADS)}, each once and in that "
                f"order, got {self.outputs}"
            )


# --------------------------------------------------------------------------
# Compute ops
# --------------------------------------------------------------------------


@irdl_op_definition
class GemmOp(TrainingComputeOp, IterationSpaceInterface):
    """Y = alpha * A' B' + beta * C (ONNX Gemm); C optional, broadcast to [M, N]."""

    name = "training.gemm"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    alpha = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1.0, f32))
    beta = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1.0, f32))

    def mnk(self) -> tuple[int, int, int]:
        a, b = (shape_of(t) for t in self.in_types()[:2])
        return gemm_shapes(a, b, self.trans_a is not None, self.trans_b is not None)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        m, n, _ = self.mnk()
        if len(self.ins) == 3:
            c = shape_of(self.ins[2].type)
            if len(c) > 2 or broadcast_shapes(c, (m, n)) != (m, n):
                raise VerifyException(
                    f"bias C of shape {fmt_shape(c)} does not broadcast to the result {m}x{n}"
                )
        return [(m, n)]

    def iteration_space(self) -> IterationSpace:
        m, n, k = self.mnk()
        d = AffineExpr.dimension
        a = (d(2), d(0)) if self.trans_a is not None else (d(0), d(2))
        b = (d(1), d(2)) if self.trans_b is not None else (d(2), d(1))
        maps = [AffineMap(3, 0, a), AffineMap(3, 0, b)]
        if len(self.ins) == 3:
            c = shape_of(self.ins[2].type)
            maps.append(
                _dims_map(
                    3,
                    [
                        None if c[i] == 1 and (m, n)[i + 2 - len(c)] != 1 else i + 2 - len(c)
                        for i in range(len(c))
                    ],
                )
            )
        maps.append(_dims_map(3, [0, 1]))
        return IterationSpace((m, n, k), tuple(maps), frozenset(), frozenset({2}))


@irdl_op_definition
class MatmulOp(TrainingComputeOp, IterationSpaceInterface):
    """Y = A B for rank-2 A [M, K] and B [K, N] (ONNX MatMul)."""

    name = "training.matmul"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        a, b = (shape_of(t) for t in self.in_types())
        m, n, _ = gemm_shapes(a, b, False, False)
        return [(m, n)]

    def iteration_space(self) -> IterationSpace:
        a, b = (shape_of(t) for t in self.in_types())
        maps = (_dims_map(3, [0, 2]), _dims_map(3, [2, 1]), _dims_map(3, [0, 1]))
        return IterationSpace((a[0], b[1], a[1]), maps, frozenset(), frozenset({2}))


BINARY_KINDS = ("add", "sub", "mul", "div", "pow")


@irdl_op_definition
class BinaryOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Elementwise A <kind> B with numpy broadcasting; kind in add, sub, mul, div, pow
    (pow: A ** B, as C's powf)."""

    name = "training.binary"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    kind = prop_def(StringAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        if self.kind.data not in BINARY_KINDS:
            raise VerifyException(
                f"kind must be one of {', '.join(BINARY_KINDS)}, got '{self.kind.data}'"
            )
        a, b = (shape_of(t) for t in self.in_types())
        out = broadcast_shapes(a, b)
        if out is None:
            raise VerifyException(
                f"shapes {fmt_shape(a)} and {fmt_shape(b)} do not broadcast together"
            )
        return [out]


@irdl_op_definition
class ReluOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = max(X, 0)."""

    name = "training.relu"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class ReluGradOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """dX = dY where X > 0 else 0; X may be the ReLU's input or its output."""

    name = "training.relu_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, x = self.in_types()
        return [_same_shape(dy, "gradient dY", x, "X")]


REDUCTIONS = ("mean", "sum")


def _check_sce(logits: Attribute, labels: Attribute, reduction: str) -> tuple[int, int]:
    if reduction not in REDUCTIONS:
        raise VerifyException(f"reduction must be 'mean' or 'sum', got '{reduction}'")
    ls, lb = shape_of(logits), shape_of(labels)
    if len(ls) != 2:
        raise VerifyException(f"scores must be rank 2 [batch, classes], got {fmt_shape(ls)}")
    if not is_int(labels, 64):
        raise VerifyException(f"labels must have i64 elements, got {elem_of(labels)}")
    if lb != (ls[0],):
        raise VerifyException(
            f"labels must have shape {ls[0]} (one per batch row), got {fmt_shape(lb)}"
        )
    return ls[0], ls[1]


class SceSpace(IterationSpaceInterface):
    """Both dims stay whole: softmax normalises over the classes, the loss
    reduces over the batch and its gradient divides by the whole batch."""

    def iteration_space(self) -> IterationSpace:
        assert isinstance(self, TrainingComputeOp)
        b, c = 0, 0
        maps: list[AffineMap] = []
        for t in [*self.in_types(), *self.output_types()]:
            s = shape_of(t)
            if len(s) == 2:
                b, c = s
                maps.append(_dims_map(2, [0, 1]))
            elif len(s) == 1:
                maps.append(_dims_map(2, [0]))
            else:
                maps.append(AffineMap(2, 0, ()))
        return IterationSpace((b, c), tuple(maps), frozenset({0, 1}))


@irdl_op_definition
class SoftmaxCrossEntropyLossOp(TrainingComputeOp, SceSpace):
    """(loss, log_prob) = SoftmaxCrossEntropyLoss(scores [B, C], labels [B] i64)."""

    name = "training.softmax_cross_entropy_loss"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    N_OUTS: ClassVar[int] = 2
    reduction = prop_def(StringAttr, default_value=StringAttr("mean"))

    def check_inputs(self) -> None:
        if not is_f32(self.ins[0].type):
            raise VerifyException(f"scores must have f32 elements, got {elem_of(self.ins[0].type)}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        b, c = _check_sce(self.ins[0].type, self.ins[1].type, self.reduction.data)
        return [(), (b, c)]


@irdl_op_definition
class SoftmaxCrossEntropyLossGradOp(TrainingComputeOp, SceSpace):
    """dScores = (exp(log_prob) - onehot(labels)) * dY [/ B when reduction = mean]."""

    name = "training.softmax_cross_entropy_loss_grad"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)
    reduction = prop_def(StringAttr, default_value=StringAttr("mean"))

    def check_inputs(self) -> None:
        for i in (0, 1):
            if not is_f32(self.ins[i].type):
                raise VerifyException(
                    f"input #{i} must have f32 elements, got {elem_of(self.ins[i].type)}"
                )

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy = shape_of(self.ins[0].type)
        if dy not in ((), (1,)):
            raise VerifyException(
                f"upstream gradient dY must be a scalar (the loss is reduced), got {fmt_shape(dy)}"
            )
        b, c = _check_sce(self.ins[1].type, self.ins[2].type, self.reduction.data)
        return [(b, c)]


class ReduceOp(TrainingComputeOp, IterationSpaceInterface, ABC):
    """A reduction over `axes` (non-negative, sorted), keeping them as 1s when
    keepdims; the axes stay whole."""

    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(UnitAttr)

    def axes_list(self) -> list[int]:
        return list(self.axes.get_values())

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        axes = self.axes_list()
        if not axes:
            raise VerifyException("axes must not be empty")
        if axes != sorted(set(axes)) or axes[0] < 0 or axes[-1] >= len(x):
            raise VerifyException(
                f"axes {axes} must be sorted, distinct and in [0, {len(x)}) for an input of "
                f"rank {len(x)}"
            )
        if self.keepdims is not None:
            return [tuple(1 if i in axes else d for i, d in enumerate(x))]
        return [tuple(d for i, d in enumerate(x) if i not in axes)]

    def iteration_space(self) -> IterationSpace:
        x = shape_of(self.ins[0].type)
        axes = set(self.axes_list())
        kept = [i for i in range(len(x)) if i not in axes]
        out_idx: list[int | None] = (
            [None if i in axes else i for i in range(len(x))]
            if self.keepdims is not None
            else list(kept)
        )
        maps = (AffineMap.identity(len(x)), _dims_map(len(x), out_idx))
        return IterationSpace(x, maps, frozenset(), frozenset(axes))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes` (ONNX ReduceSum)."""

    name = "training.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over `axes`: the sum divided by the number of elements reduced into
    each output (ONNX ReduceMean)."""

    name = "training.reduce_mean"


class StateUpdate(AliasingInterface):
    STATE_UPDATE: ClassVar[bool] = True

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return [(0, 0)]


@irdl_op_definition
class AccumulateOp(TrainingComputeOp, StateUpdate, ElementwiseSpace):
    """InPlaceAccumulatorV2: out = reset ? grad : buffer + grad (reset: tensor<1xi1>)."""

    name = "training.accumulate"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)

    def check_inputs(self) -> None:
        buf, grad, reset = self.in_types()
        if not (is_f32(buf) and is_f32(grad)):
            raise VerifyException("buffer and gradient must have f32 elements")
        if not is_int(reset, 1) or shape_of(reset) not in ((), (1,)):
            raise VerifyException(f"reset flag must be a tensor<1xi1>, got {reset}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        buf, grad = self.in_types()[:2]
        return [_same_shape(buf, "buffer", grad, "gradient")]


@irdl_op_definition
class SgdOp(TrainingComputeOp, StateUpdate, ElementwiseSpace):
    """out = weight - lr * grad (lr: a one-element f32 tensor)."""

    name = "training.sgd"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        w, g, lr = self.in_types()
        shape = _same_shape(w, "weight", g, "gradient")
        if shape_of(lr) not in ((), (1,)):
            raise VerifyException(
                f"learning rate must have one element, got {fmt_shape(shape_of(lr))}"
            )
        return [shape]


@irdl_op_definition
class CopyOp(TrainingComputeOp, ElementwiseSpace):
    """out = in (same shape); bufferization inserts it where an update cannot be in place."""

    name = "training.copy"

    def check_inputs(self) -> None:
        pass

    def output_elem_types(self) -> list[Attribute]:
        return [elem_of(self.ins[0].type)]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class ReshapeOp(TrainingComputeOp, IterationSpaceInterface):
    """Y = X's elements, in row-major order, under Y's declared shape (ONNX
    Reshape and Flatten, the target shape resolved at import: shapes are
    static). Y has a buffer of its own (a copy; no aliasing: an alias would
    need a memref of another shape over the same storage).

    The output's shape is its declared type, checked against X's element
    count, so that a tile of a reshape is again a reshape: a dim that X and Y
    keep (`reshape_groups`) may tile (a tile holds the same elements in the
    same row-major order on both sides, so its kernel is a copy); the dims
    that merge or split stay whole."""

    name = "training.reshape"

    def check_inputs(self) -> None:
        pass

    def output_elem_types(self) -> list[Attribute]:
        return [elem_of(self.ins[0].type)]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x, y = shape_of(self.ins[0].type), shape_of(self.output_types()[0])
        nx, ny = 1, 1
        for d in x:
            nx *= d
        for d in y:
            ny *= d
        if nx != ny:
            raise VerifyException(
                f"X ({fmt_shape(x)}, {nx} elements) cannot be reshaped to {fmt_shape(y)} "
                f"({ny} elements)"
            )
        return [y]

    def iteration_space(self) -> IterationSpace:
        # a dim that X and Y keep (a group of one dim on each side, see
        # reshape_groups) is one loop dim and may tile: a tile then holds the
        # same elements, in the same order, on both sides; the dims of merged
        # or split groups have loop dims of their own and stay whole; size-1
        # dims are the constant 0
        x, y = shape_of(self.ins[0].type), shape_of(self.output_types()[0])
        dims: list[int] = []
        x_idx: list[int | None] = [None] * len(x)
        y_idx: list[int | None] = [None] * len(y)
        whole: set[int] = set()
        for gx, gy in reshape_groups(x, y):
            if len(gx) == 1 and len(gy) == 1:
                x_idx[gx[0]] = y_idx[gy[0]] = len(dims)
                dims.append(x[gx[0]])
                continue
            for idx, shape, group in ((x_idx, x, gx), (y_idx, y, gy)):
                for i in group:
                    idx[i] = len(dims)
                    whole.add(len(dims))
                    dims.append(shape[i])
        maps = (_dims_map(len(dims), x_idx), _dims_map(len(dims), y_idx))
        return IterationSpace(tuple(dims), maps, frozenset(whole))


# --------------------------------------------------------------------------
# Convolution and pooling (2-D, NCHW)
# --------------------------------------------------------------------------


def _i64s(*vals: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vals))


def _ints(arr: DenseArrayBase, name: str, meaning: str, positive: bool) -> tuple[int, ...]:
    """The values of an i64 array property, with its count and sign checked;
    `meaning` names the values ("height, width")."""
    vals = tuple(int(v) for v in arr.get_values())  # pyright: ignore[reportAttributeAccessIssue]
    want = len(meaning.split(", "))
    if len(vals) != want:
        raise VerifyException(f"{name} must have {want} values ({meaning}), got {len(vals)}")
    if any(v < (1 if positive else 0) for v in vals):
        sign = "positive" if positive else "non-negative"
        raise VerifyException(f"{name} must be {sign}, got {list(vals)}")
    return vals


def _rank4(shape: Sequence[int], what: str, layout: str) -> tuple[int, int, int, int]:
    if len(shape) != 4:
        raise VerifyException(f"{what} must be rank 4 [{layout}], got {fmt_shape(shape)}")
    return shape[0], shape[1], shape[2], shape[3]


AXES = ("height", "width")


def _check_dy(dy: Sequence[int], forward: Sequence[int], how: str) -> None:
    """A gradient op's dY has the shape of its forward's output (`forward`,
    which `how` gives)."""
    if tuple(dy) != tuple(forward):
        raise VerifyException(f"dY has shape {fmt_shape(dy)} but {how} gives {fmt_shape(forward)}")


@dataclass(frozen=True)
class Window2d:
    """A 2-D sliding window: kernel size, strides, pads (top, left, bottom,
    right: ONNX's order) and dilations. Input row of output row o and kernel
    tap k: o * stride + k * dilation - pad_top (rows outside the input read
    the padding)."""

    kernel: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilations: tuple[int, int]

    def extent(self, axis: int) -> int:
        return (self.kernel[axis] - 1) * self.dilations[axis] + 1

    def tileable(self, axis: int) -> bool:
        """Whether the output may tile along `axis` (spatial tiles with halos):
        when each pad is smaller than the window's extent every window reads
        some input, so every tile's input is at least one row (column)."""
        ext = self.extent(axis)
        return self.pads[axis] < ext and self.pads[axis + 2] < ext

    def spatial_whole(self, out_dims: tuple[int, int], in_dims: tuple[int, int]) -> set[int]:
        """The output and input dims of the axes that may not tile."""
        return {d for a in (0, 1) if not self.tileable(a) for d in (out_dims[a], in_dims[a])}

    def out_size(self, hw: tuple[int, int]) -> tuple[int, int]:
        """Output size over an input of size hw (floor division, ONNX's
        ceil_mode = 0); raises when the kernel does not fit the padded input."""
        out: list[int] = []
        for a in (0, 1):
            padded = hw[a] + self.pads[a] + self.pads[a + 2]
            if padded < self.extent(a):
                raise VerifyException(
                    f"the kernel's {AXES[a]} extent {self.extent(a)} (kernel {self.kernel[a]}, "
                    f"dilation {self.dilations[a]}) exceeds the padded input {AXES[a]} {padded} "
                    f"(input {hw[a]}, pads {self.pads[a]} + {self.pads[a + 2]})"
                )
            out.append((padded - self.extent(a)) // self.strides[a] + 1)
        return out[0], out[1]

    def check_windows_overlap(self, hw: tuple[int, int], out: tuple[int, int]) -> None:
        """Pooling: every window must read at least one input element (as
        onnxruntime requires pads smaller than the kernel)."""
        for a in (0, 1):
            for o in range(out[a]):
                start = o * self.strides[a] - self.pads[a]
                taps = (start + k * self.dilations[a] for k in range(self.kernel[a]))
                if not any(0 <= t < hw[a] for t in taps):
                    raise VerifyException(
                        f"pooling window {o} along the {AXES[a]} reads only padding (input "
                        f"{hw[a]}, kernel {self.kernel[a]}, stride {self.strides[a]}, dilation "
                        f"{self.dilations[a]}, pads {self.pads[a]} + {self.pads[a + 2]}): every "
                        "window must overlap the input"
                    )

    def sliding(
        self, out_dims: tuple[int, int], tap_dims: tuple[int, int], in_dims: tuple[int, int]
    ) -> tuple[SlidingWindow, ...]:
        return tuple(
            SlidingWindow(
                out_dims[a],
                tap_dims[a],
                in_dims[a],
                self.strides[a],
                self.dilations[a],
                self.pads[a],
                self.pads[a + 2],
            )
            for a in (0, 1)
        )


class NoAliasing(AliasingInterface):
    """No result may share an input's storage: a window reads input elements
    after the outputs that overlap them are written."""

    def alias_candidates(self) -> Sequence[tuple[int, int]]:
        return []


class WindowedOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface, ABC):
    """Common properties of convolution and pooling ops."""

    strides = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))
    pads = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(0, 0, 0, 0))

    def _window(self, kernel: tuple[int, int], dilations: DenseArrayBase | None) -> Window2d:
        strides = _ints(self.strides, "strides", "height, width", positive=True)
        pads = _ints(self.pads, "pads", "top, left, bottom, right", positive=False)
        dil = (1, 1)
        if dilations is not None:
            dil = _ints(dilations, "dilations", "height, width", positive=True)
        return Window2d(
            kernel, (strides[0], strides[1]), (pads[0], pads[1], pads[2], pads[3]), (dil[0], dil[1])
        )


def _space(
    dims: Sequence[int],
    operands: Sequence[Sequence[int | None]],
    whole: set[int],
    reduction: set[int],
    windows: tuple[SlidingWindow, ...] = (),
) -> IterationSpace:
    maps = tuple(_dims_map(len(dims), idx) for idx in operands)
    return IterationSpace(tuple(dims), maps, frozenset(whole), frozenset(reduction), windows)


# -- convolution -------------------------------------------------------------

#: loop dims of the convolution ops' iteration space (IC only for grouped
#: convolutions that are neither regular nor depthwise)
CONV_N, CONV_M, CONV_CG, CONV_OH, CONV_OW, CONV_KH, CONV_KW, CONV_IH, CONV_IW, CONV_IC = range(10)
CONV_SPATIAL = frozenset({CONV_OH, CONV_OW, CONV_KH, CONV_KW, CONV_IH, CONV_IW})


@dataclass(frozen=True)
class ConvGeometry:
    """X [n, c, h, w] convolved with W [m, cg, kh, kw] in c / cg groups gives
    Y [n, m, oh, ow]; output channel j reads the input channels of group
    j // (m / groups)."""

    n: int
    c: int
    h: int
    w: int
    m: int
    cg: int
    kh: int
    kw: int
    oh: int
    ow: int
    window: Window2d

    @property
    def groups(self) -> int:
        return self.c // self.cg

    @property
    def depthwise(self) -> bool:
        """One input and one output channel per group (and more than one group)."""
        return self.groups > 1 and self.cg == 1 and self.m == self.c

    @property
    def x_channel_dim(self) -> int:
        """The loop dim that indexes X's channels: the group-local channel of a
        regular convolution, the output channel of a depthwise one, else a dim
        of its own (whole)."""
        if self.groups == 1:
            return CONV_CG
        return CONV_M if self.depthwise else CONV_IC

    def space(
        self,
        roles: Sequence[str],
        reduction: set[int],
        spatial: bool = False,
        accumulate: frozenset[int] = frozenset(),
    ) -> IterationSpace:
        """The iteration space for operands playing `roles` (X, W, B, Y and
        their gradients dX, dW, dB, dY), in order. With `spatial` (the
        forward, the weight gradient) the output rows and columns may tile,
        the input's following them with a halo (`IterationSpace.tiled_windows`);
        else the spatial dims stay whole. `accumulate`: the reduction dims
        that may tile all the same (the kernel adds into its outputs)."""
        xc = self.x_channel_dim
        index: dict[str, tuple[int, ...]] = {
            "X": (CONV_N, xc, CONV_IH, CONV_IW),
            "W": (CONV_M, CONV_CG, CONV_KH, CONV_KW),
            "B": (CONV_M,),
            "Y": (CONV_N, CONV_M, CONV_OH, CONV_OW),
        }
        dims = [self.n, self.m, self.cg, self.oh, self.ow, self.kh, self.kw, self.h, self.w]
        whole = set(CONV_SPATIAL)
        if spatial:
            whole = {CONV_KH, CONV_KW} | self.window.spatial_whole(
                (CONV_OH, CONV_OW), (CONV_IH, CONV_IW)
            )
        if xc == CONV_IC:
            # a tile of channels would cut across groups
            dims.append(self.c)
            whole |= {CONV_M, CONV_CG, CONV_IC}
        operands = [index[r.removeprefix("d")] for r in roles]
        windows = self.window.sliding((CONV_OH, CONV_OW), (CONV_KH, CONV_KW), (CONV_IH, CONV_IW))
        space = _space(dims, operands, whole, reduction, windows)
        return IterationSpace(
            space.dims, space.maps, space.whole, space.reduction, windows, accumulate - whole
        )


class ConvOp(WindowedOp, ABC):
    """Properties and geometry of conv2d and conv2d_grad."""

    dilations = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))

    #: positions of X and W among the inputs
    X_IN: ClassVar[int] = 0
    W_IN: ClassVar[int] = 1

    def geometry(self) -> ConvGeometry:
        n, c, h, w = _rank4(shape_of(self.ins[self.X_IN].type), "X", "N, C, H, W")
        m, cg, kh, kw = _rank4(shape_of(self.ins[self.W_IN].type), "W", "M, C/group, kH, kW")
        if cg == 0 or c % cg:
            raise VerifyException(
                f"X has {c} channels, not a multiple of W's {cg} input channels per group "
                f"(W is {fmt_shape((m, cg, kh, kw))})"
            )
        groups = c // cg
        if m % groups:
            raise VerifyException(
                f"W has {m} output channels, not a multiple of the {groups} groups "
                f"(X's {c} channels / W's {cg} per group)"
            )
        win = self._window((kh, kw), self.dilations)
        oh, ow = win.out_size((h, w))
        return ConvGeometry(n, c, h, w, m, cg, kh, kw, oh, ow, win)


@irdl_op_definition
class Conv2dOp(ConvOp):
    """Y = conv(X, W) + B (ONNX Conv, 2-D, NCHW, explicit pads).

    X [N, C, H, W], W [M, C/G, kH, kW], optional B [M] -> Y [N, M, OH, OW].
    The group count G is not a property: it is C / W.shape[1] (ONNX's `group`
    is checked against the shapes by the importer), so that a tile of the
    channels of a depthwise convolution is again a valid depthwise
    convolution. pads = [top, left, bottom, right];
    OH = (H + top + bottom - ((kH - 1) * dilation + 1)) // stride + 1."""

    name = "training.conv2d"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        g = self.geometry()
        if len(self.ins) == 3:
            b = shape_of(self.ins[2].type)
            if b != (g.m,):
                raise VerifyException(
                    f"bias B must have shape {g.m} (one per output channel), got {fmt_shape(b)}"
                )
        return [(g.n, g.m, g.oh, g.ow)]

    def iteration_space(self) -> IterationSpace:
        roles = [*("X", "W", "B")[: len(self.ins)], "Y"]
        return self.geometry().space(roles, {CONV_CG, CONV_KH, CONV_KW}, spatial=True)


CONV_GRADS = ("dX", "dW", "dB")


@irdl_op_definition
class Conv2dGradOp(ConvOp, ListedGradsOp):
    """(dX, dW, dB) = gradients of conv2d (com.microsoft ConvGrad): ins
    (dY, X, W), the forward's properties.

    `outputs` lists the gradients the graph needs, in the order dX, dW, dB
    (default: all three); the op has one output per entry, in that order. A
    gradient ConvGrad leaves unnamed ("") is left out: the first layer
    needs no dX, a convolution without bias no dB."""

    name = "training.conv2d_grad"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)
    X_IN: ClassVar[int] = 1
    W_IN: ClassVar[int] = 2
    GRADS: ClassVar[tuple[str, ...]] = CONV_GRADS
    outputs = prop_def(
        ArrayAttr[StringAttr],
        default_value=ArrayAttr([StringAttr(s) for s in CONV_GRADS]),
    )

    def verify_(self) -> None:
        self.verify_grads()
        super().verify_()

    def infer_shapes(self) -> list[tuple[int, ...]]:
        g = self.geometry()
        _check_dy(shape_of(self.ins[0].type), (g.n, g.m, g.oh, g.ow), "X convolved with W")
        shapes = {"dX": (g.n, g.c, g.h, g.w), "dW": (g.m, g.cg, g.kh, g.kw), "dB": (g.m,)}
        return [shapes[s] for s in self.grads()]

    def iteration_space(self) -> IterationSpace:
        """With dX alone, the output channels (a reduction unless depthwise)
        may tile, dX adding up their contributions; with dW and dB alone, the
        batch and the output rows and columns (X's following with a halo, as
        in the forward), dW and dB adding up. With dX and dW together every
        reduction dim stays whole (`split` makes two ops that tile)."""
        g = self.geometry()
        grads = self.grads()
        reduction: set[int] = set()
        if "dX" in grads:
            # dX sums over taps (and output positions) and, within a group,
            # over the output channels
            reduction |= {CONV_OH, CONV_OW, CONV_KH, CONV_KW}
            if not g.depthwise:
                reduction.add(CONV_M)
        if "dW" in grads or "dB" in grads:
            reduction |= {CONV_N, CONV_OH, CONV_OW}
        roles = ["dY", "X", "W", *grads]
        if grads == ["dX"]:
            # X is not read: its shape is dX's, and the dX tile stands in
            sp = g.space(roles, reduction, accumulate=frozenset(reduction & {CONV_M}))
            return dataclasses.replace(sp, unread=((self.X_IN, 0),))
        if "dX" not in grads:
            acc = frozenset({CONV_N, CONV_OH, CONV_OW})
            sp = g.space(roles, reduction, spatial=True, accumulate=acc)
            if grads[0] == "dW":  # W is not read: the dW tile stands in
                sp = dataclasses.replace(sp, unread=((self.W_IN, 0),))
            return sp
        return g.space(roles, reduction)

    def accumulable(self) -> set[int]:
        return set(range(self.n_outs()))

    def split(self) -> list[Conv2dGradOp]:
        """Buffer form with dX and dW or dB: one op for dX and one for the
        others (the same inputs and properties), each of which may tile its
        reduction dims; one op otherwise."""
        grads = self.grads()
        if "dX" not in grads or len(grads) == 1 or not self.is_buffer_form:
            return [self]
        props = {k: p for k, p in self.properties.items() if k != "operandSegmentSizes"}
        out: list[Conv2dGradOp] = []
        for names in (["dX"], grads[1:]):
            p = dict(props)
            p["outputs"] = ArrayAttr([StringAttr(n) for n in names])
            outs = [self.outs[grads.index(n)] for n in names]
            out.append(Conv2dGradOp(list(self.ins), (), outs, properties=p))
        return out


# -- pooling -----------------------------------------------------------------

#: loop dims of the 2-D pooling ops' iteration space
POOL_N, POOL_C, POOL_OH, POOL_OW, POOL_KH, POOL_KW, POOL_IH, POOL_IW = range(8)
POOL_IN = (POOL_N, POOL_C, POOL_IH, POOL_IW)
POOL_OUT = (POOL_N, POOL_C, POOL_OH, POOL_OW)


class PoolOp(WindowedOp, ABC):
    """Properties and geometry of the 2-D pooling ops (forward and gradient)."""

    kernel_shape = prop_def(DenseArrayBase.constr(i64))

    def dilation_prop(self) -> DenseArrayBase | None:
        return None

    def window(self) -> Window2d:
        k = _ints(self.kernel_shape, "kernel_shape", "height, width", positive=True)
        return self._window((k[0], k[1]), self.dilation_prop())

    def pooled(self, x: Sequence[int], what: str) -> tuple[int, int, int, int]:
        """[N, C, OH, OW] of pooling an input of shape x (called `what`)."""
        n, c, h, w = _rank4(x, what, "N, C, H, W")
        win = self.window()
        out = win.out_size((h, w))
        win.check_windows_overlap((h, w), out)
        return n, c, out[0], out[1]

    def space(self, n_in: int, n_out: int, grad: bool) -> IterationSpace:
        """Forward: the input, then the outputs; gradient: the inputs (shaped
        like the forward's output), then dX."""
        x = shape_of(self.output_types()[0] if grad else self.ins[0].type)
        n, c, oh, ow = self.pooled(x, "dX" if grad else "X")
        win = self.window()
        dims = (n, c, oh, ow, *win.kernel, x[2], x[3])
        operands = [POOL_OUT] * n_in + [POOL_IN] if grad else [POOL_IN] + [POOL_OUT] * n_out
        reduction = {POOL_KH, POOL_KW} | ({POOL_OH, POOL_OW} if grad else set())
        windows = win.sliding((POOL_OH, POOL_OW), (POOL_KH, POOL_KW), (POOL_IH, POOL_IW))
        whole = {POOL_OH, POOL_OW, POOL_KH, POOL_KW, POOL_IH, POOL_IW}
        if not grad:
            # the forward tiles its output rows and columns (inputs with halos)
            whole = {POOL_KH, POOL_KW} | win.spatial_whole((POOL_OH, POOL_OW), (POOL_IH, POOL_IW))
        return _space(dims, operands, whole, reduction, windows)

    def grad_shapes(self, dy: Sequence[int]) -> list[tuple[int, ...]]:
        """dX's declared shape, checked against dY: dX pooled must give dY."""
        dx = shape_of(self.output_types()[0])
        n, c, oh, ow = self.pooled(dx, "dX")
        _rank4(dy, "dY", "N, C, OH, OW")
        _check_dy(dy, (n, c, oh, ow), f"pooling dX ({fmt_shape(dx)})")
        return [dx]


@irdl_op_definition
class MaxPool2dOp(PoolOp):
    """(Y, Indices) = MaxPool(X) (ONNX MaxPool, 2-D, NCHW, ceil_mode = 0,
    storage_order = 0); Indices is optional (one output: Y only).

    Indices[n, c, oh, ow] is the flat row-major index into the whole input
    ((n * C + c) * H + h) * W + w of the first largest element of the window
    (padding never wins). A tile (tiling-materialize) carries its origin in
    the whole input (`origin`: n, c, h, w) and the whole input's [C, H, W]
    (`index_frame`), so that its Indices are those of the whole op.
    maxpool2d_grad reads an index modulo H * W."""

    name = "training.maxpool2d"
    N_OUTS: ClassVar[int] = 2
    dilations = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))
    #: a tile of a larger maxpool2d: where its input starts in the whole input
    #: (n, c, h, w; index values, set per tile by tiling-materialize; after
    #: ins and outs, which are declared again to keep that operand order) ...
    ins = var_operand_def()
    outs = var_operand_def()
    origin = var_operand_def(IndexType())
    #: ... and the whole input's [C, H, W], so that Indices number the whole input
    index_frame = opt_prop_def(DenseArrayBase.constr(i64))

    assembly_format = (
        "`ins` `(` $ins `:` type($ins) `)` (`outs` `(` $outs^ `:` type($outs) `)`)? "
        "(`origin` `(` $origin^ `)`)? attr-dict (`->` type($res)^)?"
    )

    def __init__(
        self,
        ins: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute] = (),
        outs: Sequence[SSAValue | Operation] = (),
        properties: Mapping[str, Attribute | None] | None = None,
        origin: Sequence[SSAValue | Operation] = (),
    ):
        props = {k: v for k, v in (properties or {}).items() if v is not None}
        IRDLOperation.__init__(
            self,
            operands=[list(ins), list(outs), list(origin)],
            result_types=[list(result_types)],
            properties=props,
        )

    def dilation_prop(self) -> DenseArrayBase | None:
        return self.dilations

    def frame(self) -> tuple[int, int, int]:
        """[C, H, W] of the input the Indices count in (the op's own unless a tile)."""
        if self.index_frame is None:
            _, c, h, w = shape_of(self.ins[0].type)
            return c, h, w
        c, h, w = (int(v) for v in self.index_frame.get_values())
        return c, h, w

    def n_outs(self) -> int:
        n = len(self.output_types())
        return n if n in (1, 2) else 2

    def verify_(self) -> None:
        n = len(self.output_types())
        if n not in (1, 2):
            form = "outs" if self.is_buffer_form else "results"
            raise VerifyException(f"expects 1 or 2 {form} (Y, then optionally Indices), got {n}")
        super().verify_()
        if len(self.origin) not in (0, 4) or (len(self.origin) == 4) != (
            self.index_frame is not None
        ):
            raise VerifyException(
                "a tile's origin (4 index values: n, c, h, w) and index_frame ([C, H, W] of "
                "the whole input) come together"
            )
        if self.index_frame is not None:
            frame = tuple(int(v) for v in self.index_frame.get_values())
            _, c, h, w = shape_of(self.ins[0].type)
            if len(frame) != 3 or any(f < t for f, t in zip(frame, (c, h, w), strict=False)):
                raise VerifyException(
                    f"index_frame must be [C, H, W] of the whole input, at least the tile's "
                    f"{[c, h, w]}, got {list(frame)}"
                )

    def output_elem_types(self) -> list[Attribute]:
        return [f32, i64][: self.n_outs()]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        y = self.pooled(shape_of(self.ins[0].type), "X")
        return [y] * self.n_outs()

    def iteration_space(self) -> IterationSpace:
        return self.space(1, self.n_outs(), grad=False)


@irdl_op_definition
class MaxPool2dGradOp(PoolOp):
    """dX = gradient of maxpool2d (onnxruntime MaxPoolGrad): ins (dY,
    Indices), the forward's properties; dX's shape is the forward input's.

    dX[n, c] is zero but for dX[n, c].flat[Indices[n, c, oh, ow] mod (H * W)]
    += dY[n, c, oh, ow], in increasing (oh, ow) order."""

    name = "training.maxpool2d_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    dilations = prop_def(DenseArrayBase.constr(i64), default_value=_i64s(1, 1))

    def dilation_prop(self) -> DenseArrayBase | None:
        return self.dilations

    def check_inputs(self) -> None:
        dy, idx = self.in_types()
        if not is_f32(dy):
            raise VerifyException(f"dY must have f32 elements, got {elem_of(dy)}")
        if not is_int(idx, 64):
            raise VerifyException(f"Indices must have i64 elements, got {elem_of(idx)}")

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, idx = self.in_types()
        return self.grad_shapes(_same_shape(dy, "dY", idx, "Indices"))

    def iteration_space(self) -> IterationSpace:
        return self.space(2, 1, grad=True)


@irdl_op_definition
class AvgPool2dOp(PoolOp):
    """Y = AveragePool(X) (ONNX AveragePool, 2-D, NCHW, ceil_mode = 0, no
    dilations): the mean of each window's input elements; padding counts in
    the divisor (kH * kW) only with count_include_pad."""

    name = "training.avgpool2d"
    count_include_pad = opt_prop_def(UnitAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [self.pooled(shape_of(self.ins[0].type), "X")]

    def iteration_space(self) -> IterationSpace:
        return self.space(1, 1, grad=False)


@irdl_op_definition
class AvgPool2dGradOp(PoolOp):
    """dX = gradient of avgpool2d (onnxruntime AveragePoolGrad): ins (dY),
    the forward's properties; dX's shape is the forward input's. Each
    dY[n, c, oh, ow], divided by its window's divisor, adds to every input
    element of the window."""

    name = "training.avgpool2d_grad"
    count_include_pad = opt_prop_def(UnitAttr)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return self.grad_shapes(shape_of(self.ins[0].type))

    def iteration_space(self) -> IterationSpace:
        return self.space(1, 1, grad=True)


GLOBAL_IN = (0, 1, 2, 3)
GLOBAL_OUT = (0, 1, None, None)


@irdl_op_definition
class GlobalAvgPoolOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """Y [N, C, 1, 1] = the mean of X [N, C, H, W] over H and W (ONNX
    GlobalAveragePool)."""

    name = "training.global_avgpool"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        n, c, _, _ = _rank4(shape_of(self.ins[0].type), "X", "N, C, H, W")
        return [(n, c, 1, 1)]

    def iteration_space(self) -> IterationSpace:
        return _space(shape_of(self.ins[0].type), [GLOBAL_IN, GLOBAL_OUT], set(), {2, 3})


@irdl_op_definition
class GlobalAvgPoolGradOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """dX [N, C, H, W] = dY [N, C, 1, 1] / (H * W), broadcast over H and W;
    dX's shape is the forward input's."""

    name = "training.global_avgpool_grad"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dx = shape_of(self.output_types()[0])
        n, c, _, _ = _rank4(dx, "dX", "N, C, H, W")
        dy = shape_of(self.ins[0].type)
        if dy != (n, c, 1, 1):
            raise VerifyException(
                f"dY must have shape {fmt_shape((n, c, 1, 1))} (dX's batch and channels), got "
                f"{fmt_shape(dy)}"
            )
        return [dx]

    def iteration_space(self) -> IterationSpace:
        dx = shape_of(self.output_types()[0])
        # the divisor is the whole plane: H and W stay whole
        return _space(dx, [GLOBAL_OUT, GLOBAL_IN], {2, 3}, set())


# --------------------------------------------------------------------------
# Transformer ops: batched matmul, softmax, layer normalization, GELU, layout
# --------------------------------------------------------------------------


def _check_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not 0 <= axis < rank:
        raise VerifyException(
            f"{what} {axis} is out of range for rank {rank}: it must be in [0, {rank}) "
            "(the importer turns negative axes into these)"
        )
    return axis


@irdl_op_definition
class BatchMatmulOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """Y[b.., m, n] = alpha * sum_k A'[b.., m, k] B'[b.., k, n] + beta * C (ONNX
    MatMul of rank > 2, and Deeploy's Gemm on batched operands).

    A' is A [.., K, M] transposed when trans_a, else A [.., M, K]; B' likewise
    ([.., N, K] when trans_b). The batch dims (all but the last two) broadcast
    like numpy's; C (optional) broadcasts to Y. K is a reduction and stays whole."""

    name = "training.batch_matmul"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    alpha = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1.0, f32))
    beta = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1.0, f32))

    def geometry(self) -> tuple[tuple[int, ...], int, int, int]:
        """(batch dims of Y, M, N, K)."""
        a, b = (shape_of(t) for t in self.in_types()[:2])
        if len(a) < 2 or len(b) < 2:
            raise VerifyException(
                f"A and B must have rank 2 or more (batch dims, then a matrix), got "
                f"{fmt_shape(a)} and {fmt_shape(b)}"
            )
        m, n, k = gemm_shapes(a[-2:], b[-2:], self.trans_a is not None, self.trans_b is not None)
        batch = broadcast_shapes(a[:-2], b[:-2])
        if batch is None:
            raise VerifyException(
                f"the batch dims of A ({fmt_shape(a[:-2])}) and B ({fmt_shape(b[:-2])}) do not "
                "broadcast together"
            )
        return batch, m, n, k

    def infer_shapes(self) -> list[tuple[int, ...]]:
        batch, m, n, _ = self.geometry()
        out = (*batch, m, n)
        if len(self.ins) == 3:
            c = shape_of(self.ins[2].type)
            if len(c) > len(out) or broadcast_shapes(c, out) != out:
                raise VerifyException(
                    f"bias C of shape {fmt_shape(c)} does not broadcast to the result "
                    f"{fmt_shape(out)}"
                )
        return [out]

    def iteration_space(self) -> IterationSpace:
        batch, m, n, k = self.geometry()
        nb = len(batch)
        dm, dn, dk = nb, nb + 1, nb + 2
        dims = (*batch, m, n, k)
        out = (*batch, m, n)

        def right_aligned(shape: Sequence[int], tail: list[int | None]) -> AffineMap:
            lead = shape[: len(shape) - len(tail)]
            off = len(out) - len(tail) - len(lead)
            idx: list[int | None] = [
                None if d == 1 and out[i + off] != 1 else i + off for i, d in enumerate(lead)
            ]
            return _dims_map(len(dims), idx + tail)

        a, b = (shape_of(t) for t in self.in_types()[:2])
        a_mat: list[int | None] = [dk, dm] if self.trans_a is not None else [dm, dk]
        b_mat: list[int | None] = [dn, dk] if self.trans_b is not None else [dk, dn]
        maps = [right_aligned(a, a_mat), right_aligned(b, b_mat)]
        if len(self.ins) == 3:
            c = shape_of(self.ins[2].type)
            maps.append(right_aligned(c, []))
        maps.append(_dims_map(len(dims), list(range(len(out)))))
        return IterationSpace(dims, tuple(maps), frozenset(), frozenset({dk}))


@irdl_op_definition
class SoftmaxOp(TrainingComputeOp, ElementwiseAliasing, IterationSpaceInterface):
    """Y = exp(X - max) / sum(exp(X - max)) along `axis` (ONNX Softmax, opset 13
    semantics); the axis stays whole."""

    name = "training.softmax"
    axis = prop_def(IntegerAttr[I64])

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        _check_axis(self.axis.value.data, len(x))
        return [x]

    def iteration_space(self) -> IterationSpace:
        x = shape_of(self.ins[0].type)
        ident = AffineMap.identity(len(x))
        return IterationSpace(x, (ident, ident), frozenset({self.axis.value.data}))


@irdl_op_definition
class SoftmaxGradOp(TrainingComputeOp, ElementwiseAliasing, IterationSpaceInterface):
    """dX = Y * (dY - sum(dY * Y along axis)) (com.microsoft SoftmaxGrad_13, and
    SoftmaxGrad over the last axis): ins (dY, Y), Y the softmax's output."""

    name = "training.softmax_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)
    axis = prop_def(IntegerAttr[I64])

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, y = self.in_types()
        shape = _same_shape(dy, "dY", y, "Y")
        _check_axis(self.axis.value.data, len(shape))
        return [shape]

    def iteration_space(self) -> IterationSpace:
        y = shape_of(self.ins[1].type)
        ident = AffineMap.identity(len(y))
        axis = self.axis.value.data
        return IterationSpace(y, (ident, ident, ident), frozenset({axis}), frozenset({axis}))


class NormOp(TrainingComputeOp, IterationSpaceInterface, ABC):
    """Shapes shared by layer normalization and its gradient: X [d0.., da..]
    normalized over the dims from `axis` on; scale and bias have the
    normalized shape (leading 1s may be left out); the saved statistics (Mean,
    InvStdDev) have X's outer dims, then 1s (ONNX: [d0.., 1, .., 1])."""

    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1e-5, f32))

    def x_shape(self) -> tuple[int, ...]:
        return shape_of(self.ins[self.X_IN].type)

    #: position of X among the inputs
    X_IN: ClassVar[int] = 0

    def norm_axis(self) -> int:
        x = self.x_shape()
        if not x:
            raise VerifyException("X must have rank 1 or more")
        return _check_axis(self.axis.value.data, len(x))

    def check_param(self, t: Attribute, what: str) -> None:
        x, axis = self.x_shape(), self.norm_axis()
        s, norm = shape_of(t), x[axis:]
        size = 1
        for d in s:
            size *= d
        want = 1
        for d in norm:
            want *= d
        if len(s) > len(norm) or broadcast_shapes(s, norm) != norm or size != want:
            raise VerifyException(
                f"{what} must have the normalized shape {fmt_shape(norm)} (X's dims from axis "
                f"{axis}), got {fmt_shape(s)}"
            )

    def stats_shape(self) -> tuple[int, ...]:
        x, axis = self.x_shape(), self.norm_axis()
        return (*x[:axis], *([1] * (len(x) - axis)))

    def check_stats(self, t: Attribute, what: str) -> None:
        x, axis = self.x_shape(), self.norm_axis()
        s = shape_of(t)
        if s[:axis] != x[:axis] or len(s) > len(x) or any(d != 1 for d in s[axis:]):
            raise VerifyException(
                f"{what} must have X's outer dims {fmt_shape(x[:axis])} followed by 1s (e.g. "
                f"{fmt_shape(self.stats_shape())}), got {fmt_shape(s)}"
            )

    def param_map(self, t: Attribute) -> AffineMap:
        return _broadcast_map(self.x_shape(), shape_of(t))

    def stats_map(self, t: Attribute) -> AffineMap:
        axis, r = self.norm_axis(), len(self.x_shape())
        return _dims_map(r, [*range(axis), *([None] * (len(shape_of(t)) - axis))])


LN_OUTS = ("Y", "Mean", "InvStdDev")


@irdl_op_definition
class LayerNormOp(NormOp, ElementwiseAliasing):
    """(Y, Mean, InvStdDev) = LayerNormalization(X, scale[, bias]) (ONNX,
    stash_type 1): Y = (X - mean) * inv_std * scale + bias over the dims from
    `axis` on, inv_std = 1 / sqrt(var + epsilon) with the biased variance. One
    to three outputs (Y, then optionally Mean, then InvStdDev). The normalized
    dims stay whole."""

    name = "training.layer_norm"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)

    def n_outs(self) -> int:
        n = len(self.output_types())
        return n if 1 <= n <= 3 else 1

    def verify_(self) -> None:
        n = len(self.output_types())
        if not 1 <= n <= 3:
            form = "outs" if self.is_buffer_form else "results"
            raise VerifyException(
                f"expects 1 to 3 {form} (Y, then optionally Mean and InvStdDev), got {n}"
            )
        super().verify_()

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = self.x_shape()
        self.check_param(self.ins[1].type, "scale")
        if len(self.ins) == 3:
            self.check_param(self.ins[2].type, "bias")
        return [x, *[self.stats_shape()] * (self.n_outs() - 1)]

    def iteration_space(self) -> IterationSpace:
        x, axis = self.x_shape(), self.norm_axis()
        maps = [AffineMap.identity(len(x))]
        maps += [self.param_map(t) for t in self.in_types()[1:]]
        maps.append(AffineMap.identity(len(x)))
        maps += [self.stats_map(t) for t in self.output_types()[1:]]
        norm = frozenset(range(axis, len(x)))
        return IterationSpace(x, tuple(maps), norm, norm)


LN_GRADS = ("dX", "dScale", "dBias")


@irdl_op_definition
class LayerNormGradOp(NormOp, ListedGradsOp, NoAliasing):
    """(dX, dScale, dBias) = gradients of layer_norm: ins (dY, X, scale[, Mean,
    InvStdDev]), the forward's axis and epsilon.

    With xhat = (X - mean) * inv_std and g = dY * scale, over the normalized
    dims (D elements): dX = inv_std * (g - mean(g) - xhat * mean(g * xhat)),
    dScale = sum over the outer dims of dY * xhat, dBias = sum of dY. Without
    Mean and InvStdDev (Deeploy's LayerNormalizationGrad) they are recomputed
    from X; dScale and dBias need them given (onnxruntime's form). `outputs`
    lists the gradients wanted, in the order dX, dScale, dBias."""

    name = "training.layer_norm_grad"
    N_INS: ClassVar[tuple[int, int]] = (3, 5)
    X_IN: ClassVar[int] = 1
    GRADS: ClassVar[tuple[str, ...]] = LN_GRADS
    outputs = prop_def(
        ArrayAttr[StringAttr], default_value=ArrayAttr([StringAttr(s) for s in LN_GRADS])
    )

    def verify_(self) -> None:
        self.verify_grads()
        if len(self.ins) == 4:
            raise VerifyException(
                "expects Mean and InvStdDev both (5 inputs) or neither (3 inputs), got 4 inputs"
            )
        super().verify_()

    def accumulable(self) -> set[int]:
        return {k for k, g in enumerate(self.grads()) if g != "dX"}

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, x_type = self.in_types()[:2]
        x = _same_shape(dy, "dY", x_type, "X")
        self.check_param(self.ins[2].type, "scale")
        if len(self.ins) == 5:
            self.check_stats(self.ins[3].type, "Mean")
            self.check_stats(self.ins[4].type, "InvStdDev")
        elif "dScale" in self.grads() or "dBias" in self.grads():
            raise VerifyException(
                "dScale and dBias need the forward's Mean and InvStdDev as inputs #3 and #4"
            )
        scale = shape_of(self.ins[2].type)
        shapes = {"dX": x, "dScale": scale, "dBias": scale}
        return [shapes[g] for g in self.grads()]

    def iteration_space(self) -> IterationSpace:
        x, axis = self.x_shape(), self.norm_axis()
        ident = AffineMap.identity(len(x))
        scale = self.ins[2].type
        maps = [ident, ident, self.param_map(scale)]
        maps += [self.stats_map(t) for t in self.in_types()[3:]]
        roles = {"dX": ident, "dScale": self.param_map(scale), "dBias": self.param_map(scale)}
        maps += [roles[g] for g in self.grads()]
        norm = set(range(axis, len(x)))
        reduction = set(norm)
        acc: frozenset[int] = frozenset()
        if "dScale" in self.grads() or "dBias" in self.grads():
            # dScale and dBias sum over the rows: rows may tile, dX following
            # them and dScale, dBias adding up
            reduction |= set(range(axis))
            acc = frozenset(range(axis))
        return IterationSpace(x, tuple(maps), frozenset(norm), frozenset(reduction), accumulate=acc)


@irdl_op_definition
class GeluOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Y = 0.5 * X * (1 + erf(X / sqrt(2))) (ONNX Gelu, approximate = none)."""

    name = "training.gelu"

    def infer_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(self.ins[0].type)]


@irdl_op_definition
class GeluGradOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """dX = dY * (0.5 * (1 + erf(X / sqrt(2))) + X * exp(-X^2 / 2) / sqrt(2 pi))
    (GeluGrad: ins dY, X; X is the Gelu's input)."""

    name = "training.gelu_grad"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        dy, x = self.in_types()
        return [_same_shape(dy, "dY", x, "X")]


@irdl_op_definition
class TransposeOp(TrainingComputeOp, NoAliasing, IterationSpaceInterface):
    """Y = X with its dims permuted: Y.shape[j] = X.shape[perm[j]] (ONNX
    Transpose). The loop dims are Y's; X is indexed through the inverse
    permutation, so every dim may tile."""

    name = "training.transpose"
    perm = prop_def(DenseArrayBase.constr(i64))

    def perm_list(self) -> list[int]:
        return [int(p) for p in self.perm.get_values()]

    def infer_shapes(self) -> list[tuple[int, ...]]:
        x = shape_of(self.ins[0].type)
        perm = self.perm_list()
        if sorted(perm) != list(range(len(x))):
            raise VerifyException(
                f"perm {perm} must be a permutation of 0..{len(x) - 1} (X is {fmt_shape(x)})"
            )
        return [tuple(x[p] for p in perm)]

    def iteration_space(self) -> IterationSpace:
        perm = self.perm_list()
        out = tuple(shape_of(self.ins[0].type)[p] for p in perm)
        x_idx: list[int | None] = [perm.index(i) for i in range(len(perm))]
        maps = (_dims_map(len(out), x_idx), AffineMap.identity(len(out)))
        return IterationSpace(out, maps, frozenset())


def reshape_groups(x: Sequence[int], y: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """The dims of X and Y (size-1 dims left out) in aligned groups: runs of
    consecutive dims with the same element count on both sides, as small as
    possible. A group of one dim on each side is a dim a reshape keeps."""
    xs = [i for i, d in enumerate(x) if d != 1]
    ys = [j for j, d in enumerate(y) if d != 1]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(xs) and j < len(ys):
        gx, gy = [xs[i]], [ys[j]]
        px, py = x[xs[i]], y[ys[j]]
        i, j = i + 1, j + 1
        while px != py:
            if px < py and i < len(xs):
                gx.append(xs[i])
                px, i = px * x[xs[i]], i + 1
            elif py < px and j < len(ys):
                gy.append(ys[j])
                py, j = py * y[ys[j]], j + 1
            else:  # the element counts differ (the verifier says so)
                break
        groups.append((gx, gy))
    if i < len(xs) or j < len(ys):  # element counts differ: one last group
        groups.append((xs[i:], ys[j:]))
    return groups


# --------------------------------------------------------------------------
# Non-compute ops
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor constant (bufferized to a memref.global)."""

    name = "training.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"value type {self.value.type} differs from result type {self.result.type}"
            )


MEMORY_LEVELS = ("L1", "L2", "L3")


@irdl_op_definition
class ArenaViewOp(IRDLOperation):
    """A buffer at a static byte offset of its memory level's arena (arena-plan writes it)."""

    name = "training.arena_view"
    offset = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    assembly_format = "`at` $offset attr-dict `:` type($result)"

    def __init__(self, offset: int, type_: MemRefType[Attribute]):
        super().__init__(properties={"offset": IntegerAttr(offset, i64)}, result_types=[type_])

    @property
    def level(self) -> str:
        space = self.result.type.memory_space  # type: ignore[attr-defined]
        return space.data if isinstance(space, StringAttr) else ""

    def verify_(self) -> None:
        if self.level not in MEMORY_LEVELS:
            raise VerifyException(
                f"memory space must be one of {', '.join(MEMORY_LEVELS)}, got "
                f"{self.result.type.memory_space}"  # type: ignore[attr-defined]
            )
        if self.offset.value.data < 0:
            raise VerifyException(f"offset must be non-negative, got {self.offset.value.data}")


COMPUTE_OPS: tuple[type[TrainingComputeOp], ...] = (
    GemmOp,
    MatmulOp,
    BinaryOp,
    ReluOp,
    ReluGradOp,
    SoftmaxCrossEntropyLossOp,
    SoftmaxCrossEntropyLossGradOp,
    ReduceSumOp,
    AccumulateOp,
    SgdOp,
    CopyOp,
    ReshapeOp,
    Conv2dOp,
    Conv2dGradOp,
    MaxPool2dOp,
    MaxPool2dGradOp,
    AvgPool2dOp,
    AvgPool2dGradOp,
    GlobalAvgPoolOp,
    GlobalAvgPoolGradOp,
    ReduceMeanOp,
    BatchMatmulOp,
    SoftmaxOp,
    SoftmaxGradOp,
    LayerNormOp,
    LayerNormGradOp,
    GeluOp,
    GeluGradOp,
    TransposeOp,
)

Training = Dialect(
    "training",
    [*COMPUTE_OPS, ConstantOp, ArenaViewOp],
    [],
)

__all__ = [
    "COMPUTE_OPS",
    "AliasingInterface",
    "ArrayAttr",
    "IterationSpace",
    "IterationSpaceInterface",
    "Training",
    "TrainingComputeOp",
]
