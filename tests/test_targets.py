"""Both targets, built for one RV32IMF core and run under QEMU, train like
onnxruntime-training; the generated Makefile fails clearly without the RISC-V
compiler; the projects are complete and deterministic per target."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import example_dirs, load_expected, run_cli, training_args

EXAMPLES = example_dirs()
TARGETS = ("pulp-open", "gap9")


@pytest.mark.parametrize("buffering", ["single", "double"])
@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
@pytest.mark.parametrize("target", TARGETS)
def test_trains_under_qemu(d: Path, target: str, buffering: str, tmp_path: Path) -> None:
    exp = load_expected(d)
    out = tmp_path / "o.json"
    r = run_cli(
        "run",
        d,
        *training_args(d),
        "--json",
        out,
        "--target",
        target,
        "--on",
        "qemu",
        "--l1",
        "16384",
        "--buffering",
        buffering,
    )
    assert r.code == 0, r.err
    got = json.loads(out.read_text())
    np.testing.assert_allclose(got["losses"], exp["losses"], rtol=1e-4)
    for name, want in exp["params"].items():
        np.testing.assert_allclose(got["params"][name], want, rtol=1e-4, atol=1e-6)
    bench = got["bench"]
    assert len(bench["train_instret"]) == exp["steps"] * exp["accum"]
    assert len(bench["optimizer_instret"]) == exp["steps"]
    # every training step does the same work: instruction counts agree to 5 %
    t = np.array(bench["train_instret"])
    assert t.min() > 1000 and t.max() < 1.05 * t.min()
    assert min(bench["optimizer_instret"]) > 0


def test_host_bench_lines_count_kernel_invocations(tmp_path: Path) -> None:
    d = EXAMPLES[0]
    r = run_cli("lower", d, "-o", tmp_path / "p", "--data", d / "data.npz", "--tiling", "none")
    assert r.code == 0, r.err
    run = subprocess.run(
        ["make", "-s", "-C", str(tmp_path / "p"), "run-host", "NUM_CORES=4"],
        capture_output=True,
        text=True,
        check=True,
    )
    train = [ln.split() for ln in run.stdout.splitlines() if ln.startswith("BENCH train")]
    man = json.loads((tmp_path / "p" / "manifest.json").read_text())
    # untiled on L2 every kernel call of the training step is one fork of 4 cores
    opt_calls = sum(
        1
        for ln in (tmp_path / "p" / "OptimizerNetwork.c").read_text().splitlines()
        if "pi_cl_team_fork" in ln
    )
    train_calls = man["kernel_calls"] - opt_calls
    assert [int(t[4]) for t in train] == [4 * train_calls]


def test_rv32_build_says_how_to_install_the_compiler(tmp_path: Path) -> None:
    d = EXAMPLES[0]
    assert run_cli("lower", d, "-o", tmp_path / "p").code == 0
    r = subprocess.run(
        ["make", "-C", str(tmp_path / "p"), "rv32", "RV32_CC=no-such-gcc"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    assert "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf" in r.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_project_per_target(target: str, tmp_path: Path) -> None:
    d = EXAMPLES[-1]
    texts = []
    for k in range(2):
        out = tmp_path / f"p{k}"
        r = run_cli("lower", d, "-o", out, "--target", target, "--l1", "8192")
        assert r.code == 0, r.err
        texts.append(
            {
                f.relative_to(out).as_posix(): f.read_bytes()
                for f in sorted(out.rglob("*"))
                if f.is_file()
            }
        )
    assert texts[0] == texts[1]
    files = texts[0]
    sdk = files["Makefile.sdk"].decode()
    assert "include $(RULES_DIR)/pmsis_rules.mk" in sdk
    assert ("GAP_SDK_HOME" if target == "gap9" else "PULP_SDK_HOME") in files["Makefile"].decode()
    train = files["TrainingNetwork.c"].decode()
    # a tiled Gemm: its tiles are copied into L1 by the cluster DMA (PMSIS
    # calls of both SDKs), waited for, computed, and copied out
    i = train.index("dm_gemm_fp32")
    assert "PI_CL_DMA_DIR_EXT2LOC" in train[:i] and "pi_cl_dma_cmd_wait(" in train[:i]
    assert "PI_CL_DMA_DIR_LOC2EXT" in train[i:]
    assert "pi_cl_l1_malloc" in files["Network.c"].decode()
