"""bench/kernels.py's drivers compile without a warning against the current
runtime headers (RV32, -Wall -Wextra -Werror): a kernel's argument struct that
gains a field breaks the benchmark here, not the first time someone measures.
The drivers are only compiled (QEMU runs them in the benchmark itself)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import kernels as bench  # noqa: E402

CASES = bench.all_cases()


@pytest.mark.skipif(shutil.which(bench.RV32_CC) is None, reason="scripts/install-toolchain.sh")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_driver_compiles_cleanly(case: bench.Case, tmp_path: Path) -> None:
    src = tmp_path / "drv.c"
    src.write_text(bench.driver_source(case))
    inc = [f"-I{bench.RT / 'include'}", f"-I{bench.RT / 'host'}"]
    flags = [*bench.RV32_COMPILE, "-DNUM_CORES=1", "-Wall", "-Wextra", "-Werror"]
    r = subprocess.run(
        [bench.RV32_CC, *flags, *inc, "-fsyntax-only", str(src)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def test_every_family_has_cases() -> None:
    assert {c.family for c in CASES} == {"gemm", "conv", "pool"}
