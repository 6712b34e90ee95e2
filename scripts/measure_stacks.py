"""Measure the stack figures of deeploy_mlir/targets/stacks.py and print them.

    python scripts/measure_stacks.py [--sdk PULP_SDK] [--kernels] [--check | --write]

Compiles runtime_c/kernels, the step functions and harness of every example
(tiled at a small L1, untiled, and with every tensor in L3) and PULPOS'
minimal libc against pulp-sdk's siracusa headers with Debian's
riscv64-unknown-elf-gcc (-fstack-usage -fcallgraph-info=su, RV32IMF ilp32f,
-O2 and -O3) and prints deeploy_mlir/targets/stack_table.py's KERNEL_PATHS
(each kernel entry's deepest path) and stacks.py's STEP_FRAME, HARNESS_PATH
and TRAIN_FRAME, the largest of both levels, with what sets each.

--kernels measures KERNEL_PATHS only (runtime_c/kernels: ~15 s of CPU; the
examples' projects take minutes). --check compares the figures with the
files and exits 1 when one is below its measurement or a kernel is missing
(the stacks could overflow); an entry above its measurement is listed as a
note (L1 that could be given back). --write rewrites the files with the
measurement: stack_table.py's entries (each with the level that measured
it) and, without --kernels, stacks.py's three constants (each with what sets
it). After a change to runtime_c's kernels:

    python scripts/measure_stacks.py --kernels --write   # then review the diff
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deeploy_mlir.targets import stacks  # noqa: E402
from deeploy_mlir.targets.pulp_sdk import SdkFlags, pulp_sdk_root  # noqa: E402
from deeploy_mlir.targets.stack_table import KERNEL_PATHS  # noqa: E402

TABLE = ROOT / "deeploy_mlir" / "targets" / "stack_table.py"
STACKS = ROOT / "deeploy_mlir" / "targets" / "stacks.py"
#: lower options of the projects measured (each with --data of the example):
#: tiled with a 2,048-byte arena (several tiles per op; "ARENA2048": --l1 is
#: that plus the example's own stacks), untiled, all in L3
VARIANTS = (
    ["--l1", "ARENA2048"],
    ["--tiling", "untiled", "--l1", "10000000"],
    ["--home", "L3"],
)
#: stacks.py's constant of each project figure (stacks.step_and_harness)
CONSTANTS = {"STEP": "STEP_FRAME", "HARNESS": "HARNESS_PATH", "TRAIN": "TRAIN_FRAME"}


def variant(ex: Path, opts: list[str]) -> list[str]:
    """`opts` for example `ex`, ARENA2048 made an --l1 figure."""
    if "ARENA2048" not in opts:
        return opts
    from deeploy_mlir.frontend.onnx_import import import_model

    l1 = stacks.stack_reservation(kernels=stacks.program_kernels(import_model(ex).module)) + 2048
    return [str(l1) if o == "ARENA2048" else o for o in opts]


def project_figures(sdk: Path, overlay: Path, tmp: Path) -> dict[str, tuple[int, str]] | None:
    """STEP: a step function's path without the kernels it forks (the PULPOS
    DMA and fork code inlined in it or called); HARNESS: dm_train's path
    without the step functions (its printf: PULPOS' libc); TRAIN: dm_train's
    own frame. The largest over the examples and VARIANTS, with the project
    that sets each; None when a lower fails (said on stderr)."""
    worst = {k: (0, "") for k in CONSTANTS}
    examples = {p.parent for p in (ROOT / "examples").glob("*/expected.json")}
    examples |= {p.parent for p in (ROOT / "examples").glob("*/reference.json")}
    for ex in sorted(examples):
        for i, opts in enumerate(VARIANTS):
            proj = tmp / f"{ex.name}_{i}"
            opts = variant(ex, opts)
            cmd = [sys.executable, "-m", "deeploy_mlir.cli", "lower", str(ex), "-o", str(proj)]
            r = subprocess.run(
                [*cmd, "--data", str(ex / "data.npz"), *opts],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            if r.returncode != 0:
                print(f"error: {ex.name} {opts}: {r.stderr.strip()}", file=sys.stderr)
                return None
            for k, v in stacks.step_and_harness(sdk, overlay, proj, stacks.OPTS).items():
                if v > worst[k][0]:
                    worst[k] = (v, f"{ex.name} {' '.join(opts)}")
    return worst


def check(kernels: dict[str, tuple[int, str]], figures: dict[str, tuple[int, str]]) -> int:
    """Print what is below its measurement (exit 1) and what is above (notes)."""
    bad = stacks.table_shortfalls(kernels, KERNEL_PATHS)
    for k, (p, _) in sorted(kernels.items()):
        if KERNEL_PATHS.get(k, p) > p:
            print(f"note: {k}: table {KERNEL_PATHS[k]} B > measured {p} B (--write gives it back)")
    for k, (v, where) in figures.items():
        have = getattr(stacks, CONSTANTS[k])
        if have < v:
            bad.append(f"{CONSTANTS[k]}: stacks.py {have} B < measured {v} B ({where})")
        elif have > v:
            print(f"note: {CONSTANTS[k]}: stacks.py {have} B > measured {v} B ({where})")
    for line in bad:
        print(f"error: {line}", file=sys.stderr)
    print("below the measurement: " + (f"{len(bad)} figure(s)" if bad else "none"))
    return 1 if bad else 0


def write(kernels: dict[str, tuple[int, str]], figures: dict[str, tuple[int, str]]) -> None:
    TABLE.write_text(stacks.rewrite_kernel_table(TABLE.read_text(), kernels))
    print(f"wrote {TABLE.relative_to(ROOT)}")
    if figures:
        text = STACKS.read_text()
        for k, (v, where) in figures.items():
            line = re.compile(rf"^{CONSTANTS[k]} = \d+  # .*$", re.M)
            text, n = line.subn(f"{CONSTANTS[k]} = {v}  # {where}", text)
            if n != 1:
                raise SystemExit(f"error: {STACKS.name}: no `{CONSTANTS[k]} = N  # ...` line")
        STACKS.write_text(text)
        print(f"wrote {STACKS.relative_to(ROOT)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sdk", type=Path, default=pulp_sdk_root(ROOT))
    ap.add_argument("--kernels", action="store_true", help="KERNEL_PATHS only (fast)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument(
        "--check", action="store_true", help="exit 1 when a figure is below its measurement"
    )
    mode.add_argument("--write", action="store_true", help="write the measurement into the files")
    args = ap.parse_args()
    if args.sdk is None:
        print("error: pulp-sdk not found (../shared/sdk/pulp-sdk or --sdk)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        overlay = SdkFlags(args.sdk).write_overlay(Path(d) / "overlay")
        graphs = stacks.kernel_graphs(args.sdk, overlay, ROOT / "runtime_c")
        kernels = stacks.measured_kernel_paths(graphs)
        figures: dict[str, tuple[int, str]] = {}
        if not args.kernels:
            got = project_figures(args.sdk, overlay, Path(d))
            if got is None:
                return 1
            figures = got
    if args.check:
        return check(kernels, figures)
    if args.write:
        write(kernels, figures)
        return 0
    print("KERNEL_PATHS: dict[str, int] = {")
    print(stacks.kernel_table_lines(kernels), end="")
    print("}")
    for k, (v, where) in figures.items():
        print(f"{CONSTANTS[k]} = {v}  # {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
