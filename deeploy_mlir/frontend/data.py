"""Training data (.npz) checked against the graph's user inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.onnx_import import ImportedModel
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


def load_data(path: str | Path, model: ImportedModel, minibatches: int) -> dict[str, np.ndarray]:
    """Read DATA.npz: one array per user input, mini-batches stacked on axis 0."""
    p = Path(path)
    if not p.is_file():
        raise DeeployError(f"{p}: no such file")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: np.array(z[k]) for k in z.files}
    except Exception as e:
        raise DeeployError(f"{p}: not a .npz file ({type(e).__name__})") from None
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
    index = {a.name: i for i, a in enumerate(model.train_args)}
    out: dict[str, np.ndarray] = {}
    for a in inputs:
        arr = arrays[a.name]
        want = (minibatches, *a.shape)
        if arr.ndim != len(want) or arr.shape[1:] != a.shape or arr.shape[0] < minibatches:
            raise DeeployError(
                f"{p}: array '{a.name}' has shape {list(arr.shape)}; expected "
                f"[{minibatches}, {', '.join(map(str, a.shape))}] ({minibatches} mini-batches of "
                f"the graph input's shape {list(a.shape)})"
            )
        arr = arr[:minibatches]
        if a.dtype is np.float32:
            if arr.dtype.kind not in "fiu":
                raise DeeployError(f"{p}: array '{a.name}' must be numeric, got {arr.dtype}")
            arr = arr.astype(np.float32)
            if not np.all(np.isfinite(arr)):
                raise DeeployError(f"{p}: array '{a.name}' holds NaN or Inf")
        elif a.dtype is np.int64:
            if arr.dtype.kind not in "iu":
                raise DeeployError(f"{p}: array '{a.name}' must hold integers, got {arr.dtype}")
            arr = arr.astype(np.int64)
            n = classes.get(index[a.name])
            if n is not None and arr.size and (arr.min() < 0 or arr.max() >= n):
                bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
                raise DeeployError(f"{p}: array '{a.name}' holds the label {bad}, outside [0, {n})")
        else:
            arr = arr.astype(a.dtype)
        out[a.name] = arr
    return out


def zero_data(model: ImportedModel, minibatches: int) -> dict[str, np.ndarray]:
    return {a.name: np.zeros((minibatches, *a.shape), dtype=a.dtype) for a in model.user_inputs}
