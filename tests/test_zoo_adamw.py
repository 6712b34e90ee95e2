"""onnxruntime-training's AdamW (OptimType.AdamW, com.microsoft AdamWOptimizer,
issue 20) end to end: the zoo's AdamW models train like onnxruntime-training
(host, untiled and tiled double-buffered at their minimal L1, 3 steps x 2
mini-batches, rtol 1e-4); the reference semantics against the formulas in
float64; the step counter; the moments and the count as optimizer state in
the memory plan, the manifest and the regimes; the import's refusals, and
the unsupported-op error naming the file that holds the node."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import ROOT, run_cli

from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.families.adamw import adamw_update
from deeploy_mlir.interp.interpreter import TrainingSession, loss_output_name
from deeploy_mlir.pipeline import l2_pipeline, make_context, pipeline

sys.path.insert(0, str(ROOT / "examples"))

import zoo

MODELS = ("mlp_adamw", "mlp_adamw_wd", "ds_cnn_adamw")
TOL = {"rtol": 1e-4, "atol": 1e-5}  # examples/zoo.py's XCHECK_TOL


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo-adamw")
    assert zoo.main([str(out), "--only", ",".join(MODELS)]) == 0
    return out


def _ref(d: Path) -> dict:
    return json.loads((d / "reference.json").read_text())


def _data(d: Path) -> dict[str, np.ndarray]:
    with np.load(d / "data.npz") as z:
        return {k: z[k] for k in z.files}


def _run(d: Path, tmp: Path, *options: str) -> dict:
    ref = _ref(d)
    out = tmp / "out.json"
    args = ["run", d, "--data", d / "data.npz", "--steps", str(ref["steps"])]
    args += ["--accum", str(ref["accum"]), "--lr", repr(ref["lr"]), "--json", out, "-q"]
    r = run_cli(*args, *options)
    assert r.code == 0, r.err
    return json.loads(out.read_text())


def _assert_like_reference(got: dict, ref: dict) -> None:
    assert len(got["losses"]) == ref["steps"] * ref["accum"]
    np.testing.assert_allclose(got["losses"], ref["losses"], **TOL)
    assert sorted(got["params"]) == sorted(ref["params"])
    for name, want in ref["params"].items():
        np.testing.assert_allclose(np.array(got["params"][name]), want, **TOL, err_msg=name)


# ------------------------------------------------------- the models, on the host


def _random_state(session: TrainingSession, seed: int) -> dict[str, np.ndarray]:
    """Parameters, gradients and moments at random (second moments >= 0),
    the count at 4."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, v in session.state.items():
        x = np.array([4]) if name == "step" else rng.normal(size=v.shape).astype(np.float32)
        out[name] = np.abs(x) if name.endswith(".momentum1") else x
    return out


def _optimizer_steps(module, init: dict, state: dict) -> dict[str, np.ndarray]:
    s = TrainingSession(module, init)
    for name, x in state.items():
        s.state[name][...] = x
    for _ in range(3):
        s.call("optimizer_step", {"learning_rate": np.array([0.01], np.float32)})
    return {k: np.array(v) for k, v in s.state.items()}


TV_PIPELINES = {
    "l2": lambda: l2_pipeline(),
    "tiled-double-1k": lambda: pipeline(CompileConfig(l1=1024, buffering="double")),
    "stream-tiled-single-2k": lambda: pipeline(
        CompileConfig(l1=2048, buffering="single", regime="stream")
    ),
}


@pytest.mark.parametrize(
    ("name", "pipe"),
    [("mlp_adamw_wd", p) for p in TV_PIPELINES] + [("ds_cnn_adamw", "tiled-double-1k")],
)
def test_translation_validation_of_every_pass(name: str, pipe: str, exported: Path) -> None:
    """Interpreted after each pass, @optimizer_step gives the imported one's
    bits from the same state (random parameters, gradients and moments,
    count 4; three steps in a row); the whole training agrees within float32
    rounding (tiled gradients sum in another order). With a 1 KiB L1 arena
    the adamw ops of the DS-CNN's larger parameters run in tile loops."""
    from xdsl.dialects import scf

    d = exported / name
    m = import_model(d)
    module = m.module
    init = {**m.params, **m.opt_state}
    state = _random_state(TrainingSession(module.clone(), init), 3)
    want = _optimizer_steps(module.clone(), init, state)
    assert want["step"].tolist() == [7]
    ref = _interpret(module.clone(), m, d)
    ctx = make_context()
    for p in TV_PIPELINES[pipe]():
        p.apply(ctx, module)
        module.verify()
        got = _optimizer_steps(module, init, state)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{p.name}: {k}")
    losses, params = _interpret(module, m, d)
    np.testing.assert_allclose(losses, ref[0], rtol=1e-6)
    for k in ref[1]:
        np.testing.assert_allclose(params[k], ref[1][k], rtol=1e-5, atol=1e-7, err_msg=k)
    if name == "ds_cnn_adamw":
        loops = [o for o in _opt_step(module).walk() if isinstance(o, scf.ForOp)]
        assert any(isinstance(o, T.AdamWOp) for lp in loops for o in lp.walk())
    if pipe.startswith("stream"):
        fn = _opt_step(module)
        kinds = {T.arg_info(fn, i).kind: T.memory_level(a.type) for i, a in enumerate(fn.args)}
        assert kinds["optimizer_state"] == "L3"


def _interpret(module, m, d: Path) -> tuple[list[float], dict[str, np.ndarray]]:
    ref = _ref(d)
    s = TrainingSession(module, {**m.params, **m.opt_state})
    return s.train(_data(d), ref["steps"], ref["accum"], ref["lr"], loss_output_name(module))


# ------------------------------------------------------ the reference semantics


def _adamw64(w, g, m1, m2, lr, step, alpha, beta, eps, wd, correct, mode):
    """AdamW as the two papers write it, in float64 (onnxruntime's kernel
    documents mode 0 as torch.optim.AdamW and mode 1 as Hugging Face's)."""
    w, g, m1, m2 = (np.asarray(x, np.float64) for x in (w, g, m1, m2))
    m1 = alpha * m1 + (1 - alpha) * g
    m2 = beta * m2 + (1 - beta) * g * g
    ac = 1 - alpha**step if correct else 1.0
    bc = 1 - beta**step if correct else 1.0
    if mode == 0:  # torch: decay first, then the corrected moments
        w = w * (1 - lr * wd)
        w = w - lr * (m1 / ac) / (np.sqrt(m2 / bc) + eps)
    else:  # Hugging Face: corrected step size, decay after
        w = w - lr * np.sqrt(bc) / ac * m1 / (np.sqrt(m2) + eps)
        w = w - lr * wd * w
    return w, m1, m2


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("correct", [False, True])
def test_reference_semantics_are_adamw(mode: int, correct: bool) -> None:
    rng = np.random.default_rng(7 + mode + 2 * correct)
    w = rng.normal(size=64).astype(np.float32)
    m1 = np.zeros(64, np.float32)
    m2 = np.zeros(64, np.float32)
    w64, a64, b64 = w.astype(np.float64), m1.astype(np.float64), m2.astype(np.float64)
    for step in range(1, 6):
        g = rng.normal(size=64).astype(np.float32)
        args = (1e-2, step, 0.9, 0.999, 1e-6, 0.05, correct, mode)
        w, m1, m2 = adamw_update(w, g, m1, m2, *args)
        w64, a64, b64 = _adamw64(w64, g, a64, b64, *args)
        assert w.dtype == np.float32
        np.testing.assert_allclose(w, w64, rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(m1, a64, rtol=2e-5, atol=1e-7)
        np.testing.assert_allclose(m2, b64, rtol=2e-5, atol=1e-9)
    # bias correction matters at step 1: the first step moves each weight by
    # about lr (|m1 / sqrt(m2)| = 1) with it, by lr * (1 - alpha) / sqrt(1 - beta) without
    w0, g0 = np.ones(4, np.float32), np.full(4, 3.0, np.float32)
    z = np.zeros(4, np.float32)
    w1, _, _ = adamw_update(w0, g0, z, z, 1e-2, 1, 0.9, 0.999, 1e-8, 0.0, correct, mode)
    moved = 1e-2 if correct else 1e-2 * 0.1 / np.sqrt(0.001)
    np.testing.assert_allclose(1 - w1, moved, rtol=1e-4)


def _opt_step(module):
    return next(
        f
        for f in module.ops
        if getattr(f, "sym_name", None) and f.sym_name.data == "optimizer_step"
    )


def test_import_the_optimizer_step(exported: Path) -> None:
    """@optimizer_step: lr, the step count, then per trainable parameter the
    parameter, its gradient, its two moments; one step_count and an adamw
    per parameter with the node's attributes (weight_decay 0.01 in
    mlp_adamw_wd, onnxruntime's AdamW defaults otherwise)."""
    m = import_model(exported / "mlp_adamw_wd")
    fn = _opt_step(m.module)
    infos = [T.arg_info(fn, i) for i in range(len(fn.args))]
    kinds = [(i.kind, i.name) for i in infos]
    assert kinds[:2] == [("lr", "learning_rate"), ("optimizer_state", "step")]
    assert len(kinds) == 2 + 4 * len(m.trainable)
    for k, p in enumerate(m.trainable):
        assert kinds[2 + 4 * k : 6 + 4 * k] == [
            ("param", p),
            ("grad_accum", f"{p}_grad.accumulation.buffer"),
            ("optimizer_state", f"{p}.momentum0"),
            ("optimizer_state", f"{p}.momentum1"),
        ]
    ops = [o for o in fn.body.block.ops if isinstance(o, T.TrainingComputeOp)]
    assert isinstance(ops[0], T.StepCountOp)
    adamws = [o for o in ops if isinstance(o, T.AdamWOp)]
    assert len(adamws) == len(m.trainable)
    node = onnx.load(str(exported / "mlp_adamw_wd" / "optimizer_model.onnx")).graph.node[0]
    a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
    assert abs(a["weight_decay"] - 0.01) < 1e-9
    for o in adamws:
        assert o.weight_decay.value.data == pytest.approx(a["weight_decay"])
        assert o.adam_mode.value.data == a["adam_mode"] == 1
        assert o.epsilon.value.data == pytest.approx(a["epsilon"])
    assert set(m.opt_state) == {n for k, n in kinds if k == "optimizer_state"}
    assert all(not np.any(v) for v in m.opt_state.values())  # zeros, step 0


def test_the_step_counts_optimizer_steps(exported: Path) -> None:
    """After S optimizer steps the count is S, and the first update used 1
    (ORT feeds step + 1): a one-step run with the count's initial value
    forced to 9 uses 10 and differs."""
    d = exported / "mlp_adamw"
    m = import_model(d)
    s = TrainingSession(m.module, {**m.params, **m.opt_state})
    ref = _ref(d)
    s.train(_data(d), ref["steps"], ref["accum"], ref["lr"], loss_output_name(m.module))
    assert s.state["step"].tolist() == [ref["steps"]]
    # the moments persist: after training they are not zero
    assert all(np.any(s.state[n]) for n in m.opt_state if n != "step")
    later = TrainingSession(m.module, {**m.params, **m.opt_state, "step": np.array([9])})
    first = TrainingSession(m.module, {**m.params, **m.opt_state})
    a = first.train(_data(d), 1, 1, ref["lr"], None)[1]
    b = later.train(_data(d), 1, 1, ref["lr"], None)[1]
    assert later.state["step"].tolist() == [10]
    assert any(not np.array_equal(a[k], b[k]) for k in a)


# ------------------------------------------------------------- memory and kinds


def test_moments_are_optimizer_state_in_the_manifest(exported: Path, tmp_path: Path) -> None:
    """The manifest lists each moment and the count as optimizer_state, and
    the footprint counts them: 2 x 4 bytes per parameter element, 8 for the
    count, 4 for the learning rate."""
    d = exported / "mlp_adamw"
    r = run_cli("lower", d, "-o", tmp_path / "p", "--regime", "resident")
    assert r.code == 0, r.err
    man = json.loads((tmp_path / "p" / "manifest.json").read_text())
    params = {k: np.asarray(v) for k, v in _ref(d)["params"].items()}
    n = sum(v.size for v in params.values())
    assert man["footprint"]["optimizer_state"] == 2 * 4 * n + 8 + 4
    kinds = {b["name"]: b["kind"] for b in man["buffers"]}
    for p in params:
        assert kinds[f"{p}.momentum0"] == kinds[f"{p}.momentum1"] == "optimizer_state"
    assert kinds["step"] == "optimizer_state"
    sizes = {b["name"]: b["bytes"] for b in man["buffers"]}
    assert sizes["step"] == 8
    assert all(sizes[f"{p}.momentum1"] == 4 * v.size for p, v in params.items())


def test_stream_regime_puts_the_moments_in_l3_and_trains(
    exported: Path, tmp_path: Path, fast_build: None
) -> None:
    """stream moves weights, gradients and the optimizer's state to L3 (the
    harness zeroes the moments there); the numbers stay onnxruntime's."""
    d = exported / "mlp_adamw"
    got = _run(d, tmp_path, "--regime", "stream", "--keep", str(tmp_path / "k"))
    _assert_like_reference(got, _ref(d))
    man = json.loads((tmp_path / "k" / "manifest.json").read_text())
    assert man["regime"] == "stream"
    levels = {b["name"]: b["level"] for b in man["buffers"] if b["kind"] == "optimizer_state"}
    moments = {k: v for k, v in levels.items() if ".momentum" in k}
    assert moments and set(moments.values()) == {"L3"}
    # the learning rate (4 bytes) is optimizer state too; it stays where it is fed
    assert "learning_rate" in levels


def test_trains_without_in_place_reuse(exported: Path, tmp_path: Path, fast_build: None) -> None:
    """The default pipeline without training-inplace-alias: the new weights,
    moments and count get buffers of their own, kernel-select copies into
    them before dm_adamw_fp32 updates them (the C has the copies), and the
    run still trains like onnxruntime-training."""
    d = exported / "mlp_adamw"
    r = run_cli("lower", d, "-o", tmp_path / "p", "--print-pipeline")
    assert r.code == 0, r.err
    passes = r.out.strip().splitlines()[-1]
    assert ",training-inplace-alias," in f",{passes}"
    off = f",{passes}".replace(",training-inplace-alias,", ",", 1).removeprefix(",")
    got = _run(d, tmp_path, "--pass-pipeline", off, "--keep", str(tmp_path / "k"))
    _assert_like_reference(got, _ref(d))
    c = (tmp_path / "k" / "OptimizerNetwork.c").read_text()
    assert "dm_copy" in c and "dm_adamw_fp32" in c


# ------------------------------------------------------------- refusals, errors


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _set_attr(m: onnx.ModelProto, name: str, value: int) -> None:
    next(a for a in m.graph.node[0].attribute if a.name == name).i = value


def _edit_opt(d: Path, edit) -> None:
    m = onnx.load(str(d / "optimizer_model.onnx"))
    edit(m)
    onnx.save(m, str(d / "optimizer_model.onnx"))


def test_unsupported_optimizer_op_names_optimizer_model(exported: Path, tmp_path: Path) -> None:
    d = _copy(exported / "mlp_adamw", tmp_path / "m")

    def rename(m: onnx.ModelProto) -> None:
        m.graph.node[0].op_type = "LambOptimizer"

    _edit_opt(d, rename)
    r = run_cli("lower", d, "-o", tmp_path / "out")
    assert r.code == 2
    line = r.err.strip()
    assert "\n" not in line and "Traceback" not in r.err
    opt = d / "optimizer_model.onnx"
    assert f"{opt}: unsupported ONNX ops: com.microsoft:LambOptimizer" in line
    assert "training_model.onnx" not in line
    assert not (tmp_path / "out").exists()


def test_the_zoos_coverage_reads_both_files_ops() -> None:
    """examples/zoo.py's refused_ops reads the ops of both files' lists."""
    msg = (
        "x/training_model.onnx: unsupported ONNX ops: Abs (nodes: /Abs); Sign (nodes: a); "
        "x/optimizer_model.onnx: unsupported ONNX ops: com.microsoft:LambOptimizer (nodes: l)"
    )
    assert zoo.refused_ops(msg) == {"Abs", "Sign", "ms:LambOptimizer"}


def test_unsupported_ops_in_both_files_each_under_its_file(exported: Path, tmp_path: Path) -> None:
    d = _copy(exported / "mlp_adamw", tmp_path / "m")
    _edit_opt(d, lambda m: setattr(m.graph.node[0], "op_type", "LambOptimizer"))
    t = onnx.load(str(d / "training_model.onnx"))
    relu = next(n for n in t.graph.node if n.op_type == "Relu")
    relu.op_type = "Selu"
    onnx.save(t, str(d / "training_model.onnx"))
    with pytest.raises(DeeployError) as e:
        import_model(d)
    msg = str(e.value)
    train, opt = str(d / "training_model.onnx"), str(d / "optimizer_model.onnx")
    assert msg.index(train) < msg.index("Selu") < msg.index(opt) < msg.index("LambOptimizer")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda m: _set_attr(m, "adam_mode", 2),
            "adam_mode must be 0 or 1, got 2",
        ),
        (
            lambda m: m.graph.node[0].attribute.append(
                onnx.helper.make_attribute("enable_grad_clipping", 1)
            ),
            "enable_grad_clipping is not supported",
        ),
        (
            lambda m: (
                m.graph.input.append(
                    onnx.helper.make_tensor_value_info("sig", onnx.TensorProto.BOOL, [1])
                ),
                m.graph.node[0].input.append("sig"),
            ),
            "graph inputs must be learning_rate, step, params",
        ),
    ],
    ids=["adam_mode", "grad_clipping", "signal_fed"],
)
def test_refusals_name_the_file_and_the_reason(
    exported: Path, tmp_path: Path, edit, words: str
) -> None:
    d = _copy(exported / "mlp_adamw", tmp_path / "m")
    _edit_opt(d, edit)
    r = run_cli("lower", d, "-o", tmp_path / "out")
    assert r.code == 2, r.err
    assert words in r.err and str(d / "optimizer_model.onnx") in r.err
    assert r.err.count("\n") == 1 and "Traceback" not in r.err


def test_a_constant_update_signal_false_leaves_everything(exported: Path, tmp_path: Path) -> None:
    """update_signal as onnxruntime defines it: false -> no update, and the
    step is not counted; true -> as without it."""
    d = exported / "mlp_adamw"
    results = {}
    for value in (False, True):
        e = _copy(d, tmp_path / f"m{value}")

        def add_signal(m: onnx.ModelProto, value: bool = value) -> None:
            m.graph.initializer.append(
                onnx.numpy_helper.from_array(np.array([value]), name="update_signal")
            )
            m.graph.node[0].input.append("update_signal")

        _edit_opt(e, add_signal)
        m = import_model(e)
        s = TrainingSession(m.module, {**m.params, **m.opt_state})
        ref = _ref(d)
        results[value] = s.train(_data(d), 2, 1, ref["lr"], None)[1]
        assert s.state["step"].tolist() == [2 if value else 0]
        if not value:
            for k, v in m.params.items():
                np.testing.assert_array_equal(results[value][k], v, err_msg=k)
    plain = import_model(d)
    s = TrainingSession(plain.module, {**plain.params, **plain.opt_state})
    base = s.train(_data(d), 2, 1, _ref(d)["lr"], None)[1]
    for k in base:
        np.testing.assert_array_equal(results[True][k], base[k], err_msg=k)


# --------------------------------------------- the checkpoint's optimizer state


def _ort_module(d: Path, checkpoint: Path, lr: float):
    from onnxruntime.training.api import CheckpointState, Module, Optimizer

    state = CheckpointState.load_checkpoint(str(checkpoint))
    module = Module(str(d / "training_model.onnx"), state, str(d / "eval_model.onnx"))
    opt = Optimizer(str(d / "optimizer_model.onnx"), module)
    opt.set_learning_rate(lr)
    module.train()
    return state, module, opt


def test_training_resumes_from_a_checkpoint_with_optimizer_state(
    exported: Path, tmp_path: Path, fast_build: None
) -> None:
    """onnxruntime-training trains one step (2 mini-batches), saves its
    checkpoint with the optimizer state (step 1, the moments), and goes on
    for 2 steps; compiled from that checkpoint, deeploy-mlir's 2 steps give
    the same losses and parameters -- and would not with zero moments."""
    from onnxruntime.training.api import CheckpointState

    src = exported / "mlp_adamw"
    ref, data = _ref(src), _data(src)
    labels = next(k for k in data if k != "input")
    state, module, opt = _ort_module(src, src / "checkpoint", ref["lr"])
    losses = []
    for i in range(6):
        if i == 2:
            d = _copy(src, tmp_path / "resumed")
            CheckpointState.save_checkpoint(
                state, str(d / "checkpoint"), include_optimizer_state=True
            )
        losses.append(float(module(data["input"][i], data[labels][i])))
        if i % 2 == 1:
            opt.step()
            module.lazy_reset_grad()
    final = {k: np.array(state.parameters[k].data) for k in ref["params"]}
    np.savez(d / "data.npz", **{k: v[2:] for k, v in data.items()})
    resumed = {"steps": 2, "accum": 2, "lr": ref["lr"], "losses": losses[2:], "params": final}
    (d / "reference.json").write_text(
        json.dumps({**resumed, "params": {k: v.tolist() for k, v in final.items()}})
    )

    m = import_model(d)
    assert m.opt_state["step"].tolist() == [1]
    assert all(np.any(v) for k, v in m.opt_state.items())  # the saved moments
    got = _run(d, tmp_path)
    _assert_like_reference(got, _ref(d))

    # zero moments and count (the checkpoint's parameters alone) train otherwise
    fresh = TrainingSession(m.module, m.params)
    _, params = fresh.train(_data(d), 2, 2, ref["lr"], None)
    assert not all(np.allclose(params[k], final[k], **TOL) for k in final)
