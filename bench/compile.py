"""Compile time and peak memory of every shared Deeploy graph and bundled
example, untiled and tiled, and the ratio tiled / untiled (the baseline is
measured in the same run).

Each measurement is its own Python process, so that one compile's caches and
heap do not reach the next: the child imports the compiler, then times
`deeploy-mlir lower` from reading the ONNX file to the written C project
(import, the pass pipeline, the C emitter; no gcc), and reports its peak
resident set (getrusage ru_maxrss) and the resident set after the imports
(the part of the peak the compile itself adds is their difference).

    python bench/compile.py                       # every model, both configurations
    python bench/compile.py CCT2_FT1 --repeat 3   # models whose name contains CCT2_FT1
    python bench/compile.py --l1 64000 --buffering double

untiled: `--tiling untiled` (each op's whole tensors in L1; L1 = L2 budget so
that every model fits); tiled: Z3-chosen tiles at --l1 (default 128,000
bytes, single-buffered: the budget at which every shared graph compiles
today), both with --l2 1,024,000 bytes.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models" / "deeploy"
L2 = 1_024_000


def models() -> list[tuple[str, Path]]:
    out = [(d.name, d / "network.onnx") for d in sorted(SHARED.glob("*/")) if d.is_dir()]
    out += [
        (d.name, d)
        for d in sorted(p.parent for p in (ROOT / "examples").glob("*/training_model.onnx"))
    ]
    return out


def _preload(model: str) -> None:
    """Import what a compile imports lazily, so that the timer and the
    memory above the baseline count the compile only."""
    import z3  # noqa: F401

    from deeploy_mlir.emitters.c import template_env
    from deeploy_mlir.frontend import onnx_import  # noqa: F401
    from deeploy_mlir.pipeline import make_context
    from deeploy_mlir.universe import PASSES

    make_context()
    for load in PASSES.values():
        load()
    template_env()
    if Path(model).is_dir():  # an artifact's checkpoint is read through onnxruntime-training
        import onnxruntime.training.api  # noqa: F401


def child(model: str, options: list[str]) -> None:
    """Runs in the measuring process: one compile, one JSON line on stdout."""
    from deeploy_mlir.cli import main

    _preload(model)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        code = main(["lower", model, "-o", str(Path(tmp) / "out"), *options])
        seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"code": code, "seconds": seconds, "peak_kb": peak, "base_kb": base}))


def measure(model: Path, options: list[str], repeat: int) -> dict[str, float] | str:
    """The fastest of `repeat` child processes (and its memory), or the error."""
    best: dict[str, float] | None = None
    for _ in range(repeat):
        r = subprocess.run(
            [sys.executable, __file__, "--child", str(model), "--", *options],
            capture_output=True,
            text=True,
        )
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
        if r.returncode != 0 or not lines:
            err = (r.stderr.strip().splitlines() or ["failed"])[-1]
            return err.removeprefix("deeploy-mlir: error: ")
        doc = json.loads(lines[-1])
        if doc["code"] != 0:
            err = (r.stderr.strip().splitlines() or ["failed"])[-1]
            return err.removeprefix("deeploy-mlir: error: ")
        if best is None or doc["seconds"] < best["seconds"]:
            best = doc
    assert best is not None
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="only models whose name contains one of these")
    ap.add_argument("--l1", type=int, default=128_000, help="tiled L1 budget (default 128000)")
    ap.add_argument("--buffering", default="single", choices=("single", "double"))
    ap.add_argument("--repeat", type=int, default=1, help="processes per measurement (fastest)")
    if sys.argv[1:2] == ["--child"]:  # --child MODEL -- OPTIONS...
        child(sys.argv[2], sys.argv[4:])
        return
    args = ap.parse_args()
    configs = {
        "untiled": ["--tiling", "untiled", "--l1", str(L2), "--l2", str(L2)],
        "tiled": ["--l1", str(args.l1), "--l2", str(L2), "--buffering", args.buffering],
    }
    print(
        f"tiled: L1 {args.l1} B, {args.buffering} buffered; L2 {L2} B; times: lower (import, "
        "passes, C), fastest of "
        f"{args.repeat}; peak: ru_maxrss of the process, (+compile: above the imports)"
    )
    print(
        f"{'model':26} {'untiled s':>9} {'peak MB':>8} {'(+MB)':>6} {'tiled s':>8} "
        f"{'peak MB':>8} {'(+MB)':>6} {'time t/u':>8} {'mem t/u':>7}"
    )
    for name, path in models():
        if args.names and not any(n in name for n in args.names):
            continue
        res = {k: measure(path, opts, args.repeat) for k, opts in configs.items()}
        cells: list[str] = []
        for k in configs:
            r = res[k]
            if isinstance(r, str):
                cells.append(f"{'error':>9} {'':>8} {'':>6}")
            else:
                mb, extra = r["peak_kb"] / 1024, (r["peak_kb"] - r["base_kb"]) / 1024
                cells.append(f"{r['seconds']:>9.2f} {mb:>8.1f} {extra:>6.1f}")
        u, t = res["untiled"], res["tiled"]
        if isinstance(u, dict) and isinstance(t, dict):
            ratios = f"{t['seconds'] / u['seconds']:>8.2f} {t['peak_kb'] / u['peak_kb']:>7.2f}"
        else:
            ratios = f"{'-':>8} {'-':>7}"
        print(f"{name:26} {cells[0]} {cells[1]} {ratios}")
        for k in configs:
            if isinstance(res[k], str):
                print(f"    {k}: {res[k]}")


if __name__ == "__main__":
    main()
