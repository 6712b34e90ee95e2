"""Snapshot what the compiler produces, to show a refactoring changes nothing.

    python scripts/snapshot.py OUT_DIR [-j N] [--only SUBSTRING]

For every example model and Deeploy's published training graphs, under a set
of configurations (untiled / tiled, single / double buffering, small and
default L1 budgets, L3 homes, regimes, gap9), it writes into OUT_DIR/<config>/:
the IR after the pipeline (`ir.mlir`), the generated C project (`project/`)
and `report.json` (the cycle model's figures). Compare two snapshots with
`diff -r A B` (the report's timings are left out, so equal inputs give equal
files). A configuration that fails records its one-line error in `error.txt`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "models" / "deeploy"
EXAMPLES = sorted(
    p.name for p in (ROOT / "examples").iterdir() if (p / "training_model.onnx").exists()
)


#: (name, model, options)
def configs() -> list[tuple[str, Path, list[str]]]:
    out: list[tuple[str, Path, list[str]]] = []
    for ex in EXAMPLES:
        model = ROOT / "examples" / ex
        out += [
            (f"{ex}-none", model, ["--tiling", "none"]),
            (f"{ex}-untiled", model, ["--tiling", "untiled", "--l1", "1000000"]),
            (f"{ex}-tiled-double", model, []),
            (f"{ex}-tiled-single-8k", model, ["--l1", "16384", "--buffering", "single"]),
            (
                f"{ex}-tiled-double-l3",
                model,
                ["--l1", "32768", "--home", "L3", "--buffering", "double-l3"],
            ),
            (f"{ex}-regime-auto", model, ["--regime", "auto"]),
            (f"{ex}-gap9", model, ["--target", "gap9"]),
        ]
    for name, opts in [
        ("CCT2_FT1", ["--l1", "64000", "--home", "L3"]),
        ("CCT2_FT1", ["--l1", "128000"]),
        ("CCT2_LP", ["--l1", "64000"]),
        ("Transformer_Train", ["--l1", "128000", "--home", "L3"]),
    ]:
        model = SHARED / name / "network.onnx"
        if model.exists():
            out.append((f"{name}-{'_'.join(o.lstrip('-') for o in opts)}", model, opts))
    for single in sorted(SHARED.glob("*/network.onnx")):
        out.append((f"{single.parent.name}-default", single, []))
    return out


def run_one(out: Path, name: str, model: Path, opts: list[str]) -> str:
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cli = [sys.executable, "-m", "deeploy_mlir.cli"]
    lower = subprocess.run(
        [
            *cli,
            "lower",
            str(model),
            *opts,
            "-q",
            "-o",
            str(d / "project"),
            "--force",
            "--emit-ir",
            str(d / "ir.mlir"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if lower.returncode != 0:
        (d / "error.txt").write_text(lower.stderr)
        return f"{name}: lower failed"
    report = subprocess.run(
        [*cli, "report", str(model), *opts, "-q", "--json"], capture_output=True, text=True, env=env
    )
    if report.returncode != 0:
        (d / "report-error.txt").write_text(report.stderr)
        return f"{name}: report failed"
    data = json.loads(report.stdout)
    (d / "report.json").write_text(json.dumps(_untimed(data), indent=1, sort_keys=True) + "\n")
    return f"{name}: ok"


def _untimed(x: object) -> object:
    if isinstance(x, dict):
        return {k: _untimed(v) for k, v in x.items() if "ms" not in k and "seconds" not in k}
    if isinstance(x, list):
        return [_untimed(v) for v in x]
    return x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    todo = [c for c in configs() if a.only in c[0]]
    with ThreadPoolExecutor(a.j) as pool:
        for line in pool.map(lambda c: run_one(a.out, *c), todo):
            print(line, flush=True)


if __name__ == "__main__":
    main()
