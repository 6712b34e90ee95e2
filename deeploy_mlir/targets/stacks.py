"""Cluster stacks: the sizes the harness sets on its cluster task, and the L1
they take.

PULPOS (rtos/pulpos/pulp/drivers/cluster/cluster.c, pos_cluster_task_set_stack)
allocates the stacks of a cluster task from the L1 heap, with
pi_cl_l1_malloc, when the task is sent: `stack_size` bytes for the cluster
controller (core 0, which runs the task's entry and its own share of every
team fork) and `slave_stack_size` bytes for each of the other cores (which
run only the forked kernels). Its defaults (stack_size 0 -> 2 KiB and 1 KiB)
do not depend on the code; the harness sets both for the program, and the L1
budget (--l1) counts them: the arena gets --l1 minus the stacks.

Per program: the stacks hold the deepest path of the kernels the program
forks (program_kernels: kernel-select's choice for its compute ops), not of
every kernel of runtime_c. A worker's stack holds one kernel; the cluster
controller's holds dm_train and the deeper of its printf (HARNESS_PATH) and
its own frame (TRAIN_FRAME) + a step function (STEP_FRAME) + a kernel, plus
IRQ bytes; both get MARGIN on top.

The figures are the deepest stack paths measured by gcc itself: Debian's
riscv64-unknown-elf-gcc 12.2 with -fstack-usage -fcallgraph-info=su, RV32IMF
ilp32f, at -O2 and -O3 (the larger), against pulp-sdk's headers for
siracusa (deeploy_mlir/targets/pulp_sdk.py), by `python
scripts/measure_stacks.py`, which prints them (`--write` writes them into
the files, `--check` fails when one is below its measurement; `--kernels`:
the per-kernel table only, about 15 s of CPU). tests/test_stacks.py
measures them again and fails when they no longer cover the code.
  - KERNEL_PATHS (targets/stack_table.py): each kernel entry's deepest path,
    callees included. A call through a function pointer counts the deepest
    function its source file takes the address of (address_taken: conv.c's
    tiles); a call of a function outside the kernels (libm: expf, logf,
    sqrtf...) counts EXTERNAL_CALL bytes.
  - STEP_FRAME: the path of RunTrainingNetwork / RunOptimizerNetwork without
    the kernels they fork, over the examples, tiled and untiled, L2 and L3
    (each kernel call's argument struct is a block-scope local; the DMA
    requests are static).
  - HARNESS_PATH: dm_train's deepest path outside the step functions (its
    printf: PULPOS' minimal libc, lib/libc/minimal); TRAIN_FRAME its own frame.

What runs between the runtime and our code, read in the runtimes' sources:
  - the task's entry: PULPOS' pe-eu-v3.S (pos_master_loop_exec_task) loads
    sp = stacks + stack_size and jumps to the entry (`jr t0`); a worker's
    pos_set_slave_stack sets its sp and pos_fork_entry jumps to the forked
    function: no frame of the runtime is on the task's stacks. The GVSoC
    runtime (runtime_c/gvsoc, dm_call_on_stack) switches sp the same way
    and stores nothing on the new stack.
  - interrupts: only the cluster controller enables them (pos_pe_start's
    `csrwi 0x300, 0x8` on its path; the workers never set mstatus.MIE, and
    the GVSoC runtime sets it on no cluster core), for the DMA event, whose
    vector is pos_no_irq_handler (no frame). IRQ keeps the former allowance
    for an interrupt's frame on the cluster controller all the same; the
    workers get none.
GVSoC runs paint the stacks and stop on overflow (runtime_c/gvsoc); they
report the depth each core used.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# -- measured (scripts/measure_stacks.py, 2026-11-25) --------------------------
#: a kernel entry's deepest path, per kernel: targets/stack_table.py
STEP_FRAME = 384  # ds_cnn --l1 7600
HARNESS_PATH = 544  # autoencoder --home L3
TRAIN_FRAME = 128  # autoencoder --home L3
# -- allowances -------------------------------------------------------------------
#: a call to a function whose frame is not measured (libm)
EXTERNAL_CALL = 128
#: an interrupt's frame on the cluster controller's stack (the workers take
#: no interrupt: see the module's docstring)
IRQ = 256
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


def kernel_path(kernel: str) -> int:
    """The measured deepest stack path of a kernel entry; a kernel the table
    does not hold yet counts as the deepest of the table (tests/test_stacks.py
    fails until it is measured)."""
    from deeploy_mlir.targets.stack_table import KERNEL_PATHS

    return KERNEL_PATHS.get(kernel, max(KERNEL_PATHS.values()))


def cluster_stacks(cores: int = 8, kernels: Iterable[str] | None = None) -> ClusterStacks:
    """The stacks of a program that forks `kernels` (None: any kernel of
    runtime_c, the worst case). The cluster controller runs dm_train, whose
    deepest path is either its printf (HARNESS_PATH) or its own frame, a step
    function and a kernel; a worker runs a kernel only."""
    from deeploy_mlir.targets.stack_table import KERNEL_PATHS

    names = KERNEL_PATHS if kernels is None else kernels
    k = max((kernel_path(n) for n in names), default=0)
    cc = _round((max(HARNESS_PATH, TRAIN_FRAME + STEP_FRAME + k) + IRQ) * MARGIN)
    # slave_stack_size 0 would mean "as stack_size" to PULPOS: never 0
    worker = max(_round(k * MARGIN), ALIGN)
    return ClusterStacks(cc, worker, cores)


def stack_reservation(cores: int = 8, kernels: Iterable[str] | None = None) -> int:
    """L1 bytes the cluster stacks of a program forking `kernels` (None: any)
    take from an --l1 budget."""
    return cluster_stacks(cores, kernels).total


def l1_arena_budget(l1: int, cores: int = 8, kernels: Iterable[str] | None = None) -> int:
    """What an L1 budget of `l1` bytes leaves for the arena once the cluster
    stacks of a program forking `kernels` are counted (None: any kernel; ():
    the smallest stacks, of a program that forks none); a budget that leaves
    nothing is an error."""
    from deeploy_mlir.errors import DeeployError

    s = cluster_stacks(cores, kernels)
    if l1 <= s.total:
        raise DeeployError(
            f"the L1 budget is {l1} bytes but the cluster stacks alone take {s.total} "
            f"({s.cc} for the cluster controller, {cores - 1} x {s.worker} for the other "
            f"cores) (--l1)"
        )
    return l1 - s.total


def program_kernels(module: object) -> set[str]:
    """The kernels a program's step functions fork: kernel-select's choice
    (deeploy_mlir/kernels/) for each compute op of the module, bufferized
    first when it is not yet (a copy: the module is not changed). Tiling
    changes a call's fields, never its kernel. An op kernel-select refuses
    (it names it, later): every kernel, the worst case."""
    from xdsl.dialects.builtin import ModuleOp

    from deeploy_mlir.dialects import kernel as K
    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.kernels import FAMILIES

    assert isinstance(module, ModuleOp)
    names = {op.callee.root_reference.data for op in module.walk() if isinstance(op, K.CallOp)}
    ops = [op for op in module.walk() if isinstance(op, T.TrainingComputeOp)]
    if any(not op.is_buffer_form for op in ops):
        from deeploy_mlir.pipeline import bufferize_only, run_pipeline

        module = module.clone()
        run_pipeline(module, bufferize_only(True), verify_each=False)
        ops = [op for op in module.walk() if isinstance(op, T.TrainingComputeOp)]
    from deeploy_mlir.errors import DeeployError
    from deeploy_mlir.targets.stack_table import KERNEL_PATHS

    for op in ops:
        for _, family in FAMILIES:
            try:
                calls = family(op)
            except DeeployError:  # kernel-select says why, later: size for any kernel
                return set(KERNEL_PATHS)
            if calls is not None:
                names |= {c.kernel for c in calls}
                break
    return names


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


def address_taken(src: Path, names: Iterable[str]) -> set[str]:
    """The functions of `names` whose name `src` uses other than in a call
    (an initializer, a conditional, an argument): what a function pointer of
    `src` may hold (comments, strings, the macro calls at file scope that
    define functions and the calls of a conditional's result, `(c ? f :
    g)(...)`, aside). Conservative: any other use counts."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", " ", src.read_text(), flags=re.S)
    # a file-scope macro call that defines a function (conv.c's
    # DM_WALK_SPAN(dm_tile_4x1, ...)) names it without taking its address
    text = re.sub(r"^[A-Z][A-Z0-9_]*\(\s*\w+\s*,", " ", text, flags=re.M)
    # `(c ? f : g)(args)` calls f or g (gcc makes both direct calls)
    text = re.sub(r"\([^()?;]*\?\s*(\w+)\s*:\s*(\w+)\s*\)\s*\(", r"\1( \2(", text)
    out: set[str] = set()
    for n in names:
        base = n.split(".", 1)[0]  # gcc's clones (f.constprop.0) are f's
        if re.search(rf"\b{re.escape(base)}\b(?!\s*\()", text):
            out.add(base)
    return out


def measure(
    sources: Iterable[Path], cflags: list[str], opt: str, cc: str = "riscv64-unknown-elf-gcc"
) -> CallGraph:
    """Compile `sources` with `cflags` at `opt` and read their call graph. An
    indirect call (gcc's __indirect_call) of a function of one source becomes
    calls of the functions that source takes the address of (address_taken):
    a function pointer of conv.c calls one of conv.c's tiles, and the pointer
    handed to pi_cl_team_fork by a step function one of the kernels it names."""
    import subprocess

    with tempfile.TemporaryDirectory() as d:
        graphs: list[tuple[Path, CallGraph]] = []
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
            graphs.append((src, parse_callgraph([obj.with_suffix(".ci")])))
    out = CallGraph({}, {}, set())
    everything: set[str] = set()
    for _, g in graphs:
        everything |= set(g.frames) | {c for cs in g.calls.values() for c in cs}
    for src, g in graphs:
        targets = address_taken(src, everything - {"__indirect_call"})
        for f, size in g.frames.items():
            out.frames[f] = max(out.frames.get(f, 0), size)
        out.dynamic |= g.dynamic
        for f, cs in g.calls.items():
            calls = out.calls.setdefault(f, set())
            calls |= cs - {"__indirect_call"}
            if "__indirect_call" in cs:
                calls |= targets if targets else {"__indirect_call"}
    return out


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
    step functions (its printf); TRAIN, dm_train's own frame. The largest
    over `opts`."""
    from deeploy_mlir.emitters.c.common import C_LANG
    from deeploy_mlir.targets.pulp_sdk import SdkFlags

    flags = SdkFlags(sdk).cflags(overlay) + list(C_LANG) + ["-w", "-DNUM_CORES=8"]
    flags += [f"-I{proj}", f"-I{proj / 'runtime' / 'include'}"]
    kernels = sorted((proj / "runtime" / "kernels").glob("*.c"))
    srcs = [proj / "TrainingNetwork.c", proj / "OptimizerNetwork.c", proj / "harness.c"]
    best = {"STEP": 0, "HARNESS": 0, "TRAIN": 0}
    for opt in opts:
        g = measure([*srcs, *libc_sources(sdk)], flags, opt)
        for k in kernel_entries(measure(kernels, flags, opt), kernels):
            g.frames[k] = 0
            g.calls.pop(k, None)
        best["STEP"] = max(best["STEP"], *(g.path(s) for s in STEPS))
        best["TRAIN"] = max(best["TRAIN"], g.frames["dm_train"])
        for s in STEPS:
            g.frames[s] = 0
            g.calls.pop(s, None)
        best["HARNESS"] = max(best["HARNESS"], g.path("dm_train"))
    return best


#: the optimisation levels measured (the larger path counts)
OPTS = ("-O2", "-O3")


def kernel_graphs(
    sdk: Path, overlay: Path, rt: Path, opts: Iterable[str] = OPTS
) -> list[tuple[str, CallGraph, list[str]]]:
    """runtime_c's kernels (`rt`/kernels/*.c) compiled against pulp-sdk's
    siracusa headers (`overlay`: SdkFlags.write_overlay) with the emitted
    code's C_LANG at each level of `opts`: the level, its call graph and the
    kernel entries it defines."""
    from deeploy_mlir.emitters.c.common import C_LANG
    from deeploy_mlir.targets.pulp_sdk import SdkFlags

    srcs = sorted((rt / "kernels").glob("*.c"))
    flags = [*SdkFlags(sdk).cflags(overlay), *C_LANG, f"-I{rt / 'include'}", "-DNUM_CORES=8"]
    out = []
    for opt in opts:
        g = measure(srcs, flags, opt)
        out.append((opt, g, kernel_entries(g, srcs)))
    return out


def measured_kernel_paths(
    graphs: Iterable[tuple[str, CallGraph, list[str]]],
) -> dict[str, tuple[int, str]]:
    """Each kernel entry's deepest path over `graphs` (kernel_graphs) and the
    level that measured it (the first of equal ones)."""
    out: dict[str, tuple[int, str]] = {}
    for opt, g, entries in graphs:
        for k in entries:
            p = g.path(k)
            if k not in out or p > out[k][0]:
                out[k] = (p, opt)
    return out


def table_shortfalls(
    measured: Mapping[str, tuple[int, str]], table: Mapping[str, int]
) -> list[str]:
    """What makes a per-kernel table (KERNEL_PATHS) wrong for a measurement
    (measured_kernel_paths): a kernel it lacks or holds below its measured
    path, one line each. An entry above the measurement is safe (L1 wasted,
    not overrun) and not listed."""
    out = []
    for k, (p, opt) in sorted(measured.items()):
        if k not in table:
            out.append(f"{k}: not in the table (measured {p} B at {opt})")
        elif table[k] < p:
            out.append(f"{k}: table {table[k]} B < measured {p} B at {opt}")
    return out


_TABLE = re.compile(r"^(KERNEL_PATHS: dict\[str, int\] = \{\n)(.*?)(^\}\n)", re.M | re.S)


def kernel_table_lines(measured: Mapping[str, tuple[int, str]]) -> str:
    """The entries of stack_table.py's KERNEL_PATHS for a measurement, each
    with the level that measured it, as scripts/measure_stacks.py prints and
    writes them."""
    return "".join(f'    "{k}": {p},  # {opt}\n' for k, (p, opt) in sorted(measured.items()))


def rewrite_kernel_table(source: str, measured: Mapping[str, tuple[int, str]]) -> str:
    """stack_table.py's text `source` with its KERNEL_PATHS entries replaced
    by those of `measured` (kernel_table_lines); the rest unchanged."""
    m = _TABLE.search(source)
    if m is None:
        raise ValueError("no `KERNEL_PATHS: dict[str, int] = {` ... `}` block")
    return source[: m.start(2)] + kernel_table_lines(measured) + source[m.end(2) :]
