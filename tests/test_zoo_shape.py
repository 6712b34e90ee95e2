"""Issue 20, the shape family: Split / SplitTraining, Concat / ConcatTraining,
Gather / GatherGrad and the 1-D Conv / ConvGrad (a 2-D one of height 1).

* hand-built graphs (tests/onnx_builders.py) run by `deeploy-mlir test` on
  the host, untiled and tiled double-buffered in a small L1, against numpy
  written here (np.split, np.take, np.add.at, a direct 1-D convolution);
* the zoo's models that need these ops, exported by onnxruntime-training
  (examples/zoo.py), trained 3 steps x 2 mini-batches on the host, untiled
  and tiled double-buffered at their minimal L1, against its numbers (1e-4);
* translation validation: the models interpreted after every pass of the
  untiled and a tiled pipeline give the numbers of the imported IR;
* GRUTraining / LSTMTraining and their gradients are refused in one line
  that names the op, the node and the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_builders import init, make_model, vi

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import ort_reference as ort  # noqa: E402
import zoo  # noqa: E402

ZOO = ("mha", "encoder_post_norm", "encoder_pre_norm", "embedding_mean", "unsqueeze_conv1d")
MODELS = {m.name: m for m in zoo.zoo()}
F32 = np.float32


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "deeploy_mlir.cli", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)


def _folder(tmp: Path, model: onnx.ModelProto, inputs: list, outputs: list) -> Path:
    onnx.checker.check_model(model)
    tmp.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(tmp / "network.onnx"))
    np.savez(tmp / "inputs.npz", *inputs)
    np.savez(tmp / "outputs.npz", *outputs)
    return tmp


def _run_folder(d: Path, *options: str) -> None:
    r = _cli("test", d, "--atol", "1e-5", *options)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


# ---------------------------------------------------------------- hand-built graphs

MS = "com.microsoft"


def _rows_graph() -> tuple[onnx.ModelProto, list, list]:
    """Split (sizes as input; equal parts), ConcatTraining whose lengths feed
    SplitTraining, Concat, an embedding Gather of run-time token ids (repeats,
    a negative one), a Gather of constant indices along axis 1, GatherGrad."""
    rng = np.random.default_rng(20)
    x = rng.standard_normal((3, 6)).astype(F32)
    w = rng.standard_normal((5, 3)).astype(F32)
    ids = np.array([[1, 4, 1, 0], [-1, 2, 1, 1]], np.int64)
    dy = rng.standard_normal((2, 4, 3)).astype(F32)
    const_idx = np.array([[0, 5], [-1, 2]], np.int64)
    nodes = [
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
        helper.make_node("ConcatTraining", ["b", "a"], ["c", "lens"], axis=1, domain=MS),
        helper.make_node("SplitTraining", ["c", "lens"], ["b2", "a2"], axis=1, domain=MS),
        helper.make_node("Split", ["x"], ["p0", "p1", "p2"], axis=0),
        helper.make_node("Concat", ["p2", "p0"], ["cc"], axis=0),
        helper.make_node("Gather", ["w", "ids"], ["e"], axis=0),
        helper.make_node("Gather", ["c", "cidx"], ["g"], axis=1),
        helper.make_node("GatherGrad", ["wshape", "ids", "dy"], ["dw"], axis=0, domain=MS),
    ]
    outs = [
        vi("b2", [3, 4]),
        vi("a2", [3, 2]),
        vi("cc", [2, 6]),
        vi("e", [2, 4, 3]),
        vi("g", [3, 2, 2]),
        vi("dw", [5, 3]),
    ]
    inits = [
        init("sizes", np.array([2, 4], np.int64)),
        init("cidx", const_idx),
        init("wshape", np.array([5, 3], np.int64)),
    ]
    ins = [vi("x", [3, 6]), vi("w", [5, 3]), vi("ids", [2, 4], TensorProto.INT64)]
    ins.append(vi("dy", [2, 4, 3]))
    model = make_model(nodes, ins, outs, inits, ms=True)
    # expected values, by numpy
    a, b = x[:, :2], x[:, 2:]
    c = np.concatenate([b, a], axis=1)
    dw = np.zeros((5, 3), F32)
    np.add.at(dw, ids.reshape(-1) % 5, dy.reshape(-1, 3))
    want = [b, a, np.concatenate([x[2:3], x[0:1]]), w[ids % 5], c[:, const_idx % 6], dw]
    return model, [x, w, ids, dy], want


def _conv1d_graph() -> tuple[onnx.ModelProto, list, list]:
    """A 1-D Conv (stride 2, pads 1 and 2) and its ConvGrad, checked against
    a direct loop over the taps."""
    rng = np.random.default_rng(21)
    n, c, length, m, k, s, p0, p1 = 2, 3, 9, 4, 3, 2, 1, 2
    x = rng.standard_normal((n, c, length)).astype(F32)
    w = rng.standard_normal((m, c, k)).astype(F32)
    b = rng.standard_normal(m).astype(F32)
    out = (length + p0 + p1 - k) // s + 1
    dy = rng.standard_normal((n, m, out)).astype(F32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p0, p1)))
    y = np.zeros((n, m, out)) + b[None, :, None]
    dxp = np.zeros_like(xp)
    dw = np.zeros((m, c, k))
    for o in range(out):
        for t in range(k):
            y[:, :, o] += xp[:, :, o * s + t] @ w[:, :, t].T
            dxp[:, :, o * s + t] += dy[:, :, o] @ w[:, :, t]
            dw[:, :, t] += dy[:, :, o].T @ xp[:, :, o * s + t]
    db = dy.sum(axis=(0, 2))
    win = {"kernel_shape": [k], "strides": [s], "pads": [p0, p1]}
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], **win),
        helper.make_node("ConvGrad", ["dy", "x", "w"], ["dx", "dw", "db"], domain=MS, **win),
    ]
    ins = [vi("x", [n, c, length]), vi("dy", [n, m, out])]
    outs = [vi("y", [n, m, out]), vi("dx", [n, c, length]), vi("dw", [m, c, k]), vi("db", [m])]
    model = make_model(nodes, ins, outs, [init("w", w), init("b", b)], ms=True)
    want = [y, dxp[:, :, p0 : p0 + length], dw, db]
    return model, [x, dy], [v.astype(F32) for v in want]


GRAPHS = {"rows": _rows_graph, "conv1d": _conv1d_graph}


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("tiled", [False, True], ids=["untiled", "tiled-double"])
def test_hand_built_graph_on_the_host(tmp_path: Path, name: str, tiled: bool) -> None:
    d = _folder(tmp_path / name, *GRAPHS[name]())
    # 8064 bytes of cluster stacks, 336 for the tiles: every op tiles
    options = ("--l1", "8400", "--buffering", "double") if tiled else ()
    _run_folder(d, *options)


def test_the_folder_check_can_fail(tmp_path: Path) -> None:
    """One wrong expected element (a GatherGrad row that misses one add) fails."""
    model, ins, want = _rows_graph()
    want[-1] = want[-1].copy()
    want[-1][1] -= ins[3][0, 0]
    d = _folder(tmp_path / "wrong", model, ins, want)
    assert _cli("test", d, "--atol", "1e-5").returncode != 0
