"""Every case of the bad-input corpus (tests/bad_inputs/corpus.py) through the
real CLI (deeploy-mlir, or deeploy-opt for its cases): exit code 2, exactly
its one-line error on stderr, nothing on stdout, no Python traceback, and no
output directory left behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "bad_inputs"))
from corpus import CASES


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 150
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_bad_input(c, tmp_path: Path) -> None:
    d = tmp_path
    c.write(d)
    argv = [a.replace("{d}", str(d)) for a in c.argv]
    r = subprocess.run(
        [sys.executable, "-m", c.tool, *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    want = c.error.replace("{d}", str(d))
    if not want.startswith(("deeploy-mlir", "deeploy-opt")):
        want = f"deeploy-mlir: error: {want}"
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.splitlines() == [want]
    assert r.stdout == ""
    assert not (d / "out").exists()
    assert not any(p.name.startswith(".out") for p in d.iterdir())
