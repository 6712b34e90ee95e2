#!/usr/bin/env bash
# The Debian packages that build the emitted C for RV32IMF and run it under
# QEMU (the RV32/QEMU tests need them): a RISC-V gcc, picolibc, qemu-system;
# clang-19 (and lld-19) for the Siracusa cores' own Zfinx ISA (tests/test_zfinx_qemu.py,
# tests/test_sdk_compile.py, bench/gvsoc.py --isa zfinx).
set -euo pipefail
pkgs="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc clang-19 lld-19"
if dpkg -s $pkgs >/dev/null 2>&1; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
