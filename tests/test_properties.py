"""Property tests: random MLP shapes and L2 budgets compile, and the emitted C
run on the host emulation equals the reference interpreter -- or the budget
is refused with the one-line error when the plan does not fit."""

from __future__ import annotations

import json

import numpy as np
import onnx
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx_builders import deeploy_mlp_layers

from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.interpreter import TrainingSession
from deeploy_mlir.pipeline import l2_pipeline, run_pipeline

shapes = st.tuples(
    st.integers(1, 9),  # batch
    st.lists(st.integers(1, 24), min_size=2, max_size=4),  # widths: input, hidden..., classes
    st.integers(0, 2**16),  # seed
    st.one_of(st.none(), st.integers(64, 8192)),  # L2 budget (None: the target's)
)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(shapes)
def test_random_mlps_match_the_interpreter(tmp_path_factory, case) -> None:
    batch, widths, seed, l2 = case
    widths[-1] = max(widths[-1], 2)  # at least two classes
    tmp = tmp_path_factory.mktemp("mlp")
    model, _ = deeploy_mlp_layers(batch, widths, seed=seed)
    onnx.save(model, tmp / "m.onnx")
    rng = np.random.default_rng(seed)
    steps = 2
    data = {
        "x": rng.standard_normal((steps, batch, widths[0])).astype(np.float32),
        "labels": rng.integers(0, widths[-1], (steps, batch)),
    }
    np.savez(tmp / "d.npz", **data)

    imported = import_model(tmp / "m.onnx")
    ref = TrainingSession(imported.module.clone(), imported.params)
    _, want = ref.train(data, steps, 1, 0.05)
    planned = imported.module.clone()
    run_pipeline(planned, l2_pipeline())
    arena = T.arena_bytes(planned, "L2")

    extra = ["--l2", str(l2)] if l2 is not None else []
    r = run_cli(
        "run",
        tmp / "m.onnx",
        "--data",
        tmp / "d.npz",
        "--steps",
        steps,
        "--json",
        tmp / "o.json",
        *extra,
    )
    spills = l2 is not None and arena > l2
    if spills and r.code == 2:
        # even with every persistent tensor in L3 the temporaries do not fit
        assert r.err.strip().startswith(
            f"deeploy-mlir: error: memory-home: the L2 budget of {l2} bytes is too small: "
            "with every tensor that can live in L3 there the L2 arena still needs "
        )
        return
    assert r.code == 0, r.err
    doc = json.loads((tmp / "o.json").read_text())
    if spills:  # the tensors that did not fit went through L3
        assert doc["dma"]["L3->L2"]["bytes"] > 0
    got = doc["params"]
    for name, value in want.items():
        np.testing.assert_allclose(np.array(got[name]), value, rtol=1e-4, atol=1e-5, err_msg=name)
