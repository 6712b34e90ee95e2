"""Matrix products: `training.gemm`, `training.matmul`, `training.batch_matmul`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    UnitAttr,
    f32,
)
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    irdl_op_definition,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects.training.base import TrainingComputeOp
from deeploy_mlir.dialects.training.interfaces import (
    IterationSpace,
    IterationSpaceInterface,
    NoAliasing,
    _dims_map,
)
from deeploy_mlir.dialects.training.shapes import broadcast_shapes, fmt_shape, gemm_shapes, shape_of

# --------------------------------------------------------------------------
# Compute ops
# --------------------------------------------------------------------------


@irdl_op_definition
class GemmOp(TrainingComputeOp, IterationSpaceInterface):
    """Y = alpha * A' B' + beta * C (ONNX Gemm); C optional, broadcast to [M, N].

    K may tile (`IterationSpace.accumulate`): the K tiles run in order, each
    sum going on from the one before (`accumulate = [0]`: from Y's partial
    sums), and the tiles before the last are `partial`: they store the raw
    sums, alpha and C coming once, on the last K tile (`finishes`). The
    kernel sums every output in one chain of fused multiply-adds, so the
    split gives the bits of the whole product."""

    name = "training.gemm"
    N_INS: ClassVar[tuple[int, int]] = (2, 3)
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    alpha = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1.0, f32))
    beta = prop_def(FloatAttr[AnyFloat], default_value=FloatAttr(1.0, f32))
    #: buffer form, a K tile before the last: Y gets the raw sums A' B' (no
    #: alpha, no C)
    partial = opt_prop_def(UnitAttr)

    def accumulable(self) -> set[int]:
        return {0}

    def finishes(self) -> bool:
        return len(self.base_ins()) == 3 or self.alpha.value.data != 1.0

    def ontoable(self) -> set[int]:
        """Y, when the sums are the result (no alpha, no C): the kernel adds
        the buffer at its store (K tiles after the first go on from Y)."""
        return set() if self.finishes() else {0}

    def verify_(self) -> None:
        super().verify_()
        if self.partial is not None and not self.is_buffer_form:
            raise VerifyException("partial needs the buffer form (outs): it stores raw sums")

    def mnk(self) -> tuple[int, int, int]:
        a, b = (shape_of(t) for t in self.in_types()[:2])
        return gemm_shapes(a, b, self.trans_a is not None, self.trans_b is not None)

    def infer_shapes(self) -> list[tuple[int, ...]]:
        m, n, _ = self.mnk()
        if len(self.base_ins()) == 3:
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
        if len(self.base_ins()) == 3:
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
        return self.onto_space(
            IterationSpace(
                (m, n, k), tuple(maps), frozenset(), frozenset({2}), accumulate=frozenset({2})
            )
        )


@irdl_op_definition
class MatmulOp(TrainingComputeOp, IterationSpaceInterface):
    """Y = A B for rank-2 A [M, K] and B [K, N] (ONNX MatMul); K may tile like
    gemm's (no alpha, no C: every K tile after the first adds into Y)."""

    name = "training.matmul"
    N_INS: ClassVar[tuple[int, int]] = (2, 2)

    def accumulable(self) -> set[int]:
        return {0}

    def ontoable(self) -> set[int]:
        return {0}

    def infer_shapes(self) -> list[tuple[int, ...]]:
        a, b = (shape_of(t) for t in self.in_types())
        m, n, _ = gemm_shapes(a, b, False, False)
        return [(m, n)]

    def iteration_space(self) -> IterationSpace:
        a, b = (shape_of(t) for t in self.in_types())
        maps = (_dims_map(3, [0, 2]), _dims_map(3, [2, 1]), _dims_map(3, [0, 1]))
        return self.onto_space(
            IterationSpace(
                (a[0], b[1], a[1]), maps, frozenset(), frozenset({2}), accumulate=frozenset({2})
            )
        )


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
