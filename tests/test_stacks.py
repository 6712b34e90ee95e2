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
from conftest import EXAMPLES, ROOT, STACKS, run_cli

from deeploy_mlir.emitters.c import C_LANG
from deeploy_mlir.targets import stacks
from deeploy_mlir.targets.pulp_sdk import RV32_CC, SdkFlags, pulp_sdk_root

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


def _kernel_graphs(overlay: Path) -> list[tuple[stacks.CallGraph, list[str]]]:
    assert SDK is not None
    rt = ROOT / "runtime_c"
    srcs = sorted((rt / "kernels").glob("*.c"))
    flags = [*SdkFlags(SDK).cflags(overlay), *C_LANG, f"-I{rt / 'include'}", "-DNUM_CORES=8"]
    out = []
    for opt in OPTS:
        g = stacks.measure(srcs, flags, opt)
        out.append((g, stacks.kernel_entries(g, srcs)))
    return out


@needs_sdk
def test_kernel_table_covers_the_kernels(overlay: Path) -> None:
    seen = 0
    for g, entries in _kernel_graphs(overlay):
        assert len(entries) >= 20, entries  # every dm_* kernel of runtime_c/kernels
        assert not (g.dynamic & set(entries)), "a kernel with a dynamic frame"
        for k in entries:
            p = g.path(k)
            assert p <= stacks.KERNEL_PATH, f"{k}: {p} > KERNEL_PATH {stacks.KERNEL_PATH}"
            seen = max(seen, p)
    assert seen > 0


#: (example, lower options) whose projects are measured
MODELS = {
    "mlp_small": ("mlp_small", ["--l1", str(STACKS + 2048)]),
    "resnet8": ("resnet8", ["--l1", str(STACKS + 2048)]),
    "cct-home-L3": ("cct", ["--home", "L3", "--l2", "64000"]),
}


@needs_sdk
@pytest.mark.parametrize("label", list(MODELS))
def test_cluster_task_stacks_cover_the_emitted_code(
    label: str, overlay: Path, tmp_path: Path
) -> None:
    assert SDK is not None
    name, opts = MODELS[label]
    d = EXAMPLES / name
    proj = tmp_path / "p"
    r = run_cli("lower", d, "-o", proj, "--data", d / "data.npz", *opts)
    assert r.code == 0, r.err
    header = (proj / "Network.h").read_text()
    sizes = dict(re.findall(r"#define DM_(STACK_SIZE|SLAVE_STACK_SIZE) (\d+)u", header))
    cc, worker = int(sizes["STACK_SIZE"]), int(sizes["SLAVE_STACK_SIZE"])
    harness = (proj / "harness.c").read_text()
    assert "task.stack_size = DM_STACK_SIZE;" in harness
    assert "task.slave_stack_size = DM_SLAVE_STACK_SIZE;" in harness
    # the figures of the table hold for this project
    parts = stacks.step_and_harness(SDK, overlay, proj, OPTS)
    assert parts["STEP"] <= stacks.STEP_FRAME, parts
    assert parts["HARNESS"] <= stacks.HARNESS_PATH, parts
    # and the whole path, measured in one graph: harness, step functions,
    # the kernels they fork (direct calls once the SDK's fork is inlined),
    # PULPOS' printf
    flags = [*SdkFlags(SDK).cflags(overlay), *C_LANG, "-w", "-DNUM_CORES=8"]
    flags += [f"-I{proj}", f"-I{proj / 'runtime' / 'include'}"]
    kernels = sorted((proj / "runtime" / "kernels").glob("*.c"))
    srcs = [proj / "TrainingNetwork.c", proj / "OptimizerNetwork.c", proj / "harness.c"]
    for opt in OPTS:
        g = stacks.measure([*srcs, *kernels, *stacks.libc_sources(SDK)], flags, opt)
        steps = [g.path(s) for s in stacks.STEPS]
        assert min(steps) > 0
        for s in stacks.STEPS:  # the step functions fork the kernels they call
            assert g.calls[s] & set(stacks.kernel_entries(g, kernels)), s
        path = g.path("dm_train")
        assert path + stacks.RUNTIME <= cc, f"{opt}: cluster controller path {path} B, stack {cc} B"
        forked = max(g.path(k) for k in stacks.kernel_entries(g, kernels))
        assert forked + stacks.RUNTIME <= worker, f"{opt}: kernel path {forked}, stack {worker}"
    # no DMA request or command is a local of the step functions any more
    for f in ("TrainingNetwork.c", "OptimizerNetwork.c"):
        for line in (proj / f).read_text().splitlines():
            if re.search(r"\bpi_cl_(dma_cmd|ram_req)_t\b", line) and "(pi_cl" not in line:
                assert line.strip().startswith("static "), line


def test_l1_budget_counts_the_stacks(tmp_path: Path) -> None:
    """The arena gets --l1 minus the stacks; the manifest and the report show
    them; a budget the stacks alone fill is the one-line budget error."""
    s = stacks.cluster_stacks(8)
    assert s.total == STACKS == s.cc + 7 * s.worker
    d = EXAMPLES / "mlp_small"
    proj = tmp_path / "p"
    l1 = STACKS + 1024
    r = run_cli("lower", d, "-o", proj, "--l1", l1, "--buffering", "single")
    assert r.code == 0, r.err
    man = json.loads((proj / "manifest.json").read_text())
    assert man["cluster_stacks"] == {
        "stack_size": s.cc,
        "slave_stack_size": s.worker,
        "cores": 8,
        "l1_bytes": STACKS,
    }
    assert man["memory"]["L1"]["stack_bytes"] == STACKS
    assert 0 < man["memory"]["L1"]["arena_bytes"] <= 1024
    rep = run_cli("report", d, "--l1", l1, "--buffering", "single")
    assert rep.code == 0, rep.err
    assert f"cluster stacks: {STACKS} B ({s.cc} for the cluster controller" in rep.out
    # the stacks alone fill the budget: one line, exit 2, nothing written
    bad = tmp_path / "bad"
    r = run_cli("lower", d, "-o", bad, "--l1", STACKS)
    assert r.code == 2
    assert r.err.strip() == (
        f"deeploy-mlir: error: the L1 budget is {STACKS} bytes but the cluster stacks alone "
        f"take {STACKS} ({s.cc} for the cluster controller, 7 x {s.worker} for the other "
        "cores) (--l1)"
    )
    assert not bad.exists()
    # a little more leaves an arena too small for the tiles: tile-select's error
    r = run_cli("lower", d, "-o", bad, "--l1", STACKS + 8, "--buffering", "single")
    assert r.code == 2
    assert r.err.strip().endswith(
        f"the L1 budget is 8 bytes ({STACKS + 8} minus {STACKS} of cluster stacks)"
    ), r.err
    assert not bad.exists()
