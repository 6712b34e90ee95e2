"""Deterministic compilation (issue 17): the same model and options give the
same bytes whatever the machine's load. Z3's searches are bounded by its
resource limit (a count of solver steps), never by a wall-clock time; a search
stopped at the limit stops at the same point every time and is reported; the
IR holds no timing."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from conftest import EXAMPLES, STACKS, run_cli

from deeploy_mlir.memory.planner import Buffer, check_no_overlap, plan_exact, plan_greedy
from deeploy_mlir.tiling.model import CostModel, Operand, footprint
from deeploy_mlir.tiling.search import solve_z3

CCT = EXAMPLES / "cct"
CLI = [sys.executable, "-m", "deeploy_mlir.cli"]


@contextlib.contextmanager
def cpu_hogs() -> Iterator[None]:
    """One busy-looping process per core, for the duration of the block."""
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait()


def lower_twice(tmp: Path, *opts: str) -> list[tuple[dict[str, bytes], str]]:
    """Two `lower` runs of CCT with a 2 KiB L1 arena, side by side under CPU hogs:
    each run's files (project and --emit-ir) and its stderr."""
    procs = []
    with cpu_hogs():
        for i in (0, 1):
            out = tmp / f"p{i}"
            cmd = [*CLI, "lower", str(CCT), "-o", str(out), "--l1", str(STACKS + 2048)]
            cmd += ["--emit-ir", str(tmp / f"ir{i}.mlir"), *opts]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        done = [p.communicate() for p in procs]
    runs = []
    for i, (p, (_, err)) in enumerate(zip(procs, done, strict=True)):
        assert p.returncode == 0, err.decode()
        out = tmp / f"p{i}"
        files = {
            f.relative_to(out).as_posix(): f.read_bytes() for f in out.rglob("*") if f.is_file()
        }
        files["ir.mlir"] = (tmp / f"ir{i}.mlir").read_bytes()
        runs.append((files, err.decode()))
    return runs


def notes(stderr: str) -> list[str]:
    prefix = "note: tile-select: stopped before proving the optimum for "
    return [ln[len(prefix) :] for ln in stderr.splitlines() if ln.startswith(prefix)]


def test_cct_is_byte_identical_under_load(tmp_path: Path) -> None:
    """Every search finishes within the default limit, loaded or not: the
    two projects (and IRs) are the same bytes, and no op stopped early."""
    (a, err_a), (b, err_b) = lower_twice(tmp_path)
    assert "TrainingNetwork.c" in a and "manifest.json" in a
    assert sorted(a) == sorted(b)
    assert [f for f in a if a[f] != b[f]] == []
    assert notes(err_a) == notes(err_b) == []
    man = json.loads(a["manifest.json"])
    assert man["tiling"] == {"stopped_early": 0, "stopped_early_ops": []}
    assert b"solver_ms" not in a["ir.mlir"]


def test_searches_stopped_by_the_limit_stop_at_the_same_point(tmp_path: Path) -> None:
    """A resource limit low enough to stop searches early (the examples'
    solves need up to ~5,000 steps): still the same bytes in both runs, and
    each stopped op is a note on stderr and an entry of the manifest."""
    (a, err_a), (b, err_b) = lower_twice(tmp_path, "--rlimit", "3000")
    assert [f for f in a if a.get(f) != b.get(f)] == [] and sorted(a) == sorted(b)
    man = json.loads(a["manifest.json"])
    stopped = man["tiling"]["stopped_early_ops"]
    assert stopped and man["tiling"]["stopped_early"] == len(stopped)
    assert {s["reason"] for s in stopped} == {"rlimit 3000"}
    assert all(s["op"].startswith("training.") and " at @" in s["op"] for s in stopped)
    assert notes(err_a) == notes(err_b) == [f"{s['op']} (rlimit 3000)" for s in stopped]


def test_ir_has_no_timing_and_is_the_same_twice(tmp_path: Path) -> None:
    """deeploy-opt's output, tile-select and arena-plan exact both stopped by
    their limits, is the same in two processes, and holds no timing."""
    from deeploy_mlir.frontend.onnx_import import import_model

    src = tmp_path / "mlp.mlir"
    src.write_text(str(import_model(EXAMPLES / "mlp_small").module) + "\n")
    pipe = (
        "training-inplace-alias,training-bufferize{level=L2},"
        "tile-select{l1=1024 solver=z3 rlimit=200},"
        "tiling-materialize,arena-plan{level=L2 strategy=exact rlimit=1000},"
        "arena-plan{level=L1 strategy=exact rlimit=1000}"
    )
    outs = []
    for _ in (0, 1):
        r = subprocess.run(
            [sys.executable, "-m", "deeploy_mlir.opt", str(src), "-p", pipe],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    assert "solver_ms" not in outs[0]
    assert '"rlimit 200"' in outs[0]  # a stop recorded in tiling.stopped_early


def test_rlimit_stops_are_the_same_whatever_was_solved_before() -> None:
    """Each solve has its own Z3 context: a solve stopped by the limit gives
    the same answer first in the process, after other solves, and again.
    Gemm (M, N, K) = (40, 30, 20), K whole, 4-byte operands."""
    gemm = [
        Operand((0, 2), 4, True, False),
        Operand((1, 2), 4, True, False),
        Operand((0, 1), 4, False, True),
    ]
    model = CostModel(100, 8)
    dims = [40, 30, 20]

    def solve(rlimit: int) -> tuple[list[int], str]:
        return solve_z3(dims, {2}, gemm, 3000, model, rlimit)

    low = [solve(300)]
    for n in (10, 20, 30):  # other problems in between
        solve_z3([n, n, 4], {2}, gemm, 800, model, 0)
    low += [solve(300), solve(300)]
    assert low[0] == low[1] == low[2]
    assert low[0][1] == "rlimit 300"
    assert footprint(low[0][0], gemm, 1) <= 3000
    tiles, why = solve(0)  # no limit: proven
    assert why == "" and footprint(tiles, gemm, 1) <= 3000


def test_exact_plan_stopped_by_the_limit_is_greedy_and_unproven() -> None:
    """arena-plan's exact search, stopped by its limit before any plan,
    keeps the greedy plan (valid, not proven); with room it proves the
    optimum (the example of test_memory: greedy 32, bound and optimum 28)."""
    bufs = [
        Buffer("p", 16, 5, 7),
        Buffer("q", 12, 1, 4),
        Buffer("r", 8, 2, 3),
        Buffer("s", 8, 2, 3),
        Buffer("t", 12, 0, 2),
        Buffer("u", 4, 5, 8),
    ]
    g_off, g = plan_greedy(bufs)
    stopped = [plan_exact(bufs, rlimit=10) for _ in range(3)]
    assert all(s == (g_off, g, False) for s in stopped)
    off, size, proven = plan_exact(bufs)
    assert (size, proven) == (28, True) and check_no_overlap(bufs, off) == []


def test_report_times_tile_select_outside_the_ir(tmp_path: Path) -> None:
    r = run_cli("report", EXAMPLES / "mlp_small", "--json", "--l1", str(STACKS + 2048))
    assert r.code == 0, r.err
    tiling = json.loads(r.out)["tiling"]
    assert isinstance(tiling["solver_ms"], int) and tiling["solver_ms"] >= 0
    assert tiling["stopped_early"] == 0


def test_rlimit_with_a_pass_pipeline_is_refused(tmp_path: Path) -> None:
    r = run_cli(
        "lower",
        EXAMPLES / "mlp_small",
        "-o",
        tmp_path / "p",
        "--rlimit",
        "10",
        "--pass-pipeline",
        "training-bufferize{level=L2},arena-plan{level=L2}",
    )
    assert r.code == 2 and r.err.count("\n") == 1 and "--rlimit" in r.err
    assert not (tmp_path / "p").exists()
