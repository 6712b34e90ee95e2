"""minimal-l1's search (deeploy_mlir/cli/report.py): it jumps to the bytes an
op's smallest tiles need (L1BudgetError.needs, a bound below which nothing
compiles) instead of bisecting from the L2 budget, and gives the bisection's
answer: the smallest multiple of 4 that compiles. Checked against a brute
force on monotone toy problems, and on a real model through the CLI: the
budget it prints compiles, 4 bytes less does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

from deeploy_mlir.cli.report import _smallest_budget
from deeploy_mlir.errors import DeeployError, L1BudgetError


def _toy(minimum: int, bound: int | None, top: int = 1 << 21):
    """Compiles from `minimum` on; below it, an L1BudgetError needing `bound`
    bytes (a true lower bound: at most `minimum`) when the budget is below
    `bound`, else a plain error (an arena over its budget)."""
    tried: list[int] = []

    def fails(b: int) -> DeeployError | None:
        tried.append(b)
        if b >= minimum:
            return None
        if bound is not None and b < bound:
            return L1BudgetError(f"needs {bound}", bound)
        return DeeployError("the L1 arena is over its budget")

    return fails, tried


@pytest.mark.parametrize("minimum", [1, 4, 5, 8, 331, 332, 333, 4096, 9999, 150001])
@pytest.mark.parametrize("slack", [None, 0, 1, 3, 4, 100])
def test_search_finds_the_smallest_multiple_of_4(minimum: int, slack: int | None) -> None:
    bound = None if slack is None else max(1, minimum - slack)
    fails, tried = _toy(minimum, bound)
    got, why = _smallest_budget(fails, 1 << 21)
    want = (minimum + 3) // 4 * 4  # the brute force: the first multiple of 4 that compiles
    assert (got, why) == (want, None)
    assert len(tried) < 45
    if slack == 0:  # the op's bound is the answer: one failure and one compile
        assert len(tried) <= 2


def test_search_reports_why_nothing_fits() -> None:
    fails, _ = _toy(1 << 30, 100)
    got, why = _smallest_budget(fails, 1 << 21)
    assert got is None and why == "the L1 arena is over its budget"


def test_minimal_l1_budget_compiles_and_four_bytes_less_does_not(tmp_path: Path) -> None:
    d = EXAMPLES / "ds_cnn"
    r = run_cli("minimal-l1", d, "--json")
    assert r.code == 0, r.err
    got = json.loads(r.out)
    for tiling, b in got.items():
        opts = ("--tiling", tiling, "--buffering", "double", "-q")
        ok = run_cli("lower", d, "-o", tmp_path / f"{tiling}-ok", *opts, "--l1", b)
        assert ok.code == 0, ok.err
        short = run_cli("lower", d, "-o", tmp_path / f"{tiling}-short", *opts, "--l1", b - 4)
        assert short.code == 2 and "L1" in short.err, short.err
