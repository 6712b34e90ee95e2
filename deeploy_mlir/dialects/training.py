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

    def output_elem_types(self) -> list[Attribute]:
        return [f32] * self.N_OUTS

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
        if len(outs) != self.N_OUTS:
            form = "outs" if self.is_buffer_form else "results"
            raise VerifyException(f"expects {self.N_OUTS} {form}, got {len(outs)}")
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


BINARY_KINDS = ("add", "sub", "mul", "div")


@irdl_op_definition
class BinaryOp(TrainingComputeOp, ElementwiseAliasing, ElementwiseSpace):
    """Elementwise A <kind> B with numpy broadcasting; kind in add, sub, mul, div."""

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
        dy, x = (shape_of(t) for t in self.in_types())
        if dy != x:
            raise VerifyException(
                f"gradient dY ({fmt_shape(dy)}) and X ({fmt_shape(x)}) must have the same shape"
            )
        return [dy]


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


@irdl_op_definition
class ReduceSumOp(TrainingComputeOp, IterationSpaceInterface):
    """Sum over `axes` (non-negative, sorted), keeping them as 1s when keepdims."""

    name = "training.reduce_sum"
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
        buf, grad = (shape_of(t) for t in self.in_types()[:2])
        if buf != grad:
            raise VerifyException(
                f"buffer ({fmt_shape(buf)}) and gradient ({fmt_shape(grad)}) must have the same "
                "shape"
            )
        return [buf]


@irdl_op_definition
class SgdOp(TrainingComputeOp, StateUpdate, ElementwiseSpace):
    """out = weight - lr * grad (lr: a one-element f32 tensor)."""

    name = "training.sgd"
    N_INS: ClassVar[tuple[int, int]] = (3, 3)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        w, g, lr = (shape_of(t) for t in self.in_types())
        if w != g:
            raise VerifyException(
                f"weight ({fmt_shape(w)}) and gradient ({fmt_shape(g)}) must have the same shape"
            )
        if lr not in ((), (1,)):
            raise VerifyException(f"learning rate must have one element, got {fmt_shape(lr)}")
        return [w]


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
