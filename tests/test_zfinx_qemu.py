"""The emitted C built for the Siracusa cluster cores' own float ISA, Zfinx
(floats in the x registers; pulp-sdk's targets/siracusa.mk says
-march=rv32imc_zfinx_xpulpv3), with clang-19, and run under QEMU on a CPU with
Zfinx instead of F, trains to the same bits as the host emulation: every loss,
every final weight. This is the correctness side of `bench/gvsoc.py --isa
zfinx` (whose GVSoC counts cycles but is not a reference for the numbers);
the kernels run there in their Zfinx asm forms (runtime_c/include/dm_common.h
DM_FMA/DM_LDF, dm_mathf.h dm_fk/dm_clampf)."""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import EXAMPLES, STACKS, run_cli, training_args

from deeploy_mlir.targets.qemu import (
    QEMU,
    RV32_CC,
    ZFINX_CC,
    ZFINX_COMPILE,
    ZFINX_LINK,
    qemu_command,
    rv32_link,
)

pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in (ZFINX_CC, RV32_CC, QEMU)),
    reason=f"needs {ZFINX_CC}, {RV32_CC}, {QEMU} (scripts/install-toolchain.sh)",
)

#: what a run prints that must be the host's bits: the losses (OUT), the final
#: parameters (PARAM) and running statistics (STAT), each float as its hex bits
NUMBERS = ("OUT ", "OUTI ", "PARAM ", "STAT ")


def _numbers(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith(NUMBERS)]


def _makefile_size(proj: Path, name: str) -> int:
    m = re.search(rf"^{name} = (0x[0-9a-f]+)$", (proj / "Makefile").read_text(), re.M)
    assert m, name
    return int(m.group(1), 16)


def _build_zfinx(proj: Path) -> Path:
    """Every source of the project's `make rv32` compiled by clang-19 for
    rv32imc_zfinx (warning-free, -Wall -Wextra -Werror), linked by gcc."""
    srcs = [proj / f for f in ("Network.c", "TrainingNetwork.c", "OptimizerNetwork.c")]
    srcs += [proj / "harness.c", *sorted((proj / "runtime/kernels").glob("*.c"))]
    srcs.append(proj / "runtime/host/pmsis_host.c")
    inc = [f"-I{proj}", f"-I{proj / 'runtime/include'}", f"-I{proj / 'runtime/host'}"]
    objs = proj / "zfinx"
    objs.mkdir()

    def compile_one(i_src: tuple[int, Path]) -> Path:
        i, src = i_src
        out = objs / f"{i}-{src.stem}.o"
        flags = [*ZFINX_COMPILE, "-Wall", "-Wextra", "-Werror", "-DNUM_CORES=1", *inc]
        r = subprocess.run(
            [ZFINX_CC, *flags, "-c", str(src), "-o", str(out)], capture_output=True, text=True
        )
        assert r.returncode == 0, f"{src.name}:\n{r.stderr}"
        return out

    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(compile_one, enumerate(srcs)))
    elf = objs / "network.elf"
    link = rv32_link(_makefile_size(proj, "RV32_FLASH_SIZE"), _makefile_size(proj, "RV32_RAM_SIZE"))
    r = subprocess.run(
        [RV32_CC, *ZFINX_LINK, *link, *map(str, done), "-o", str(elf), "-lm"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return elf


def _fmadd_on_x_registers(elf: Path) -> int:
    """fmadd.s instructions whose operands are x registers (Zfinx code)."""
    dis = subprocess.run(
        ["riscv64-unknown-elf-objdump", "-d", "-M", "no-aliases", str(elf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return len(re.findall(r"\tfmadd\.s\s+(?:[ast]\d+|ra|sp|gp|tp|zero),", dis))


@pytest.mark.parametrize(
    "name, opts",
    [
        ("mlp_small", ["--tiling", "none"]),
        ("resnet8", ["--l1", str(STACKS + 16384), "--buffering", "double"]),
    ],
    ids=["mlp_small-untiled", "resnet8-double"],
)
def test_zfinx_build_trains_to_the_host_bits(name: str, opts: list[str], tmp_path: Path) -> None:
    d = EXAMPLES / name
    proj = tmp_path / "p"
    r = run_cli("lower", d, "-o", proj, *training_args(d), *opts)
    assert r.code == 0, r.err
    host = subprocess.run(
        ["make", "-s", "-C", str(proj), "run-host", "NUM_CORES=1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert host.returncode == 0, host.stderr[-2000:]
    elf = _build_zfinx(proj)
    # the kernels' register tiles are Zfinx asm: fmadd.s on x registers
    assert _fmadd_on_x_registers(elf) > 20
    q = subprocess.run(qemu_command(elf, isa="zfinx"), capture_output=True, text=True, timeout=600)
    assert q.returncode == 0, (q.stdout + q.stderr)[-2000:]
    # (semihosting's console is QEMU's stdout or stderr depending on the terminal)
    want, got = _numbers(host.stdout), _numbers(q.stdout + q.stderr)
    assert any(ln.startswith("OUT ") for ln in want) and any(ln.startswith("PARAM ") for ln in want)
    assert got == want
