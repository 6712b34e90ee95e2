"""Translation validation, shared by the tests: interpret a model's training
before a pipeline (it must train like the expected numbers) and after each
of its passes (it must give the numbers it gave before the first)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from deeploy_mlir.interp.interpreter import TrainingSession, loss_output_name
from deeploy_mlir.pipeline import make_context


def reference(d: Path) -> dict:
    return json.loads((d / "reference.json").read_text())


def train(module, params, d: Path, exp: dict | None = None) -> tuple[list[float], dict]:
    """The reference interpreter trains `module` from `params` on d/data.npz
    with the steps, accumulation and learning rate of `exp` (default
    d/reference.json): the losses and the parameters after training."""
    exp = reference(d) if exp is None else exp
    with np.load(d / "data.npz") as z:
        data = {k: z[k] for k in z.files}
    s = TrainingSession(module, params)
    return s.train(data, exp["steps"], exp["accum"], exp["lr"], loss_output_name(module))


def check_every_pass(
    module,
    params,
    d: Path,
    passes: Iterable[Any],
    *,
    exp: dict | None = None,
    want_params: Iterable[tuple[str, object]] | None = None,
    ref_atol: float = 1e-5,
    reshape: bool = False,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    after: Callable[[Any, Any], None] | None = None,
) -> None:
    """Before `passes`, the interpreted training of `module` gives the losses
    of `exp` (default d/reference.json; rtol 1e-4) and `want_params` (default
    exp's params; rtol 1e-4, `ref_atol`; `reshape`d to the wanted shape if
    asked). Then each pass in turn is applied, the module verifies, its loss
    output keeps its name, and training gives the losses and parameters of
    before the first pass to `rtol`/`atol`; `after(pass, module)` then checks
    what else the test wants to see after that pass."""
    exp = reference(d) if exp is None else exp
    loss_name = loss_output_name(module)
    losses0, state0 = train(module, params, d, exp)
    np.testing.assert_allclose(losses0, exp["losses"], rtol=1e-4)
    for k, want in exp["params"].items() if want_params is None else want_params:
        got = np.asarray(state0[k]).reshape(np.shape(want)) if reshape else state0[k]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=ref_atol, err_msg=k)
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
        module.verify()
        assert loss_output_name(module) == loss_name, p.name
        losses, state = train(module, params, d, exp)
        np.testing.assert_allclose(losses, losses0, rtol=rtol, err_msg=p.name)
        for k in state0:
            np.testing.assert_allclose(state[k], state0[k], rtol=rtol, atol=atol, err_msg=p.name)
        if after is not None:
            after(p, module)
