"""Every example's emitted C, built with -fsanitize=address,undefined (and
-fno-sanitize-recover, so any finding aborts), trains cleanly; the numbers
are those of the normal build. The MLP examples run with their default
options; the models of examples/make_models.py run tiled at a small L1 (conftest.model_l1),
double buffered, so that the DMA rings, ragged tiles and every conv, pool
and transformer kernel run under the sanitizers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    example_dirs,
    load_expected,
    model_dirs,
    model_l1,
    run_cli,
    training_args,
)
from host_run import lower_and_run

from deeploy_mlir.cli import parse_run_output

EXAMPLES = example_dirs()
MODELS = model_dirs()
SAN = "-std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all"


def _has_sanitizers(tmp: Path) -> bool:
    src = tmp / "t.c"
    src.write_text("int main(void) { return 0; }\n")
    r = subprocess.run(["gcc", *SAN.split(), str(src), "-o", str(tmp / "t")], capture_output=True)
    return r.returncode == 0


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_example_is_sanitizer_clean(d: Path, tmp_path: Path) -> None:
    assert _has_sanitizers(tmp_path), "gcc cannot build with ASan/UBSan here"
    exp = load_expected(d)
    proj = tmp_path / "proj"
    r = run_cli("lower", d, "-o", proj, *training_args(d))
    assert r.code == 0, r.err
    outs, _ = parse_run_output(_sanitized_run(proj))
    (losses,) = outs.values()
    np.testing.assert_allclose([v[0] for v in losses], exp["losses"], rtol=1e-4)


def _sanitized_run(proj: Path) -> str:
    subprocess.run(
        ["make", "-s", "-C", str(proj), "host", f"CFLAGS={SAN}"], check=True, capture_output=True
    )
    run = subprocess.run(
        [str(proj / "build" / "host" / "network")],
        capture_output=True,
        text=True,
        env={"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "runtime error" not in run.stderr and "AddressSanitizer" not in run.stderr
    return run.stdout


@pytest.mark.parametrize("d", MODELS, ids=[d.name for d in MODELS])
def test_model_is_sanitizer_clean_tiled(d: Path, tmp_path: Path) -> None:
    import json

    ref = json.loads((d / "reference.json").read_text())
    args = [*training_args(d), "--l1", str(model_l1(d)), "--buffering", "double"]
    # the runtime is compiled with the sanitizers once per session (its
    # kernels are most of the build), the generated C per model
    r = lower_and_run(d, tmp_path / "proj", *map(str, args), sanitize=True)
    (losses,) = r.outs.values()
    np.testing.assert_allclose(losses[:, 0], ref["losses"], rtol=1e-4)
