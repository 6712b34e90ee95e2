"""Wall time and peak memory of `deeploy-mlir lower` per graph and mode, and
of start-up alone.

Every measurement is a fresh process of the real command line
(`python -m deeploy_mlir.cli ...`): the wall time from its start to its exit
(imports included) and its peak resident set (the child's ru_maxrss, from
wait4), the median of --repeat runs; `cpu s` is its user + system CPU
time (on a loaded machine, closer to what the wall time is on an idle one).
The compile alone (reading the ONNX file to the written C project, imports
excluded) is measured in another process that imports everything first
(`compile s`). The processes share the user's cache directory
(deeploy_mlir/cache.py: ONNX's schema attribute types, the compiled
templates), filled by the first compile after an install; `--goals` also
reports that first compile, with an empty cache.

    python bench/compile.py                        # every model, every mode
    python bench/compile.py CCT2_FT1 --repeat 5    # models whose name contains CCT2_FT1
    python bench/compile.py --startup              # --version, --help, board
    python bench/compile.py --goals                # issue 22's goals, median of 5, load
    python bench/compile.py --floor                # the first goal's peak memory, by import

Modes (L2 budget 1,024,000 bytes): untiled (`--tiling untiled`, L1 = the L2
budget so that every model fits); tiled (Z3-chosen tiles at --l1, default
128,000 bytes, --buffering, default single); tiled-l3 (the same with
`--home L3`: every tensor in L3, moved through L2 in tiles).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models" / "deeploy"
L2 = 1_024_000
MIB = 1024 * 1024

#: issue 22's goals: (label, CLI arguments (MODEL is the graph), seconds, MiB)
GOALS: list[tuple[str, list[str], float, float | None]] = [
    (
        "lower Transformer_Train, L1 128,000, home L3",
        [
            "lower",
            str(SHARED / "Transformer_Train" / "network.onnx"),
            "--l1",
            "128000",
            "--l2",
            str(L2),
            "--home",
            "L3",
        ],
        1.2,
        60,
    ),
    (
        "lower CCT2_FT1, L1 128,000, home L3",
        [
            "lower",
            str(SHARED / "CCT2_FT1" / "network.onnx"),
            "--l1",
            "128000",
            "--l2",
            str(L2),
            "--home",
            "L3",
        ],
        3.0,
        100,
    ),
    ("board siracusa", ["board", "siracusa"], 0.5, None),
    ("--help", ["--help"], 0.5, None),
    ("--version", ["--version"], 0.5, None),
]


def models() -> list[tuple[str, Path]]:
    out = [(d.name, d / "network.onnx") for d in sorted(SHARED.glob("*/")) if d.is_dir()]
    out += [
        (d.name, d)
        for d in sorted(p.parent for p in (ROOT / "examples").glob("*/training_model.onnx"))
    ]
    return out


def run_process(
    cli_args: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, float, int, str]:
    """One fresh CLI process: (wall seconds, CPU seconds (user + system), peak
    RSS MiB, exit code, stderr's last line). A lower writes into a temporary
    directory."""
    with tempfile.TemporaryDirectory() as tmp:
        args = list(cli_args)
        if args and args[0] == "lower":
            args += ["-o", str(Path(tmp) / "out")]
        err_path = Path(tmp) / "stderr"
        with open(err_path, "w") as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(
                [sys.executable, "-m", "deeploy_mlir.cli", *args],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
            )
            _, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        last = (err_path.read_text().strip().splitlines() or [""])[-1]
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss * 1024 / MIB, p.returncode, last


def measure_process(cli_args: list[str], repeat: int) -> dict[str, float] | str:
    """Medians of `repeat` processes, or the error of the first that failed."""
    walls: list[float] = []
    cpus: list[float] = []
    peaks: list[float] = []
    for _ in range(repeat):
        wall, cpu, peak, code, last = run_process(cli_args)
        if code != 0:
            return last.removeprefix("deeploy-mlir: error: ") or f"exit {code}"
        walls.append(wall)
        cpus.append(cpu)
        peaks.append(peak)
    return {
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "peak": statistics.median(peaks),
    }


def _preload() -> None:
    """Import what a compile imports lazily, so that the compile-only timer
    counts the compile only."""
    import z3  # noqa: F401

    from deeploy_mlir.emitters.c import template_env
    from deeploy_mlir.frontend import onnx_import  # noqa: F401
    from deeploy_mlir.pipeline import make_context
    from deeploy_mlir.universe import PASSES

    make_context()
    for load in PASSES.values():
        load()
    template_env()


def child(model: str, options: list[str]) -> None:
    """Runs in the compile-only process: one compile, one JSON line on stdout."""
    from deeploy_mlir.cli import main

    _preload()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        code = main(["lower", model, "-o", str(Path(tmp) / "out"), "-q", *options])
        seconds = time.perf_counter() - t0
    print(json.dumps({"code": code, "seconds": seconds}))


def compile_only(model: Path, options: list[str], repeat: int) -> float | None:
    times: list[float] = []
    for _ in range(repeat):
        r = subprocess.run(
            [sys.executable, __file__, "--child", str(model), "--", *options],
            capture_output=True,
            text=True,
        )
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
        if r.returncode != 0 or not lines or json.loads(lines[-1])["code"] != 0:
            return None
        times.append(json.loads(lines[-1])["seconds"])
    return statistics.median(times)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def cold(cli_args: list[str]) -> str:
    """One process of `cli_args` with an empty cache directory
    (deeploy_mlir/cache.py: ONNX's schema attribute types, the compiled
    templates), as the first compile after an install runs; the figures
    after it (and `--goals`'s medians) run with the cache filled."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        wall, cpu, peak, code, last = run_process(cli_args, env)
    if code != 0:
        return f"error: {last}"
    return f"{wall:.2f} s wall, {cpu:.2f} s cpu, {peak:.1f} MiB"


def goals(repeat: int) -> None:
    print(f"median of {repeat} fresh processes; before: {load()}")
    label, args, _, _ = GOALS[0]
    print(f"{label}, empty cache (the first compile after an install): {cold(args)}")
    run_process(args)  # fills the cache the medians below read
    print(
        f"{'what':46} {'wall s':>7} {'cpu s':>6} {'goal':>6} {'peak MiB':>9} {'goal':>6}  "
        "met (wall)"
    )
    for label, args, secs, mib in GOALS:
        r = measure_process(args, repeat)
        if isinstance(r, str):
            print(f"{label:46} error: {r}")
            continue
        met = r["wall"] <= secs and (mib is None or r["peak"] <= mib)
        goal_mib = f"{mib:>6}" if mib is not None else f"{'':>6}"
        print(
            f"{label:46} {r['wall']:>7.2f} {r['cpu']:>6.2f} {secs:>6} {r['peak']:>9.1f} "
            f"{goal_mib}  {'yes' if met else 'no'}"
        )
    print(f"after: {load()}")


#: the import floor's groups, in import order: (label, top-level packages);
#: the rest of what `lower` imports (the standard library, small packages)
#: is measured after them, deeploy_mlir last
FLOOR_GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("numpy", ("numpy",)),
    ("protobuf (google.protobuf; the model's classes: onnx's onnx_ml_pb2.py)", ("google",)),
    ("onnx (imported only with an empty cache: ONNX's schemas)", ("onnx",)),
    ("xdsl", ("xdsl",)),
    ("jinja2, markupsafe", ("jinja2", "markupsafe")),
    ("yaml", ("yaml",)),
]


def _vm(key: str) -> float:
    """VmRSS or VmHWM of this process, MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(key)


def floor_child(cli_args: list[str]) -> None:
    """`--floor-child ARGS`: run the command in this process; print the
    modules it imported, in import order, and its peak (VmHWM) as JSON."""
    import io
    from contextlib import redirect_stdout

    from deeploy_mlir.cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()):
        code = cli_main([*cli_args, "-o", str(Path(tmp) / "out"), "-q"])
    print(json.dumps({"code": code, "modules": list(sys.modules), "peak": _vm("VmHWM")}))


#: run by `python -c` (nothing imported but what site imports): the modules
#: (JSON on stdin) imported group by group, the resident set after each
_IMPORT_GROUPS = """
import importlib, json, sys
def rss():
    with open("/proc/self/status") as f:
        return [int(l.split()[1]) / 1024 for l in f if l.startswith("VmRSS:")][0]
rows = [("python (site, nothing imported)", rss())]
mods, groups = json.load(sys.stdin)
for label, names in groups:
    for m in names:
        try:
            importlib.import_module(m)
        except Exception:
            pass
    rows.append((label, rss()))
print(json.dumps(rows))
"""


def floor(cli_args: list[str]) -> None:
    """Where a command's peak resident set goes: the imports it makes, group
    by group in a fresh process, and the rest (its work). The command runs
    once before, so that the cache (deeploy_mlir/cache.py) is filled."""
    run_process(cli_args)
    r = subprocess.run(
        [sys.executable, __file__, "--floor-child", *cli_args],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["code"] == 0, r.stderr
    mods = [m for m in got["modules"] if m != "__main__"]

    def top(m: str) -> str:
        return m.split(".")[0]

    groups: list[tuple[str, list[str]]] = []
    for label, tops in FLOOR_GROUPS:
        names = [m for m in mods if top(m) in tops]
        if names:
            groups.append((label, names))
    grouped = {t for _, tops in FLOOR_GROUPS for t in tops} | {"deeploy_mlir"}
    rest = [m for m in mods if top(m) not in grouped]
    groups.append(("the rest (standard library, small packages)", rest))
    groups.append(("deeploy_mlir", [m for m in mods if top(m) == "deeploy_mlir"]))
    r = subprocess.run(
        [sys.executable, "-c", _IMPORT_GROUPS],
        input=json.dumps([mods, groups]),
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"deeploy-mlir {' '.join(cli_args)}")
    print(f"{'':76} {'MiB':>6} {'total':>6}")
    prev = 0.0
    for label, rss in rows:
        print(f"{label:76} {rss - prev:>+6.1f} {rss:>6.1f}")
        prev = rss
    work = "the work (the peak of the command minus its imports)"
    print(f"{work:76} {got['peak'] - prev:>+6.1f} {got['peak']:>6.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="only models whose name contains one of these")
    ap.add_argument("--l1", type=int, default=128_000, help="tiled L1 budget (default 128000)")
    ap.add_argument("--buffering", default="single", choices=("single", "double"))
    ap.add_argument("--repeat", type=int, default=1, help="processes per measurement (median)")
    ap.add_argument("--startup", action="store_true", help="only --version, --help and board")
    ap.add_argument("--goals", action="store_true", help="issue 22's goals (default --repeat 5)")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="where the first goal's peak memory goes: imports group by group, then the work",
    )
    if sys.argv[1:2] == ["--child"]:  # --child MODEL -- OPTIONS...
        child(sys.argv[2], sys.argv[4:])
        return
    if sys.argv[1:2] == ["--floor-child"]:  # --floor-child CLI_ARGS...
        floor_child(sys.argv[2:])
        return
    args = ap.parse_args()
    if args.floor:
        floor(GOALS[0][1])
        return
    if args.goals:
        goals(args.repeat if args.repeat > 1 else 5)
        return
    if args.startup:
        print(f"median of {args.repeat}; {load()}")
        for label, cli_args in (
            ("--version", ["--version"]),
            ("--help", ["--help"]),
            ("board siracusa", ["board", "siracusa"]),
        ):
            r = measure_process(cli_args, args.repeat)
            assert not isinstance(r, str), r
            print(f"{label:16} {r['wall']:>6.2f} s {r['cpu']:>6.2f} s cpu {r['peak']:>7.1f} MiB")
        return
    modes = {
        "untiled": ["--tiling", "untiled", "--l1", str(L2), "--l2", str(L2)],
        "tiled": ["--l1", str(args.l1), "--l2", str(L2), "--buffering", args.buffering],
        "tiled-l3": [
            "--l1", str(args.l1), "--l2", str(L2), "--buffering", args.buffering,
            "--home", "L3",
        ],
    }  # fmt: skip
    print(
        f"tiled: L1 {args.l1} B, {args.buffering} buffered; L2 {L2} B; median of "
        f"{args.repeat}; wall and peak: the whole `deeploy-mlir lower` process; compile: "
        f"without the imports; {load()}"
    )
    print(f"{'model':26} {'mode':9} {'wall s':>7} {'cpu s':>6} {'peak MiB':>9} {'compile s':>10}")
    for name, path in models():
        if args.names and not any(n in name for n in args.names):
            continue
        for mode, opts in modes.items():
            r = measure_process(["lower", str(path), *opts], args.repeat)
            if isinstance(r, str):
                print(f"{name:26} {mode:9} error: {r}")
                continue
            c = compile_only(path, opts, args.repeat)
            cs = f"{c:>10.2f}" if c is not None else f"{'-':>10}"
            print(f"{name:26} {mode:9} {r['wall']:>7.2f} {r['cpu']:>6.2f} {r['peak']:>9.1f} {cs}")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
