"""A forward GRU layer (issue 20): com.microsoft GRUTraining and GRUGrad, as
onnxruntime-training's generator writes them for torch's nn.GRU, end to end.

- The zoo's `gru` model, exported by onnxruntime-training (examples/zoo.py),
  trains like onnxruntime-training (reference.json, rtol 1e-4) with
  `deeploy-mlir run` on the host: untiled, and tiled double-buffered at the
  model's minimal L1.
- The reference semantics (deeploy_mlir/interp/families/gru.py) and the C
  kernels (runtime_c/kernels/gru.c) against onnxruntime's own GRUTraining
  and GRUGrad kernels, run on their own with the inputs the zoo model leaves
  out (a nonzero initial state, the final state's gradient dY_h, and the
  outputs dX and dH0).
- The C kernels bit for bit against a numpy model of the summation order
  that runtime_c/include/dm_gru.h documents, for a team of 8, 3 and 1 cores.
- The numbers through every pass of the untiled, a tiled and an L3-staged
  pipeline (translation validation); what is not supported is refused with
  one line naming the attribute or input, the node and the file."""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
from conftest import run_cli
from onnx import TensorProto
from onnx import helper as oh
from test_zoo_kernels import Guarded, _sigmoid_model, _tanh_model, same_bits
from validation import check_every_pass, train

from deeploy_mlir.cli import main
from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.families.gru import gru, gru_grad
from deeploy_mlir.pipeline import l2_pipeline, pipeline

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
RTOL, ATOL = 1e-4, 1e-5
F32 = np.float32
GCC = shutil.which("gcc")


def _zoo():  # examples/zoo.py imports torch and onnxruntime-training
    sys.path.insert(0, str(ROOT / "examples"))
    import zoo

    return zoo


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo-gru")
    assert _zoo().main([str(out), "--only", "gru"]) == 0
    return out / "gru"


# --------------------------------------------------------------------------
# onnxruntime's kernels on their own
# --------------------------------------------------------------------------

GRU_ATTRS = {"hidden_size": 0, "linear_before_reset": 1, "direction": "forward"}


def _ort_gru(s: int, n: int, i: int, h: int, seed: int) -> tuple[dict, list[np.ndarray]]:
    """Random inputs, and onnxruntime's (Y, Y_h, zrh, dX, dW, dR, dB, dH0)
    for them: GRUTraining, then GRUGrad with both dY and dY_h."""
    import onnxruntime as ort

    shapes = {
        "X": [s, n, i],
        "W": [1, 3 * h, i],
        "R": [1, 3 * h, h],
        "B": [1, 6 * h],
        "H0": [1, n, h],
        "dY": [s, 1, n, h],
        "dY_h": [1, n, h],
    }
    ins = [oh.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in shapes.items()]
    names = ["Y", "Y_h", "zrh", "dX", "dW", "dR", "dB", "dH0"]
    outs = [oh.make_tensor_value_info(k, TensorProto.FLOAT, None) for k in names]
    attrs = {**GRU_ATTRS, "hidden_size": h}
    nodes = [
        oh.make_node(
            "GRUTraining",
            ["X", "W", "R", "B", "", "H0"],
            names[:3],
            domain="com.microsoft",
            **attrs,
        ),
        oh.make_node(
            "GRUGrad",
            ["X", "W", "R", "B", "", "H0", "Y", "zrh", "dY", "dY_h"],
            names[3:],
            domain="com.microsoft",
            **attrs,
        ),
    ]
    opsets = [oh.make_opsetid("", 17), oh.make_opsetid("com.microsoft", 1)]
    model = oh.make_model(oh.make_graph(nodes, "gru", ins, outs), opset_imports=opsets)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    feed = {k: (rng.standard_normal(v) * 0.6).astype(F32) for k, v in shapes.items()}
    return feed, [np.asarray(r) for r in sess.run(None, feed)]


SHAPES = [(4, 3, 5, 2), (6, 2, 4, 6), (1, 5, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_reference_semantics_are_onnxruntimes(shape: tuple[int, int, int, int]) -> None:
    feed, want = _ort_gru(*shape, seed=sum(shape))
    fwd = [feed[k] for k in ("X", "W", "R", "B", "H0")]
    y, yh, zrh = gru(None, fwd)  # type: ignore[arg-type]  # the op is not read
    grads = gru_grad(None, [*fwd, want[0], want[2], feed["dY"], feed["dY_h"]])  # type: ignore[arg-type]
    names = ["Y", "Y_h", "zrh", "dX", "dW", "dR", "dB", "dH0"]
    for got, exp, what in zip([y, yh, zrh, *grads[:5]], want, names, strict=True):
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6, err_msg=what)


# --------------------------------------------------------------------------
# The C kernels: against onnxruntime, and bit for bit against their order
# --------------------------------------------------------------------------

PTR, U32 = ctypes.c_void_p, ctypes.c_uint32


class GruArgs(ctypes.Structure):
    _fields_ = [(k, PTR) for k in ("X", "W", "R", "B", "H0", "Y", "Y_h", "zrh")] + [
        (k, U32) for k in "SNIH"
    ]


GRAD_PTRS = "X W R B H0 Y zrh dY dY_h dX dW dR dB dH0 dA".split()


class GruGradArgs(ctypes.Structure):
    _fields_ = [(k, PTR) for k in GRAD_PTRS] + [(k, U32) for k in "SNIH"]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    if GCC is None:
        pytest.skip("gcc is needed to build runtime_c")
    d = tmp_path_factory.mktemp("gru-lib")
    so = d / "libgru.so"
    cmd = [
        GCC, "-std=gnu11", "-ffp-contract=off", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC",
        "-shared", "-DNUM_CORES=8", f"-I{RT / 'include'}", f"-I{RT / 'host'}",
        str(RT / "kernels" / "gru.c"), str(RT / "host" / "pmsis_host.c"), "-o", str(so), "-lm",
    ]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = ctypes.CDLL(str(so))
    out.pi_cl_team_fork.argtypes = [ctypes.c_int, PTR, PTR]
    out.pi_cl_team_fork.restype = None
    return out


def _fork(lib: ctypes.CDLL, kernel: str, args: ctypes.Structure, team: int) -> None:
    lib.pi_cl_team_fork(team, ctypes.cast(getattr(lib, kernel), PTR), ctypes.addressof(args))


def _p(a: np.ndarray) -> int:
    assert a.flags.c_contiguous and a.dtype == F32
    return a.ctypes.data


def _run_c(lib: ctypes.CDLL, feed: dict[str, np.ndarray], team: int) -> list[np.ndarray]:
    """(Y, Y_h, zrh, dX, dW, dR, dB, dH0, dA) from the four kernels, each
    output with a guard element after it."""
    s, n, i = feed["X"].shape
    h = feed["R"].shape[2]
    ins = [np.ascontiguousarray(feed[k]) for k in ("X", "W", "R", "B", "H0")]
    y, yh, zrh = Guarded((s, 1, n, h)), Guarded((1, n, h)), Guarded((s, 1, n, 3 * h))
    a = GruArgs(*map(_p, ins), y.ptr, yh.ptr, zrh.ptr, s, n, i, h)
    _fork(lib, "dm_gru_input_fp32", a, team)
    _fork(lib, "dm_gru_recur_fp32", a, team)
    fwd = [y.check(), yh.check(), zrh.check()]
    outs = [
        Guarded(sh)
        for sh in ((s, n, i), (1, 3 * h, i), (1, 3 * h, h), (1, 6 * h), (1, n, h), (s, 1, n, 3 * h))
    ]
    dy, dyh = np.ascontiguousarray(feed["dY"]), np.ascontiguousarray(feed["dY_h"])
    g = GruGradArgs(*map(_p, [*ins, fwd[0], fwd[2], dy, dyh]), *(o.ptr for o in outs), s, n, i, h)
    _fork(lib, "dm_gru_grad_recur_fp32", g, team)
    _fork(lib, "dm_gru_grad_params_fp32", g, team)
    return [*fwd, *(o.check() for o in outs)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_kernels_match_onnxruntime(lib: ctypes.CDLL, shape: tuple[int, int, int, int]) -> None:
    feed, want = _ort_gru(*shape, seed=sum(shape))
    got = _run_c(lib, feed, 0)
    names = ["Y", "Y_h", "zrh", "dX", "dW", "dR", "dB", "dH0"]
    for g, w, what in zip(got[:8], want, names, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=what)


def _seqdot(vec: np.ndarray, mat: np.ndarray) -> np.ndarray:
    """sum over k of vec[k] * mat[:, k], added in order of k from 0.0f (the
    same sequence for every row of `mat`)."""
    acc = np.zeros(mat.shape[0], F32)
    for k in range(vec.shape[0]):
        acc = acc + vec[k] * mat[:, k]
    return acc


def _model(feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    """dm_gru.h's formulas, float32 operation by operation (numpy's float32
    add and multiply round like C's), vectorised over the units j: every
    element sees the same sequence of operations as in the kernels."""
    x, w, r, b, h0, dy, dyh = (feed[k] for k in ("X", "W", "R", "B", "H0", "dY", "dY_h"))
    s, n, i = x.shape
    h = r.shape[2]
    w, r, wb, rb = w[0], r[0], b[0, : 3 * h], b[0, 3 * h :]
    one = F32(1)
    zrh = np.zeros((s, n, 3 * h), F32)
    y = np.zeros((s, n, h), F32)
    for t in range(s):
        for m in range(n):
            q = _seqdot(x[t, m], w)
            p = h0[0, m] if t == 0 else y[t - 1, m]
            dz, dr, dh = (_seqdot(p, r[g * h : (g + 1) * h]) for g in range(3))
            z = _sigmoid_model((q[:h] + dz) + (wb[:h] + rb[:h]))
            rr = _sigmoid_model((q[h : 2 * h] + dr) + (wb[h : 2 * h] + rb[h : 2 * h]))
            hh = _tanh_model((q[2 * h :] + wb[2 * h :]) + rr * (dh + rb[2 * h :]))
            y[t, m] = (one - z) * hh + z * p
            zrh[t, m] = np.concatenate([z, rr, hh])
    da = np.zeros((s, n, 3 * h), F32)
    dh0 = np.zeros((n, h), F32)
    for m in range(n):
        g = dyh[0, m].copy()
        for t in range(s - 1, -1, -1):
            p = h0[0, m] if t == 0 else y[t - 1, m]
            z, rr, hh = zrh[t, m, :h], zrh[t, m, h : 2 * h], zrh[t, m, 2 * h :]
            g = g + dy[t, 0, m]
            daz = ((p - hh) * g) * (z * (one - z))
            dah = (g * (one - z)) * (one - hh * hh)
            lin = _seqdot(p, r[2 * h :]) + rb[2 * h :]
            dar = (lin * dah) * (rr * (one - rr))
            da[t, m] = np.concatenate([daz, dar, dah])
            acc = g * z
            for k in range(2 * h):
                acc = acc + da[t, m, k] * r[k]
            for k in range(h):
                acc = acc + (dah[k] * rr[k]) * r[2 * h + k]
            g = acc
        dh0[m] = g
    dw = np.zeros((3 * h, i), F32)
    dr_ = np.zeros((3 * h, h), F32)
    dbw = np.zeros(3 * h, F32)
    dbr = np.zeros(3 * h, F32)
    for m in range(n):
        for t in range(s - 1, -1, -1):
            p = h0[0, m] if t == 0 else y[t - 1, m]
            a = np.concatenate([da[t, m, : 2 * h], da[t, m, 2 * h :] * zrh[t, m, h : 2 * h]])
            dw = dw + np.outer(da[t, m], x[t, m]).astype(F32)
            dr_ = dr_ + np.outer(a, p).astype(F32)
            dbw = dbw + da[t, m]
            dbr = dbr + a
    dx = np.zeros((s, n, i), F32)
    for k in range(3 * h):
        dx = dx + da[:, :, k : k + 1] * w[k]
    return [
        y[:, None],
        y[-1][None],
        zrh[:, None],
        dx,
        dw[None],
        dr_[None],
        np.concatenate([dbw, dbr])[None],
        dh0[None],
        da[:, None],
    ]


@pytest.mark.parametrize("team", [0, 3, 1], ids=["8cores", "3cores", "1core"])
def test_kernels_bit_exact(lib: ctypes.CDLL, team: int) -> None:
    rng = np.random.default_rng(20 + team)
    s, n, i, h = 3, 5, 4, 3
    shapes = {
        "X": (s, n, i), "W": (1, 3 * h, i), "R": (1, 3 * h, h), "B": (1, 6 * h),
        "H0": (1, n, h), "dY": (s, 1, n, h), "dY_h": (1, n, h),
    }  # fmt: skip
    feed = {k: (rng.standard_normal(v) * 0.8).astype(F32) for k, v in shapes.items()}
    feed["X"][0, 0, :2] = [0.0, 3.0]  # gates both sides of zero and of tanh's 0.55 switch
    want = _model(feed)
    for got, exp in zip(_run_c(lib, feed, team), want, strict=True):
        same_bits(got, exp)


# --------------------------------------------------------------------------
# The zoo model: host runs and translation validation
# --------------------------------------------------------------------------


def _check(got: dict, d: Path) -> None:
    ref = json.loads((d / "reference.json").read_text())
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=RTOL)
    assert sorted(got["params"]) == sorted(ref["params"])
    for k, want in ref["params"].items():
        np.testing.assert_allclose(got["params"][k], want, rtol=RTOL, atol=ATOL, err_msg=k)


def _run(d: Path, tmp: Path, *options: str) -> dict:
    ref = json.loads((d / "reference.json").read_text())
    out = tmp / "out.json"
    r = run_cli(
        "run", d, "--data", d / "data.npz", "--steps", str(ref["steps"]), "--accum",
        str(ref["accum"]), "--lr", str(ref["lr"]), "--json", out, "--keep", tmp / "project",
        "-q", *options,
    )  # fmt: skip
    assert r.code == 0, r.err
    return json.loads(out.read_text())


def test_untiled_on_host(exported: Path, tmp_path: Path, fast_build: None) -> None:
    _check(_run(exported, tmp_path, "--tiling", "untiled"), exported)
    src = (tmp_path / "project" / "TrainingNetwork.c").read_text()
    for k in ("dm_gru_input_fp32", "dm_gru_recur_fp32", "dm_gru_grad_recur_fp32"):
        assert k in src


def test_tiled_double_at_minimal_l1_on_host(
    exported: Path, tmp_path: Path, fast_build: None
) -> None:
    r = run_cli("minimal-l1", exported, "--buffering", "double", "--json")
    assert r.code == 0, r.err
    l1 = json.loads(r.out)["tiled"]
    _check(_run(exported, tmp_path, "--l1", str(l1), "--buffering", "double"), exported)


@pytest.mark.parametrize("which", ["l2", "tiled-double", "home-l3"])
def test_every_pass_preserves_the_numbers(which: str, exported: Path) -> None:
    """Translation validation: the interpreter on the imported IR trains like
    reference.json, and after each pass of the untiled L2 pipeline, a tiled
    double-buffered one (the GRU ops whole in L1) or one with every tensor
    in L3 gives the same numbers."""
    d = exported
    model = import_model(d)
    module = model.module
    assert any(isinstance(o, T.GRUOp) for o in module.walk())
    assert any(isinstance(o, T.GRUGradOp) for o in module.walk())
    configs = {
        "tiled-double": CompileConfig(l1=16384, target="pulp-open", buffering="double"),
        "home-l3": CompileConfig(l1=16384, target="gap9", buffering="single", l2=6000, home="L3"),
    }
    passes = l2_pipeline() if which == "l2" else pipeline(configs[which])
    check_every_pass(module, model.params, d, passes, ref_atol=ATOL)


def test_absent_initial_state_is_zeros(exported: Path, tmp_path: Path) -> None:
    """initial_h left out of both nodes (onnxruntime: zeros) trains like the
    exported graph, whose initial_h is a zeros initializer."""
    d = tmp_path / "m"
    d.mkdir()
    for f in ("optimizer_model.onnx", "checkpoint", "data.npz", "params.npz", "reference.json"):
        (d / f).write_bytes((exported / f).read_bytes())
    model = onnx.load(str(exported / "training_model.onnx"))
    nodes = [n for n in model.graph.node if n.op_type in ("GRUTraining", "GRUGrad")]
    assert len(nodes) == 2
    for n in nodes:
        h0 = n.input[5]
        assert not np.any(onnx.numpy_helper.to_array(
            next(i for i in model.graph.initializer if i.name == h0)
        ))  # fmt: skip
        n.input[5] = ""
    onnx.save(model, str(d / "training_model.onnx"))
    m = import_model(d)
    losses, state = train(m.module, m.params, d)
    ref = json.loads((d / "reference.json").read_text())
    np.testing.assert_allclose(losses, ref["losses"], rtol=RTOL)
    for k, want in ref["params"].items():
        np.testing.assert_allclose(state[k], want, rtol=RTOL, atol=ATOL, err_msg=k)


# --------------------------------------------------------------------------
# What is refused, and the cost model
# --------------------------------------------------------------------------


def _edit_attr(node: onnx.NodeProto, name: str, value: object) -> None:
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    node.attribute.append(oh.make_attribute(name, value))


def _sequence_lens(model: onnx.ModelProto, node: onnx.NodeProto) -> None:
    model.graph.initializer.append(oh.make_tensor("seq_lens", TensorProto.INT32, [2], [5, 5]))
    node.input[4] = "seq_lens"


EDITS = {
    "direction": lambda m, n: _edit_attr(n, "direction", "reverse"),
    "linear_before_reset": lambda m, n: _edit_attr(n, "linear_before_reset", 0),
    "activations": lambda m, n: _edit_attr(n, "activations", ["Sigmoid", "Relu"]),
    "clip": lambda m, n: _edit_attr(n, "clip", 3.0),
    "sequence_lens": _sequence_lens,
}


@pytest.mark.parametrize("what", list(EDITS))
def test_unsupported_is_refused(what: str, exported: Path, tmp_path: Path) -> None:
    """One line naming the attribute (or input), the node and the file; exit
    code 2; no output."""
    d = tmp_path / "m"
    d.mkdir()
    for f in ("optimizer_model.onnx", "checkpoint", "data.npz", "params.npz"):
        (d / f).write_bytes((exported / f).read_bytes())
    model = onnx.load(str(exported / "training_model.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "GRUTraining")
    EDITS[what](model, node)
    onnx.save(model, str(d / "training_model.onnx"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):  # the CLI's own code, in-process
        code = main(["lower", str(d), "-o", str(tmp_path / "out")])
    assert code == 2, err.getvalue()
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err.getvalue(), lines
    assert what in lines[0] and node.name in lines[0], lines[0]
    assert str(d / "training_model.onnx") in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_cost_model_family_calls_and_macs(exported: Path) -> None:
    from deeploy_mlir.cost.kernels import kernel_family, op_calls, op_macs

    module = import_model(exported).module
    ops = [o for o in module.walk() if isinstance(o, T.GRUOp | T.GRUGradOp)]
    assert len(ops) == 2
    s, n, i, h = 5, 2, 4, 6  # the zoo's nn.GRU(4, 6) on input [2, 5, 4]
    for op in ops:
        assert kernel_family(op) == "reduce"
        assert op_calls(op) == 2
        assert op.geometry() == (s, n, i, h)
    fwd = next(o for o in ops if isinstance(o, T.GRUOp))
    grad = next(o for o in ops if isinstance(o, T.GRUGradOp))
    # per step and row: 3H dot products of length I and of length H
    assert op_macs(fwd) == s * n * 3 * h * (i + h)
    # dX and dW (2 3H I), dR and the recurrent gradient (2 3H H), dar's
    # product (H H), dB (6H), per step and row
    assert op_macs(grad) == s * n * (2 * 3 * h * i + 2 * 3 * h * h + h * h + 6 * h)
