"""examples/zoo.py (issue 20): a handful of its fast models exported by
onnxruntime-training, their artifacts well-formed, their reference numbers
sound, independently of deeploy-mlir: finite, equal to the same training
in torch (float32 autograd, our own AdamW of onnxruntime's formulas), the
training loss lower after the 3 steps than before, frozen parameters
untouched; and the coverage table's parts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import ort_reference as ort  # noqa: E402
import zoo  # noqa: E402

FAST = (
    "mlp_sgd",
    "mlp_adamw_wd",
    "mlp_tanh",
    "mlp_dropout",
    "mlp_batchnorm1d",
    "loss_l1",
    "loss_bce_logits",
    "inside_ce_ignored",
    "embedding_mean",
    "frozen_first",
)
MODELS = {m.name: m for m in zoo.zoo()}
ARTIFACTS = ("training_model.onnx", "eval_model.onnx", "optimizer_model.onnx", "checkpoint")


def test_the_zoo_is_big_enough_and_well_named() -> None:
    ms = zoo.zoo()
    assert len(ms) >= 40
    names = [m.name for m in ms]
    assert len(set(names)) == len(names)
    assert all(n.isidentifier() and n.islower() for n in names)
    assert len({m.seed for m in ms}) == len(ms)  # every model its own data
    # the list is in it
    for want in ("adamw", "sigmoid", "tanh", "leaky_relu", "relu6", "hardtanh", "dropout",
                 "batchnorm1d", "batchnorm2d", "ce_ignore", "l1", "bce", "nll", "smooth",
                 "token_mean", "mha", "embedding", "encoder", "gru", "lstm", "frozen",
                 "bias_only", "ds_cnn", "reshape"):  # fmt: skip
        assert any(want in n for n in names), want


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo")
    assert zoo.main([str(out), "--only", ",".join(FAST)]) == 0
    return out


def _torch_loss(m: zoo.Model, net, data: dict, i: int) -> float:
    import torch

    x = torch.from_numpy(data["input"][i].copy())
    y = torch.from_numpy(data[m.targets][i].copy())
    with torch.no_grad():
        out = net(x, y) if m.loss == "inside" else net(x)
        return float(zoo.torch_loss(m, out, y))


@pytest.mark.parametrize("name", FAST)
def test_artifacts_and_reference_are_well_formed(exported: Path, name: str) -> None:
    m = MODELS[name]
    d = exported / name
    for f in (*ARTIFACTS, "data.npz", "params.npz", "reference.json"):
        assert (d / f).exists(), f
    for f in ARTIFACTS[:3]:
        onnx.checker.check_model(onnx.load(str(d / f)))
    data = dict(np.load(d / "data.npz"))
    params = dict(np.load(d / "params.npz"))
    ref = json.loads((d / "reference.json").read_text())
    n = zoo.STEPS * zoo.ACCUM
    assert set(data) == {"input", m.targets}
    # the training graph's user inputs are the data's arrays, one mini-batch each
    inputs = dict(ort.user_inputs(d, params))
    assert list(inputs) == ["input", m.targets]
    for k, shape in inputs.items():
        assert data[k].shape == (n, *shape), k
    assert data["input"].dtype == (np.int64 if m.vocab else np.float32)
    if m.targets == "labels":
        assert data["labels"].dtype == np.int64
        valid = data["labels"][data["labels"] != zoo.IGNORE]
        assert valid.size and valid.min() >= 0 and valid.max() < m.classes
        assert (zoo.IGNORE in data["labels"]) == (m.ignore or m.loss == "ce_ignore")
    # the reference
    assert (ref["steps"], ref["accum"], ref["lr"]) == (zoo.STEPS, zoo.ACCUM, m.lr)
    losses = np.array(ref["losses"])
    assert losses.shape == (n,) and np.isfinite(losses).all() and (losses > 0).all()
    final = {k: np.array(v, np.float32) for k, v in ref["params"].items()}
    assert set(final) == set(params)
    for k, v in final.items():
        assert v.shape == params[k].shape and np.isfinite(v).all(), k
        if m.trainable(k):
            assert not np.array_equal(v, params[k]), f"{k} did not train"
        else:
            assert np.array_equal(v, params[k]), f"frozen {k} moved"
    assert set(ref.get("frozen", [])) == {k for k in params if not m.trainable(k)}


@pytest.mark.parametrize("name", [n for n in FAST if MODELS[n].xcheck])
def test_reference_is_the_torch_training(exported: Path, name: str) -> None:
    """onnxruntime-training's numbers again equal torch's, recomputed here."""
    m = MODELS[name]
    d = exported / name
    data = dict(np.load(d / "data.npz"))
    params = dict(np.load(d / "params.npz"))
    ref = json.loads((d / "reference.json").read_text())
    net, _ = zoo.build(m)
    losses, final = zoo.torch_train(m, net, params, data)
    tol = zoo.XCHECK_TOL if m.xcheck == "strict" else zoo.LOOSE_TOL
    np.testing.assert_allclose(ref["losses"], losses, **tol)
    for k, v in final.items():
        np.testing.assert_allclose(np.array(ref["params"][k], np.float32), v, **tol, err_msg=k)


@pytest.mark.parametrize("name", [n for n in FAST if MODELS[n].xcheck])
def test_training_lowers_the_training_loss(exported: Path, name: str) -> None:
    """The mean loss over the 6 mini-batches, evaluated in torch with the
    reference's final parameters, is below the one with the initial ones."""
    import torch

    m = MODELS[name]
    d = exported / name
    data = dict(np.load(d / "data.npz"))
    params = dict(np.load(d / "params.npz"))
    ref = json.loads((d / "reference.json").read_text())
    net, _ = zoo.build(m)
    net.train()
    before, after = [], []
    for ps, into in ((params, before), (ref["params"], after)):
        with torch.no_grad():
            for k, p in net.named_parameters():
                p.copy_(torch.tensor(np.asarray(ps[k], np.float32)))
        into.extend(_torch_loss(m, net, data, i) for i in range(zoo.STEPS * zoo.ACCUM))
    assert np.mean(after) < np.mean(before), (before, after)


def test_dropout_reference_is_not_the_identity(exported: Path) -> None:
    """With p = 0.25 the reference differs from the same model evaluated
    without dropout (its masks are real), yet stays finite."""
    m = MODELS["mlp_dropout"]
    d = exported / m.name
    data = dict(np.load(d / "data.npz"))
    ref = json.loads((d / "reference.json").read_text())
    net, _ = zoo.build(m)
    net.eval()  # dropout off
    first = _torch_loss(m, net, data, 0)
    assert np.isfinite(ref["losses"]).all()
    assert abs(first - ref["losses"][0]) > 1e-4


def test_export_is_deterministic(tmp_path: Path, exported: Path) -> None:
    zoo.write_model(MODELS["mlp_sgd"], tmp_path / "again")
    for f in ("training_model.onnx", "optimizer_model.onnx", "reference.json", "data.npz"):
        assert (tmp_path / "again" / f).read_bytes() == (exported / "mlp_sgd" / f).read_bytes(), f


def test_coverage_table(exported: Path) -> None:
    models = [MODELS["mlp_sgd"], MODELS["mlp_tanh"]]
    table = zoo.coverage(exported, models, jobs=2)
    rows = {r.split(" | ")[0].lstrip("| "): r for r in table.splitlines() if r.startswith("| ")}
    assert "ms:InPlaceAccumulatorV2" in rows["mlp_sgd"] and "ms:SGDOptimizerV2" in rows["mlp_sgd"]
    assert "Tanh" in rows["mlp_tanh"] and "ms:TanhGrad" in rows["mlp_tanh"]
    # the baseline lowers; the other is "ok" or an error naming one of its ops
    assert rows["mlp_sgd"].rstrip(" |").endswith("ok")
    status = rows["mlp_tanh"].rstrip(" |").rsplit(" | ", 1)[1]
    assert status == "ok" or zoo.refused_ops(status) <= set(
        zoo.ops_of(exported / "mlp_tanh" / "training_model.onnx")
    ) | {"ms:TanhGrad"}
    assert str(exported) not in table  # no machine path in the table
    assert f"of {len(models)} models lower today" in table


def test_coverage_run_column_trains_the_baseline(exported: Path) -> None:
    """--run: the baseline MLP, which lowers, trains on the host emulation like
    its reference (deeploy-mlir run against reference.json)."""
    table = zoo.coverage(exported, [MODELS["mlp_sgd"]], jobs=1, run=True)
    (row,) = [r for r in table.splitlines() if r.startswith("| mlp_sgd ")]
    assert row.rstrip(" |").rsplit(" | ", 1)[1].startswith("matches"), row
    assert "1 of them train like onnxruntime-training" in table


def test_refused_ops_parses_the_importers_message() -> None:
    msg = ("x/training_model.onnx: unsupported ONNX ops: Abs (nodes: /Abs); Sign "
           "(nodes: a, b); com.microsoft:SigmoidGrad (nodes: /S_Grad/SigmoidGrad_0)")  # fmt: skip
    assert zoo.refused_ops(msg) == {"Abs", "Sign", "ms:SigmoidGrad"}
    assert zoo.refused_ops("ok") == set()
    two = (
        "d/training_model.onnx: unsupported ONNX ops: Tanh (nodes: /T); ms:X (nodes: a); "
        "d/optimizer_model.onnx: unsupported ONNX ops: com.microsoft:AdamWOptimizer (nodes: o)"
    )
    assert zoo.refused_ops(two) == {"Tanh", "ms:X", "ms:AdamWOptimizer"}


def test_coverage_run_in_parallel_tells_matches_from_differs(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--coverage --no-export --run -j 2` on two models that lower, one with
    its reference.json perturbed (one loss 1e-3 relative off, ten times the
    tolerance): that one DIFFERS, the other matches, and the count says 1."""
    import shutil

    out = tmp_path / "zoo"
    for n in ("mlp_sgd", "frozen_first"):
        shutil.copytree(exported / n, out / n)
    path = out / "mlp_sgd" / "reference.json"
    ref = json.loads(path.read_text())
    ref["losses"][3] *= 1.001
    path.write_text(json.dumps(ref))
    argv = [str(out), "--only", "mlp_sgd,frozen_first", "--coverage", "--no-export", "--run"]
    assert zoo.main([*argv, "-j", "2"]) == 0
    table = capsys.readouterr().out
    cell = {
        r.split(" | ")[0].lstrip("| "): r.rstrip(" |").rsplit(" | ", 1)[1]
        for r in table.splitlines()
        if r.startswith("| ") and " | ok | " in r
    }
    assert cell["mlp_sgd"].startswith("DIFFERS"), table
    assert cell["frozen_first"].startswith("matches"), table
    assert "2 of 2 models lower today" in table
    assert "1 of them train like onnxruntime-training" in table
