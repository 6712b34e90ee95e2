"""Cluster stacks: the sizes the harness sets on its cluster task, and the L1
they take.

PULPOS (rtos/pulpos/pulp/drivers/cluster/cluster.c, pos_cluster_task_set_stack)
allocates the stacks of a cluster task from the L1 heap, with
pi_cl_l1_malloc, when the task is sent: `stack_size` bytes for the cluster
controller (core 0, which runs the task's entry and its own share of every
team fork) and `slave_stack_size` bytes for each of the other cores (which
run only the forked kernels). Its defaults (stack_size 0 -> 2 KiB and 1 KiB)
do not depend on the code; the harness sets both from the figures below, and
the L1 budget (--l1) counts them: the arena gets --l1 minus the stacks.

The figures are the deepest stack paths measured by gcc itself: Debian's
riscv64-unknown-elf-gcc 12.2 with -fstack-usage -fcallgraph-info=su, RV32IMF
ilp32f, at -O2 and -O3 (the larger), against pulp-sdk's headers for
siracusa (deeploy_mlir/targets/pulp_sdk.py), by `python
scripts/measure_stacks.py`, which prints this table.
tests/test_stacks.py measures them again and fails when the table no
longer covers the code.
  - KERNEL_PATH: the deepest path from any kernel entry of runtime_c/kernels
    (every dm_* function a fork may run), callees included; a call to a
    function outside the kernels (libm: expf, logf, sqrtf...) counts
    EXTERNAL_CALL bytes.
  - STEP_FRAME: the frame of RunTrainingNetwork / RunOptimizerNetwork over
    the examples, tiled and untiled, L2 and L3 (each kernel call's argument
    struct is a block-scope local; the DMA requests are static).
  - HARNESS_PATH: the harness's cluster entry (dm_train) with its deepest
    path outside the step functions: its printf, PULPOS' minimal libc
    (lib/libc/minimal), measured the same way.
The cluster controller's stack holds the harness, a step function and a
kernel, plus RUNTIME bytes for PULPOS (the task's entry, the team dispatch,
interrupts); a worker's holds a kernel plus RUNTIME; both get MARGIN on top.
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# -- measured (scripts/measure_stacks.py, 2026-11-24) --------------------------
KERNEL_PATH = 416  # dm_conv2d_fp32 (-O2)
STEP_FRAME = 480  # ds_cnn, 2,048-byte L1 arena
HARNESS_PATH = 544  # autoencoder --home L3
# -- allowances -------------------------------------------------------------------
#: a call to a function whose frame is not measured (libm)
EXTERNAL_CALL = 128
#: PULPOS between the task's entry and our code, and an interrupt's frame
RUNTIME = 256
#: on top of every figure
MARGIN = 1.25
#: stacks are multiples of this (PULPOS' allocator aligns to 8 bytes)
ALIGN = 16


@dataclass(frozen=True)
class ClusterStacks:
    """The stacks of one cluster task: `cc` bytes for the cluster controller
    (pi_cluster_task.stack_size), `worker` bytes for each of the other
    `cores - 1` cores (slave_stack_size)."""

    cc: int
    worker: int
    cores: int

    @property
    def total(self) -> int:
        """The L1 they take (pos_cluster_task_set_stack's stacks_size)."""
        return self.cc + self.worker * (self.cores - 1)


def _round(n: float) -> int:
    return int(math.ceil(n / ALIGN) * ALIGN)


def cluster_stacks(cores: int = 8) -> ClusterStacks:
    cc = _round((HARNESS_PATH + STEP_FRAME + KERNEL_PATH + RUNTIME) * MARGIN)
    worker = _round((KERNEL_PATH + RUNTIME) * MARGIN)
    return ClusterStacks(cc, worker, cores)


def stack_reservation(cores: int = 8) -> int:
    """L1 bytes the cluster stacks take from an --l1 budget."""
    return cluster_stacks(cores).total


def l1_arena_budget(l1: int, cores: int = 8) -> int:
    """What an L1 budget of `l1` bytes leaves for the arena once the cluster
    stacks are counted; a budget that leaves nothing is an error."""
    from deeploy_mlir.errors import DeeployError

    s = cluster_stacks(cores)
    if l1 <= s.total:
        raise DeeployError(
            f"the L1 budget is {l1} bytes but the cluster stacks alone take {s.total} "
            f"({s.cc} for the cluster controller, {cores - 1} x {s.worker} for the other "
            f"cores) (--l1)"
        )
    return l1 - s.total


# -- measuring ----------------------------------------------------------------------

_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "[^"]*?(?:\\n(\d+) bytes \((\w+)\))?" ')
_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


@dataclass
class CallGraph:
    """Frames (bytes, -fstack-usage) and calls of the functions of some
    translation units (-fcallgraph-info=su)."""

    frames: dict[str, int]
    calls: dict[str, set[str]]
    dynamic: set[str]

    def path(self, fn: str, external: int = EXTERNAL_CALL) -> int:
        """The deepest stack path from `fn` (its frame included); a callee
        without a measured frame counts `external`."""
        memo: dict[str, int] = {}

        def go(f: str, seen: tuple[str, ...]) -> int:
            if f.startswith("__builtin_"):
                return 0  # PULP gcc's builtins are instructions, not calls
            if f not in self.frames:
                return external  # an indirect call too (__indirect_call)
            if f in seen:
                raise ValueError(f"recursion through {f}: no static stack bound")
            if f not in memo:
                memo[f] = self.frames[f] + max(
                    (go(c, (*seen, f)) for c in self.calls.get(f, ())), default=0
                )
            return memo[f]

        return go(fn, ())


def _name(title: str) -> str:
    """A static function's title is "file:name" (the same name in two files
    then counts as one function with the larger frame: conservative)."""
    return title.rsplit(":", 1)[-1] if "/" in title else title


def parse_callgraph(ci_files: Iterable[Path]) -> CallGraph:
    frames: dict[str, int] = {}
    calls: dict[str, set[str]] = {}
    dynamic: set[str] = set()
    for ci in ci_files:
        text = ci.read_text()
        for title, size, kind in _NODE.findall(text):
            name = _name(title)
            if size:
                frames[name] = max(frames.get(name, 0), int(size))
                if kind != "static":  # dynamic or bounded: alloca / VLAs
                    dynamic.add(name)
        for src, dst in _EDGE.findall(text):
            calls.setdefault(_name(src), set()).add(_name(dst))
    return CallGraph(frames, calls, dynamic)


def measure(
    sources: Iterable[Path], cflags: list[str], opt: str, cc: str = "riscv64-unknown-elf-gcc"
) -> CallGraph:
    """Compile `sources` with `cflags` at `opt` and read their call graph."""
    with tempfile.TemporaryDirectory() as d:
        cis: list[Path] = []
        for i, src in enumerate(sources):
            obj = Path(d) / f"{i}_{src.stem}.o"
            r = subprocess.run(
                [
                    cc,
                    *cflags,
                    opt,
                    "-fstack-usage",
                    "-fcallgraph-info=su",
                    "-c",
                    str(src),
                    "-o",
                    str(obj),
                ],
                capture_output=True,
                text=True,
                cwd=d,
            )
            if r.returncode != 0:
                raise RuntimeError(f"{src}: {r.stderr.strip()}")
            cis.append(obj.with_suffix(".ci"))
        return parse_callgraph(cis)


def kernel_entries(graph: CallGraph, sources: Iterable[Path]) -> list[str]:
    """The dm_* functions the kernel sources define (what a fork may run)."""
    names: set[str] = set()
    for src in sources:
        names |= set(re.findall(r"^void\s+(dm_\w+)\s*\(", src.read_text(), re.M))
    return sorted(n for n in names if n in graph.frames)


def worst(paths: Mapping[str, int]) -> int:
    return max(paths.values(), default=0)


STEPS = ("RunTrainingNetwork", "RunOptimizerNetwork")


def libc_sources(sdk: Path) -> list[Path]:
    """PULPOS' minimal libc: the harness's printf."""
    libc = sdk / "rtos/pulpos/common/lib/libc/minimal"
    return [libc / n for n in ("fprintf.c", "prf.c", "io.c")]


def step_and_harness(
    sdk: Path, overlay: Path, proj: Path, opts: Iterable[str] = ("-O2", "-O3")
) -> dict[str, int]:
    """Of a generated project compiled against pulp-sdk: STEP, the deepest
    path of a step function without the kernels it forks (its frame, the
    PULPOS DMA and fork code it calls); HARNESS, dm_train's path without the
    step functions (its printf). The largest over `opts`."""
    from deeploy_mlir.emitters.c.common import C_LANG
    from deeploy_mlir.targets.pulp_sdk import SdkFlags

    flags = SdkFlags(sdk).cflags(overlay) + list(C_LANG) + ["-w", "-DNUM_CORES=8"]
    flags += [f"-I{proj}", f"-I{proj / 'runtime' / 'include'}"]
    kernels = sorted((proj / "runtime" / "kernels").glob("*.c"))
    srcs = [proj / "TrainingNetwork.c", proj / "OptimizerNetwork.c", proj / "harness.c"]
    best = {"STEP": 0, "HARNESS": 0}
    for opt in opts:
        g = measure([*srcs, *libc_sources(sdk)], flags, opt)
        for k in kernel_entries(measure(kernels, flags, opt), kernels):
            g.frames[k] = 0
            g.calls.pop(k, None)
        best["STEP"] = max(best["STEP"], *(g.path(s) for s in STEPS))
        for s in STEPS:
            g.frames[s] = 0
            g.calls.pop(s, None)
        best["HARNESS"] = max(best["HARNESS"], g.path("dm_train"))
    return best
