"""Building and running a generated project: `run`, `test`, the harness's
output (OUT/PARAM/BENCH lines, the host emulation's DMA counters)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from deeploy_mlir.cli.compile import compile_model
from deeploy_mlir.cli.options import inputs
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.outputs import check_dir_output, check_file_output, staged_dir, write_file

if TYPE_CHECKING:  # numpy is imported where it is used: Ctrl-C at start-up is handled
    import numpy as np

#: a float word of the harness: its bits in hex, then (optionally) its decimal
_HEX = re.compile(r"^([0-9a-f]{8})(?:\([^()\s]*\))?$")


def parse_run_output(text: str) -> tuple[dict[str, list[list[float]]], dict[str, np.ndarray]]:
    """OUT and PARAM lines of the harness -> outputs per mini-batch, final params
    (with the STAT lines: batch norm's running statistics, state like them)."""
    outs: dict[str, list[list[float]]] = {}
    params: dict[str, np.ndarray] = {}
    done = False
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "OUT" and len(parts) >= 4:
            outs.setdefault(parts[3], []).append(_floats(parts[4:]).tolist())
        elif parts[0] == "OUTI" and len(parts) >= 4:  # integer outputs, in decimal
            outs.setdefault(parts[3], []).append([int(w) for w in parts[4:]])
        elif parts[0] in ("PARAM", "STAT") and len(parts) >= 2:
            params[parts[1]] = _floats(parts[2:])
        elif parts[0] == "DONE":
            done = True
    if not done:
        raise RuntimeError("the program did not finish (no DONE line)")
    return outs, params


def _floats(words: Sequence[str]) -> np.ndarray:
    import numpy as np

    bits = []
    for w in words:
        m = _HEX.match(w)
        assert m is not None, w
        bits.append(int(m.group(1), 16))
    return np.array(bits, dtype=np.uint32).view(np.float32)


def _gvsoc_check(args: argparse.Namespace) -> None:
    """--on gvsoc: the GVSoC target and setup exist (before any compiling);
    otherwise no --gvsoc-* option was given."""
    from deeploy_mlir.targets.gvsoc import DEFAULT_TIMEOUT, find_setup, gvsoc_target

    if args.on != "gvsoc":
        if args.gvsoc_target is not None or args.gvsoc_timeout != DEFAULT_TIMEOUT:
            raise DeeployError("--gvsoc-target and --gvsoc-timeout need --on gvsoc")
        return
    from deeploy_mlir.cli.options import board_isa

    args.gvsoc_target = gvsoc_target(args.target, args.gvsoc_target)
    # the GVSoC build of the board's cores (--board siracusa_zfinx: Zfinx)
    args.gvsoc_setup = find_setup(board_isa(getattr(args, "board", None)))


def _gvsoc_build_and_run(args: argparse.Namespace, project_dir: Path) -> str:
    from deeploy_mlir.targets.gvsoc import build, run

    elf = build(project_dir, args.gvsoc_target, args.gvsoc_setup, args.l1_as_l2)
    return run(elf, args.gvsoc_target, args.gvsoc_setup, args.gvsoc_timeout)


def build_and_run(project_dir: Path, on: str = "host", target: str = "pulp-open") -> str:
    """Build the project with its Makefile and run it; returns its stdout.
    `gvsoc`: on the GVSoC model of `target` (docs/gvsoc.md), default limits."""
    import subprocess

    if on == "gvsoc":
        from deeploy_mlir.targets import gvsoc

        model, setup = gvsoc.gvsoc_target(target, None), gvsoc.find_setup()
        return gvsoc.run(gvsoc.build(project_dir, model, setup), model, setup)
    tools = {
        "host": [os.environ.get("CC", "gcc")],
        "qemu": ["riscv64-unknown-elf-gcc", "qemu-system-riscv32"],
    }[on]
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        hint = (
            "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc"
            if on == "qemu"
            else "install gcc (or set CC)"
        )
        raise DeeployError(f"--on {on} needs {', '.join(missing)}: {hint}")
    build = "host" if on == "host" else "rv32"
    from deeploy_mlir import progress

    progress.stage(f"C build (make {build})")
    from deeploy_mlir.cli.host_build import build_host

    if on == "host" and build_host(project_dir):  # the runtime's objects from the cache
        r = subprocess.CompletedProcess([], 0, "", "")
    else:
        r = subprocess.run(
            ["make", "-s", "-C", str(project_dir), build], capture_output=True, text=True
        )
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).splitlines()
        first = next((ln.strip() for ln in lines if "error" in ln), lines[-1] if lines else "")
        raise RuntimeError(f"building the generated C failed: {first}\n{r.stdout}{r.stderr}")
    if on == "host":
        cmd = [str(project_dir / "build" / "host" / "network")]
    else:
        from deeploy_mlir.targets.qemu import qemu_command

        cmd = qemu_command(project_dir / "build" / "rv32" / "network.elf")
    if on == "host" and progress.active() and shutil.which("stdbuf"):
        cmd = ["stdbuf", "-oL", *cmd]  # its lines as they come, for the progress display
    progress.stage(f"training ({on})")
    trained = [0]

    def on_line(line: str) -> None:
        if line.startswith("BENCH train "):
            trained[0] += 1
            progress.update(f"training ({on}): mini-batch {trained[0]}")
        elif line.startswith("BENCH optimizer "):
            progress.update(f"training ({on}): optimizer step {line.split()[2]} done")

    r = progress.run_lines(cmd, 3600, on_line)
    progress.done()
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).splitlines()
        last = lines[-1].strip() if lines else ""
        raise RuntimeError(
            f"the generated program failed ({r.returncode}): {last}\n{r.stdout}{r.stderr}"
        )
    # QEMU's semihosting console writes the program's printf to stderr; the
    # host emulation writes its DMA counters there at exit
    return r.stdout + r.stderr


_DMA_LINE = re.compile(r"^dm-host: dma (L\d->L\d) transfers=(\d+) bytes=(\d+)$")


def parse_dma_counters(text: str) -> dict[str, dict[str, int]]:
    """The host emulation's exit counters: {"L2->L1": {"transfers", "bytes"}, ...}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        m = _DMA_LINE.match(line.strip())
        if m:
            out[m.group(1)] = {"transfers": int(m.group(2)), "bytes": int(m.group(3))}
    return out


def parse_bench(text: str) -> dict[str, list[int]]:
    """BENCH lines -> {"train": [...per mini-batch], "optimizer": [...per step]}."""
    out: dict[str, list[int]] = {"train": [], "optimizer": []}
    for line in text.splitlines():
        parts = line.split()
        if parts[:2] == ["BENCH", "train"]:
            out["train"].append(int(parts[4]))
        elif parts[:2] == ["BENCH", "optimizer"]:
            out["optimizer"].append(int(parts[3]))
    return out


@contextlib.contextmanager
def _project_dir(keep: Path | None, force: bool) -> Iterator[Path]:
    """Where to write, build and run a project: a hidden directory beside
    `keep` that replaces it when the block succeeds, else a temporary one."""
    if keep is not None:
        with staged_dir(keep, force=force) as d:
            yield d
        return
    with tempfile.TemporaryDirectory(prefix="deeploy-mlir-") as tmp:
        yield Path(tmp)


def cmd_run(args: argparse.Namespace) -> int:
    from deeploy_mlir.emitters.c import write_project_files
    from deeploy_mlir.interp.attrs import loss_output_name

    _gvsoc_check(args)
    read = inputs(args)
    keep = (
        check_dir_output(args.keep, "--keep", read, force=args.force)
        if args.keep is not None
        else None
    )
    out_json = (
        check_file_output(args.json, "--json", read, within=keep) if args.json is not None else None
    )
    c = compile_model(args, need_data=True)
    loss_name = loss_output_name(c.model.module)  # type: ignore[attr-defined]
    with _project_dir(keep, args.force) as out:
        write_project_files(c.project, out)  # type: ignore[arg-type]
        if args.on == "gvsoc":
            stdout = _gvsoc_build_and_run(args, out)
        else:
            stdout = build_and_run(out, args.on)
        outs, params = parse_run_output(stdout)  # a run that did not finish keeps nothing
    losses = [v[0] for v in outs.get(loss_name, [])] if loss_name else []
    for i, loss in enumerate(losses):
        print(f"step {i // args.accum} mini-batch {i % args.accum}: loss {loss:.6f}")
    if out_json is not None:
        shapes = {k: v.shape for k, v in c.model.params.items()}  # type: ignore[attr-defined]
        stats = set(c.model.running_stats)  # type: ignore[attr-defined]
        doc: dict[str, object] = {
            "losses": losses,
            "params": {
                k: v.reshape(shapes[k]).tolist() for k, v in params.items() if k not in stats
            },
        }
        if stats:  # batch norm's running statistics after training, beside the params
            doc["running_stats"] = {
                k: v.reshape(shapes[k]).tolist() for k, v in params.items() if k in stats
            }
        dma_counts = parse_dma_counters(stdout)
        if dma_counts:
            doc["dma"] = dma_counts
        if args.on == "qemu":
            bench = parse_bench(stdout)
            doc["bench"] = {
                "train_instret": bench["train"],
                "optimizer_instret": bench["optimizer"],
            }
        elif args.on == "gvsoc":
            bench = parse_bench(stdout)
            doc["bench"] = {
                "train_cycles": bench["train"],
                "optimizer_cycles": bench["optimizer"],
            }
        prof = c.project.profile  # type: ignore[attr-defined]
        if prof is not None:
            from deeploy_mlir.emitters.c.profile import parse_profile

            doc["profile"] = parse_profile(stdout, prof.sites)
        write_file(out_json, json.dumps(doc) + "\n")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    """`test DIR`: one step of a Deeploy test folder on the host emulation."""
    import numpy as np

    from deeploy_mlir.emitters.c import write_project_files
    from deeploy_mlir.testfolder import check_outputs, compare, feeds, load_folder

    keep = None
    if args.keep is not None:
        keep = check_dir_output(args.keep, "--keep", inputs(args), force=args.force)
    folder = load_folder(args.model)
    unread: list[str] = []

    def folder_feeds(model: object) -> dict[str, np.ndarray]:
        data, rest = feeds(folder, model)  # type: ignore[arg-type]
        unread.extend(rest)
        return data

    args.model, args.feeds = str(folder.network), folder_feeds
    args.steps, args.accum = 1, 1
    _gvsoc_check(args)
    c = compile_model(args, need_data=True)
    if unread:
        print(f"note: inputs.npz arrays not read (beyond the graph's inputs): {', '.join(unread)}")
    sources = check_outputs(folder, c.model)  # type: ignore[arg-type]
    with _project_dir(keep, args.force) as out:
        write_project_files(c.project, out)  # type: ignore[arg-type]
        if args.on == "gvsoc":
            stdout = _gvsoc_build_and_run(args, out)
        else:
            stdout = build_and_run(out, "host")
        outs, params = parse_run_output(stdout)
    got: dict[str, np.ndarray] = {}
    for src in sources:
        if src.param:
            got[src.name] = params[src.key]
        elif src.key in outs:
            got[src.name] = np.asarray(outs[src.key][0])
        else:
            raise RuntimeError(f"the harness printed no values for graph output '{src.name}'")
    results = compare(folder, [src.name for src in sources], got, args.atol)
    for r in results:
        verdict = "ok" if r.ok else "MISMATCH"
        print(
            f"output {r.index} '{r.name}' {list(r.shape)}: largest |difference| "
            f"{r.max_diff:.3g}  {verdict}"
        )
    n_ok = sum(r.ok for r in results)
    diffs = [r.max_diff for r in results]
    worst = float("nan") if any(np.isnan(diffs)) else max(diffs)
    print(
        f"{folder.path}: {n_ok}/{len(results)} outputs match (atol {args.atol:g}, largest "
        f"|difference| {worst:.3g})"
    )
    return 0 if n_ok == len(results) else 1
