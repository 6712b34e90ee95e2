"""One RV32IMF core under QEMU: the compiler flags and the QEMU command line
that `run --on qemu`, bench/kernels.py and the runtime tests share (the
generated Makefile spells the same in make)."""

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


def qemu_command(elf: Path) -> list[str]:
    """Run `elf` on QEMU's virt machine; printf goes through semihosting,
    main's return ends QEMU, and -icount makes instruction counts exact."""
    return [
        QEMU,
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
