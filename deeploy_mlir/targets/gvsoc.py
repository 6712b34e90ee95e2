"""GVSoC, the PULP cycle-accurate simulator: where it and pulp-runtime are,
building a generated project for it (`make gvsoc`) and running it.

Lookup, first match wins (docs/gvsoc.md):
  1. the environment: GVSOC_HOME (the install prefix: bin/gvsoc) and
     PULP_RUNTIME_HOME (pulp-runtime's directory);
  2. the file scripts/install-gvsoc.sh writes, <repo>/.gvsoc.json
     ({"gvsoc_home": ..., "pulp_runtime_home": ...});
  3. ../shared/gvsoc/install and ../shared/gvsoc/pulp-runtime next to the
     repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deeploy_mlir.errors import DeeployError

REPO = Path(__file__).resolve().parents[2]
#: the file scripts/install-gvsoc.sh writes
RECORD = REPO / ".gvsoc.json"
SHARED = REPO.parent / "shared" / "gvsoc"
RV32_CC = "riscv64-unknown-elf-gcc"
#: GVSoC targets: the end of L2 and the size of L1 runtime_c/gvsoc/gvsoc.mk
#: links for (the models' memory maps)
TARGETS = {
    "siracusa": {"l2_end": 0x1C200000, "l1": 0x40000, "l3": 0x800000},
    "pulp-open": {"l2_end": 0x1C190000, "l1": 0x10000, "l3": 0x800000},
}
#: each cluster core's boot stack at the top of L1 (gvsoc.mk's
#: CLUSTER_STACK_SIZE): the dispatch loop only; a task runs on its own stacks
BOOT_STACK = 0x80
L1_BASE = 0x10000000
#: (l3: the board's HyperRAM, runtime_c/gvsoc/ram_gvsoc.c; 8 bytes stay unused)
#: seconds a simulation may take before it counts as hung
DEFAULT_TIMEOUT = 1800


#: the cluster cores' float ISA a program is built for (runtime_c/gvsoc/gvsoc.mk's
#: GVSOC_ISA): "f" Debian gcc RV32IMFC on ../shared/gvsoc (separate f registers,
#: built so), "zfinx" clang-19 RV32IMC_Zfinx on the GVSoC of
#: scripts/build-gvsoc-zfinx.sh (floats in the x registers: the real Siracusa)
#: ("f-clang": clang-19 RV32IMFC on ../shared/gvsoc, to tell the compiler's
#: share of a difference from the ISA's)
ISAS = ("f", "zfinx", "f-clang")
ZFINX_CC = "clang-19"


@dataclass(frozen=True)
class Setup:
    gvsoc: Path  #: bin/gvsoc
    pulp_runtime: Path
    isa: str = "f"


def _recorded() -> dict[str, str]:
    try:
        doc = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in doc.items() if isinstance(v, str)} if isinstance(doc, dict) else {}


def find_setup(isa: str = "f") -> Setup:
    """GVSoC and pulp-runtime, or a one-line DeeployError naming what is missing.
    `isa` "zfinx": the GVSoC with the Zfinx register file (GVSOC_ZFINX_HOME, or
    "gvsoc_zfinx_home" of .gvsoc.json, written by scripts/build-gvsoc-zfinx.sh)."""
    if isa not in ISAS:
        raise DeeployError(f"the GVSoC ISA must be one of {', '.join(ISAS)}, not '{isa}'")
    rec = _recorded()
    if isa == "zfinx":
        home_src = os.environ.get("GVSOC_ZFINX_HOME") or rec.get("gvsoc_zfinx_home") or ""
        if not home_src or not (Path(home_src) / "bin" / "gvsoc").is_file():
            raise DeeployError(
                f"GVSoC for Zfinx: none at '{home_src}' (run scripts/build-gvsoc-zfinx.sh, "
                "or set GVSOC_ZFINX_HOME)"
            )
    else:
        home_src = os.environ.get("GVSOC_HOME") or rec.get("gvsoc_home") or str(SHARED / "install")
    prt_src = (
        os.environ.get("PULP_RUNTIME_HOME")
        or rec.get("pulp_runtime_home")
        or str(SHARED / "pulp-runtime")
    )
    gvsoc = Path(home_src) / "bin" / "gvsoc"
    if not gvsoc.is_file():
        raise DeeployError(
            f"--on gvsoc: no GVSoC simulator at {gvsoc} (set GVSOC_HOME to GVSoC's install "
            "directory, or run scripts/install-gvsoc.sh)"
        )
    if isa != "f" and shutil.which(ZFINX_CC) is None:
        raise DeeployError(f"GVSoC ISA {isa} needs {ZFINX_CC}: apt-get install clang-19")
    prt = Path(prt_src)
    if not (prt / "kernel" / "crt0.S").is_file():
        raise DeeployError(
            f"--on gvsoc: no pulp-runtime at {prt} (set PULP_RUNTIME_HOME, or run "
            "scripts/install-gvsoc.sh)"
        )
    if shutil.which(RV32_CC) is None:
        raise DeeployError(
            f"--on gvsoc needs the cross-compiler {RV32_CC}: apt-get install "
            "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf (scripts/install-toolchain.sh)"
        )
    return Setup(gvsoc, prt, isa)


def gvsoc_target(target: str, requested: str | None) -> str:
    """The GVSoC target for deeploy-mlir's --target and --gvsoc-target."""
    from deeploy_mlir.targets.target import TARGETS as DEEPLOY_TARGETS

    if target not in DEEPLOY_TARGETS:
        raise DeeployError(f"unknown target '{target}'")
    model = DEEPLOY_TARGETS[target].gvsoc  # the GVSoC model of each --target (None: none here)
    if model is None:
        raise DeeployError(
            f"--on gvsoc: there is no GVSoC model of {target} here (GVSoC is built for "
            f"{' and '.join(TARGETS)}): use --target pulp-open"
        )
    if requested is None:
        return model
    if requested not in TARGETS:
        raise DeeployError(f"--gvsoc-target must be one of {', '.join(TARGETS)}, not '{requested}'")
    return requested


def _env(setup: Setup) -> dict[str, str]:
    env = dict(os.environ)
    env["PULP_RUNTIME_HOME"] = str(setup.pulp_runtime)
    lib = setup.gvsoc.parent.parent / "lib"
    env["LD_LIBRARY_PATH"] = (
        f"{lib}:{env['LD_LIBRARY_PATH']}" if env.get("LD_LIBRARY_PATH") else str(lib)
    )
    env["PATH"] = f"{setup.gvsoc.parent}:{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _symbols(elf: Path) -> dict[str, int]:
    import subprocess

    r = subprocess.run(
        ["riscv64-unknown-elf-nm", str(elf)], capture_output=True, text=True, check=False
    )
    return {m[1]: int(m[0], 16) for m in re.findall(r"^([0-9a-f]+) \S (\S+)$", r.stdout, re.M)}


def build(
    project_dir: Path,
    target: str,
    setup: Setup,
    l1_as_l2: bool = False,
    defines: tuple[str, ...] = (),
) -> Path:
    """`make gvsoc` in the project: the ELF, or a one-line error when it does
    not fit the target's L2. `defines`: preprocessor names the application
    is built with (APP_DEFS), e.g. the harness's DM_NO_FINAL_PARAMS."""
    import subprocess

    defs = [f"APP_DEFS={' '.join('-D' + d for d in defines)}"] if defines else []
    r = subprocess.run(
        [
            *("make", "-s", "-C", str(project_dir), "gvsoc", f"GVSOC_TARGET={target}"),
            f"GVSOC_ISA={setup.isa}",
            *defs,
        ],
        capture_output=True,
        text=True,
        env=_env(setup),
    )
    text = r.stdout + r.stderr
    m = re.search(r"region `(L[12])' overflowed by (\d+) bytes", text)
    if m:
        raise DeeployError(
            f"the program does not fit GVSoC {target}'s {m.group(1)}: the linker needs "
            f"{m.group(2)} bytes more (smaller --steps/--accum data, or a smaller model)"
        )
    if r.returncode != 0:
        lines = text.splitlines()
        first = next((ln.strip() for ln in lines if "error" in ln), lines[-1] if lines else "")
        raise RuntimeError(f"building the generated C for GVSoC failed: {first}\n{text}")
    elf = project_dir / "build" / "gvsoc" / "network.elf"
    _check_fits(project_dir, elf, target, l1_as_l2)
    return elf


def l1_heap(target: str, l1_heap_start: int) -> int:
    """The bytes of L1 the heap has (pi_cl_l1_malloc: the arena and the
    cluster task's stacks): L1 less the static L1 data and the boot stacks."""
    t = TARGETS[target]
    boot = (L1_BASE + t["l1"] - 8 * BOOT_STACK) & ~15
    return (boot & ~7) - ((l1_heap_start + 7) & ~7)


def _check_fits(project_dir: Path, elf: Path, target: str, l1_as_l2: bool) -> None:
    """The arenas InitNetwork allocates, and the cluster task's stacks, fit
    the heaps the ELF leaves."""
    try:
        man = json.loads((project_dir / "manifest.json").read_text())
        mem = {lv: int(m["arena_bytes"]) for lv, m in man["memory"].items()}
        stacks = int(man.get("cluster_stacks", {}).get("l1_bytes", 0))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    t = TARGETS[target]
    syms = _symbols(elf)
    start = syms.get("__dm_l2_heap_start")
    if start is not None:
        heap = t["l2_end"] - ((start + 7) & ~7)
        # the L2 arena, and the L1 arena with --l1-as-l2 (allocated in L2)
        need = mem.get("L2", 0)
        if l1_as_l2:
            need += mem.get("L1", 0)
        if need > heap:
            raise DeeployError(
                f"the program does not fit GVSoC {target}'s L2: its L2 arena needs {need} "
                f"bytes and {heap} are left after the code and data"
            )
    if mem.get("L3", 0) > t["l3"] - 8:
        raise DeeployError(
            f"the L3 arena ({mem['L3']} bytes) does not fit GVSoC {target}'s HyperRAM "
            f"({t['l3']} bytes)"
        )
    l1_start = syms.get("__l1_heap_start")
    if l1_start is None:
        return
    free = l1_heap(target, l1_start)
    arena = 0 if l1_as_l2 else mem.get("L1", 0)
    # each block is rounded to 8 bytes by the allocator
    need = ((arena + 7) & ~7) + ((stacks + 7) & ~7)
    if need > free:
        raise DeeployError(
            f"the L1 arena ({arena} bytes) and the cluster stacks ({stacks} bytes) do not "
            f"fit GVSoC {target}'s L1: {free} bytes are left after the runtime's L1 data "
            f"and boot stacks (use --l1 {free - 8} or less)"
        )


def run(elf: Path, target: str, setup: Setup, timeout: float = DEFAULT_TIMEOUT) -> str:
    """Run `elf` on GVSoC in a scratch directory (it writes files in its cwd):
    the program's output, or a one-line error when it hangs or fails."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="deeploy-mlir-gvsoc-") as scratch:
        cmd = [str(setup.gvsoc), f"--target={target}", "--binary", str(elf.resolve()), "run"]
        if shutil.which("stdbuf"):
            cmd = ["stdbuf", "-oL", "-eL", *cmd]
        # its own process group: on a timeout the launcher and the simulator
        # it started are killed together
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=scratch,
            env=_env(setup),
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, _ = proc.communicate()
            last = stdout.strip().splitlines()[-1:] or ["(no output)"]
            raise DeeployError(
                f"GVSoC {target}: the program hung: no end after {timeout:g} s "
                f"(last line: {last[0][:120]})"
            ) from None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        r = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    text = r.stdout + r.stderr
    if r.returncode != 0 or "DONE" not in r.stdout.split():
        lines = [ln for ln in text.splitlines() if ln.strip()]
        err = next((ln for ln in lines if "ERROR" in ln or "dm-gvsoc" in ln), None)
        if err and "cannot allocate the arenas" in err:
            raise DeeployError(
                f"the arenas do not fit GVSoC {target}'s memory (InitNetwork: {err.strip()})"
            )
        if err and "cannot start the cluster task" in err:
            raise DeeployError(
                f"the cluster stacks do not fit GVSoC {target}'s L1 next to the arena "
                f"({err.strip()})"
            )
        last = err or (lines[-1] if lines else "")
        raise RuntimeError(f"the program failed on GVSoC ({r.returncode}): {last}\n{text}")
    return r.stdout
