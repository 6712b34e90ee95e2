"""BatchNorm1d / BatchNorm2d in training mode (issue 20): com.microsoft
BatchNormInternal and BatchNormalizationGrad, end to end.

- The zoo's mlp_batchnorm1d and cnn_batchnorm2d, exported by
  onnxruntime-training (examples/zoo.py), train like onnxruntime-training
  (reference.json, rtol 1e-4) with `deeploy-mlir run` on the host: untiled,
  and tiled double-buffered at the model's minimal L1.
- Their running mean and variance are state of the training step, updated
  by every mini-batch's forward pass and written back: `run --json` reports
  them as `running_stats`, the manifest as kind `running_stat`. The expected
  values are derived without deeploy-mlir: the BatchNorm layers' inputs of
  the same training replayed in torch, fed mini-batch by mini-batch to
  onnxruntime's own BatchNormInternal kernel (and to the formula in numpy).
  onnxruntime-training itself never writes them back (they are initializers
  of its training graph and the node's running outputs are no graph
  outputs), so reference.json has none; onnxruntime's kernel uses the
  biased variance for the running variance, torch's BatchNorm the unbiased.
- The reference semantics against onnxruntime's kernels on their own, and
  the numbers through every pass of the default and a tiled pipeline
  (translation validation)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_cli
from onnx import TensorProto
from onnx import helper as oh
from validation import check_every_pass, reference, train

from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.attrs import func_named
from deeploy_mlir.pipeline import l2_pipeline, pipeline

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("mlp_batchnorm1d", "cnn_batchnorm2d")
#: zoo.py's run_status tolerance against reference.json
RTOL, ATOL = 1e-4, 1e-5


def _zoo():  # examples/zoo.py imports torch and onnxruntime-training
    sys.path.insert(0, str(ROOT / "examples"))
    import zoo

    return zoo


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo-bn")
    assert _zoo().main([str(out), "--only", ",".join(MODELS)]) == 0
    return out


# --------------------------------------------------------------------------
# The expected running statistics, without deeploy-mlir
# --------------------------------------------------------------------------


def _ort_batchnorm_session(shape: tuple[int, ...]):
    """onnxruntime's com.microsoft BatchNormInternal (training_mode 1, the
    zoo's epsilon and momentum) on X of `shape`, the running statistics fed."""
    import onnxruntime as ort

    c = shape[1]
    ins = [oh.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))]
    ins += [oh.make_tensor_value_info(n, TensorProto.FLOAT, [c]) for n in ("s", "b", "m", "v")]
    outs = [oh.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "rm", "rv")]
    node = oh.make_node(
        "BatchNormInternal",
        ["x", "s", "b", "m", "v"],
        ["y", "rm", "rv", "sm", "sis"],
        domain="com.microsoft",
        epsilon=1e-5,
        momentum=0.9,
        training_mode=1,
    )
    graph = oh.make_graph([node], "bn", ins, outs)
    opsets = [oh.make_opsetid("", 17), oh.make_opsetid("com.microsoft", 1)]
    model = oh.make_model(graph, opset_imports=opsets)
    model.ir_version = 9
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="session")
def expected_stats(exported: Path) -> dict[str, dict[str, np.ndarray]]:
    """Per model, the running statistics after the 3 x 2 mini-batches: the
    same training replayed in torch (zoo.torch_train, which matches
    reference.json) with each BatchNorm layer's input captured, and those
    inputs fed in order to onnxruntime's BatchNormInternal, the running
    statistics carried from one mini-batch to the next."""
    import torch

    zoo = _zoo()
    by_name = {m.name: m for m in zoo.zoo()}
    out: dict[str, dict[str, np.ndarray]] = {}
    for name in MODELS:
        m = by_name[name]
        net, params = zoo.build(m)
        with np.load(exported / name / "data.npz") as z:
            data = {k: z[k] for k in z.files}
        seen: dict[str, list[np.ndarray]] = {}
        bns = {
            k: mod
            for k, mod in net.named_modules()
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm)
        }
        for k, mod in bns.items():
            mod.register_forward_pre_hook(
                lambda _m, args, k=k, seen=seen: seen.setdefault(k, []).append(
                    args[0].detach().numpy().copy()
                )
            )
        zoo.torch_train(m, net, params, data)
        # the start: the initializers of training_model.onnx (torch's export
        # ran the model once in training mode: its buffers moved from 0 and 1)
        g = onnx.load(str(exported / name / "training_model.onnx")).graph
        inits = {t.name: onnx.numpy_helper.to_array(t) for t in g.initializer}
        stats: dict[str, np.ndarray] = {}
        for k, mod in bns.items():
            xs = seen[k]
            assert len(xs) == zoo.STEPS * zoo.ACCUM  # one forward per mini-batch
            c = xs[0].shape[1]
            sess = _ort_batchnorm_session(xs[0].shape)
            rm0, rv = inits[f"{k}.running_mean"], inits[f"{k}.running_var"]
            assert not np.allclose(rm0, 0.0)
            rm = rm0
            np_m, np_v = rm0.astype(np.float64), rv.astype(np.float64)
            ones, zeros = np.ones(c, np.float32), np.zeros(c, np.float32)
            for x in xs:
                _, rm, rv = sess.run(None, {"x": x, "s": ones, "b": zeros, "m": rm, "v": rv})
                axes = tuple(d for d in range(x.ndim) if d != 1)
                np_m = 0.9 * np_m + 0.1 * x.astype(np.float64).mean(axes)
                np_v = 0.9 * np_v + 0.1 * x.astype(np.float64).var(axes)  # biased
            # onnxruntime's kernel is the formula, with the biased variance
            np.testing.assert_allclose(rm, np_m, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(rv, np_v, rtol=1e-5, atol=1e-7)
            # torch (momentum 0.1 = onnxruntime's 0.9), from its fresh 0, agrees
            # on the mean but for the start's share 0.9^6; its running variance
            # is the unbiased one, which onnxruntime's is not
            tm = mod.running_mean.detach().numpy()  # type: ignore[union-attr]
            tv = mod.running_var.detach().numpy()  # type: ignore[union-attr]
            np.testing.assert_allclose(tm + 0.9**6 * rm0, rm, rtol=1e-5, atol=1e-6)
            assert not np.allclose(tv, rv, rtol=1e-3)
            stats[f"{k}.running_mean"], stats[f"{k}.running_var"] = rm, rv
        out[name] = stats
    return out


def test_onnxruntime_training_does_not_write_the_running_statistics_back(
    exported: Path,
) -> None:
    """What onnxruntime-training does with them: initializers of the training
    graph, no graph inputs, their new values no graph outputs and read by no
    node, and not in the checkpoint's parameters (reference.json's params)."""
    for name in MODELS:
        g = onnx.load(str(exported / name / "training_model.onnx")).graph
        nodes = [n for n in g.node if n.op_type == "BatchNormInternal"]
        assert nodes
        inits = {t.name for t in g.initializer}
        outputs = {o.name for o in g.output}
        read = {i for n in g.node for i in n.input}
        ref = json.loads((exported / name / "reference.json").read_text())
        for n in nodes:
            assert set(n.input[3:5]) <= inits
            assert not set(n.input[3:5]) & {i.name for i in g.input}
            assert not set(n.output[1:3]) & (outputs | read)
            assert not set(n.input[3:5]) & set(ref["params"])


# --------------------------------------------------------------------------
# Host runs: untiled and tiled double-buffered at the minimal L1
# --------------------------------------------------------------------------


def _run(d: Path, tmp: Path, *options: str) -> dict:
    ref = json.loads((d / "reference.json").read_text())
    out = tmp / "out.json"
    keep = tmp / "project"
    r = run_cli(
        "run", d, "--data", d / "data.npz", "--steps", str(ref["steps"]), "--accum",
        str(ref["accum"]), "--lr", str(ref["lr"]), "--json", out, "--keep", keep, "-q",
        *options,
    )  # fmt: skip
    assert r.code == 0, r.err
    got = json.loads(out.read_text())
    got["manifest"] = json.loads((keep / "manifest.json").read_text())
    return got


def _check(got: dict, d: Path, stats: dict[str, np.ndarray]) -> None:
    ref = json.loads((d / "reference.json").read_text())
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=RTOL)
    assert sorted(got["params"]) == sorted(ref["params"])
    for k, want in ref["params"].items():
        np.testing.assert_allclose(got["params"][k], want, rtol=RTOL, atol=ATOL, err_msg=k)
    assert sorted(got["running_stats"]) == sorted(stats)
    for k, want in stats.items():
        np.testing.assert_allclose(got["running_stats"][k], want, rtol=RTOL, atol=ATOL, err_msg=k)
    # they moved: not the initial zeros and ones
    for k, v in got["running_stats"].items():
        assert not np.allclose(v, 0.0 if k.endswith("mean") else 1.0), k
    kinds = {b["name"]: b["kind"] for b in got["manifest"]["buffers"]}
    assert all(kinds[k] == "running_stat" for k in stats)


@pytest.mark.parametrize("name", MODELS)
def test_untiled_on_host(
    name: str, exported: Path, expected_stats: dict, tmp_path: Path, fast_build: None
) -> None:
    d = exported / name
    _check(_run(d, tmp_path, "--tiling", "untiled"), d, expected_stats[name])


@pytest.mark.parametrize("name", MODELS)
def test_tiled_double_at_minimal_l1_on_host(
    name: str, exported: Path, expected_stats: dict, tmp_path: Path, fast_build: None
) -> None:
    d = exported / name
    r = run_cli("minimal-l1", d, "--buffering", "double", "--json")
    assert r.code == 0, r.err
    l1 = json.loads(r.out)["tiled"]
    got = _run(d, tmp_path, "--l1", str(l1), "--buffering", "double")
    _check(got, d, expected_stats[name])
    if name == "cnn_batchnorm2d":
        # the batch norm's channels are tiled (C = 4 in tiles of fewer)
        src = (tmp_path / "project" / "TrainingNetwork.c").read_text()
        calls = src.split("dm_batchnorm_args_t args = {")[1:]
        assert calls and all(".C = 4u" not in c.split("}")[0] for c in calls)


# --------------------------------------------------------------------------
# The pieces
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("which", ["l2", "tiled-double", "home-l3"])
def test_every_pass_preserves_the_numbers(
    name: str, which: str, exported: Path, expected_stats: dict
) -> None:
    """Translation validation: the interpreter on the imported IR trains like
    reference.json with the expected running statistics, and after each pass
    of the untiled L2 pipeline, a tiled double-buffered one (2 KiB of L1: the
    batch norms tile their channels) or one with every tensor in L3 gives the
    same numbers."""
    d = exported / name
    model = import_model(d)
    module = model.module
    ref = reference(d)
    configs = {
        "tiled-double": CompileConfig(l1=2048, target="pulp-open", buffering="double"),
        # every tensor (the running statistics too) in L3, staged through L2
        "home-l3": CompileConfig(l1=2048, target="gap9", buffering="single", l2=1000, home="L3"),
    }
    passes = l2_pipeline() if which == "l2" else pipeline(configs[which])
    want = [*ref["params"].items(), *expected_stats[name].items()]
    check_every_pass(module, model.params, d, passes, exp=ref, want_params=want, ref_atol=ATOL)
    if which == "home-l3":
        fn = func_named(module, "training_step")
        stats = [a for i, a in enumerate(fn.args) if T.arg_info(fn, i).kind == "running_stat"]
        assert stats and all(T.memory_level(a.type) == "L3" for a in stats)
    if which != "l2" and name == "cnn_batchnorm2d":
        # the batch norms run on channel tiles (X [2, 4, 6, 6] in tiles of fewer channels)
        bn = [o for o in module.walk() if isinstance(o, T.BatchNormOp | T.BatchNormGradOp)]
        assert bn and all(T.shape_of(o.ins[o.X_IN].type)[1] < 4 for o in bn)


def _ort_grad_session(shape: tuple[int, ...]):
    import onnxruntime as ort

    c = shape[1]
    ins = [oh.make_tensor_value_info(n, TensorProto.FLOAT, list(shape)) for n in ("dy", "x")]
    ins += [oh.make_tensor_value_info(n, TensorProto.FLOAT, [c]) for n in ("s", "m", "i")]
    outs = [oh.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("dx", "ds", "db")]
    node = oh.make_node(
        "BatchNormalizationGrad",
        ["dy", "x", "s", "m", "i"],
        ["dx", "ds", "db"],
        domain="com.microsoft",
        epsilon=1e-5,
    )
    graph = oh.make_graph([node], "bng", ins, outs)
    opsets = [oh.make_opsetid("", 17), oh.make_opsetid("com.microsoft", 1)]
    model = oh.make_model(graph, opset_imports=opsets)
    model.ir_version = 9
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("shape", [(4, 16), (2, 3, 5, 5), (3, 2, 7)])
def test_reference_semantics_are_onnxruntimes(shape: tuple[int, ...]) -> None:
    """interp/families/batchnorm.py against onnxruntime's BatchNormInternal
    and BatchNormalizationGrad kernels on random data, ranks 2, 3 and 4."""
    from xdsl.dialects.builtin import FloatAttr, TensorType, f32

    from deeploy_mlir.interp.families.batchnorm import batch_norm, batch_norm_grad

    rng = np.random.default_rng(7)
    c = shape[1]
    x = rng.standard_normal(shape).astype(np.float32) * 2 + 0.5
    s, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    m, v = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5
    dy = rng.standard_normal(shape).astype(np.float32)
    xt, ct = TensorType(f32, list(shape)), TensorType(f32, [c])
    fwd = T.BatchNormOp(
        [_arg(xt), *[_arg(ct) for _ in range(4)]],
        [xt, ct, ct, ct, ct],
        properties={"momentum": FloatAttr(0.9, f32)},
    )
    want = _ort_batchnorm_session(shape).run(None, {"x": x, "s": s, "b": b, "m": m, "v": v})
    got = batch_norm(fwd, [x, s, b, m, v])
    for g, w in zip(got[:3], want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    grad = T.BatchNormGradOp([_arg(xt), _arg(xt), *[_arg(ct) for _ in range(3)]], [xt, ct, ct])
    sm, sis = got[3], got[4]
    want = _ort_grad_session(shape).run(None, {"dy": dy, "x": x, "s": s, "m": sm, "i": sis})
    for g, w in zip(batch_norm_grad(grad, [dy, x, s, sm, sis]), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _arg(t):
    from xdsl.ir import Block

    return Block(arg_types=[t]).args[0]


def test_running_statistics_start_from_params(exported: Path, tmp_path: Path) -> None:
    """--params may give the running statistics' initial values (checkpoints
    of onnxruntime-training hold none): the running mean after the 6 updates
    of momentum 0.9 moves by 0.9^6 times the change of its start (the
    training itself, which does not read them, unchanged)."""
    d = exported / "mlp_batchnorm1d"
    base = import_model(d)
    start = dict(np.load(d / "params.npz"))
    start["1.0.running_mean"] = np.full(16, 2.0, np.float32)
    np.savez(tmp_path / "p.npz", **start)
    moved = import_model(d, tmp_path / "p.npz")
    _, s0 = train(base.module, base.params, d)
    _, s1 = train(moved.module, moved.params, d)
    change = 2.0 - base.params["1.0.running_mean"]
    np.testing.assert_allclose(
        s1["1.0.running_mean"] - s0["1.0.running_mean"], change * 0.9**6, rtol=1e-4
    )
    np.testing.assert_array_equal(s1["1.0.running_var"], s0["1.0.running_var"])
    assert moved.running_stats == ["1.0.running_mean", "1.0.running_var"]


def test_inference_mode_is_refused(exported: Path, tmp_path: Path) -> None:
    """BatchNormInternal with training_mode 0: a one-line error naming the node."""
    src = exported / "mlp_batchnorm1d"
    d = tmp_path / "m"
    d.mkdir()
    for f in ("optimizer_model.onnx", "checkpoint", "data.npz"):
        (d / f).write_bytes((src / f).read_bytes())
    model = onnx.load(str(src / "training_model.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "BatchNormInternal")
    next(a for a in node.attribute if a.name == "training_mode").i = 0
    onnx.save(model, str(d / "training_model.onnx"))
    with pytest.raises(DeeployError, match=r"BatchNormInternal.*only training_mode 1"):
        import_model(d)
    r = run_cli("lower", d, "-o", tmp_path / "out")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert "training_mode" in r.err and not (tmp_path / "out").exists()


def test_cost_model_family_and_calls(exported: Path) -> None:
    from deeploy_mlir.cost.kernels import kernel_family, op_calls, op_macs

    module = import_model(exported / "cnn_batchnorm2d").module
    ops = [o for o in module.walk() if isinstance(o, T.BatchNormOp | T.BatchNormGradOp)]
    assert len(ops) == 2
    for op in ops:
        assert kernel_family(op) == "reduce"
        assert op_calls(op) == 2
        assert op_macs(op) == 2 * 4 * 6 * 6  # one per element of X [2, 4, 6, 6]
