"""Training data (.npz) checked against the graph's user inputs.

An array converts to its input's element type only when every value of its
dtype converts exactly (numpy's "safe" casting: float16 or int16 to float32,
int32 to int64); anything else (float64 data for a float32 input, say) is an
error naming the array. Arrays with more mini-batches than `--steps x --accum`
are accepted: the first ones are used and a note says how many are not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.core import MAX_TENSOR_BYTES, ImportedModel
from deeploy_mlir.frontend.npz import read_npz
from deeploy_mlir.interp.attrs import func_named


def label_classes(module: ModuleOp) -> dict[int, int]:
    """training_step argument index -> number of classes, for labels fed to a loss."""
    fn = func_named(module, "training_step")
    out: dict[int, int] = {}
    block = fn.body.blocks.first
    assert block is not None
    for op in block.ops:
        if isinstance(op, T.SoftmaxCrossEntropyLossOp | T.SoftmaxCrossEntropyLossGradOp):
            scores, labels = op.ins[-2], op.ins[-1]
            if labels in block.args:
                out[block.args.index(labels)] = T.shape_of(scores.type)[1]
    return out


def label_ignored(module: ModuleOp) -> dict[int, int]:
    """training_step argument index -> the ignore_index of the loss its labels
    feed (a label that is not a class but allowed)."""
    fn = func_named(module, "training_step")
    out: dict[int, int] = {}
    block = fn.body.blocks.first
    assert block is not None
    for op in block.ops:
        if isinstance(op, T.SoftmaxCrossEntropyLossOp) and op.ignore_index is not None:
            labels = op.ins[-1]
            if labels in block.args:
                out[block.args.index(labels)] = op.ignore_index.value.data
    return out


def check_minibatches(model: ImportedModel, steps: int, accum: int) -> None:
    """`--steps` x `--accum` mini-batches: their count must fit the harness's
    32-bit counters and their inputs (compiled into the program, data.h) the 4
    GiB a 32-bit target addresses. Checked before any array is read or made."""
    n = steps * accum
    if n > MAX_TENSOR_BYTES:
        raise DeeployError(
            f"--steps {steps} x --accum {accum} = {n} mini-batches: more than the "
            f"{MAX_TENSOR_BYTES} the harness counts (32-bit)"
        )
    per = sum(
        int(np.prod(a.shape, dtype=object)) * np.dtype(a.dtype).itemsize for a in model.user_inputs
    )
    if n * per > MAX_TENSOR_BYTES:
        raise DeeployError(
            f"--steps {steps} x --accum {accum} = {n} mini-batches of {per} bytes of inputs "
            f"need {n * per} bytes of data: more than the 4 GiB a 32-bit target addresses"
        )


def converted(p: Path, name: str, arr: np.ndarray, want: type[np.generic]) -> np.ndarray:
    """`arr` as `want` when every value of its dtype converts exactly, else an error."""
    if arr.dtype == want:
        return arr
    if arr.dtype.kind not in "biuf" or not np.can_cast(arr.dtype, want, "safe"):
        raise DeeployError(
            f"{p}: array '{name}' has dtype {arr.dtype}; expected {np.dtype(want)} (or a dtype "
            "that converts to it exactly)"
        )
    return arr.astype(want)


def load_data(path: str | Path, model: ImportedModel, minibatches: int) -> dict[str, np.ndarray]:
    """Read DATA.npz: one array per user input, mini-batches stacked on axis 0."""
    p = Path(path)
    arrays = read_npz(p)
    inputs = model.user_inputs
    names = [a.name for a in inputs]
    extra = sorted(set(arrays) - set(names))
    if extra:
        raise DeeployError(
            f"{p}: array '{extra[0]}' matches no graph input (inputs: {', '.join(names)})"
        )
    missing = [n for n in names if n not in arrays]
    if missing:
        raise DeeployError(f"{p}: no array for graph input '{missing[0]}'")
    classes = label_classes(model.module)
    ignored = label_ignored(model.module)
    index = {a.name: i for i, a in enumerate(model.train_args)}
    out: dict[str, np.ndarray] = {}
    given = minibatches
    for a in inputs:
        arr = arrays[a.name]
        want = (minibatches, *a.shape)
        if arr.ndim != len(want) or arr.shape[1:] != a.shape or arr.shape[0] < minibatches:
            raise DeeployError(
                f"{p}: array '{a.name}' has shape {list(arr.shape)}; expected "
                f"[{minibatches}, {', '.join(map(str, a.shape))}] ({minibatches} mini-batches of "
                f"the graph input's shape {list(a.shape)})"
            )
        given = max(given, arr.shape[0])
        arr = arr[:minibatches]
        if a.dtype is np.float32:
            if arr.dtype.kind not in "fiub":
                raise DeeployError(f"{p}: array '{a.name}' must be numeric, got {arr.dtype}")
            arr = converted(p, a.name, arr, np.float32)
            if not np.all(np.isfinite(arr)):
                raise DeeployError(f"{p}: array '{a.name}' holds NaN or Inf")
        elif a.dtype is np.int64:
            if arr.dtype.kind not in "iu":
                raise DeeployError(f"{p}: array '{a.name}' must hold integers, got {arr.dtype}")
            arr = converted(p, a.name, arr, np.int64)
            n = classes.get(index[a.name])
            ignore = ignored.get(index[a.name])
            labels = arr if ignore is None else arr[arr != ignore]
            if n is not None and labels.size and (labels.min() < 0 or labels.max() >= n):
                bad = int(labels.min()) if labels.min() < 0 else int(labels.max())
                raise DeeployError(f"{p}: array '{a.name}' holds the label {bad}, outside [0, {n})")
        else:
            arr = converted(p, a.name, arr, a.dtype)
        out[a.name] = arr
    if given > minibatches:
        print(
            f"note: {p}: {given} mini-batches given, the first {minibatches} used "
            f"(--steps x --accum); the other {given - minibatches} are not",
            file=sys.stderr,
        )
    return out


def zero_data(model: ImportedModel, minibatches: int) -> dict[str, np.ndarray]:
    return {a.name: np.zeros((minibatches, *a.shape), dtype=a.dtype) for a in model.user_inputs}
