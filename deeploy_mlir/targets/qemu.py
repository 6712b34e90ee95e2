"""One RV32IMF core under QEMU: the compiler flags and the QEMU command line
that `run --on qemu`, bench/kernels.py and the runtime tests share (the
generated Makefile spells the same in make); and the same for RV32IMC_Zfinx
with clang-19 (tests/test_zfinx_qemu.py)."""

from __future__ import annotations

from pathlib import Path

RV32_CC = "riscv64-unknown-elf-gcc"
QEMU = "qemu-system-riscv32"
#: compile flags: RV32IMF, hard float, picolibc
RV32_COMPILE = [
    "-march=rv32imf",
    "-mabi=ilp32f",
    "-misa-spec=2.2",
    "-O2",
    "-std=gnu11",
    "-ffp-contract=off",
    "--specs=picolibc.specs",
]


#: Zfinx (floats in the x registers, the Siracusa cluster cores' ISA): clang-19
#: compiles, Debian's gcc links with picolibc's rv32imac/ilp32 multilib (ilp32 is
#: the Zfinx ABI), and QEMU runs it on a CPU with Zfinx instead of F.
#: -fno-math-errno: without it clang-19 calls libm's soft fmaf for Zfinx (with
#: F it inlines fmadd.s); fmaf, sqrtf never set errno, so the bits are the same.
ZFINX_CC = "clang-19"
PICOLIBC_INCLUDE = "/usr/lib/picolibc/riscv64-unknown-elf/include"
ZFINX_COMPILE = [
    "--target=riscv32-unknown-elf",
    "-march=rv32imc_zfinx",
    "-mabi=ilp32",
    "-isystem",
    PICOLIBC_INCLUDE,
    "-O2",
    "-std=gnu11",
    "-ffp-contract=off",
    "-fno-math-errno",
]
ZFINX_LINK = ["-march=rv32imac", "-mabi=ilp32", "--specs=picolibc.specs"]
QEMU_ZFINX_CPU = ["-cpu", "rv32,f=false,d=false,zfinx=true"]


def rv32_link(flash_size: int, ram_size: int) -> list[str]:
    """Link flags for QEMU's virt machine: semihosting crt0, flash at
    0x80000000 and RAM right after it."""
    flash = 0x80000000
    return [
        "--oslib=semihost",
        "--crt0=semihost",
        "-T",
        "picolibc.ld",
        f"-Wl,--defsym=__flash={flash:#x}",
        f"-Wl,--defsym=__flash_size={flash_size:#x}",
        f"-Wl,--defsym=__ram={flash + flash_size:#x}",
        f"-Wl,--defsym=__ram_size={ram_size:#x}",
        "-Wl,--defsym=__stack_size=0x4000",
    ]


def qemu_command(elf: Path, isa: str = "f") -> list[str]:
    """Run `elf` on QEMU's virt machine; printf goes through semihosting,
    main's return ends QEMU, and -icount makes instruction counts exact.
    `isa` "zfinx": a CPU with Zfinx instead of F (QEMU_ZFINX_CPU)."""
    return [
        QEMU,
        *(QEMU_ZFINX_CPU if isa == "zfinx" else []),
        "-machine",
        "virt",
        "-bios",
        "none",
        "-kernel",
        str(elf),
        "-nographic",
        "-semihosting-config",
        "enable=on,target=native",
        "-icount",
        "shift=0",
    ]
