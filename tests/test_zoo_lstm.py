"""nn.LSTM (issue 20): com.microsoft LSTMTraining and LSTMGrad, end to end.

- The zoo's `lstm` (nn.LSTM(4, 6, batch_first=True), its last hidden state,
  Linear), exported by onnxruntime-training (examples/zoo.py), trains like
  onnxruntime-training (reference.json, rtol 1e-4) with `deeploy-mlir run`
  on the host: untiled, and tiled double-buffered at its minimal L1.
- The reference semantics (interp/families/lstm.py) against onnxruntime's
  own LSTMTraining and LSTMGrad kernels on random data (initial states, all
  three incoming gradients and dX, which the zoo model does not exercise).
- runtime_c/kernels/lstm.c against a numpy model of its order of operations
  (float32 operations one at a time, sums from 0.0f in the header's order,
  sigmoid and tanh from libm's expf as test_zoo_kernels.py models them),
  bit for bit, on 8 and 3 cores and teams of 8, 3 and 1.
- The numbers through every pass of the untiled and a tiled double-buffered
  pipeline (translation validation); the refusals (one line naming the
  attribute or input, the node and the file); the cost model's lines."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from c_structs import mirror
from kernel_harness import Guarded, KernelLib, kernel_library, mirror_layout, p
from onnx import TensorProto
from onnx import helper as oh
from test_zoo_kernels import _sigmoid_model, _tanh_model, same_bits
from validation import check_every_pass, train

from deeploy_mlir.cli import main
from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.pipeline import l2_pipeline, pipeline

ROOT = Path(__file__).resolve().parents[1]
NAME = "lstm"
#: zoo.py's run_status tolerance against reference.json
RTOL, ATOL = 1e-4, 1e-5
F32 = np.float32


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "examples"))
    import zoo  # imports torch and onnxruntime-training

    out = tmp_path_factory.mktemp("zoo-lstm")
    assert zoo.main([str(out), "--only", NAME]) == 0
    return out / NAME


def _cli(*args: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def _run(d: Path, tmp: Path, *options: object) -> dict:
    ref = json.loads((d / "reference.json").read_text())
    out = tmp / "out.json"
    code, _, err = _cli(
        "run", d, "--data", d / "data.npz", "--steps", ref["steps"], "--accum", ref["accum"],
        "--lr", ref["lr"], "--json", out, "--keep", tmp / "project", "-q", *options,
    )  # fmt: skip
    assert code == 0, err
    return json.loads(out.read_text())


def _check(got: dict, d: Path) -> None:
    ref = json.loads((d / "reference.json").read_text())
    assert ref["oracle"] == "onnxruntime-training"
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=RTOL)
    assert sorted(got["params"]) == sorted(ref["params"])
    for k, want in ref["params"].items():
        np.testing.assert_allclose(got["params"][k], want, rtol=RTOL, atol=ATOL, err_msg=k)
    # the recurrent weights moved (their gradients are not zero)
    start = np.load(d / "params.npz")
    for k in ("rnn.weight_ih_l0", "rnn.weight_hh_l0", "rnn.bias_ih_l0", "rnn.bias_hh_l0"):
        assert not np.allclose(got["params"][k], start[k], atol=1e-6), k


# --------------------------------------------------------------------------
# Host runs
# --------------------------------------------------------------------------


def test_untiled_on_host(exported: Path, tmp_path: Path, fast_build: None) -> None:
    got = _run(exported, tmp_path, "--tiling", "untiled")
    _check(got, exported)
    src = (tmp_path / "project" / "TrainingNetwork.c").read_text()
    # one fork per step (5 steps), two per step then one for the weights backwards
    assert src.count("dm_lstm_step_fp32") == 5
    assert src.count("dm_lstm_grad_gates_fp32") == src.count("dm_lstm_grad_state_fp32") == 5
    assert src.count("dm_lstm_grad_weights_fp32") == 1


@pytest.fixture(scope="module")
def minimal_l1(exported: Path) -> int:
    code, out, err = _cli("minimal-l1", exported, "--buffering", "double", "--json")
    assert code == 0, err
    l1 = json.loads(out)["tiled"]
    assert isinstance(l1, int)
    return l1


def test_tiled_double_at_minimal_l1_on_host(
    exported: Path, tmp_path: Path, fast_build: None, minimal_l1: int
) -> None:
    _check(_run(exported, tmp_path, "--l1", minimal_l1, "--buffering", "double"), exported)


def test_report_works_where_run_does(exported: Path, minimal_l1: int) -> None:
    """At the minimal L1 (where `run` trains, above) `report` succeeds too:
    its in-place-off compile does not fit there (the gradient's dA then
    needs a buffer of its own beside iofc), which the report says instead of
    failing; 4 KiB more and it fits."""
    code, out, err = _cli("report", exported, "--l1", minimal_l1, "--json", "-q")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["memory"]["L1"]["arena_bytes"] > 0
    off = rep["inplace_off"]
    assert off["memory"] is None
    assert "training.lstm_grad" in off["error"] and "needs at least" in off["error"]
    code, out, err = _cli("report", exported, "--l1", minimal_l1, "-q")
    assert code == 0, err
    assert "in-place off does not compile: @training_step: the op writing" in out
    code, out, err = _cli("report", exported, "--l1", minimal_l1 + 4096, "--json", "-q")
    assert code == 0, err
    off = json.loads(out)["inplace_off"]
    assert "error" not in off
    assert off["memory"]["L1"]["arena_bytes"] > json.loads(out)["memory"]["L1"]["arena_bytes"]


# --------------------------------------------------------------------------
# Translation validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["l2", "tiled-double"])
def test_every_pass_preserves_the_numbers(which: str, exported: Path) -> None:
    """The interpreter on the imported IR trains like reference.json, and
    after each pass of the untiled L2 pipeline or a tiled double-buffered
    one (16 KiB of L1: the LSTM ops whole, the others tiled) gives the same
    numbers; the gradient's dA is written over iofc's storage."""
    d = exported
    model = import_model(d)
    module = model.module
    ops = [o for o in module.walk() if isinstance(o, T.LstmOp | T.LstmGradOp)]
    assert len(ops) == 2
    cfg = CompileConfig(l1=16384, target="pulp-open", buffering="double")
    passes = l2_pipeline() if which == "l2" else pipeline(cfg)

    def in_place(ps, module) -> None:
        if ps.name == "training-bufferize":
            (grad,) = [o for o in module.walk() if isinstance(o, T.LstmGradOp)]
            assert grad.outs[grad.grads().index("dA")] is grad.ins[7]  # in place of iofc

    check_every_pass(module, model.params, d, passes, ref_atol=ATOL, after=in_place)


# --------------------------------------------------------------------------
# The reference semantics against onnxruntime's kernels
# --------------------------------------------------------------------------


def _ort_session(node: onnx.NodeProto, ins: dict[str, np.ndarray], outs: list[str]):
    import onnxruntime as ort

    vi = [oh.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in ins.items()]
    vo = [oh.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outs]
    graph = oh.make_graph([node], "g", vi, vo)
    opsets = [oh.make_opsetid("", 17), oh.make_opsetid("com.microsoft", 1)]
    model = oh.make_model(graph, opset_imports=opsets)
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, ins)


def _arg(t):
    from xdsl.ir import Block

    return Block(arg_types=[t]).args[0]


def _op(cls, arrays, out_shapes, props):
    from xdsl.dialects.builtin import TensorType, f32

    ins = [_arg(TensorType(f32, list(a.shape))) for a in arrays]
    op = cls(ins, [TensorType(f32, list(s)) for s in out_shapes], properties=props)
    op.verify()
    return op


def _random_problem(s: int, b: int, i: int, h: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def r(*shape: int, scale: float = 0.5) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(F32)

    return {
        "X": r(s, b, i, scale=1.0),
        "W": r(1, 4 * h, i),
        "R": r(1, 4 * h, h),
        "B": r(1, 8 * h),
        "H0": r(1, b, h),
        "C0": r(1, b, h),
        "dY": r(s, 1, b, h),
        "dYh": r(1, b, h),
        "dYc": r(1, b, h),
    }


@pytest.mark.parametrize(("s", "b", "i", "h"), [(5, 2, 4, 6), (3, 3, 7, 2), (1, 1, 2, 3)])
def test_reference_semantics_are_onnxruntimes(s: int, b: int, i: int, h: int) -> None:
    from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64

    from deeploy_mlir.interp.families.lstm import lstm, lstm_grad

    v = _random_problem(s, b, i, h, seed=s * 100 + b * 10 + i)
    hs = {"hidden_size": IntegerAttr(h, i64)}
    fwd_node = oh.make_node(
        "LSTMTraining",
        ["X", "W", "R", "B", "", "H0", "C0"],
        ["Y", "Yh", "Yc", "CAll", "IOFC"],
        domain="com.microsoft",
        hidden_size=h,
    )
    fwd_in = {k: v[k] for k in ("X", "W", "R", "B", "H0", "C0")}
    want = _ort_session(fwd_node, fwd_in, ["Y", "Yh", "Yc", "CAll", "IOFC"])
    fwd = _op(T.LstmOp, list(fwd_in.values()), [w.shape for w in want], hs)
    got = lstm(fwd, list(fwd_in.values()))
    for name, g, w in zip(("Y", "Y_h", "Y_c", "C", "iofc"), got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)
    y, _, _, c_all, iofc = want
    grad_node = oh.make_node(
        "LSTMGrad",
        ["X", "W", "R", "", "H0", "C0", "Y", "CAll", "IOFC", "dY", "dYh", "dYc"],
        ["dX", "dW", "dR", "dB", "dH0", "dC0"],
        domain="com.microsoft",
        hidden_size=h,
    )
    grad_in = {k: v[k] for k in ("X", "W", "R", "H0", "C0")}
    grad_in |= {"Y": y, "CAll": c_all, "IOFC": iofc}
    grad_in |= {k: v[k] for k in ("dY", "dYh", "dYc")}
    want = _ort_session(grad_node, grad_in, ["dX", "dW", "dR", "dB", "dH0", "dC0"])
    names = ["dX", "dW", "dR", "dB", "dH0", "dC0", "dA"]
    props = {**hs, "outputs": ArrayAttr([StringAttr(n) for n in names])}
    shapes = [*(w.shape for w in want), iofc.shape]
    grad = _op(T.LstmGradOp, list(grad_in.values()), shapes, props)
    got = lstm_grad(grad, list(grad_in.values()))
    for name, g, w in zip(names, got, want, strict=False):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)


# --------------------------------------------------------------------------
# runtime_c/kernels/lstm.c, bit for bit
# --------------------------------------------------------------------------

LstmArgs = mirror("dm_lstm_args_t")
LstmGradArgs = mirror("dm_lstm_grad_args_t")


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> KernelLib:
    d = tmp_path_factory.mktemp(f"lstm{request.param}")
    so = kernel_library(d, "lstm", request.param, ["lstm.c"], [LstmArgs, LstmGradArgs])
    return KernelLib(so, request.param)


def test_struct_mirrors_match_the_header(lib: KernelLib) -> None:
    for s in (LstmArgs, LstmGradArgs):
        assert lib.layout(s) == mirror_layout(s)


def _seqdot(a: np.ndarray, b: np.ndarray) -> F32:
    """sum of a[k] * b[k] from 0.0f, in order, in float32."""
    s = F32(0)
    for x, y in zip(a.astype(F32), b.astype(F32), strict=True):
        s = F32(s + F32(x * y))
    return s


def _forward_model(v: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """dm_lstm_step_fp32 for t = 0..S-1, per the header."""
    x, w, r, bias = v["X"], v["W"][0], v["R"][0], v["B"][0]
    s, b, _ = x.shape
    h = r.shape[1]
    y = np.zeros((s, b, h), F32)
    c_all = np.zeros((s, b, h), F32)
    iofc = np.zeros((s, b, 4 * h), F32)
    for t in range(s):
        for bb in range(b):
            hp = y[t - 1, bb] if t else v["H0"][0, bb]
            for hh in range(h):
                cp = c_all[t - 1, bb, hh] if t else v["C0"][0, bb, hh]
                g = np.zeros(4, F32)
                for q in range(4):
                    j = q * h + hh
                    ax, ah = _seqdot(x[t, bb], w[j]), _seqdot(hp, r[j])
                    g[q] = F32(ax + ah) + F32(bias[j] + bias[4 * h + j])
                gi, go, gf = _sigmoid_model(g[:3])
                gc = _tanh_model(g[3:4])[0]
                c = F32(F32(cp * gf) + F32(gi * gc))
                hn = F32(go * _tanh_model(np.array([c], F32))[0])
                iofc[t, bb, [hh, h + hh, 2 * h + hh, 3 * h + hh]] = [gi, go, gf, gc]
                c_all[t, bb, hh], y[t, bb, hh] = c, hn
    return y, y[-1].copy(), c_all[-1].copy(), c_all, iofc


def _back(da: np.ndarray, m: np.ndarray, col: int) -> F32:
    """((s_i + s_o) + s_f) + s_c, s_q = the gate's dot product with column col."""
    h = da.shape[0] // 4
    acc = _seqdot(da[:h], m[:h, col])
    for q in range(1, 4):
        acc = F32(acc + _seqdot(da[q * h : (q + 1) * h], m[q * h : (q + 1) * h, col]))
    return acc


def _backward_model(
    v: dict[str, np.ndarray], fwd: tuple[np.ndarray, ...], with_final: bool
) -> dict[str, np.ndarray]:
    """dm_lstm_grad_gates_fp32 / _state_fp32 for t = S-1..0, then _weights_fp32."""
    y, _, _, c_all, iofc = fwd
    x, w, r = v["X"], v["W"][0], v["R"][0]
    s, b, i = x.shape
    h = r.shape[1]
    one = F32(1)
    dh, dc = np.zeros((b, h), F32), np.zeros((b, h), F32)
    da = np.zeros((s, b, 4 * h), F32)
    dx = np.zeros((s, b, i), F32)
    for t in range(s - 1, -1, -1):
        for bb in range(b):
            for hh in range(h):
                if t == s - 1:
                    g = F32(0) + v["dYh"][0, bb, hh] if with_final else F32(0)
                    c = F32(0) + v["dYc"][0, bb, hh] if with_final else F32(0)
                else:
                    g, c = dh[bb, hh], dc[bb, hh]
                g = F32(g + v["dY"][t, 0, bb, hh])
                gi, go, gf, gc = iofc[t, bb, [hh, h + hh, 2 * h + hh, 3 * h + hh]]
                cp = c_all[t - 1, bb, hh] if t else v["C0"][0, bb, hh]
                tc = _tanh_model(np.array([c_all[t, bb, hh]], F32))[0]
                dao = F32(g * tc)
                c = F32(c + F32(F32(g * go) * F32(one - F32(tc * tc))))
                dai, dac, daf = F32(c * gc), F32(c * gi), F32(c * cp)
                c = F32(c * gf)
                dac = F32(dac * F32(one - F32(gc * gc)))
                dai = F32(dai * F32(gi * F32(one - gi)))
                daf = F32(daf * F32(gf * F32(one - gf)))
                dao = F32(dao * F32(go * F32(one - go)))
                da[t, bb, [hh, h + hh, 2 * h + hh, 3 * h + hh]] = [dai, dao, daf, dac]
                dc[bb, hh] = c
        for bb in range(b):
            for n in range(h):
                dh[bb, n] = _back(da[t, bb], r, n)
            for k in range(i):
                dx[t, bb, k] = _back(da[t, bb], w, k)
    order = [(t, bb) for bb in range(b) for t in range(s - 1, -1, -1)]
    hp = np.concatenate([v["H0"], y[:-1]], axis=0)
    dw = np.zeros((4 * h, i), F32)
    dr = np.zeros((4 * h, h), F32)
    db = np.zeros(8 * h, F32)
    for j in range(4 * h):
        a = np.array([da[t, bb, j] for t, bb in order])
        for k in range(i):
            dw[j, k] = _seqdot(a, np.array([x[t, bb, k] for t, bb in order]))
        for n in range(h):
            dr[j, n] = _seqdot(a, np.array([hp[t, bb, n] for t, bb in order]))
        acc = F32(0)
        for t, bb in order:
            acc = F32(acc + da[t, bb, j])
        db[j] = db[4 * h + j] = acc
    return {"dX": dx, "dW": dw, "dR": dr, "dB": db, "dH0": dh, "dC0": dc, "dA": da}


def _forward_c(lib: KernelLib, v: dict[str, np.ndarray], team: int) -> list[np.ndarray]:
    s, b, i = v["X"].shape
    h = v["R"].shape[2]
    outs = [Guarded(sh) for sh in ((s, b, h), (b, h), (b, h), (s, b, h), (s, b, 4 * h))]
    args = LstmArgs(
        *(p(v[k]) for k in ("X", "W", "R", "B", "H0", "C0")),
        *(o.ptr for o in outs),
        s, b, i, h, 0,
    )  # fmt: skip
    for t in range(s):
        args.t = t
        lib.run("dm_lstm_step_fp32", args, team)
    return [o.check() for o in outs]


@pytest.mark.parametrize(("s", "b", "i", "h"), [(5, 2, 4, 6), (3, 3, 5, 3)])
def test_kernels_bit_for_bit(lib: KernelLib, s: int, b: int, i: int, h: int) -> None:
    v = _random_problem(s, b, i, h, seed=7 + s)
    want_fwd = _forward_model(v)
    for team in (0, 3, 1):
        got = _forward_c(lib, v, team)
        for g, w in zip(got, want_fwd, strict=True):
            same_bits(g, w)
    y, _, _, c_all, iofc = want_fwd
    for with_final in (True, False):
        want = _backward_model(v, want_fwd, with_final)
        for team in (0, 3, 1):
            gi = iofc.copy()  # dA written over iofc, as the in-place plan may do
            outs = {k: Guarded(a.shape) for k, a in want.items() if k != "dA"}
            args = LstmGradArgs(
                *(p(v[k]) for k in ("X", "W", "R", "H0", "C0")), p(y), p(c_all), p(gi),
                p(v["dY"]), p(v["dYh"]) if with_final else None,
                p(v["dYc"]) if with_final else None,
                *(outs[k].ptr for k in ("dX", "dW", "dR", "dB", "dH0", "dC0")), p(gi),
                s, b, i, h, 0,
            )  # fmt: skip
            for t in range(s - 1, -1, -1):
                args.t = t
                lib.run("dm_lstm_grad_gates_fp32", args, team)
                lib.run("dm_lstm_grad_state_fp32", args, team)
            lib.run("dm_lstm_grad_weights_fp32", args, team)
            for k, o in outs.items():
                same_bits(o.check().reshape(want[k].shape), want[k])
            same_bits(gi, want["dA"])


def test_kernels_leave_absent_outputs_alone(lib: KernelLib) -> None:
    """dX, dW, dR, dB NULL: not computed; dH0 and dC0 still are."""
    s, b, i, h = 3, 2, 3, 4
    v = _random_problem(s, b, i, h, seed=3)
    fwd = _forward_model(v)
    y, _, _, c_all, iofc = fwd
    want = _backward_model(v, fwd, True)
    dh0, dc0, da = Guarded((b, h)), Guarded((b, h)), Guarded((s, b, 4 * h))
    args = LstmGradArgs(
        *(p(v[k]) for k in ("X", "W", "R", "H0", "C0")), p(y), p(c_all), p(iofc),
        p(v["dY"]), p(v["dYh"]), p(v["dYc"]), None, None, None, None,
        dh0.ptr, dc0.ptr, da.ptr, s, b, i, h, 0,
    )  # fmt: skip
    for t in range(s - 1, -1, -1):
        args.t = t
        lib.run("dm_lstm_grad_gates_fp32", args, 0)
        lib.run("dm_lstm_grad_state_fp32", args, 0)
    lib.run("dm_lstm_grad_weights_fp32", args, 0)
    same_bits(dh0.check(), want["dH0"])
    same_bits(dc0.check(), want["dC0"])
    same_bits(da.check(), want["dA"])


def test_c_kernels_against_onnxruntime(lib: KernelLib) -> None:
    """The kernels' numbers are onnxruntime's to float32 rounding (so the
    numpy model above, which they match bit for bit, is a model of the
    right thing)."""
    s, b, i, h = 4, 2, 3, 5
    v = _random_problem(s, b, i, h, seed=11)
    y, yh, yc, c_all, iofc = _forward_c(lib, v, 0)
    node = oh.make_node(
        "LSTMTraining",
        ["X", "W", "R", "B", "", "H0", "C0"],
        ["Y", "Yh", "Yc", "CAll", "IOFC"],
        domain="com.microsoft",
        hidden_size=h,
    )
    want = _ort_session(node, {k: v[k] for k in ("X", "W", "R", "B", "H0", "C0")},
                        ["Y", "Yh", "Yc", "CAll", "IOFC"])  # fmt: skip
    for g, w in zip((y, yh, yc, c_all, iofc), want, strict=True):
        np.testing.assert_allclose(g.reshape(w.shape), w, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------
# Refusals and the cost model
# --------------------------------------------------------------------------


def _edit_attr(node: onnx.NodeProto, name: str, value: object) -> None:
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    node.attribute.append(oh.make_attribute(name, value))


def _bidirectional(n: onnx.NodeProto) -> None:
    _edit_attr(n, "direction", "bidirectional")


def _with_input(k: int, name: str):
    def edit(n: onnx.NodeProto) -> None:
        while len(n.input) <= k:
            n.input.append("")
        n.input[k] = name

    return edit


#: (op, edit, words the error must contain)
REFUSALS = {
    "reverse": ("LSTMTraining", lambda n: _edit_attr(n, "direction", "reverse"), "direction"),
    "bidirectional": ("LSTMTraining", _bidirectional, "direction"),
    "input_forget": ("LSTMTraining", lambda n: _edit_attr(n, "input_forget", 1), "input_forget"),
    "clip": ("LSTMTraining", lambda n: _edit_attr(n, "clip", 3.0), "clip"),
    "activations": (
        "LSTMTraining",
        lambda n: _edit_attr(n, "activations", ["sigmoid", "relu", "tanh"]),
        "activations",
    ),
    "activation_alpha": (
        "LSTMGrad",
        lambda n: _edit_attr(n, "activation_alpha", [1.0, 1.0, 1.0]),
        "activation_alpha",
    ),
    "sequence_lens": ("LSTMTraining", _with_input(4, "lazy_reset_grad"), "sequence_lens"),
    "peepholes": ("LSTMTraining", _with_input(7, "rnn.bias_ih_l0"), "P (peephole"),
    "grad_sequence_lens": ("LSTMGrad", _with_input(3, "lazy_reset_grad"), "sequence_lens"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_unsupported_variants_are_refused(case: str, exported: Path, tmp_path: Path) -> None:
    """Each is one line on stderr, exit code 2, naming the attribute or input,
    the node and training_model.onnx, and no output directory."""
    op, edit, words = REFUSALS[case]
    d = tmp_path / "m"
    d.mkdir()
    for f in ("optimizer_model.onnx", "checkpoint", "data.npz"):
        (d / f).write_bytes((exported / f).read_bytes())
    model = onnx.load(str(exported / "training_model.onnx"))
    node = next(n for n in model.graph.node if n.op_type == op)
    edit(node)
    onnx.save(model, str(d / "training_model.onnx"))
    code, _, err = _cli("lower", d, "-o", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert words in err and f"({op})" in err and node.name in err, err
    assert "training_model.onnx" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cost_model_family_and_calls(exported: Path) -> None:
    from deeploy_mlir.cost.kernels import kernel_family, op_calls, op_macs

    module = import_model(exported).module
    fwd = next(o for o in module.walk() if isinstance(o, T.LstmOp))
    grad = next(o for o in module.walk() if isinstance(o, T.LstmGradOp))
    assert kernel_family(fwd) == kernel_family(grad) == "reduce"
    assert op_calls(fwd) == 5 and op_calls(grad) == 11  # S; 2 S + 1
    # S * B * 4H * (I + H) multiply-adds: 5 steps, batch 2, 24 gate rows, 4 + 6
    assert op_macs(fwd) == 5 * 2 * 24 * 10
    assert op_macs(grad) == 2 * op_macs(fwd)
    # the zoo model needs dW, dR, dB but not dX (X is the graph's input)
    assert grad.grads() == ["dW", "dR", "dB", "dH0", "dC0", "dA"]


def test_absent_bias_and_initial_states_are_zeros(
    exported: Path, tmp_path: Path, fast_build: None
) -> None:
    """LSTMTraining without B, initial_h and initial_c (and LSTMGrad without
    the initial states): imported as zero constants. The C run trains like
    the reference interpreter of the same graph, and unlike the model with
    its bias (the forward no longer reads it)."""
    d = tmp_path / "m"
    d.mkdir()
    for f in ("optimizer_model.onnx", "checkpoint", "data.npz", "reference.json"):
        (d / f).write_bytes((exported / f).read_bytes())
    model = onnx.load(str(exported / "training_model.onnx"))
    fwd = next(n for n in model.graph.node if n.op_type == "LSTMTraining")
    grad = next(n for n in model.graph.node if n.op_type == "LSTMGrad")
    for k in (3, 5, 6):
        fwd.input[k] = ""
    for k in (4, 5):
        grad.input[k] = ""
    onnx.save(model, str(d / "training_model.onnx"))
    im = import_model(d)
    consts = [o for o in im.module.walk() if isinstance(o, T.ConstantOp)]
    lstm_ins = next(o for o in im.module.walk() if isinstance(o, T.LstmOp)).ins
    assert all(v.owner in consts for v in lstm_ins[3:])
    want_losses, want = train(im.module, im.params, d)
    got = _run(d, tmp_path, "--tiling", "untiled")
    np.testing.assert_allclose(got["losses"], want_losses, rtol=RTOL)
    for k, w in want.items():
        np.testing.assert_allclose(got["params"][k], w, rtol=RTOL, atol=ATOL, err_msg=k)
    ref = json.loads((exported / "reference.json").read_text())
    assert not np.allclose(got["losses"], ref["losses"], rtol=1e-3)
