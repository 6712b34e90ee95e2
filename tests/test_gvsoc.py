"""`deeploy-mlir run/test --on gvsoc`: the emitted C trains on GVSoC's siracusa
model (fabric controller, 8-core cluster, L1 TCDM, L2, cluster DMA), built
with Debian's riscv64-unknown-elf-gcc over runtime_c/gvsoc (docs/gvsoc.md),
and matches onnxruntime-training's losses and weights (the examples'
expected.json / reference.json) at rtol 1e-4.

CI runs the cases of CI_CASES and the error cases; `pytest --gvsoc-full`
adds FULL_CASES (every example x untiled / tiled single / tiled double) and
Deeploy's Transformer_Train and CCT2_LP folders. A missing GVSoC FAILS
these tests (scripts/install-gvsoc.sh is part of the test command): nothing
is skipped. Each run's wall time is printed (pytest -s) and written to
build/gvsoc-times.jsonl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    EXAMPLES,
    ROOT,
    SHARED_MODELS,
    STACKS,
    CliResult,
    run_cli,
    stacks_of,
    training_args,
)

#: tiled L1 arena budgets (bytes) per model: (single, double), passed as
#: --l1 STACKS + budget (--l1 also holds the cluster stacks); each is checked
#: to be below the untiled schedule's L1 arena (twice that when double
#: buffered: two buffers per tile), so the run takes several tiles
TILED_L1 = {
    "mlp_small": (700, 1400),
    "mlp_wide": (4096, 8192),
    "ds_cnn": (4096, 8192),
    "resnet8": (4096, 8192),
    "autoencoder": (2048, 4096),
    "cct": (8192, 16384),
    "cct_lora": (8192, 16384),
}
MODES = ("untiled", "single", "double")
ALL_CASES = [(m, mode) for m in TILED_L1 for mode in MODES]
#: the representative subset CI runs (about 2 minutes on 2 cores)
CI_CASES = [("mlp_small", "untiled"), ("mlp_small", "single"), ("ds_cnn", "double")]
FULL_CASES = [c for c in ALL_CASES if c not in CI_CASES]
DEEPLOY_FOLDERS = ["Transformer_Train", "CCT2_LP"]


def _reference(d: Path) -> dict:
    ref = d / "reference.json"
    return json.loads((ref if ref.is_file() else d / "expected.json").read_text())


def _record(label: str, seconds: float) -> None:
    print(f"gvsoc {label}: {seconds:.1f} s wall")
    out = ROOT / "build" / "gvsoc-times.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a") as f:
        f.write(json.dumps({"case": label, "seconds": round(seconds, 1)}) + "\n")


def _arena_l1(tmp: Path, d: Path, *opts: str) -> int:
    out = tmp / "lowered"
    r = run_cli("lower", d, "-o", out, *map(str, training_args(d)), *opts)
    assert r.code == 0, r.err
    man = json.loads((out / "manifest.json").read_text())
    shutil.rmtree(out)
    return int(man["memory"]["L1"]["arena_bytes"])


def _train_on_gvsoc(name: str, mode: str, tmp: Path) -> None:
    d = EXAMPLES / name
    if mode == "untiled":
        opts = ["--tiling", "untiled", "--buffering", "single"]
    else:
        l1 = TILED_L1[name][0 if mode == "single" else 1]
        untiled = _arena_l1(tmp, d, "--tiling", "untiled", "--buffering", "single")
        untiled *= 2 if mode == "double" else 1
        assert l1 < untiled, f"{name}: L1 budget {l1} does not force tiling ({untiled})"
        opts = ["--tiling", "tiled", "--buffering", mode, "--l1", str(STACKS + l1)]
    out = tmp / "out.json"
    t0 = time.monotonic()
    r = run_cli("run", d, *training_args(d), *opts, "--on", "gvsoc", "--json", out)
    _record(f"{name} {mode}", time.monotonic() - t0)
    assert r.code == 0, r.err
    got = json.loads(out.read_text())
    ref = _reference(d)
    _check_like_reference(d, got)
    bench = got["bench"]
    n = ref["steps"] * ref["accum"]
    assert len(bench["train_cycles"]) == n and len(bench["optimizer_cycles"]) == ref["steps"]
    # cycles of the cluster, not a count of calls: thousands per step at least
    assert min(bench["train_cycles"]) > 1000 and min(bench["optimizer_cycles"]) > 100


#: L3 on the boards' HyperRAM (runtime_c/gvsoc/ram_gvsoc.c): (model, options);
#: the first ones run in CI
L3_CASES = [
    ("mlp_small", ["--home", "L3"]),
    ("mlp_small", ["--weights-in-l3", "--tiling", "tiled", "--l1", str(STACKS + 1400)]),
    ("ds_cnn", ["--home", "L3", "--l2", "64000", "--tiling", "tiled", "--l1", str(STACKS + 8192)]),
    ("mlp_wide", ["--weights-in-l3", "--buffering", "double-l3", "--l1", str(STACKS + 8192)]),
]
L3_CI = 2


def _check_like_reference(d: Path, got: dict) -> None:
    ref = _reference(d)
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=1e-4, err_msg="losses")
    assert set(got["params"]) == set(ref["params"])
    for k, want in ref["params"].items():
        have = np.asarray(got["params"][k]).reshape(np.shape(want))
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-6, err_msg=k)


def _train_l3(name: str, opts: list[str], tmp: Path) -> None:
    d = EXAMPLES / name
    out, keep = tmp / "out.json", tmp / "p"
    t0 = time.monotonic()
    r = run_cli("run", d, *training_args(d), *opts, "--on", "gvsoc", "--json", out, "--keep", keep)
    _record(f"{name} {' '.join(opts)}", time.monotonic() - t0)
    assert r.code == 0, r.err
    man = json.loads((keep / "manifest.json").read_text())
    assert man["memory"]["L3"]["arena_bytes"] > 0, "the case must put buffers in L3"
    _check_like_reference(d, json.loads(out.read_text()))
    _check_l3_initial_values(keep, man)


def _section(elf: Path, name: str) -> tuple[int, int] | None:
    """(address, size) of an ELF section, None if it has none."""
    r = subprocess.run(
        ["riscv64-unknown-elf-size", "-A", str(elf)], capture_output=True, text=True, check=True
    )
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == name:
            return int(f[2]), int(f[1])
    return None


def _check_l3_initial_values(keep: Path, man: dict) -> None:
    """The initial values of the parameters whose home is L3 are in the ELF's
    .dm_l3_init (the manifest's L3 weights, byte for byte) inside the L2 heap,
    where the L2 arena is allocated: the program's L2 footprint (what the heap
    starts after) does not hold them, and the numbers above show that the
    harness reads them before the arena is written."""
    from deeploy_mlir.targets import gvsoc

    elf = keep / "build" / "gvsoc" / "network.elf"
    l3_weights = sum(
        b["bytes"] for b in man["buffers"] if b["kind"] == "weight" and b["level"] == "L3"
    )
    sec = _section(elf, ".dm_l3_init")
    if l3_weights == 0:
        assert sec is None or sec[1] == 0
        return
    assert sec is not None and sec[1] == l3_weights
    heap = gvsoc._symbols(elf)["__dm_l2_heap_start"]
    assert heap <= sec[0] < heap + 8  # the arena's place: the heap's first bytes
    rodata = _section(elf, ".rodata")
    assert rodata is not None and rodata[0] + rodata[1] <= heap


@pytest.mark.parametrize(
    ("name", "opts"), L3_CASES[:L3_CI], ids=[f"{n}-{'_'.join(o)}" for n, o in L3_CASES[:L3_CI]]
)
def test_trains_with_l3_on_gvsoc(name: str, opts: list[str], tmp_path: Path) -> None:
    _train_l3(name, opts, tmp_path)


@pytest.mark.gvsoc_full
@pytest.mark.parametrize(
    ("name", "opts"), L3_CASES[L3_CI:], ids=[f"{n}-{'_'.join(o)}" for n, o in L3_CASES[L3_CI:]]
)
def test_trains_with_l3_on_gvsoc_full(name: str, opts: list[str], tmp_path: Path) -> None:
    _train_l3(name, opts, tmp_path)


@pytest.mark.parametrize(("name", "mode"), CI_CASES, ids=[f"{n}-{m}" for n, m in CI_CASES])
def test_trains_like_onnxruntime_on_gvsoc(name: str, mode: str, tmp_path: Path) -> None:
    _train_on_gvsoc(name, mode, tmp_path)


@pytest.mark.gvsoc_full
@pytest.mark.parametrize(("name", "mode"), FULL_CASES, ids=[f"{n}-{m}" for n, m in FULL_CASES])
def test_trains_like_onnxruntime_on_gvsoc_full(name: str, mode: str, tmp_path: Path) -> None:
    _train_on_gvsoc(name, mode, tmp_path)


@pytest.mark.gvsoc_full
def test_cct_on_gvsoc_pulp_open(tmp_path: Path) -> None:
    """The other GVSoC model: 64 KiB of L1, which holds the 16 KiB arena and
    the cluster task's stacks (the harness's stack_size / slave_stack_size)."""
    d = EXAMPLES / "cct"
    out = tmp_path / "out.json"
    opts = [
        "--l1",
        str(STACKS + 16384),
        "--on",
        "gvsoc",
        "--gvsoc-target",
        "pulp-open",
        "--json",
        out,
    ]
    t0 = time.monotonic()
    r = run_cli("run", d, *training_args(d), *opts)
    _record("cct pulp-open", time.monotonic() - t0)
    assert r.code == 0, r.err
    _check_like_reference(d, json.loads(out.read_text()))


@pytest.mark.gvsoc_full
@pytest.mark.parametrize("folder", DEEPLOY_FOLDERS)
def test_deeploy_folder_on_gvsoc(folder: str) -> None:
    t0 = time.monotonic()
    r = run_cli("test", SHARED_MODELS / folder, "--on", "gvsoc")
    _record(f"deeploy {folder}", time.monotonic() - t0)
    assert r.code == 0, r.out + r.err
    assert "outputs match" in r.out


# ---- a bad setup: one line, exit 2 ------------------------------------------

MLP = EXAMPLES / "mlp_small"


def _one_line_error(r: CliResult, *words: str) -> None:
    assert r.code == 2, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    for w in words:
        assert w in lines[0], lines[0]


def _run_mlp(*extra: str, env: dict[str, str] | None = None) -> CliResult:
    """`run mlp_small --on gvsoc` with `extra` options, in environment `env`."""
    cmd = [sys.executable, "-m", "deeploy_mlir.cli", "run", str(MLP)]
    cmd += [*map(str, training_args(MLP)), "--on", "gvsoc", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return CliResult(p.returncode, p.stdout, p.stderr)


def test_gvsoc_options_need_on_gvsoc() -> None:
    r = run_cli("run", MLP, *training_args(MLP), "--gvsoc-target", "siracusa")
    _one_line_error(r, "--gvsoc-target", "--on gvsoc")


def test_gap9_has_no_gvsoc_model() -> None:
    _one_line_error(_run_mlp("--target", "gap9"), "no GVSoC model of gap9")


def test_no_simulator(tmp_path: Path) -> None:
    env = dict(os.environ, GVSOC_HOME=str(tmp_path / "nowhere"))
    _one_line_error(_run_mlp(env=env), "no GVSoC simulator", "GVSOC_HOME")


def test_no_pulp_runtime(tmp_path: Path) -> None:
    env = dict(os.environ, PULP_RUNTIME_HOME=str(tmp_path / "nowhere"))
    _one_line_error(_run_mlp(env=env), "no pulp-runtime", "PULP_RUNTIME_HOME")


def test_no_cross_compiler(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("make", "gcc", "sh"):
        found = shutil.which(tool)
        assert found is not None
        (bin_ / tool).symlink_to(found)
    env = dict(os.environ, PATH=str(bin_))
    _one_line_error(_run_mlp(env=env), "riscv64-unknown-elf-gcc")


def test_hang_stops_at_the_time_limit() -> None:
    # ds_cnn: about 14 s of simulation, far over the 1 s limit (mlp_small's
    # whole run can end within 1 s on an idle machine)
    d = EXAMPLES / "ds_cnn"
    t0 = time.monotonic()
    r = run_cli("run", d, *training_args(d), "--on", "gvsoc", "--gvsoc-timeout", "1")
    _one_line_error(r, "hung", "1 s")
    assert time.monotonic() - t0 < 120


def test_program_too_big_for_l2(tmp_path: Path) -> None:
    """A program whose L2 arena does not fit what the ELF leaves of siracusa's
    L2 is refused after the build (the arena of a real build, enlarged), and
    one whose code and data do not fit is refused at the link."""
    from deeploy_mlir.errors import DeeployError
    from deeploy_mlir.targets import gvsoc

    keep = tmp_path / "p"
    r = run_cli("run", MLP, *training_args(MLP), "--on", "gvsoc", "--keep", keep)
    assert r.code == 0, r.err
    elf = keep / "build" / "gvsoc" / "network.elf"
    man = json.loads((keep / "manifest.json").read_text())
    man["memory"]["L2"]["arena_bytes"] = 0x200000  # all of siracusa's L2
    (keep / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(DeeployError, match="does not fit GVSoC siracusa's L2"):
        gvsoc._check_fits(keep, elf, "siracusa", False)
    man["memory"]["L2"]["arena_bytes"] = 1024
    man["memory"]["L3"]["arena_bytes"] = 0x800000  # all of the HyperRAM
    (keep / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(DeeployError, match="does not fit GVSoC siracusa's HyperRAM"):
        gvsoc._check_fits(keep, elf, "siracusa", False)
    # an L1 arena that fits the --l1 meaning but not, with the cluster
    # stacks, what the ELF leaves of siracusa's 256 KiB L1
    from deeploy_mlir.targets.stacks import cluster_stacks

    man["memory"]["L3"]["arena_bytes"] = 0
    free = gvsoc.l1_heap("siracusa", gvsoc._symbols(elf)["__l1_heap_start"])
    assert 250_000 < free < 256 * 1024  # the runtime keeps little of L1
    S = man["cluster_stacks"]["l1_bytes"]  # MLP's own stacks: gemm's, not conv's
    assert S == stacks_of(MLP) == cluster_stacks(8, ["dm_gemm_fp32"]).total < STACKS
    man["memory"]["L1"]["arena_bytes"] = free - S
    (keep / "manifest.json").write_text(json.dumps(man))
    gvsoc._check_fits(keep, elf, "siracusa", False)  # exactly full: fits
    man["memory"]["L1"]["arena_bytes"] = free - S + 8
    (keep / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(
        DeeployError, match=r"and the cluster stacks .* do not fit GVSoC siracusa's L1"
    ):
        gvsoc._check_fits(keep, elf, "siracusa", False)
    gvsoc._check_fits(keep, elf, "siracusa", True)  # --l1-as-l2: the arena is in L2
    # and 3 MB of data in the program: the linker's overflow, one line
    harness = keep / "harness.c"
    text = harness.read_text().replace("return dm_status;", "return dm_status + dm_big[0];")
    harness.write_text("volatile char dm_big[3000000] = {1};\n" + text)
    with pytest.raises(DeeployError, match="does not fit GVSoC siracusa's L2: the linker needs"):
        gvsoc.build(keep, "siracusa", gvsoc.find_setup())
