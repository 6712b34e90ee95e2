"""Deeploy's test folders: network.onnx, inputs.npz and outputs.npz, run the
way Deeploy's test runner runs them (`deeploy-mlir test DIR`).

* The arrays of inputs.npz feed the graph's inputs in order (the names in the
  file do not matter); arrays beyond the graph's inputs are not read (some
  folders also store the initializers, or an upstream gradient the graph does
  not take).
* One step runs the graph once; outputs.npz holds the expected graph outputs,
  in order, compared element by element (the shapes only need the same number
  of elements, as Deeploy flattens them) with an absolute tolerance.
* A graph output that is an SGD node's result is the updated weight: the
  harness prints it with the parameters (PARAM lines), the others after the
  step (OUT lines, OUTI for integers).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.training import shape_of
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.onnx_import import ImportedModel
from deeploy_mlir.interp.attrs import func_named

FILES = ("network.onnx", "inputs.npz", "outputs.npz")


@dataclass
class TestFolder:
    path: Path
    inputs: list[tuple[str, np.ndarray]]
    outputs: list[tuple[str, np.ndarray]]

    @property
    def network(self) -> Path:
        return self.path / "network.onnx"


def _load_npz(p: Path) -> list[tuple[str, np.ndarray]]:
    from deeploy_mlir.frontend.npz import read_npz

    arrays = list(read_npz(p).items())
    for k, a in arrays:
        if a.dtype.kind not in "fiub":
            raise DeeployError(f"{p}: array '{k}' is not numeric ({a.dtype})")
    return arrays


def load_folder(d: str | Path) -> TestFolder:
    """Read a test folder; a missing or unreadable file is a one-line error."""
    path = Path(d)
    if not path.is_dir():
        raise DeeployError(f"{path}: not a directory (a test folder holds {', '.join(FILES)})")
    if not (path / "network.onnx").is_file():
        raise DeeployError(f"{path / 'network.onnx'}: no such file")
    inputs = _load_npz(path / "inputs.npz")
    outputs = _load_npz(path / "outputs.npz")
    if not outputs:
        raise DeeployError(f"{path / 'outputs.npz'}: holds no arrays")
    return TestFolder(path, inputs, outputs)


def feeds(folder: TestFolder, model: ImportedModel) -> tuple[dict[str, np.ndarray], list[str]]:
    """The graph's inputs from inputs.npz, in order, with one mini-batch axis;
    and the names of the arrays that are not read."""
    from deeploy_mlir.frontend.data import label_classes

    where = folder.path / "inputs.npz"
    args = model.user_inputs
    if len(folder.inputs) < len(args):
        names = ", ".join(a.name for a in args)
        raise DeeployError(
            f"{where}: holds {len(folder.inputs)} arrays but the graph has {len(args)} inputs "
            f"({names})"
        )
    classes = label_classes(model.module)
    index = {a.name: i for i, a in enumerate(model.train_args)}
    out: dict[str, np.ndarray] = {}
    for a, (key, arr) in zip(args, folder.inputs, strict=False):
        size = int(np.prod(a.shape, dtype=np.int64))
        if arr.size != size:
            raise DeeployError(
                f"{where}: array '{key}' has shape {list(arr.shape)} ({arr.size} elements) but "
                f"graph input '{a.name}' has shape {list(a.shape)} ({size} elements)"
            )
        if a.dtype is np.int64 and arr.dtype.kind not in "iu":
            raise DeeployError(
                f"{where}: array '{key}' feeds the integer input '{a.name}' but holds {arr.dtype}"
            )
        val = arr.reshape(a.shape).astype(a.dtype)
        if val.dtype.kind == "f" and not np.all(np.isfinite(val)):
            raise DeeployError(f"{where}: array '{key}' holds NaN or Inf")
        n = classes.get(index[a.name])
        if n is not None and val.size and (val.min() < 0 or val.max() >= n):
            bad = int(val.min()) if val.min() < 0 else int(val.max())
            raise DeeployError(f"{where}: array '{key}' holds the label {bad}, outside [0, {n})")
        out[a.name] = val[None]
    unread = [k for k, _ in folder.inputs[len(args) :]]
    return out, unread


@dataclass(frozen=True)
class OutputSource:
    """Where the harness prints a graph output: `OUT` (or `OUTI`) lines under
    `key`, or, for an updated weight, the `PARAM` line of parameter `key`."""

    name: str
    param: bool
    key: str


def output_sources(model: ImportedModel) -> list[OutputSource]:
    """One entry per result of @training_step, in graph-output order."""
    fn = func_named(model.module, "training_step")
    out: list[OutputSource] = []
    for i in range(len(fn.function_type.outputs.data)):
        res = T.result_info(fn, i)
        name, upd = res.name, res.updates
        assert name is not None
        if upd is None:
            out.append(OutputSource(name, False, name))
        else:
            target = T.arg_info(fn, upd).name
            assert target is not None
            out.append(OutputSource(name, True, target))
    return out


def check_outputs(folder: TestFolder, model: ImportedModel) -> list[OutputSource]:
    """The graph's outputs (see `output_sources`), checked against
    outputs.npz before anything is built: as many arrays, each with as many
    elements as its output."""
    fn = func_named(model.module, "training_step")
    sources = output_sources(model)
    where = folder.path / "outputs.npz"
    if len(folder.outputs) != len(sources):
        raise DeeployError(
            f"{where}: holds {len(folder.outputs)} arrays but the graph has {len(sources)} "
            f"outputs ({', '.join(s.name for s in sources)})"
        )
    for src, t, (key, want) in zip(
        sources, fn.function_type.outputs.data, folder.outputs, strict=True
    ):
        size = int(np.prod(shape_of(t), dtype=np.int64))
        if want.size != size:
            raise DeeployError(
                f"{where}: array '{key}' has {want.size} elements but graph output "
                f"'{src.name}' has {size}"
            )
    return sources


@dataclass(frozen=True)
class Comparison:
    index: int
    name: str
    shape: tuple[int, ...]
    max_diff: float
    ok: bool


def compare(
    folder: TestFolder,
    graph_outputs: list[str],
    got: dict[str, np.ndarray],
    atol: float,
) -> list[Comparison]:
    """Each graph output (by name, in graph order) against outputs.npz's
    array at the same position: the largest absolute difference, and whether
    it is within `atol` (NaN never is)."""
    where = folder.path / "outputs.npz"
    if len(folder.outputs) != len(graph_outputs):
        raise DeeployError(
            f"{where}: holds {len(folder.outputs)} arrays but the graph has "
            f"{len(graph_outputs)} outputs ({', '.join(graph_outputs)})"
        )
    result: list[Comparison] = []
    for i, (name, (key, want)) in enumerate(zip(graph_outputs, folder.outputs, strict=True)):
        have = np.asarray(got[name])
        if have.size != want.size:
            raise DeeployError(
                f"{where}: array '{key}' has {want.size} elements but graph output '{name}' has "
                f"{have.size}"
            )
        w = want.reshape(-1).astype(np.float64)
        h = have.reshape(-1).astype(np.float64)
        diff = np.abs(h - w)
        worst = float(np.max(diff)) if diff.size else 0.0
        if np.isnan(diff).any():
            worst = float("nan")
        ok = bool(diff.size == 0 or np.all(diff <= atol))
        result.append(Comparison(i, name, tuple(want.shape), worst, ok))
    return result
