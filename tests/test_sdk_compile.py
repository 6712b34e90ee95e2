"""The emitted C and the runtime kernels compile against the real pulp-sdk.

Every emitted .c file of several example projects (tiled, double buffered;
one with every tensor in L3, so the L3 RAM calls and bsp headers are in) and
every runtime_c kernel is compiled for siracusa against ../shared/sdk/pulp-sdk
with the include paths and defines its PULPOS rules pass
(deeploy_mlir/targets/pulp_sdk.py says which rule gives which) and the
flags the generated Makefile.sdk sets (read from that file), by Debian's
riscv64-unknown-elf-gcc for RV32IMF. No warning may point into our code.

Warnings located in the SDK's own headers are filtered out by path: with a
gcc that is not PULP's, its headers warn about the __builtin_pulp_*
functions they call and about their own unused parameters; they are the
SDK's, not ours, and every such line names a file under the SDK's root.

gap_sdk: its PMSIS API headers are not in ../shared and are not
redistributed here (only the search index of its public repository holds
them), so there is no gap_sdk counterpart of this test; the gap9 output
shares every emitted file but the RAM configuration header with pulp-open's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, STACKS, run_cli

from deeploy_mlir.targets.pulp_sdk import RV32_CC, ZFINX_CC, SdkFlags, pulp_sdk_root

SDK = pulp_sdk_root(ROOT)
pytestmark = [
    pytest.mark.skipif(SDK is None, reason="pulp-sdk sources (../shared/sdk/pulp-sdk) missing"),
    pytest.mark.skipif(shutil.which(RV32_CC) is None, reason=f"{RV32_CC} missing"),
]

#: (example, lower options): tiled at a 2 KB arena (several tiles, DMA rings,
#: decomposed copies), and all tensors in L3 (the L3 RAM requests)
PROJECTS = {
    "mlp_small-tiled": ("mlp_small", ["--l1", str(STACKS + 2048)]),
    "resnet8-tiled": ("resnet8", ["--l1", str(STACKS + 2048)]),
    "cct-home-L3": ("cct", ["--home", "L3", "--l2", "64000"]),
}
GENERATED = ("Network.c", "TrainingNetwork.c", "OptimizerNetwork.c", "harness.c")


@pytest.fixture(scope="module")
def overlay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert SDK is not None
    return SdkFlags(SDK).write_overlay(tmp_path_factory.mktemp("overlay"))


def _app_cflags(makefile_sdk: Path) -> list[str]:
    """The APP_CFLAGS of the generated Makefile.sdk (what the SDK's rules get)."""
    flags: list[str] = []
    for line in makefile_sdk.read_text().splitlines():
        m = re.match(r"APP_CFLAGS \+= (.*)", line)
        if m:
            flags += m.group(1).split()
    return flags


def _compile(src: Path, flags: list[str], out: Path, cc: str = RV32_CC) -> list[str]:
    """Compile `src`; returns the diagnostics that do not point into the SDK."""
    assert SDK is not None
    r = subprocess.run([cc, *flags, "-c", str(src), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, f"{src.name}:\n{r.stderr}"
    sdk = str(SDK.resolve())
    ours = []
    for line in r.stderr.splitlines():
        m = re.match(r"^(\S+?):\d+:\d+: (warning|error|note)", line)
        if m and not str(Path(m.group(1)).resolve()).startswith(sdk):
            ours.append(line)
    return ours


@pytest.mark.parametrize(
    "isa",
    [
        "f",
        pytest.param(
            "zfinx",
            marks=pytest.mark.skipif(shutil.which(ZFINX_CC) is None, reason=f"{ZFINX_CC} missing"),
        ),
    ],
)
@pytest.mark.parametrize("label", list(PROJECTS))
def test_emitted_files_compile_against_pulp_sdk(
    label: str, isa: str, overlay: Path, tmp_path: Path
) -> None:
    """isa f: Debian gcc RV32IMF; zfinx: the siracusa target's own ISA
    (targets/siracusa.mk: -march=rv32imc_zfinx_xpulpv3) as far as clang-19
    has it, -march=rv32imc_zfinx -mabi=ilp32: the kernels' Zfinx asm forms."""
    assert SDK is not None
    name, opts = PROJECTS[label]
    d = EXAMPLES / name
    proj = tmp_path / "p"
    r = run_cli("lower", d, "-o", proj, "--data", d / "data.npz", *opts)
    assert r.code == 0, r.err
    app = _app_cflags(proj / "Makefile.sdk")
    assert "-std=gnu11" in app and "-Wall" in app and "-Wextra" in app, app
    sdk = SdkFlags(SDK, isa=isa)
    flags = sdk.cflags(overlay) + [
        f.replace("-I.", f"-I{proj}", 1) if f.startswith("-I.") else f for f in app
    ]
    flags = [f"-I{proj / f[2:]}" if f.startswith("-Iruntime") else f for f in flags]
    for src in [*(proj / g for g in GENERATED), *sorted((proj / "runtime/kernels").glob("*.c"))]:
        ours = _compile(src, flags, tmp_path / f"{src.stem}.o", sdk.cc)
        assert not ours, f"{label} {src.name}:\n" + "\n".join(ours)


def test_the_l3_driver_is_built_when_the_code_uses_l3(tmp_path: Path) -> None:
    """pmsis_bsp builds the RAM driver only under its make variable; pulp-open's
    target file does not set it (siracusa's does), so Makefile.sdk does."""
    d = EXAMPLES / "mlp_small"
    for target, var in (("pulp-open", "CONFIG_HYPERRAM = 1"), ("gap9", "CONFIG_APS25XXXN = 1")):
        for home, want in (("L3", True), ("L2", False)):
            proj = tmp_path / f"{target}-{home}"
            r = run_cli("lower", d, "-o", proj, "--home", home, "--target", target)
            assert r.code == 0, r.err
            assert (var in (proj / "Makefile.sdk").read_text()) == want, (target, home)
    assert SDK is not None
    rules = (SDK / "rtos/pmsis/pmsis_bsp/rules/pulpos/src.mk").read_text()
    assert "ifeq '$(CONFIG_HYPERRAM)' '1'" in rules  # the variable the SDK reads


def test_iso_c_does_not_compile_the_sdk_headers(overlay: Path, tmp_path: Path) -> None:
    """Why the emitted Makefiles say gnu11: the SDK's headers use `asm`."""
    assert SDK is not None
    src = tmp_path / "m.c"
    src.write_text('#include "pmsis.h"\nint main(void) { return (int)pi_core_id(); }\n')
    # -O2: without optimization eu_v3.h's evt_read32 is a macro that does
    # not preprocess (a directive inside it); every SDK build optimizes
    flags = [*SdkFlags(SDK).cflags(overlay), "-O2"]
    ok = subprocess.run([RV32_CC, *flags, "-std=gnu11", "-c", str(src), "-o", str(tmp_path / "a")])
    assert ok.returncode == 0
    iso = subprocess.run(
        [RV32_CC, *flags, "-std=c11", "-c", str(src), "-o", str(tmp_path / "b")],
        capture_output=True,
        text=True,
    )
    assert iso.returncode != 0 and "asm" in iso.stderr


def test_host_emulation_types_have_the_sdk_sizes(overlay: Path, tmp_path: Path) -> None:
    """pi_cl_dma_cmd_t and pi_cl_ram_req_t of the host emulation weigh what
    pulp-sdk's weigh on RV32 (sizes read from the object's symbols)."""
    assert SDK is not None
    probe = (
        '#include "pmsis.h"\n#include "bsp/ram.h"\n'
        "char cmd_size[sizeof(pi_cl_dma_cmd_t)];\nchar req_size[sizeof(pi_cl_ram_req_t)];\n"
    )
    src = tmp_path / "probe.c"
    src.write_text(probe)
    rt = ROOT / "runtime_c"
    sizes = {}
    for label, flags in (
        ("sdk", [*SdkFlags(SDK).cflags(overlay), "-std=gnu11", "-O2"]),
        ("host", [*SdkFlags(SDK).cflags(overlay)[:3], f"-I{rt / 'host'}", "-std=gnu11"]),
    ):
        obj = tmp_path / f"{label}.o"
        subprocess.run([RV32_CC, *flags, "-w", "-c", str(src), "-o", str(obj)], check=True)
        nm = subprocess.run(
            ["riscv64-unknown-elf-nm", "-S", str(obj)], capture_output=True, text=True, check=True
        ).stdout
        sizes[label] = {ln.split()[3]: int(ln.split()[1], 16) for ln in nm.splitlines()}
    assert sizes["sdk"] == {"cmd_size": 8, "req_size": 96}
    assert sizes["host"] == sizes["sdk"]
