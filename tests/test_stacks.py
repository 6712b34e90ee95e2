"""Cluster stacks: the sizes set on the cluster task cover what gcc measures,
and the L1 budget counts them.

The measurements are gcc's own (-fstack-usage -fcallgraph-info=su, Debian's
riscv64-unknown-elf-gcc, RV32IMF ilp32f, -O2 and -O3) of the code compiled
against pulp-sdk's siracusa headers, where the team fork is inline and the
kernel it runs is a direct call: the cluster controller's deepest path is
dm_train -> RunTrainingNetwork / RunOptimizerNetwork -> kernel (or dm_train's
printf), a worker's a kernel alone."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, STACKS, run_cli, stacks_of

from deeploy_mlir.emitters.c import C_LANG
from deeploy_mlir.targets import stacks
from deeploy_mlir.targets.pulp_sdk import RV32_CC, SdkFlags, pulp_sdk_root
from deeploy_mlir.targets.stack_table import KERNEL_PATHS

SDK = pulp_sdk_root(ROOT)
needs_sdk = pytest.mark.skipif(
    SDK is None or shutil.which(RV32_CC) is None,
    reason=f"pulp-sdk sources (../shared/sdk/pulp-sdk) or {RV32_CC} missing",
)
OPTS = ("-O2", "-O3")


@pytest.fixture(scope="module")
def overlay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert SDK is not None
    return SdkFlags(SDK).write_overlay(tmp_path_factory.mktemp("overlay"))


@needs_sdk
def test_kernel_table_covers_the_kernels(overlay: Path) -> None:
    """Every kernel entry of runtime_c/kernels is in the per-kernel table
    (targets/stack_table.py) with a path at least gcc's (what
    `scripts/measure_stacks.py --kernels --check` checks), and no path of a
    kernel goes through a call gcc's graph leaves unresolved (a function
    pointer whose file takes no function's address)."""
    assert SDK is not None
    graphs = stacks.kernel_graphs(SDK, overlay, ROOT / "runtime_c", OPTS)
    for _, g, entries in graphs:
        assert len(entries) >= 20, entries  # every dm_* kernel of runtime_c/kernels
        assert not (g.dynamic & set(entries)), "a kernel with a dynamic frame"
        reach: set[str] = set()
        todo = list(entries)
        while todo:
            f = todo.pop()
            if f not in reach:
                reach.add(f)
                todo += list(g.calls.get(f, ()))
        assert "__indirect_call" not in reach, "an indirect call the measure cannot resolve"
    measured = stacks.measured_kernel_paths(graphs)
    assert set(measured) == {k for _, _, entries in graphs for k in entries}
    assert stacks.table_shortfalls(measured, KERNEL_PATHS) == [], (
        "run `python scripts/measure_stacks.py --kernels --write`"
    )
    assert max(p for p, _ in measured.values()) > 0


def test_table_check_and_write() -> None:
    """table_shortfalls (measure_stacks.py --check) names a kernel the table
    lacks or holds below its measurement, not one at or above it;
    rewrite_kernel_table (--write) replaces the table's entries and nothing
    else, and stack_table.py is in the form it writes (so that --write after
    a kernel change gives a diff of the changed figures only)."""
    measured = {"dm_a": (64, "-O2"), "dm_b": (32, "-O3"), "dm_c": (16, "-O2")}
    table = {"dm_a": 48, "dm_b": 32, "dm_z": 999}
    assert stacks.table_shortfalls(measured, table) == [
        "dm_a: table 48 B < measured 64 B at -O2",
        "dm_c: not in the table (measured 16 B at -O2)",
    ]
    assert stacks.table_shortfalls(measured, {"dm_a": 64, "dm_b": 40, "dm_c": 16}) == []
    src = (ROOT / "deeploy_mlir" / "targets" / "stack_table.py").read_text()
    new = stacks.rewrite_kernel_table(src, measured)
    head = src[: src.index("KERNEL_PATHS: dict")]
    assert new == head + (
        "KERNEL_PATHS: dict[str, int] = {\n"
        '    "dm_a": 64,  # -O2\n'
        '    "dm_b": 32,  # -O3\n'
        '    "dm_c": 16,  # -O2\n'
        "}\n"
    )
    # the table as it is: each entry with the level that measured it
    levels = dict(re.findall(r'^    "(\w+)": \d+,  # (-O\d)$', src, re.M))
    assert set(levels) == set(KERNEL_PATHS)
    ours = {k: (v, levels[k]) for k, v in KERNEL_PATHS.items()}
    assert stacks.rewrite_kernel_table(src, ours) == src


def test_function_pointers_resolve_to_the_functions_their_file_names(tmp_path: Path) -> None:
    """address_taken: a function named other than in a call (a conditional,
    an initializer, an argument) is what a pointer of its file may call; a
    call (of a conditional's result too), a comment, a string or a defining
    macro at file scope is not."""
    src = tmp_path / "f.c"
    src.write_text(
        "/* a() b */\n"
        "DEFINE(d, 4)\n"
        "static void (*p)(void) = c;\n"
        'void g(int x) { (x ? e : f)(); a(); h (); puts("b"); fork(i); p = x ? j : k; }\n'
    )
    names = ["a", "b", "c", "d", "e", "f.constprop.0", "h", "i", "j", "k"]
    assert stacks.address_taken(src, names) == {"c", "i", "j", "k"}


def test_stacks_are_sized_for_the_kernels_a_program_forks() -> None:
    """The worker's stack holds the deepest kernel the program forks (plus
    MARGIN), the cluster controller's the deeper of dm_train's printf and its
    frame + a step function + that kernel, plus IRQ; no kernel: the smallest
    stacks; any kernel (None): the deepest of the table."""
    deep = max(KERNEL_PATHS, key=KERNEL_PATHS.__getitem__)
    shallow = min((k for k in KERNEL_PATHS if KERNEL_PATHS[k]), key=KERNEL_PATHS.__getitem__)
    for names, k in (([deep, shallow], KERNEL_PATHS[deep]), ([shallow], KERNEL_PATHS[shallow])):
        s = stacks.cluster_stacks(8, names)
        assert s.worker >= k * stacks.MARGIN and s.worker % stacks.ALIGN == 0
        assert s.worker < k * stacks.MARGIN + stacks.ALIGN
        fork = stacks.TRAIN_FRAME + stacks.STEP_FRAME + k
        need = (max(stacks.HARNESS_PATH, fork) + stacks.IRQ) * stacks.MARGIN
        assert need <= s.cc < need + stacks.ALIGN
        assert s.total == s.cc + 7 * s.worker
    assert stacks.cluster_stacks(8) == stacks.cluster_stacks(8, [deep])
    assert stacks.cluster_stacks(8, [shallow]).total < stacks.cluster_stacks(8, [deep]).total
    assert stacks.cluster_stacks(8, ()).worker == stacks.ALIGN  # never 0 (PULPOS: as stack_size)


#: (model, lower options) whose projects are measured: examples, and the
#: zoo's depthwise-separable CNN at issue 20's budget
MODELS = {
    # ARENA2048: --l1 is the model's own stacks + 2,048 (several tiles per op)
    "mlp_small": ("mlp_small", ["--l1", "ARENA2048"]),
    "resnet8": ("resnet8", ["--l1", "ARENA2048"]),
    "cct-home-L3": ("cct", ["--home", "L3", "--l2", "64000"]),
    "ds_cnn-8192": ("zoo:ds_cnn", ["--l1", "8192", "--buffering", "double"]),
}


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zoo models MODELS names, exported by examples/zoo.py."""
    import sys

    sys.path.insert(0, str(ROOT / "examples"))
    import zoo

    root = tmp_path_factory.mktemp("zoo")
    models = {m.name: m for m in zoo.zoo()}
    for label in MODELS.values():
        if label[0].startswith("zoo:"):
            name = label[0][4:]
            zoo.write_model(models[name], root / name)
    return root


def _forked(proj: Path) -> set[str]:
    """The kernels the step functions of a project fork."""
    text = "".join((proj / f).read_text() for f in ("TrainingNetwork.c", "OptimizerNetwork.c"))
    return set(re.findall(r"pi_cl_team_fork\(NUM_CORES, (\w+),", text))


@needs_sdk
@pytest.mark.parametrize("label", list(MODELS))
def test_cluster_task_stacks_cover_the_emitted_code(
    label: str, overlay: Path, tmp_path: Path, zoo_dir: Path
) -> None:
    """Per program: the stacks the harness sets are the table's for the
    kernels the program forks (and program_kernels, which sizes them before
    tiling, names exactly those), and they cover gcc's whole path of the
    project: harness, step functions, the kernels they fork."""
    from deeploy_mlir.frontend.onnx_import import import_model

    assert SDK is not None
    name, opts = MODELS[label]
    d = zoo_dir / name[4:] if name.startswith("zoo:") else EXAMPLES / name
    opts = [str(stacks_of(d) + 2048) if o == "ARENA2048" else o for o in opts]
    proj = tmp_path / "p"
    r = run_cli("lower", d, "-o", proj, "--data", d / "data.npz", *opts)
    assert r.code == 0, r.err
    header = (proj / "Network.h").read_text()
    sizes = dict(re.findall(r"#define DM_(STACK_SIZE|SLAVE_STACK_SIZE) (\d+)u", header))
    cc, worker = int(sizes["STACK_SIZE"]), int(sizes["SLAVE_STACK_SIZE"])
    harness = (proj / "harness.c").read_text()
    assert "task.stack_size = DM_STACK_SIZE;" in harness
    assert "task.slave_stack_size = DM_SLAVE_STACK_SIZE;" in harness
    forked = _forked(proj)
    assert forked and forked == stacks.program_kernels(import_model(d).module)
    sized = stacks.cluster_stacks(8, forked)
    assert (cc, worker) == (sized.cc, sized.worker)
    man = json.loads((proj / "manifest.json").read_text())
    assert man["cluster_stacks"]["l1_bytes"] == sized.total == man["memory"]["L1"]["stack_bytes"]
    # the figures of the table hold for this project
    parts = stacks.step_and_harness(SDK, overlay, proj, OPTS)
    assert parts["STEP"] <= stacks.STEP_FRAME, parts
    assert parts["HARNESS"] <= stacks.HARNESS_PATH, parts
    assert parts["TRAIN"] <= stacks.TRAIN_FRAME, parts
    # and the whole path, measured in one graph: harness, step functions,
    # the kernels they fork (direct calls once the SDK's fork is inlined, or
    # the pointer pi_cl_team_fork is given: the kernels the step functions
    # name), PULPOS' printf
    flags = [*SdkFlags(SDK).cflags(overlay), *C_LANG, "-w", "-DNUM_CORES=8"]
    flags += [f"-I{proj}", f"-I{proj / 'runtime' / 'include'}"]
    kernels = sorted((proj / "runtime" / "kernels").glob("*.c"))
    srcs = [proj / "TrainingNetwork.c", proj / "OptimizerNetwork.c", proj / "harness.c"]
    for opt in OPTS:
        g = stacks.measure([*srcs, *kernels, *stacks.libc_sources(SDK)], flags, opt)
        entries = set(stacks.kernel_entries(g, kernels))
        reached: set[str] = set()
        for s in stacks.STEPS:
            todo = [s]
            while todo:
                f = todo.pop()
                if f not in reached:
                    reached.add(f)
                    todo += [c for c in g.calls.get(f, ()) if c not in entries or c in forked]
                    reached |= g.calls.get(f, set()) & entries
        assert reached & entries == forked, f"{opt}: the step functions reach other kernels"
        path = g.path("dm_train")
        assert path + stacks.IRQ <= cc, f"{opt}: cluster controller path {path} B, stack {cc} B"
        for k in forked:
            assert g.path(k) <= min(worker, KERNEL_PATHS[k]), f"{opt}: {k} {g.path(k)} B"
    # no DMA request or command is a local of the step functions any more
    for f in ("TrainingNetwork.c", "OptimizerNetwork.c"):
        for line in (proj / f).read_text().splitlines():
            if re.search(r"\bpi_cl_(dma_cmd|ram_req)_t\b", line) and "(pi_cl" not in line:
                assert line.strip().startswith("static "), line


def test_l1_budget_counts_the_stacks(tmp_path: Path) -> None:
    """The arena gets --l1 minus the stacks; the manifest and the report show
    them; a budget the stacks alone fill is the one-line budget error. The
    stacks are mlp_small's: sized for the kernels it forks (gemm's path,
    below the deepest kernel's, conv's, that STACKS holds)."""
    from deeploy_mlir.frontend.onnx_import import import_model

    d = EXAMPLES / "mlp_small"
    kernels = stacks.program_kernels(import_model(d).module)
    assert "dm_gemm_fp32" in kernels and "dm_conv2d_fp32" not in kernels
    s = stacks.cluster_stacks(8, kernels)
    assert s.cc + 7 * s.worker == s.total < STACKS == stacks.cluster_stacks(8).total
    S = s.total
    proj = tmp_path / "p"
    l1 = S + 1024
    r = run_cli("lower", d, "-o", proj, "--l1", l1, "--buffering", "single")
    assert r.code == 0, r.err
    man = json.loads((proj / "manifest.json").read_text())
    assert man["cluster_stacks"] == {
        "stack_size": s.cc,
        "slave_stack_size": s.worker,
        "cores": 8,
        "l1_bytes": S,
    }
    assert man["memory"]["L1"]["stack_bytes"] == S
    assert 0 < man["memory"]["L1"]["arena_bytes"] <= 1024
    rep = run_cli("report", d, "--l1", l1, "--buffering", "single")
    assert rep.code == 0, rep.err
    assert f"cluster stacks: {S} B ({s.cc} for the cluster controller" in rep.out
    # the stacks alone fill the budget: one line, exit 2, nothing written
    bad = tmp_path / "bad"
    r = run_cli("lower", d, "-o", bad, "--l1", S)
    assert r.code == 2
    assert r.err.strip() == (
        f"deeploy-mlir: error: the L1 budget is {S} bytes but the cluster stacks alone "
        f"take {S} ({s.cc} for the cluster controller, 7 x {s.worker} for the other "
        "cores) (--l1)"
    )
    assert not bad.exists()
    # a little more leaves an arena too small for the tiles: tile-select's error
    r = run_cli("lower", d, "-o", bad, "--l1", S + 8, "--buffering", "single")
    assert r.code == 2
    assert r.err.strip().endswith(
        f"the L1 budget is 8 bytes ({S + 8} minus {S} of cluster stacks)"
    ), r.err
    assert not bad.exists()
