"""Write the bundled example training models and their expected numbers.

For each example MLP (EXAMPLES below) this script writes, into examples/<name>/:

* training_model.onnx, eval_model.onnx, optimizer_model.onnx, checkpoint --
  onnxruntime-training's artifacts (``generate_artifacts`` with
  CrossEntropyLoss and SGD, every parameter trainable) of a forward MLP built
  here with onnx.helper: Gemm(transB=1, bias) -> Relu -> ... -> Gemm, opset 17,
  IR version 9;
* params.npz -- the initial parameters by name ("fc1.weight", "fc1.bias", ...),
  the same values as in the checkpoint (for the compiler's --params option);
* data.npz -- one array per user input of training_model.onnx, named like that
  graph input ("input" float32, "labels" int64 in [0, classes)), with
  STEPS * ACCUM mini-batches stacked on a new first axis; the labels come from a
  fixed random linear teacher, so the data is learnable and the loss falls;
* expected.json -- "losses" (one per mini-batch, in order), "params" (after
  STEPS optimizer steps) and "initial_params", computed by onnxruntime-training's
  own training API (CheckpointState / Module / Optimizer: ACCUM forward-backward
  calls, then Optimizer.step and Module.lazy_reset_grad, per step), plus "lr",
  "steps", "accum", "oracle" and "torch_max_abs_diff".  Floats are the exact
  float32 values written as Python floats.

Every run is cross-checked against torch (float32 autograd, CrossEntropyLoss
with mean reduction, gradients summed over the ACCUM mini-batches of a step --
what onnxruntime's InPlaceAccumulatorV2 does -- then p -= lr * g): the script
fails unless losses and final parameters agree within rtol 1e-5 / atol 1e-6.

Everything is seeded, and onnxruntime runs single-threaded, so a re-run writes
the same bytes.

    python examples/make_examples.py           # (re)write every example
    python examples/make_examples.py --check   # regenerate into a temporary
                                               # dir and compare with the
                                               # stored files (exit 1 if not)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ort_reference as ort  # noqa: E402  (artifacts, onnxruntime-training loop, JSON layout)

STEPS, ACCUM, LR = 5, 2, 0.05
ARTIFACTS = ("training_model.onnx", "eval_model.onnx", "optimizer_model.onnx", "checkpoint")
# torch vs onnxruntime-training, and --check's tolerance for the stored numbers
# (the numbers are reproduced bit for bit on the same onnxruntime build; the
# slack only absorbs another machine's MLAS kernels).
XCHECK_TOL = {"rtol": 1e-5, "atol": 1e-6}
CHECK_TOL = {"rtol": 1e-6, "atol": 1e-7}


@dataclass(frozen=True)
class Example:
    name: str
    batch: int
    widths: tuple[int, ...]  # input features, hidden..., classes
    seed: int


EXAMPLES = (
    # batch 6: not a power of two
    Example("mlp_small", batch=6, widths=(16, 12, 4), seed=1),
    Example("mlp_wide", batch=8, widths=(32, 64, 24, 10), seed=2),
)


# --- model, parameters, data -------------------------------------------------


def init_params(ex: Example) -> dict[str, np.ndarray]:
    """Kaiming(He)-uniform weights, small uniform biases, from a fixed seed."""
    rng = np.random.default_rng(ex.seed)
    params: dict[str, np.ndarray] = {}
    for i, (fin, fout) in enumerate(zip(ex.widths[:-1], ex.widths[1:], strict=True)):
        bound = np.sqrt(6.0 / fin)
        params[f"fc{i + 1}.weight"] = rng.uniform(-bound, bound, (fout, fin)).astype(np.float32)
        params[f"fc{i + 1}.bias"] = rng.uniform(-0.1, 0.1, fout).astype(np.float32)
    return params


def forward_model(ex: Example, params: dict[str, np.ndarray]) -> onnx.ModelProto:
    nodes = []
    x = "input"
    n_layers = len(ex.widths) - 1
    for i in range(n_layers):
        y = "output" if i == n_layers - 1 else f"h{i + 1}"
        nodes.append(
            helper.make_node(
                "Gemm",
                [x, f"fc{i + 1}.weight", f"fc{i + 1}.bias"],
                [y],
                transB=1,
                name=f"fc{i + 1}",
            )
        )
        x = y
        if i < n_layers - 1:
            nodes.append(helper.make_node("Relu", [y], [f"a{i + 1}"], name=f"relu{i + 1}"))
            x = f"a{i + 1}"
    graph = helper.make_graph(
        nodes,
        ex.name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [ex.batch, ex.widths[0]])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [ex.batch, ex.widths[-1]])],
        [numpy_helper.from_array(v, k) for k, v in params.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9  # this onnxruntime-training build loads IR <= 10
    onnx.checker.check_model(model)
    return model


def make_data(ex: Example) -> dict[str, np.ndarray]:
    """STEPS*ACCUM mini-batches; labels = argmax of a fixed random linear teacher."""
    rng = np.random.default_rng(100 + ex.seed)
    n = STEPS * ACCUM
    x = rng.standard_normal((n, ex.batch, ex.widths[0])).astype(np.float32)
    teacher = rng.standard_normal((ex.widths[0], ex.widths[-1])).astype(np.float32)
    labels = np.argmax(x @ teacher, axis=-1).astype(np.int64)
    return {"input": x, "labels": labels}


# --- torch cross-check -------------------------------------------------------


def torch_train(
    ex: Example, params: dict[str, np.ndarray], data: dict[str, np.ndarray], grad_scale: float = 1.0
) -> tuple[list[float], dict[str, np.ndarray]]:
    """The same training in torch float32.  grad_scale=1: summed gradients over
    the accumulated mini-batches (InPlaceAccumulatorV2); 1/ACCUM: their mean."""
    import torch

    torch.set_num_threads(1)
    ps = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    n_layers = len(ex.widths) - 1

    def batch_loss(i: int) -> float:
        h = torch.from_numpy(data["input"][i].copy())
        for layer in range(1, n_layers + 1):
            h = h @ ps[f"fc{layer}.weight"].T + ps[f"fc{layer}.bias"]
            if layer < n_layers:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(
            h, torch.from_numpy(data["labels"][i].copy()), reduction="mean"
        )
        loss.backward()  # .grad adds up over the mini-batches of the step
        return float(loss.detach())

    def step() -> None:
        with torch.no_grad():
            for p in ps.values():
                assert p.grad is not None
                p -= LR * (grad_scale * p.grad)
                p.grad = None

    losses = ort.sgd_steps(STEPS, ACCUM, batch_loss, step)
    return losses, {k: v.detach().numpy().copy() for k, v in ps.items()}


# --- one example -------------------------------------------------------------


def write_example(ex: Example, folder: Path) -> dict:
    """Write every file of one example into folder; return expected.json's content."""
    params = init_params(ex)
    ort.generate(forward_model(ex, params), folder, requires_grad=list(params))
    data = make_data(ex)

    # data.npz holds exactly the user inputs of the training graph, by name.
    inputs = ort.user_inputs(folder, params)
    want = [("input", [ex.batch, ex.widths[0]]), ("labels", [ex.batch])]
    if inputs != want:
        raise SystemExit(f"{ex.name}: training_model.onnx user inputs {inputs}, expected {want}")
    for name, shape in inputs:
        assert list(data[name].shape) == [STEPS * ACCUM, *shape], (name, data[name].shape)
    assert data["labels"].min() >= 0 and data["labels"].max() < ex.widths[-1]
    np.savez(folder / "data.npz", **data)  # zip entries carry a fixed date: same bytes
    np.savez(folder / "params.npz", **params)

    losses, initial, final = ort.ort_train(
        folder, params, data, "labels", steps=STEPS, accum=ACCUM, lr=LR, label=ex.name
    )
    if not np.mean(losses[-ACCUM:]) < np.mean(losses[:ACCUM]):
        raise SystemExit(f"{ex.name}: the loss does not decrease: {losses}")

    t_losses, t_final = torch_train(ex, params, data)
    diff = ort.max_abs_diff(losses, final, t_losses, t_final)
    if not ort.close(losses, final, t_losses, t_final, XCHECK_TOL):
        m_losses, m_final = torch_train(ex, params, data, grad_scale=1.0 / ACCUM)
        mean_diff = ort.max_abs_diff(losses, final, m_losses, m_final)
        raise SystemExit(
            f"{ex.name}: onnxruntime-training and torch disagree: max |diff| {diff:.3g} with "
            f"summed gradients, {mean_diff:.3g} with averaged gradients"
        )

    expected = {
        "oracle": ort.ORACLE,
        "lr": LR,
        "steps": STEPS,
        "accum": ACCUM,
        "batch": ex.batch,
        "widths": list(ex.widths),
        "losses": losses,
        "torch_max_abs_diff": diff,
        "params": {k: v.tolist() for k, v in final.items()},
        "initial_params": {k: v.tolist() for k, v in initial.items()},
    }
    (folder / "expected.json").write_text(ort.dump_json(expected) + "\n")
    return expected


# --- --check -------------------------------------------------------------------


def check_example(ex: Example, new_dir: Path, old_dir: Path) -> list[str]:
    """What differs between a fresh build (new_dir) and the stored one (old_dir)."""
    problems: list[str] = []
    new = write_example(ex, new_dir)
    try:
        old = json.loads((old_dir / "expected.json").read_text())
    except (OSError, ValueError) as e:
        return [f"expected.json unreadable: {e}"]
    for key in ("oracle", "lr", "steps", "accum"):
        if old.get(key) != new[key]:
            problems.append(f"expected.json {key}: stored {old.get(key)!r}, now {new[key]!r}")
    for key in ("params", "initial_params"):
        if set(old.get(key, {})) != set(new[key]):
            problems.append(f"expected.json {key}: names {sorted(old.get(key, {}))}")
    if not problems:
        if not np.allclose(old["losses"], new["losses"], **CHECK_TOL):
            problems.append(f"losses: stored {old['losses']}, now {new['losses']}")
        for key in ("params", "initial_params"):
            for k, v in new[key].items():
                if np.shape(old[key][k]) != np.shape(v) or not np.allclose(
                    old[key][k], v, **CHECK_TOL
                ):
                    problems.append(f"expected.json {key}[{k}] differs")
    for f in ("data.npz", "params.npz"):
        problems += _npz_problems(old_dir / f, new_dir / f)
    for f in ARTIFACTS:
        if not (old_dir / f).is_file():
            problems.append(f"{f} missing")
    return problems


def _npz_problems(old: Path, new: Path) -> list[str]:
    """[] if the two .npz files hold the same arrays (names, dtypes, values)."""
    try:
        with np.load(old) as a, np.load(new) as b:
            if sorted(a.files) != sorted(b.files) or any(
                a[k].dtype != b[k].dtype or not np.array_equal(a[k], b[k]) for k in b.files
            ):
                return [f"{new.name} differs"]
    except OSError as e:
        return [f"{new.name}: {e}"]
    return []


def check() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for ex in EXAMPLES:
            problems = check_example(ex, Path(tmp) / ex.name, HERE / ex.name)
            # The artifacts' bytes are informative only: another onnxruntime
            # build may serialise differently while computing the same numbers.
            same = [
                f for f in ARTIFACTS if _same_bytes(Path(tmp) / ex.name / f, HERE / ex.name / f)
            ]
            note = (
                "artifacts byte-identical"
                if len(same) == len(ARTIFACTS)
                else ("artifact bytes differ: " + ", ".join(f for f in ARTIFACTS if f not in same))
            )
            print(f"{ex.name}: {'ok' if not problems else 'DIFFERS'} ({note})")
            for p in problems:
                print(f"  {p}")
            ok &= not problems
    return 0 if ok else 1


def _same_bytes(a: Path, b: Path) -> bool:
    return a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temporary directory and compare with the stored examples",
    )
    args = ap.parse_args(argv)
    if args.check:
        return check()
    for ex in EXAMPLES:
        e = write_example(ex, HERE / ex.name)
        print(
            f"{ex.name}: losses {e['losses'][0]:.4f} -> {e['losses'][-1]:.4f}, "
            f"torch max |diff| {e['torch_max_abs_diff']:.2e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
