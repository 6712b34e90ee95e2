"""`TrainingComputeOp`, the common shape of every compute op (`ins`, `outs`,
`res`; tensor and buffer form), and the mixins shared by op families.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    MemRefType,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.interfaces import (
    AliasingInterface,
    IterationSpace,
    IterationSpaceInterface,
    _broadcast_map,
)
from deeploy_mlir.dialects.training.shapes import elem_of, fmt_shape, is_f32, shape_of

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

    #: buffer form (accumulate-fuse): the outputs (by position) that are
    #: gradient accumulation buffers. `ins` then end with one operand per
    #: listed output (that output itself: the buffer is read) and the reset
    #: flag (memref<1xi1>); the op writes reset ? f : buffer + f, f being what
    #: it computes without `onto` (InPlaceAccumulatorV2 fused in, same bits)
    onto = opt_prop_def(DenseArrayBase.constr(i64))

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
        """The types of the op's own inputs (without `onto`'s buffers and flag)."""
        return [o.type for o in self.base_ins()]

    # -- accumulate-fuse (`onto`) ------------------------------------------
    def onto_outputs(self) -> list[int]:
        """The outputs (by position) the op accumulates onto (`onto`)."""
        if self.onto is None:
            return []
        return [int(v) for v in self.onto.get_values()]

    def n_onto_ins(self) -> int:
        """How many of `ins` are `onto`'s: a buffer per output and the flag."""
        n = len(self.onto_outputs())
        return n + 1 if n else 0

    def base_ins(self) -> list[SSAValue]:
        """The op's own inputs: `ins` without `onto`'s buffers and flag."""
        return list(self.ins)[: len(self.ins) - self.n_onto_ins()]

    def onto_reset(self) -> SSAValue | None:
        """The reset flag of `onto` (the last input), None without `onto`."""
        return self.ins[-1] if self.onto_outputs() else None

    def ontoable(self) -> set[int]:
        """The outputs (by position) whose kernel can accumulate onto a
        gradient buffer under a run-time reset flag (`onto`)."""
        return set()

    def onto_space(self, space: IterationSpace) -> IterationSpace:
        """`space` (of the op's own operands) with maps for `onto`'s inputs:
        each buffer as its output, the flag's one element at 0."""
        onto = self.onto_outputs()
        if not onto:
            return space
        n = len(self.base_ins())
        flag = AffineMap(len(space.dims), 0, (AffineExpr.constant(0),))
        extra = (*(space.maps[n + k] for k in onto), flag)
        return replace(space, maps=space.maps[:n] + extra + space.maps[n:])

    def verify_onto(self) -> None:
        onto = self.onto_outputs()
        if not onto:
            return
        self._verify_out_positions("onto", onto, self.ontoable(), "accumulate onto it")
        if len(self.ins) < len(onto) + 1:
            raise VerifyException(
                f"onto needs {len(onto)} buffer(s) and the reset flag at the end of ins"
            )
        base = len(self.ins) - len(onto) - 1
        for j, k in enumerate(onto):
            if self.ins[base + j] is not self.outs[k]:
                raise VerifyException(
                    f"onto's input #{base + j} must be output #{k} itself (the buffer it "
                    "accumulates onto)"
                )
        flag = self.ins[-1].type
        if elem_of(flag) != i1 or shape_of(flag) not in ((), (1,)):
            raise VerifyException(f"onto's reset flag must be a memref<1xi1>, got {flag}")

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

    def finishes(self) -> bool:
        """Whether the outputs take a last step after their sum (gemm's alpha
        and C): then, when the reduction tiles, the tiles before its last are
        `partial` (raw sums) and the last one finishes them."""
        return False

    def verify_accumulate(self) -> None:
        acc = self.accumulated()
        if not acc:
            return
        self._verify_out_positions(
            "accumulate",
            acc,
            self.accumulable(),
            "add into it (conv2d_grad can into each output, layer_norm_grad into dScale "
            "and dBias, gemm and matmul into Y)",
        )

    def _verify_out_positions(
        self, what: str, positions: list[int], allowed: set[int], cannot: str
    ) -> None:
        """`what` (onto, accumulate) lists output positions the op adds into:
        the buffer form, increasing, each once, in range, and in `allowed`."""
        if not self.is_buffer_form:
            raise VerifyException(f"{what} needs the buffer form (outs): it adds into them")
        n = len(self.outs)
        if sorted(set(positions)) != positions or not all(0 <= k < n for k in positions):
            raise VerifyException(
                f"{what} must list output positions in increasing order, each once and "
                f"below {n} (the number of outs), got {positions}"
            )
        bad = sorted(set(positions) - allowed)
        if bad:
            raise VerifyException(f"{what} lists output #{bad[0]} but {self.name} cannot {cannot}")

    def verify_(self) -> None:
        self.verify_onto()
        lo, hi = self.N_INS
        n_ins = len(self.base_ins())
        if not lo <= n_ins <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise VerifyException(f"expects {want} inputs, got {n_ins}")
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
