"""Reshape, Flatten, Squeeze and Unsqueeze as views (issue 20).

A reshape whose result may share its input's storage becomes a
`training.view` (no copy, no L1 tile, no kernel call); one that needs a copy
(its result is returned) becomes a `training.copy` of a view, which tiles over
every dim. The small CNNs of examples/zoo.py train like onnxruntime-training
untiled and tiled double-buffered at their minimal L1, on the host; the
arena-planned IR, interpreted with real shared storage, gives the numbers of
the unplanned IR, and a plan that ignores a view's reads does not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, STACKS, assert_like_expected, run_cli, stacks_of, training_args
from xdsl.dialects.builtin import ModuleOp

from deeploy_mlir.config import CompileConfig as C
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.interpreter import TrainingSession, loss_output_name
from deeploy_mlir.memory.buffers import nbytes, step_functions
from deeploy_mlir.pipeline import l2_pipeline, make_context, pipeline, run_pipeline

sys.path.insert(0, str(ROOT / "examples"))
import zoo

#: the small CNNs: Flatten after global average pooling (ds_cnn, cnn_gap),
#: after 2x2 pooling (cnn_maxpool, cnn_avgpool), and x.reshape(b, -1) (cnn_reshape)
CNNS = ("ds_cnn", "cnn_gap", "cnn_maxpool", "cnn_avgpool", "cnn_reshape")


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo-views")
    assert zoo.main([str(out), "--only", ",".join(CNNS)]) == 0
    return out


def _train(module: ModuleOp, params: dict, d: Path) -> tuple[list[float], dict]:
    ref = json.loads((d / "reference.json").read_text())
    with np.load(d / "data.npz") as z:
        data = {k: z[k] for k in z.files}
    s = TrainingSession(module, params)
    return s.train(data, ref["steps"], ref["accum"], ref["lr"], loss_output_name(module) or "")


def _ops(module: ModuleOp, cls: type) -> list:
    return [o for o in module.walk() if isinstance(o, cls)]


# --------------------------------------------------------------------------
# the models: views, numbers, minimal L1
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", CNNS)
def test_reshapes_are_views_without_tiles_or_kernels(zoo_dir: Path, name: str) -> None:
    """Every reshape of the model (the forward Flatten/Reshape and its
    gradient's Reshape) is a view after the default tiled pipeline: no
    training.reshape, no copy, no L1 buffer and no kernel call of its own."""
    from deeploy_mlir.passes.kernel_select import select_kernels

    model = import_model(zoo_dir / name)
    module = model.module
    n_reshapes = len(_ops(module, T.ReshapeOp))
    assert n_reshapes >= 2  # the Flatten and the gradient's Reshape
    run_pipeline(module, pipeline(C(l1=4096, buffering="double")))
    assert not _ops(module, T.ReshapeOp)
    assert not _ops(module, T.CopyOp)
    views = _ops(module, T.ViewOp)
    assert len(views) == n_reshapes
    for v in views:
        assert T.memory_level(v.result.type) == "L2"
        # what the view is read by works on the view's storage, not a copy
        assert all(not isinstance(u.operation, T.CopyOp) for u in v.result.uses)
    probe = module.clone()
    for fn in step_functions(probe):
        select_kernels(fn)
    kernels = {o.kernel for o in probe.walk() if o.name == "kernel.call"}  # type: ignore[attr-defined]
    assert "dm_copy_fp32" not in kernels


@pytest.mark.parametrize("name", CNNS)
def test_trains_like_onnxruntime_untiled_and_at_minimal_l1(
    zoo_dir: Path, name: str, tmp_path: Path, fast_build: None
) -> None:
    d = zoo_dir / name
    ref = json.loads((d / "reference.json").read_text())
    out = tmp_path / "untiled.json"
    r = run_cli("run", d, *training_args(d), "--tiling", "untiled", "--l1", "1000000",
                "-q", "--json", out)  # fmt: skip
    assert r.code == 0, r.err
    assert_like_expected(json.loads(out.read_text()), ref)
    r = run_cli("minimal-l1", d, "--buffering", "double", "--json")
    assert r.code == 0, r.err
    l1 = json.loads(r.out)["tiled"]
    out = tmp_path / "tiled.json"
    r = run_cli("run", d, *training_args(d), "--l1", str(l1), "--buffering", "double",
                "-q", "--json", out)  # fmt: skip
    assert r.code == 0, r.err
    assert_like_expected(json.loads(out.read_text()), ref)
    # the smallest L1 arena is below the largest activation of the
    # training step (the output of a compute op, from the graph's shapes)
    model = import_model(d)
    fn = step_functions(model.module)[0]
    largest = max(
        nbytes(r.type) for o in fn.walk() if isinstance(o, T.TrainingComputeOp) for r in o.results
    )
    assert l1 - stacks_of(d) < largest, (l1 - stacks_of(d), largest)


def test_cnn_reshape_minimal_l1_is_no_longer_set_by_the_gemm(zoo_dir: Path) -> None:
    """cnn_reshape's Linear(144, 4) used to keep its reduction dim K = 144
    whole (a row of A and of W, 576 bytes each, per buffer: 2 x (576 + 576 +
    4 + 4) bytes double-buffered set the minimal L1). Its K now tiles, so the
    minimal L1 arena is below that, and 4 bytes under it the op that does
    not fit is neither the gemm nor the reshape (a view)."""
    d = zoo_dir / "cnn_reshape"
    r = run_cli("minimal-l1", d, "--buffering", "double", "--json")
    assert r.code == 0, r.err
    l1 = json.loads(r.out)["tiled"]
    assert l1 - stacks_of(d) < 2 * (576 + 576 + 4 + 4)
    # the arena's budget is searched in multiples of 4: the next one down fails
    # (one byte less may not: accumulate-fuse's conv2d_grad needs 306 bytes)
    r = run_cli("lower", d, "-o", d / "out", "--l1", str(l1 - 4), "--buffering", "double")
    assert r.code == 2
    assert "needs at least" in r.err
    assert "(training.gemm)" not in r.err and "reshape" not in r.err


@pytest.mark.parametrize(("name", "l1"), [("ds_cnn", 1024), ("cnn_reshape", 1024)])
def test_every_pass_preserves_the_numbers(zoo_dir: Path, name: str, l1: int) -> None:
    """Translation validation: interpreted before and after each pass of the
    L2 pipeline and of a tiled double-buffered one (a small L1 arena: many
    tiles; cnn_reshape's gemm, 2,320 bytes with K whole, tiles K), the
    numbers stay those of the unplanned IR (views over real arena storage)."""
    d = zoo_dir / name
    model = import_model(d)
    ref_losses, ref_params = _train(model.module, model.params, d)
    for passes in (l2_pipeline(), pipeline(C(l1=l1, buffering="double"))):
        module = import_model(d).module
        ctx = make_context()
        for p in passes:
            p.apply(ctx, module)
            module.verify()
            losses, params = _train(module, model.params, d)
            # tiles split a gemm's sums differently from one whole matmul (as
            # in test_translation_validation): fp32 rounding, not bit for bit
            np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=p.name)
            for k in ref_params:
                np.testing.assert_allclose(
                    params[k], ref_params[k], rtol=1e-5, atol=1e-7, err_msg=p.name
                )
        assert _ops(module, T.ViewOp)


def test_a_plan_that_ignores_a_views_reads_changes_the_numbers(
    zoo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: when arena-plan ends a buffer's life at the
    view op instead of the view's last read, other buffers overwrite the
    storage the view still names, and the interpreted numbers change."""
    d = zoo_dir / "ds_cnn"
    model = import_model(d)
    module = model.module
    run_pipeline(module, l2_pipeline())
    good, _ = _train(module, model.params, d)
    monkeypatch.setattr(T, "uses_through_views", lambda v: iter(list(v.uses)))
    module = import_model(d).module
    run_pipeline(module, l2_pipeline())
    bad, _ = _train(module, model.params, d)
    assert not np.allclose(bad, good, rtol=1e-4)


# --------------------------------------------------------------------------
# a reshape that needs a copy tiles
# --------------------------------------------------------------------------

COPY = """
func.func @training_step(%x: tensor<2x4x3x3xf32> {training.arg = #training.arg<input "x">})
    -> (tensor<2x36xf32> {training.result = #training.result<"flat">}) {
  %y = training.relu ins(%x : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %f = training.reshape ins(%y : tensor<2x4x3x3xf32>) -> tensor<2x36xf32>
  func.return %f : tensor<2x36xf32>
}
"""


def test_a_reshape_that_needs_a_copy_tiles_over_every_dim() -> None:
    """The Flatten's result is returned: it lives in its output argument, so
    it is a copy. The copy reads a view of the ReLU's output under [2, 36]
    and tiles like any elementwise op: double-buffered in a 256-byte L1 arena,
    less than its 288-byte output (as a reshape it kept the 36 merged
    elements whole: 2 x (144 + 144) bytes at the least). Its numbers are
    the reshape's."""
    from xdsl.parser import Parser

    ctx = make_context()
    module = Parser(ctx, COPY).parse_module()
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 3)).astype(np.float32)
    want = np.maximum(x, 0).reshape(2, 36)
    passes = pipeline(C(l1=256, buffering="double"))
    cut = next(i for i, p in enumerate(passes) if p.name == "tiling-materialize")
    for p in passes[:cut]:
        p.apply(ctx, module)
    tiled = [o for o in _ops(module, TiledOp) if isinstance(o.body.block.first_op, T.CopyOp)]
    assert len(tiled) == 1
    copy = tiled[0].body.block.first_op
    assert isinstance(copy, T.CopyOp) and isinstance(copy.ins[0].owner, T.ViewOp)
    tiles = [int(t) for t in tiled[0].tiles.get_values()]
    assert tiles[1] < 36  # the merged dim tiles too
    for p in passes[cut:]:
        p.apply(ctx, module)
    module.verify()
    out = TrainingSession(module, {}).call("training_step", {"x": x})
    np.testing.assert_array_equal(out["flat"], want)


def test_views_in_l3_keep_the_numbers(zoo_dir: Path, tmp_path: Path, fast_build: None) -> None:
    """Views move to L3 with their sources: every tensor in L3 staged through
    4 KiB of L2 in tiles, and the whole-tensor spill of memory-regime;
    the final IR interprets to the unplanned IR's numbers, and the emitted C
    (a view of an L3 tensor is its L3 address) trains like onnxruntime."""
    d = zoo_dir / "ds_cnn"
    model = import_model(d)
    ref_losses, ref_params = _train(model.module, model.params, d)
    for cfg in (
        C(l1=2048, target="gap9", buffering="double-l3", l2=4096, home="L3"),
        C(tiling="none", regime="spill"),
    ):
        module = import_model(d).module
        run_pipeline(module, pipeline(cfg))
        views = _ops(module, T.ViewOp)
        assert views and all(T.memory_level(v.result.type) == "L3" for v in views)
        losses, params = _train(module, model.params, d)
        np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
        for k in ref_params:
            np.testing.assert_allclose(params[k], ref_params[k], rtol=1e-5, atol=1e-7)
    out = tmp_path / "l3.json"
    r = run_cli("run", d, *training_args(d), "--home", "L3", "--l1", str(STACKS + 2048),
                "--buffering", "double-l3", "-q", "--json", out)  # fmt: skip
    assert r.code == 0, r.err
    assert_like_expected(
        json.loads(out.read_text()), json.loads((d / "reference.json").read_text())
    )
