"""Every example's emitted C, built with -fsanitize=address,undefined (and
-fno-sanitize-recover, so any finding aborts), trains cleanly; the numbers
are those of the normal build."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import example_dirs, load_expected, run_cli, training_args

from deeploy_mlir.cli import parse_run_output

EXAMPLES = example_dirs()
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
    r = run_cli(
        "lower",
        d,
        "-o",
        proj,
        *training_args(d),
    )
    assert r.code == 0, r.err
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
    outs, _ = parse_run_output(run.stdout)
    (losses,) = outs.values()
    np.testing.assert_allclose([v[0] for v in losses], exp["losses"], rtol=1e-4)
