"""Interpreting the IR before and after each pass of the default pipeline gives
the same numbers, on every example; and the interpreter agrees with
onnxruntime-training's expected values. The arena-planned IR is interpreted
with real shared storage (numpy views into one byte array), so a wrong plan or
a wrong in-place decision changes the numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import example_dirs, load_expected

from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.interpreter import TrainingSession, loss_output_name
from deeploy_mlir.pipeline import DEFAULT_PIPELINE, make_context, parse_pipeline

EXAMPLES = example_dirs()


def _train(module, params, d: Path, exp: dict) -> tuple[list[float], dict[str, np.ndarray]]:
    with np.load(d / "data.npz") as z:
        data = {k: z[k] for k in z.files}
    loss = loss_output_name(module) or ""
    s = TrainingSession(module, params)
    return s.train(data, exp["steps"], exp["accum"], exp["lr"], loss)


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_every_pass_preserves_the_numbers(d: Path) -> None:
    exp = load_expected(d)
    model = import_model(d)
    module = model.module
    loss_name = loss_output_name(module)
    ref_losses, ref_params = _train(module, model.params, d, exp)
    np.testing.assert_allclose(ref_losses, exp["losses"], rtol=1e-4)
    for name, want in exp["params"].items():
        np.testing.assert_allclose(ref_params[name], np.array(want), rtol=1e-4, atol=1e-6)
    ctx = make_context()
    for p in parse_pipeline(DEFAULT_PIPELINE).passes:
        p.apply(ctx, module)
        module.verify()
        assert loss_output_name(module) == loss_name
        losses, params = _train(module, model.params, d, exp)
        assert losses == ref_losses, p.name
        for name in ref_params:
            np.testing.assert_array_equal(params[name], ref_params[name], err_msg=p.name)


def test_a_corrupted_plan_changes_the_numbers() -> None:
    """The check above can fail: put two live buffers at one offset and the
    interpreted numbers change."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from deeploy_mlir.dialects.training import ArenaViewOp

    d = EXAMPLES[0]
    exp = load_expected(d)
    model = import_model(d)
    module = model.module
    ctx = make_context()
    for p in parse_pipeline(DEFAULT_PIPELINE).passes:
        p.apply(ctx, module)
    good, _ = _train(module, model.params, d, exp)
    views = [op for op in module.walk() if isinstance(op, ArenaViewOp)]
    offsets = sorted({v.offset.value.data for v in views})
    assert len(offsets) >= 2
    for v in views:  # every temporary at the same offset
        v.offset = IntegerAttr(offsets[0], i64)
    bad, _ = _train(module, model.params, d, exp)
    assert not np.allclose(bad, good, rtol=1e-4)
