"""What make_examples.py and make_models.py share: writing onnxruntime-training
artifacts, training them with onnxruntime-training's own API for the
reference numbers, and the training loop both that and their torch
cross-checks run.

The loop (``sgd_steps``): STEPS optimizer steps of ACCUM mini-batches each,
mini-batch ``s * ACCUM + a`` in step ``s``; a step's gradients add up over its
mini-batches (onnxruntime's InPlaceAccumulatorV2), then one SGD update and the
gradients reset.  onnxruntime runs single-threaded, so a re-run computes the
same numbers.

Not a script: the two scripts import it (python puts examples/ first on
sys.path when either runs as ``python examples/<script>.py``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import onnx

ORACLE = "onnxruntime-training"


# --- onnxruntime-training --------------------------------------------------------


def session_options():  # -> onnxruntime.SessionOptions (imported lazily)
    import onnxruntime

    so = onnxruntime.SessionOptions()
    so.log_severity_level = 3  # errors only
    so.intra_op_num_threads = 1  # same summation order on every machine
    so.inter_op_num_threads = 1
    return so


@contextlib.contextmanager
def quiet_ort() -> Iterator[None]:
    """Silence onnxruntime's info logging while the artifacts are generated.

    set_default_logger_severity(3) covers sessions, but generate_artifacts
    optimises the graph with a SessionOptions() of its own (log level -1), which
    prints every graph transformer at info level; hand it quiet options."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)
    try:
        from onnxruntime.training.onnxblock import _training_graph_utils as tgu
    except ImportError:  # another layout: just let it talk
        yield
        return
    saved = getattr(tgu, "SessionOptions", None)
    if saved is None:
        yield
        return
    tgu.SessionOptions = session_options
    try:
        yield
    finally:
        tgu.SessionOptions = saved


def generate(
    model: onnx.ModelProto,
    folder: Path,
    requires_grad: list[str],
    frozen_params: list[str] | None = None,
    mse: bool = False,
    *,
    loss: object = "default",
    optimizer: object = "SGD",
) -> None:
    """training_model.onnx, eval_model.onnx, optimizer_model.onnx and checkpoint
    of the forward model into folder: CrossEntropyLoss (MSELoss if mse), SGD.

    examples/zoo.py chooses others: `loss` a LossType name ("L1Loss"), an
    onnxblock Block, or None (the model's output is its loss); `optimizer` an
    OptimType name ("AdamW") or an onnxblock Block.

    The artifacts' node names carry a counter that onnxruntime's onnxblock
    keeps per process (``onnx::SoftmaxCrossEntropyLoss::4``); it is reset
    here, so a model's bytes do not depend on how many models the process
    generated before (a full run and an ``--only`` run write the same files)."""
    from onnxruntime.training import artifacts
    from onnxruntime.training.onnxblock import _graph_utils

    if not hasattr(_graph_utils, "_GRAPH_TOKEN"):
        raise SystemExit("onnxruntime-training: onnxblock's name counter moved; see generate()")
    _graph_utils._GRAPH_TOKEN = 0
    folder.mkdir(parents=True, exist_ok=True)  # generate_artifacts needs it to exist
    if loss == "default":
        loss = "MSELoss" if mse else "CrossEntropyLoss"
    if isinstance(loss, str):
        loss = artifacts.LossType[loss]
    if isinstance(optimizer, str):
        optimizer = artifacts.OptimType[optimizer]
    with quiet_ort():
        artifacts.generate_artifacts(
            model,
            requires_grad=requires_grad,
            frozen_params=frozen_params,
            loss=loss,  # type: ignore[arg-type]
            optimizer=optimizer,  # type: ignore[arg-type]
            artifact_directory=str(folder),
        )


def user_inputs(folder: Path, params: Iterable[str]) -> list[tuple[str, list[int | str]]]:
    """The user inputs of training_model.onnx, in order, with their shapes: its
    graph inputs less the parameters, their gradient accumulation buffers and
    lazy_reset_grad."""
    g = onnx.load(str(folder / "training_model.onnx")).graph
    names = set(params)
    internal = {*names, *(f"{k}_grad.accumulation.buffer" for k in names), "lazy_reset_grad"}
    return [
        (
            i.name,
            [
                d.dim_value if d.HasField("dim_value") else d.dim_param
                for d in i.type.tensor_type.shape.dim
            ],
        )
        for i in g.input
        if i.name not in internal
    ]


# --- the training loop -------------------------------------------------------------


def sgd_steps(
    steps: int, accum: int, batch_loss: Callable[[int], float], step: Callable[[], None]
) -> list[float]:
    """The losses of batch_loss(i) (forward and backward of mini-batch i) for
    the steps * accum mini-batches in order, step() (update, reset the
    gradients) after every accum of them."""
    losses: list[float] = []
    for s in range(steps):
        for a in range(accum):
            losses.append(batch_loss(s * accum + a))
        step()
    return losses


def ort_train(
    folder: Path,
    params: dict[str, np.ndarray],
    data: dict[str, np.ndarray],
    targets: str,
    *,
    steps: int,
    accum: int,
    lr: float,
    label: str,
) -> tuple[list[float], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(losses, initial params, final params) from onnxruntime-training's API
    (CheckpointState / Module / Optimizer) on data["input"] and data[targets].
    Exits (SystemExit, naming label) unless the checkpoint holds params."""
    from onnxruntime.training.api import CheckpointState, Module, Optimizer

    state = CheckpointState.load_checkpoint(str(folder / "checkpoint"))
    initial = {k: np.array(state.parameters[k].data, dtype=np.float32) for k in params}
    for k, v in params.items():
        if not np.array_equal(initial[k], v):
            raise SystemExit(f"{label}: checkpoint's {k} differs from params.npz")
    module = Module(
        str(folder / "training_model.onnx"),
        state,
        str(folder / "eval_model.onnx"),
        session_options=session_options(),
    )
    opt = Optimizer(str(folder / "optimizer_model.onnx"), module)
    opt.set_learning_rate(lr)
    module.train()

    def batch_loss(i: int) -> float:
        return float(np.float32(module(data["input"][i], data[targets][i])))

    def step() -> None:
        opt.step()
        module.lazy_reset_grad()

    losses = sgd_steps(steps, accum, batch_loss, step)
    final = {k: np.array(state.parameters[k].data, dtype=np.float32) for k in params}
    return losses, initial, final


# --- comparing, writing --------------------------------------------------------------


def max_abs_diff(
    l1: list[float], p1: dict[str, np.ndarray], l2: list[float], p2: dict[str, np.ndarray]
) -> float:
    return max(
        float(np.max(np.abs(np.array(l1) - np.array(l2)))),
        *(float(np.max(np.abs(p1[k] - p2[k]))) for k in p1),
    )


def close(l1: list[float], p1: dict, l2: list[float], p2: dict, tol: dict) -> bool:
    return bool(np.allclose(l1, l2, **tol)) and all(
        np.allclose(np.asarray(p1[k]), np.asarray(p2[k]), **tol) for k in p1
    )


def dump_json(obj: object, level: int = 0) -> str:
    """JSON with one matrix row per line (short and diff-friendly)."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {dump_json(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and isinstance(obj[0], list):
        return "[\n" + ",\n".join(inner + dump_json(v, level + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj)
