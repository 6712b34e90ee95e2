"""End to end: each bundled example, emitted for pulp-open, built with
gcc -Wall -Wextra -Werror against the PMSIS host emulation, trained for its
steps x accumulated mini-batches, matches the losses and final weights that
onnxruntime-training's own training API computed (examples/*/expected.json).

Tolerance: 1e-4 relative (atol 1e-6 for weights that pass through zero): the
kernels sum in a different order from onnxruntime's MLAS, so bits differ."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import assert_like_expected, example_dirs, load_expected, run_cli, run_training
from onnx_builders import deeploy_mlp

EXAMPLES = example_dirs()


def test_there_are_at_least_two_examples() -> None:
    assert len(EXAMPLES) >= 2
    batches = set()
    for d in EXAMPLES:
        with np.load(d / "data.npz") as z:
            batches.add(z["labels"].shape[1])  # [mini-batches, batch]
    assert any(b & (b - 1) for b in batches), "one example's batch must not be a power of two"


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_example_trains_like_onnxruntime(d: Path, tmp_path: Path) -> None:
    exp = load_expected(d)
    assert exp["steps"] >= 5 and exp["accum"] >= 2
    got, r = run_training(d, tmp_path, "--keep", tmp_path / "proj")
    assert len(got["losses"]) == exp["steps"] * exp["accum"]
    assert set(got["params"]) == set(exp["params"])
    assert_like_expected(got, exp)
    # the loss printed for the user is the same
    assert f"loss {exp['losses'][0]:.6f}"[:-1] in r.out
    # the emitted project is complete and its manifest plans L2 without overlap
    man = json.loads((tmp_path / "proj" / "manifest.json").read_text())
    assert man["memory"]["L2"]["arena_bytes"] >= man["memory"]["L2"]["bound_bytes"] > 0


def test_deeploy_style_graph_trains_like_torch(tmp_path: Path) -> None:
    """A Deeploy-style graph (SGD with an lr attribute inside the training graph,
    SoftmaxCrossEntropyLossGrad without dY) against torch autograd."""
    import onnx

    model, init = deeploy_mlp(batch=3, fin=4, classes=5, lr=0.1)
    p = tmp_path / "m.onnx"
    onnx.save(model, p)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 4)).astype(np.float32)
    y = rng.integers(0, 5, (4, 3))
    np.savez(tmp_path / "d.npz", x=x, labels=y)
    out = tmp_path / "o.json"
    r = run_cli("run", p, "--data", tmp_path / "d.npz", "--steps", "4", "--json", out)
    assert r.code == 0, r.err
    got = json.loads(out.read_text())
    w = torch.tensor(init["w"], requires_grad=True)
    b = torch.tensor(init["b"], requires_grad=True)
    for i in range(4):
        # Deeploy's SoftmaxCrossEntropyLossGrad (no dY input) scales the mean
        # loss's gradient by 1/B once more: the gradient of loss / B
        loss = torch.nn.functional.cross_entropy(torch.tensor(x[i]) @ w.T + b, torch.tensor(y[i]))
        loss = loss / x.shape[1]
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad = None
        b.grad = None
    np.testing.assert_allclose(got["params"]["w"], w.detach().numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["params"]["b"], b.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_lower_writes_a_complete_project(tmp_path: Path) -> None:
    d = EXAMPLES[0]
    out = tmp_path / "proj"
    r = run_cli(
        "lower",
        d,
        "-o",
        out,
        "--target",
        "pulp-open",
        "--data",
        d / "data.npz",
        "--steps",
        "2",
        "--accum",
        "2",
    )
    assert r.code == 0, r.err
    for f in (
        "Network.h",
        "Network.c",
        "TrainingNetwork.c",
        "OptimizerNetwork.c",
        "harness.c",
        "data.h",
        "Makefile",
        "README.md",
        "manifest.json",
        "runtime/include/dm_kernels.h",
        "runtime/host/pmsis.h",
    ):
        assert (out / f).is_file(), f
    train_c = (out / "TrainingNetwork.c").read_text()
    assert "pi_cl_team_fork(NUM_CORES, dm_gemm_fp32" in train_c
    assert "dm_accumulate_fp32" in train_c
    assert "dm_sgd_fp32" in (out / "OptimizerNetwork.c").read_text()
    header = (out / "Network.h").read_text()
    man = json.loads((out / "manifest.json").read_text())
    assert f"#define MEMORYARENA_L2 {man['memory']['L2']['arena_bytes']}u" in header


def test_same_input_gives_byte_identical_output(tmp_path: Path) -> None:
    d = EXAMPLES[0]
    texts = []
    for k in range(2):
        out = tmp_path / f"p{k}"
        assert run_cli("lower", d, "-o", out, "--data", d / "data.npz").code == 0
        texts.append(
            {
                f.relative_to(out).as_posix(): f.read_bytes()
                for f in sorted(out.rglob("*"))
                if f.is_file()
            }
        )
    assert texts[0] == texts[1]


def _run_short(d: Path, out: Path, *extra: str | Path) -> dict:
    """`deeploy-mlir run` of example `d` for 2 steps of 2 mini-batches at lr
    0.05, with `extra` options: the JSON it wrote into `out`."""
    short = ["--data", d / "data.npz", "--steps", "2", "--accum", "2", "--lr", "0.05"]
    r = run_cli("run", d, *short, "--json", out, *extra)
    assert r.code == 0, r.err
    return json.loads(out.read_text())


def test_params_file_gives_the_checkpoint_numbers(tmp_path: Path) -> None:
    d = EXAMPLES[0]
    outs = [
        _run_short(d, tmp_path / f"o{len(extra)}.json", *extra)
        for extra in ([], ["--params", str(d / "params.npz")])
    ]
    assert outs[0] == outs[1]
    # and different initial parameters give different numbers
    with np.load(d / "params.npz") as z:
        changed = {k: z[k] * 0.5 for k in z.files}
    np.savez(tmp_path / "half.npz", **changed)
    half = _run_short(d, tmp_path / "half.json", "--params", tmp_path / "half.npz")
    assert half["losses"] != outs[0]["losses"]


def test_plain_xdsl_opt_sees_our_dialect_and_passes() -> None:
    import subprocess

    src = (
        "func.func @f(%x: tensor<4xf32>)\n"
        '    -> (tensor<4xf32> {training.result = #training.result<"y">}) {\n'
        "  %y = training.relu ins(%x : tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %y : tensor<4xf32>\n}\n"
    )
    r = subprocess.run(
        ["xdsl-opt", "-p", "training-bufferize"], input=src, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert 'training.relu ins(%x : memref<4xf32, "L2">) outs(' in r.stdout
