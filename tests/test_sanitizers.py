"""Every example's emitted C, built with -fsanitize=address,undefined (and
-fno-sanitize-recover, so any finding aborts), trains cleanly; the numbers
are those of the normal build. The MLP examples run with their default
options; the models of examples/make_models.py run one optimizer step tiled
at a small L1 (conftest.model_l1), double buffered, so that the DMA rings,
ragged tiles and every conv, pool and transformer kernel run under the
sanitizers. The runtime is built with the sanitizers once per session
(host_run), each project's generated C on its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    STACKS,
    example_dirs,
    load_expected,
    model_dirs,
    model_l1,
    training_args,
)
from host_run import lower_and_run

EXAMPLES = example_dirs()
MODELS = model_dirs()
SAN = (
    "-std=gnu11 -ffp-contract=off -O1 -g -Wall -Wextra -Werror "
    "-fsanitize=address,undefined -fno-sanitize-recover=all"
)


def _has_sanitizers(tmp: Path) -> bool:
    src = tmp / "t.c"
    src.write_text("int main(void) { return 0; }\n")
    r = subprocess.run(["gcc", *SAN.split(), str(src), "-o", str(tmp / "t")], capture_output=True)
    return r.returncode == 0


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_example_is_sanitizer_clean(d: Path, tmp_path: Path) -> None:
    assert _has_sanitizers(tmp_path), "gcc cannot build with ASan/UBSan here"
    exp = load_expected(d)
    r = lower_and_run(d, tmp_path / "proj", *map(str, training_args(d)), sanitize=True)
    (losses,) = r.outs.values()
    np.testing.assert_allclose(losses[:, 0], exp["losses"], rtol=1e-4)


@pytest.mark.parametrize("d", MODELS, ids=[d.name for d in MODELS])
def test_model_is_sanitizer_clean_tiled(d: Path, tmp_path: Path) -> None:
    import json

    ref = json.loads((d / "reference.json").read_text())
    # one optimizer step (its mini-batches, forward, backward and the
    # update) runs every kernel and copy of the schedule; the sanitized
    # build is slow, so the later steps are left to the normal builds
    args = [*training_args(d), "--l1", str(STACKS + model_l1(d)), "--buffering", "double"]
    args[args.index("--steps") + 1] = "1"
    # the runtime is compiled with the sanitizers once per session (its
    # kernels are most of the build), the generated C per model
    r = lower_and_run(d, tmp_path / "proj", *map(str, args), sanitize=True)
    (losses,) = r.outs.values()
    n = len(losses)
    assert n == ref["accum"]
    np.testing.assert_allclose(losses[:, 0], ref["losses"][:n], rtol=1e-4)
