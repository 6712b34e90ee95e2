"""Reference semantics of the logic family (dialects/training/logic.py):
compare, logical, not, where, cast and clip, as runtime_c's compare.c and
activation_ext.c compute them (booleans as numpy bool)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.interp.registry import semantics

F32 = np.float32

_COMPARE = {
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "equal": np.equal,
}
_LOGICAL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
_NP = {"f32": np.float32, "i1": np.bool_, "i64": np.int64}


@semantics(T.CompareOp)
def _compare(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.CompareOp)
    return [np.asarray(_COMPARE[op.kind.data](ins[0], ins[1]), dtype=np.bool_)]


@semantics(T.LogicalOp)
def _logical(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.LogicalOp)
    a, b = (np.asarray(x) != 0 for x in ins)
    return [np.asarray(_LOGICAL[op.kind.data](a, b), dtype=np.bool_)]


@semantics(T.NotOp)
def _not(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(ins[0]) == 0]


@semantics(T.WhereOp)
def _where(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    c, a, b = ins
    return [np.where(np.asarray(c) != 0, a, b).astype(F32)]


@semantics(T.CastOp)
def _cast(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.CastOp)
    x = np.asarray(ins[0])
    to = _NP[T.elem_name(op.to)]
    if to is np.bool_:  # x != 0 (NaN is true)
        return [x != 0]
    if x.dtype == np.bool_:
        return [x.astype(F32)]
    if to is np.int64:  # toward zero, as C's (int64_t) of a finite float
        return [np.trunc(x).astype(np.int64)]
    return [x.astype(to)]


@semantics(T.ClipOp)
def _clip(op: T.TrainingComputeOp, ins: Sequence[np.ndarray]) -> list[np.ndarray]:
    assert isinstance(op, T.ClipOp)
    x = np.asarray(ins[0], dtype=F32)
    lo, hi = F32(T.float_of(op.lo)), F32(T.float_of(op.hi))
    # x < lo ? lo : (x > hi ? hi : x): NaN compares false and stays
    return [np.where(x < lo, lo, np.where(x > hi, hi, x)).astype(F32)]
