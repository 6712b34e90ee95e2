"""Both targets, built for one RV32IMF core and run under QEMU, train like
onnxruntime-training; the generated Makefile fails clearly without the RISC-V
compiler; the projects are complete and deterministic per target."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    STACKS,
    example_dirs,
    load_expected,
    run_cli,
    train_like_expected,
    training_args,
)

EXAMPLES = example_dirs()
TARGETS = ("pulp-open", "gap9")


@pytest.mark.parametrize("buffering", ["single", "double"])
@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
@pytest.mark.parametrize("target", TARGETS)
def test_trains_under_qemu(d: Path, target: str, buffering: str, tmp_path: Path) -> None:
    opts = ["--target", target, "--on", "qemu", "--l1", str(STACKS + 16384)]
    opts += ["--buffering", buffering]
    got = train_like_expected(d, tmp_path, *opts)
    exp = load_expected(d)
    bench = got["bench"]
    assert len(bench["train_instret"]) == exp["steps"] * exp["accum"]
    assert len(bench["optimizer_instret"]) == exp["steps"]
    # every training step does the same work: instruction counts agree to 5 %;
    # the first one also pays the host emulation's one-time naming of each DMA
    # request (dm_host_name_request misses: ~58,000 instructions for
    # mlp_small, 11 % of its step), so it is held to the others more loosely
    t = np.array(bench["train_instret"])
    rest = t[1:] if len(t) > 1 else t
    assert rest.min() > 1000 and rest.max() < 1.05 * rest.min()
    assert rest.min() <= t[0] < 1.25 * rest.min()
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
        r = run_cli("lower", d, "-o", out, "--target", target, "--l1", STACKS + 8192)
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
    # the output's README names every file and directory it holds
    readme = files["README.md"].decode()
    top = {name.split("/")[0] for name in files}
    assert top == {
        ".deeploy-mlir",  # the marker that lets the next lower replace this output
        "Makefile",
        "Makefile.sdk",
        "Network.c",
        "Network.h",
        "OptimizerNetwork.c",
        "README.md",
        "TrainingNetwork.c",
        "data.h",
        "harness.c",
        "manifest.json",
        "runtime",
    }
    assert not [n for n in top - {"README.md", ".deeploy-mlir"} if n not in readme], readme
    assert "make rv32" in readme and "make run-qemu" in readme


_COPY = re.compile(
    r"(pi_cl_dma_cmd(?:_2d)?|pi_cl_ram_copy(?:_2d)?)\((.*?)\);", re.DOTALL
)  # a copy call and its arguments


def _copies(text: str) -> list[tuple[int, str, str, str]]:
    """(offset, call, direction, request) of every copy in `text`; the
    request is the static array passed by address with the first index of
    the request's objects (`dm_dma_cmds[4u`: a ring's slot index follows)."""
    out = []
    for m in _COPY.finditer(text):
        args = m.group(2)
        req = re.search(r"&(\w+\[\d+u)(?:[^\]]*\])?\s*$", args)
        assert req is not None, m.group(0)
        if m.group(1).startswith("pi_cl_dma"):
            direction = "in" if "PI_CL_DMA_DIR_EXT2LOC" in args else "out"
        else:  # pi_cl_ram_copy(dev, ram, loc, size, ext2loc, req)
            direction = "in" if re.search(r",\s*1\s*,\s*&\w+", args) else "out"
        out.append((m.start(), m.group(1), direction, req.group(1)))
    return out


@pytest.mark.parametrize("weights_in_l3", [False, True], ids=["l2", "l3-weights"])
@pytest.mark.parametrize("target", TARGETS)
def test_tiled_gemm_dma_and_waits(target: str, weights_in_l3: bool, tmp_path: Path) -> None:
    """For the first (tiled, double-buffered) Gemm of mlp_wide: every operand
    is copied in by the target's PMSIS call and that request is waited for
    before the kernel runs; the result tile is copied out and waited for
    after it. With the weights in L3 they come from L3 RAM first
    (pi_cl_ram_copy + pi_cl_ram_copy_wait) and then by the cluster DMA."""
    out = tmp_path / "p"
    extra = ["--weights-in-l3"] if weights_in_l3 else []
    r = run_cli("lower", EXAMPLES[-1], "-o", out, "--target", target, "--l1", STACKS + 8192, *extra)
    assert r.code == 0, r.err
    train = (out / "TrainingNetwork.c").read_text()
    fork = train.index("pi_cl_team_fork(NUM_CORES, dm_gemm_fp32")
    before, after = _copies(train[:fork]), _copies(train[fork:])
    ins = [c for c in before if c[2] == "in"]
    dma_in = {req for _, call, _, req in ins if call.startswith("pi_cl_dma")}
    assert len(dma_in) >= 2, ins  # A and B (and the bias) tiles
    first: dict[str, tuple[int, str]] = {}
    for pos, call, _, req in ins:
        first.setdefault(req, (pos, call))
    for req, (pos, call) in first.items():  # (a prefetch inside the tile loop is
        # waited for at the top of the next iteration, before it in the text)
        wait = "pi_cl_ram_copy_wait" if call.startswith("pi_cl_ram") else "pi_cl_dma_cmd_wait"
        w = train.find(f"{wait}(&{req}", pos)
        assert pos < w < fork, f"{call} on {req}: no {wait} before the Gemm"
    ram_in = {req for _, call, _, req in ins if call.startswith("pi_cl_ram")}
    assert bool(ram_in) == weights_in_l3, ins
    outs = [c for c in after if c[2] == "out" and c[1].startswith("pi_cl_dma")]
    assert outs, "the Gemm's output tile is not copied out by the cluster DMA"
    pos, _, _, req = outs[0]
    assert train.find(f"pi_cl_dma_cmd_wait(&{req}", fork + pos) > fork + pos


def test_make_run_qemu_trains(tmp_path: Path) -> None:
    """The generated Makefile's run-qemu target builds for RV32IMF, runs under
    QEMU and prints the expected losses and a BENCH line per step."""
    d = EXAMPLES[0]
    exp = load_expected(d)
    out = tmp_path / "p"
    assert run_cli("lower", d, "-o", out, *training_args(d)).code == 0
    r = subprocess.run(
        ["make", "-s", "-C", str(out), "run-qemu"], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = (r.stdout + r.stderr).splitlines()
    losses = [
        # the harness prints each float as its bits in hex, then its value: 3f800000(1.0e+00)
        np.array([int(ln.split()[-1].split("(")[0], 16)], np.uint32).view(np.float32)[0]
        for ln in lines
        if ln.startswith("OUT ")
    ]
    np.testing.assert_allclose(losses, exp["losses"], rtol=1e-4)
    bench = [ln.split() for ln in lines if ln.startswith("BENCH ")]
    assert len([b for b in bench if b[1] == "train"]) == exp["steps"] * exp["accum"]
    assert len([b for b in bench if b[1] == "optimizer"]) == exp["steps"]
    assert all(int(b[-1]) > 0 for b in bench)
