"""`lower` verifies the IR once after the pipeline unless --verify-each asks
for a verification after every pass: both give the same C, and a pass that
breaks the IR is reported either way (named with --verify-each)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import STACKS, example_dirs, run_cli
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32, i64
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.passes.training_inplace_alias import TrainingInplaceAlias
from deeploy_mlir.pipeline import run_pipeline

#: the broken pass is the last one, so that nothing after it trips on its IR
PIPELINE = (TrainingInplaceAlias(),)


def test_verify_each_gives_the_same_c(tmp_path: Path) -> None:
    d = example_dirs()[0]
    for flag in ("--verify-each", "--no-verify-each"):
        r = run_cli("lower", d, "-o", tmp_path / flag, "--l1", STACKS + 4096, flag)
        assert r.code == 0, r.err
    a, b = tmp_path / "--verify-each", tmp_path / "--no-verify-each"
    names = sorted(str(p.relative_to(a)) for p in a.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(b)) for p in b.rglob("*") if p.is_file())
    assert "TrainingNetwork.c" in names
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def _break_ir(module: ModuleOp) -> None:
    """An arith.constant whose result type is not its value's type."""
    fn = next(o for o in module.ops if isinstance(o, func.FuncOp))
    bad = arith.ConstantOp.create(properties={"value": IntegerAttr(1, i32)}, result_types=[i64])
    Rewriter.insert_op(bad, InsertPoint.at_start(fn.body.block))


@pytest.mark.parametrize("verify_each", [True, False])
def test_a_pass_that_breaks_the_ir_is_reported(
    verify_each: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = TrainingInplaceAlias.apply

    def broken(self, ctx, op: ModuleOp) -> None:
        original(self, ctx, op)
        _break_ir(op)

    monkeypatch.setattr(TrainingInplaceAlias, "apply", broken)
    module = import_model(example_dirs()[0], None).module.clone()
    with pytest.raises(DeeployError) as e:
        run_pipeline(module, PIPELINE, verify_each=verify_each)
    msg = str(e.value)
    if verify_each:
        assert msg.startswith("pass training-inplace-alias: the IR it produced does not verify")
    else:
        assert msg.startswith("the IR after the pipeline does not verify (rerun with --verify-each")
    assert "expected from variable 'T'" in msg
