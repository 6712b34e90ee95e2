"""pulp-sdk's compile flags for a PULPOS application, spelled out for one
chip, so the emitted C and the runtime kernels can be compiled against the
real PMSIS headers without sourcing the SDK (tests/test_sdk_compile.py, the
stack measurements of deeploy_mlir/targets/stacks.py).

Every flag is the one pulp-sdk's rules pass (the SDK's own sources are the
reference: rtos/pulpos/common/rules/pulpos/default_rules.mk and
configs/default.mk, rtos/pulpos/pulp/rules/pulpos/targets/<chip>.mk,
rtos/pmsis/pmsis_bsp/rules/pulpos/src.mk, configs/<chip>.sh), with two
changes for Debian's riscv64-unknown-elf-gcc, which is not PULP's gcc:
-march=rv32imf -mabi=ilp32f instead of rv32imcxgap9 (no Xpulp extensions;
the headers then call __builtin_pulp_* functions gcc does not know, which
only warns in the SDK's own headers), and picolibc's headers for the C
library PULPOS takes from its toolchain.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: Debian's RISC-V gcc and the ABI every measurement and compile test uses
RV32_CC = "riscv64-unknown-elf-gcc"
RV32_ARCH = ("-march=rv32imf", "-mabi=ilp32f", "--specs=picolibc.specs")

#: the siracusa target's own ISA (its targets/siracusa.mk: -march=rv32imc_zfinx_xpulpv3,
#: floats in the x registers) as far as clang-19 has it (no Xpulp), with picolibc's
#: headers; clang knows none of PULP gcc's __builtin_pulp_* that the SDK's headers
#: call, so their implicit declarations warn (in the SDK's headers only) instead
#: of failing
ZFINX_CC = "clang-19"
PICOLIBC_INCLUDE = "/usr/lib/picolibc/riscv64-unknown-elf/include"
ZFINX_ARCH = (
    "--target=riscv32-unknown-elf",
    "-march=rv32imc_zfinx",
    "-mabi=ilp32",
    "-isystem",
    PICOLIBC_INCLUDE,
    "-Wno-error=implicit-function-declaration",
)

#: chip -> (its target file's -include and chip include dir, board name)
CHIPS = {"siracusa": "siracusa", "pulp": "pulp"}


@dataclass(frozen=True)
class SdkFlags:
    """Include paths and defines of a PULPOS application for `chip`."""

    root: Path
    chip: str = "siracusa"
    #: "f": Debian gcc RV32IMF (RV32_ARCH); "zfinx": clang-19 (ZFINX_ARCH)
    isa: str = "f"

    def defines(self) -> list[str]:
        board = self.chip.upper()
        return [
            # targets/<chip>.mk
            "-D__riscv__",
            # default_rules.mk: PULPOS 2, platform gvsoc (the default), 8 PEs
            "-D__PULPOS2__",
            "-D__PLATFORM__=ARCHI_PLATFORM_GVSOC",
            "-D__PLATFORM_GVSOC__",
            "-DARCHI_CLUSTER_NB_PE=8",
            # configs/default.mk: IO over semihosting, trace level WARNING
            "-DPOS_CONFIG_IO_UART=0",
            "-DPOS_CONFIG_IO_UART_BAUDRATE=115200",
            "-DPOS_CONFIG_IO_UART_ITF=0",
            "-D__TRACE_LEVEL__=3",
            "-DPI_LOG_LOCAL_LEVEL=2",
            # src.mk: CONFIG_UART=1 needs the uDMA
            "-D__CONFIG_UDMA__",
            # pmsis_bsp rules/pulpos/src.mk: the board (configs/<chip>.sh)
            f"-DCONFIG_{board}",
            f"-DCONFIG_BOARD_VERSION_{board}",
            f"-DCONFIG_PROFILE_{board}",
        ]

    def includes(self, overlay: Path) -> list[str]:
        """`overlay`: a directory made by write_overlay (first on the path)."""
        rtos = self.root / "rtos"
        common = rtos / "pulpos" / "common"
        pulp = rtos / "pulpos" / "pulp"
        incs = [
            overlay,
            # targets/<chip>.mk
            pulp / "include" / "pos" / "chips" / self.chip,
            # default_rules.mk: CONFIG_LIBC_MINIMAL, PULPOS, archi, hal, PMSIS API
            common / "lib" / "libc" / "minimal" / "include",
            common / "include",
            common / "kernel",
            rtos / "pulpos" / "pulp_archi" / "include",
            rtos / "pulpos" / "pulp_hal" / "include",
            rtos / "pmsis" / "pmsis_api" / "include",
            # PULPOS_MODULES (configs/<chip>.sh): pulp and pmsis_bsp
            pulp / "include",
            rtos / "pmsis" / "pmsis_bsp" / "include",
        ]
        if self.chip == "siracusa":
            incs[2:2] = [
                pulp / "drivers" / "i3c" / "include",
                pulp / "drivers" / "siracusa_padmux" / "include",
            ]
        return ["-include", f"pos/chips/{self.chip}/config.h", *(f"-I{p}" for p in incs)]

    def cflags(self, overlay: Path) -> list[str]:
        # targets/<chip>.mk; default_rules.mk with PULP_RISCV_GCC_TOOLCHAIN set
        # (the SDK's setup) adds the last two
        code = ["-fdata-sections", "-ffunction-sections", "-fno-jump-tables"]
        if self.isa == "zfinx":
            return [*ZFINX_ARCH, *code, *self.defines(), *self.includes(overlay)]
        code.append("-fno-tree-loop-distribute-patterns")  # a gcc flag
        return [*RV32_ARCH, *code, *self.defines(), *self.includes(overlay)]

    @property
    def cc(self) -> str:
        return ZFINX_CC if self.isa == "zfinx" else RV32_CC

    def write_overlay(self, overlay: Path) -> Path:
        """pulp_archi's chips/<chip>/pulp_archi.h is a git symbolic link to
        pulp.h; a checkout without links has a one-line file "pulp.h" there.
        The overlay holds a header that includes the real one instead."""
        for chip in CHIPS:
            link = self.root / "rtos/pulpos/pulp_archi/include/archi/chips" / chip / "pulp_archi.h"
            if link.is_symlink() or not link.is_file() or link.stat().st_size > 64:
                continue  # a real link, or the header itself
            d = overlay / "archi" / "chips" / chip
            d.mkdir(parents=True, exist_ok=True)
            (d / "pulp_archi.h").write_text(f'#include "archi/chips/{chip}/pulp.h"\n')
        return overlay


def pulp_sdk_root(repo: Path) -> Path | None:
    """../shared/sdk/pulp-sdk beside the checkout, or $PULP_SDK_HOME."""
    import os

    for cand in (os.environ.get("PULP_SDK_HOME"), repo.parent / "shared" / "sdk" / "pulp-sdk"):
        if cand and (Path(cand) / "rtos" / "pmsis" / "pmsis_api").is_dir():
            return Path(cand)
    return None
