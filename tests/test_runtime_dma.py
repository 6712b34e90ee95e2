"""runtime_c/host: the PMSIS DMA emulation catches the DMA bugs of the field.

Small C programs are built against runtime_c/host/pmsis_host.c (plain, and
with -fsanitize=address,undefined) and run; the checks read what they print
and their exit status. What is checked, from pmsis.h:
- a copy lands at its wait: before it the destination holds 0xFF poison;
- one cluster-DMA command may carry several transfers in flight (they land in
  order at its wait), but each takes one of 16 transfer ids that only the wait
  on its command's latest transfer, or pi_cl_dma_flush, gives back;
- an L3 RAM request holds one transfer: reusing it in flight stops, naming it;
- commands and requests weigh what pulp-sdk's do (8 and 96 bytes), and one
  whose storage changes while its transfer is in flight stops;
- a wait on a command or request that never had a transfer stops
  (DM_HOST_LENIENT=1: a warning, once per request);
- the L3 RAM API is declared by the SDKs' bsp headers (bsp/ram.h, with
  bsp/ram/hyperram.h or bsp/ram/aps25xxxn.h for the device), not pmsis.h;
- a source written (or a destination written) while in flight stops, and so
  do copies in flight that touch each other's bytes;
- 2-D copies (cluster DMA and L3 RAM) move the bytes numpy says;
- the counters printed at exit are the bytes moved, and a copy still in flight
  at exit fails the program;
- the emulation also builds for RV32IMF (and runs under QEMU when present)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from deeploy_mlir.cli import parse_dma_counters
from deeploy_mlir.targets.qemu import QEMU, RV32_CC, RV32_COMPILE, qemu_command, rv32_link

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
HOST = RT / "host" / "pmsis_host.c"
DMA_C = RT / "kernels" / "dma.c"  # the synchronous dm_dma_copy_in / _out
INCS = [f"-I{RT / 'include'}", f"-I{RT / 'host'}"]
WARN = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]
FLAVOURS = {
    "plain": ["-O2"],
    "asan": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
}
GCC = shutil.which("gcc")
STOP = 3  # exit status of every stop of the emulation
RNG = np.random.default_rng(7)

pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is needed to build runtime_c")

PRELUDE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmsis.h"
#include "bsp/ram.h"
#include "bsp/ram/hyperram.h"
#include "dm_dma.h"

static struct pi_device ram;
static struct pi_hyperram_conf ram_conf;

static inline void open_ram(void)
{
    pi_hyperram_conf_init(&ram_conf);
    pi_open_from_conf(&ram, &ram_conf);
    if (pi_ram_open(&ram) != 0) exit(1);
}

static inline uint32_t l3_alloc(uint32_t size)
{
    uint32_t a = 0;
    if (pi_ram_alloc(&ram, &a, size) != 0 || a == 0u) exit(1);
    return a;
}

/* "tag: xx xx ...": the bytes, in hex */
static inline void dump(const char *tag, const void *p, uint32_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    printf("%s:", tag);
    for (uint32_t i = 0; i < n; i++) printf(" %02x", b[i]);
    printf("\n");
    fflush(stdout);
}

static inline void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)(seed + 7u * i);
}
"""


def _program(body: str, globals_: str = "") -> str:
    return f"{PRELUDE}\n{globals_}\nint main(void)\n{{\n{body}\n    return 0;\n}}\n"


def _build(src: str, exe: Path, flags: list[str]) -> Path:
    c = exe.with_suffix(".c")
    c.write_text(src)
    r = subprocess.run(
        [GCC, *WARN, *flags, *INCS, str(c), str(HOST), str(DMA_C), "-o", str(exe)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return exe


@pytest.fixture(params=list(FLAVOURS), ids=list(FLAVOURS))
def run(request: pytest.FixtureRequest, tmp_path: Path):
    """run(body, globals="", env=None): build a program around `body` and run it."""
    flags = FLAVOURS[request.param]
    count = [0]

    def go(body: str, globals_: str = "", env: dict[str, str] | None = None):
        count[0] += 1
        exe = _build(_program(body, globals_), tmp_path / f"p{count[0]}", flags)
        e = {"PATH": os.environ.get("PATH", ""), "ASAN_OPTIONS": "detect_leaks=1"}
        e.update(env or {})
        return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=e)

    return go


_DUMP = re.compile(r"^(\w+):((?: [0-9a-f]{2})*)$")


def dumps(stdout: str) -> dict[str, np.ndarray]:
    """The "tag: xx xx ..." lines of dump() as byte arrays."""
    out = {}
    for line in stdout.splitlines():
        m = _DUMP.match(line.strip())
        if m:
            out[m.group(1)] = np.array([int(x, 16) for x in m.group(2).split()], dtype=np.uint8)
    return out


def stop_lines(stderr: str) -> list[str]:
    """dm-host lines that are neither counters nor warnings."""
    return [
        ln
        for ln in stderr.splitlines()
        if ln.startswith("dm-host: ") and not ln.startswith(("dm-host: dma ", "dm-host: warning"))
    ]


def filled(seed: int, n: int) -> np.ndarray:
    """The n bytes fill(p, n, seed) writes."""
    return ((seed + 7 * np.arange(n)) % 256).astype(np.uint8)


def run_fixed(run, program: str, fix: str) -> dict[str, np.ndarray]:
    """`program` with `fix` in place of its /*EXTRA*/ line runs to the end:
    its dumps."""
    r = run(program.replace("/*EXTRA*/", fix))
    assert r.returncode == 0, r.stderr
    return dumps(r.stdout)


def c_bytes(name: str, data: np.ndarray) -> str:
    vals = ", ".join(str(int(x)) for x in data.ravel())
    return f"static uint8_t {name}[{data.size}] = {{{vals}}};\n"


# ---------------------------------------------------------------- landing at the wait


def test_copies_land_at_their_wait_and_read_as_poison_before(run) -> None:
    r = run(
        r"""
    static uint8_t l2[64], l1[64], back[64];
    pi_cl_dma_cmd_t in = {0}, out = {0};
    pi_cl_ram_req_t up = {0}, down = {0};
    DM_REQ_NAME(&in, "in");
    fill(l2, 64, 1);
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 64, PI_CL_DMA_DIR_EXT2LOC, &in);
    dump("l1_before", l1, 64);
    pi_cl_dma_cmd_wait(&in);
    dump("l1_after", l1, 64);
    pi_cl_dma_cmd((uintptr_t)back, (uintptr_t)l1, 64, PI_CL_DMA_DIR_LOC2EXT, &out);
    dump("back_before", back, 64);
    pi_cl_dma_cmd_wait(&out);
    dump("back_after", back, 64);
    open_ram();
    uint32_t a = l3_alloc(64);
    pi_cl_ram_copy(&ram, a, back, 64, 0, &down);     /* L2 -> L3 */
    pi_cl_ram_copy_wait(&down);
    memset(l2, 0, 64);
    pi_cl_ram_copy(&ram, a, l2, 64, 1, &up);         /* L3 -> L2 */
    dump("l2_before", l2, 64);
    pi_cl_ram_copy_wait(&up);
    dump("l2_after", l2, 64);
    pi_ram_free(&ram, a, 64);
    /* fp32: the poison reads as NaN */
    float f[4];
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)f, sizeof f, PI_CL_DMA_DIR_EXT2LOC, &in);
    printf("nan %d\n", f[1] != f[1]);
    pi_cl_dma_cmd_wait(&in);
"""
    )
    assert r.returncode == 0, r.stderr
    d = dumps(r.stdout)
    want = filled(1, 64)
    for name in ["l1", "back", "l2"]:
        assert (d[f"{name}_before"] == 0xFF).all(), name
        np.testing.assert_array_equal(d[f"{name}_after"], want, err_msg=name)
    assert "nan 1" in r.stdout
    assert not stop_lines(r.stderr) and "warning" not in r.stderr


# ---------------------------------------------------------------- cluster DMA (mchan)


def test_one_command_may_carry_several_transfers_in_flight(run) -> None:
    """mchan completes in issue order: one wait on the command lands them all,
    and a wait on a later command lands the earlier ones too."""
    r = run(
        r"""
    static uint8_t l2[256], l1[256];
    pi_cl_dma_cmd_t cmd = {0}, a = {0}, b = {0};
    DM_REQ_NAME(&cmd, "cmd");
    fill(l2, 256, 3);
    for (int k = 0; k < 4; k++)
        pi_cl_dma_cmd((uintptr_t)(l2 + 64 * k), (uintptr_t)(l1 + 64 * k), 64,
                      PI_CL_DMA_DIR_EXT2LOC, &cmd);
    dump("before", l1, 256);
    printf("in_flight %u\n", (unsigned)dm_host_dma_in_flight());
    pi_cl_dma_cmd_wait(&cmd);
    dump("after", l1, 256);
    printf("in_flight %u\n", (unsigned)dm_host_dma_in_flight());
    memset(l2, 0x11, 256);
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 128, PI_CL_DMA_DIR_EXT2LOC, &a);
    pi_cl_dma_cmd((uintptr_t)(l2 + 128), (uintptr_t)(l1 + 128), 128, PI_CL_DMA_DIR_EXT2LOC, &b);
    pi_cl_dma_cmd_wait(&b);
    dump("fifo", l1, 256);
    pi_cl_dma_cmd_wait(&a);  /* landed already: frees its transfer id */
    pi_cl_dma_cmd_wait(&a);  /* nothing in flight: returns */
"""
    )
    assert r.returncode == 0, r.stderr
    d = dumps(r.stdout)
    assert (d["before"] == 0xFF).all()
    np.testing.assert_array_equal(d["after"], filled(3, 256))
    assert (d["fifo"] == 0x11).all()
    assert re.findall(r"in_flight (\d+)", r.stdout) == ["4", "0"]
    assert not stop_lines(r.stderr) and "warning" not in r.stderr


REUSE_LOOP = r"""
    static uint8_t l2[96], l1[96];
    pi_cl_dma_cmd_t cmd = {0};
    DM_REQ_NAME(&cmd, "tile_in");
    fill(l2, 96, 5);
    for (int it = 0; it < 12; it++) {
        for (int k = 0; k < 3; k++)
            pi_cl_dma_cmd((uintptr_t)(l2 + 32 * k), (uintptr_t)(l1 + 32 * k), 32,
                          PI_CL_DMA_DIR_EXT2LOC, &cmd);
        pi_cl_dma_cmd_wait(&cmd);
        /*EXTRA*/
        printf("iteration %d\n", it);
        fflush(stdout);
    }
    dump("l1", l1, 96);
"""


def test_a_reused_command_leaks_transfer_ids_until_a_flush(run) -> None:
    """As in both SDKs, a wait frees only the command's latest transfer id: 3
    transfers per wait leak 2 of the 16 ids, and the 8th iteration cannot get
    one for its last transfer (on the board the core stalls); pi_cl_dma_flush
    gives them back."""
    r = run(REUSE_LOOP)
    assert r.returncode == STOP
    assert re.findall(r"iteration (\d+)", r.stdout)[-1] == "6"
    (msg,) = stop_lines(r.stderr)
    assert "pi_cl_dma_cmd on 'tile_in'" in msg
    assert "all 16 cluster-DMA transfer ids are taken (16 of them" in msg
    assert "pi_cl_dma_flush frees all" in msg
    d = run_fixed(run, REUSE_LOOP, "pi_cl_dma_flush();")
    np.testing.assert_array_equal(d["l1"], filled(5, 96))


def test_more_than_16_transfers_in_flight_stop(run) -> None:
    r = run(
        r"""
    static uint8_t l2[17][8], l1[17][8];
    pi_cl_dma_cmd_t cmd[17] = {{0}};
    for (int k = 0; k < 17; k++) {
        printf("issue %d\n", k);
        fflush(stdout);
        pi_cl_dma_cmd((uintptr_t)l2[k], (uintptr_t)l1[k], 8, PI_CL_DMA_DIR_EXT2LOC, &cmd[k]);
    }
"""
    )
    assert r.returncode == STOP
    assert r.stdout.splitlines()[-1] == "issue 16"
    (msg,) = stop_lines(r.stderr)
    assert "all 16 cluster-DMA transfer ids are taken (0 of them" in msg


@pytest.mark.parametrize(
    "call,why",
    [
        ("pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 65536, dir, &c)", "does not fit 16 bits"),
        (
            "pi_cl_dma_cmd_2d((uintptr_t)l2, (uintptr_t)l1, 131072, 1024, 1024, dir, &c)",
            "17-bit length field",
        ),
        (
            "pi_cl_dma_cmd_2d((uintptr_t)l2, (uintptr_t)l1, 131070, 65536, 65535 + 1, dir, &c)",
            "row length 65536 does not fit 16 bits",
        ),
    ],
    ids=["1d-size", "2d-size", "2d-row"],
)
def test_cluster_dma_sizes_the_sdks_would_truncate_stop(run, call: str, why: str) -> None:
    r = run(
        f"""
    uint8_t *l2 = (uint8_t *)pi_l2_malloc(1 << 17), *l1 = (uint8_t *)pi_l2_malloc(1 << 17);
    pi_cl_dma_dir_e dir = PI_CL_DMA_DIR_EXT2LOC;
    pi_cl_dma_cmd_t c = {{0}};
    DM_REQ_NAME(&c, "big");
    memset(l2, 1, 1 << 17);
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 65535, dir, &c);  /* the largest 1-D */
    pi_cl_dma_cmd_wait(&c);
    {call};
    pi_cl_dma_cmd_wait(&c);
"""
    )
    assert r.returncode == STOP
    (msg,) = stop_lines(r.stderr)
    assert "'big'" in msg and why in msg


# ---------------------------------------------------------------- L3 RAM requests

RAM_REUSE = r"""
    static uint8_t w[2][128];
    pi_cl_ram_req_t req = {0};
    DM_REQ_NAME(&req, "w_tok");
    open_ram();
    uint32_t a = l3_alloc(256);
    static uint8_t init[256];
    fill(init, 256, 9);
    pi_ram_write(&ram, a, init, 256);
    pi_cl_ram_copy(&ram, a, w[0], 128, 1, &req);
    /*EXTRA*/
    pi_cl_ram_copy(&ram, a + 128, w[1], 128, 1, &req);
    pi_cl_ram_copy_wait(&req);
    dump("w", w, 256);
    pi_ram_free(&ram, a, 256);
"""


def test_an_l3_request_reused_in_flight_stops_naming_it(run) -> None:
    r = run(RAM_REUSE)
    assert r.returncode == STOP
    assert stop_lines(r.stderr) == [
        "dm-host: L3 RAM request 'w_tok' reused while a transfer is in flight "
        "(wait for it before issuing the next)"
    ]
    assert "still in flight at exit" not in r.stderr  # the stop says it all
    d = run_fixed(run, RAM_REUSE, "pi_cl_ram_copy_wait(&req);")
    np.testing.assert_array_equal(d["w"], filled(9, 256))


# ---------------------------------------------------------------- sizes and lifetimes


def test_commands_and_requests_have_the_sdk_sizes(tmp_path: Path) -> None:
    """8 and 96 bytes: pulp-sdk's pi_cl_dma_cmd_t and pi_cl_ram_req_t on RV32
    (tests/test_sdk_compile.py measures those against the SDK's headers)."""
    src = tmp_path / "s.c"
    src.write_text(
        '#include <stdio.h>\n#include "pmsis.h"\n#include "bsp/ram.h"\n'
        'int main(void) { printf("%zu %zu\\n", sizeof(pi_cl_dma_cmd_t), '
        "sizeof(pi_cl_ram_req_t)); return 0; }\n"
    )
    exe = tmp_path / "s"
    subprocess.run([GCC, *WARN, *INCS, str(src), "-o", str(exe)], check=True)  # type: ignore[list-item]
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout.split() == ["8", "96"]


def test_a_request_whose_storage_changes_in_flight_stops(run) -> None:
    """On the board the fabric controller owns an L3 request until its end:
    a request zeroed (or reused, or gone out of scope) before its wait."""
    body = r"""
    open_ram();
    static uint8_t l2[32];
    uint32_t a = l3_alloc(32);
    static pi_cl_ram_req_t req;
    DM_REQ_NAME(&req, "w_req");
    pi_cl_ram_copy(&ram, a, l2, 32, 1, &req);
    /*EXTRA*/
    pi_cl_ram_copy_wait(&req);
    pi_cl_ram_copy_wait(&req); /* finished: its done flag is set, it returns */
    printf("ok\n");
"""
    for change in ("req = (pi_cl_ram_req_t){0};", "memset(req.runtime + 8, 0, 4);"):
        r = run(body.replace("/*EXTRA*/", change))
        assert r.returncode == STOP
        (line,) = stop_lines(r.stderr)
        assert "L3->L2 transfer on 'w_req': the request's storage changed while" in line, line
    r = run(body.replace("/*EXTRA*/", ""))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_a_command_whose_storage_changes_before_its_wait_stops(run) -> None:
    body = r"""
    static uint8_t l2[32], l1[32];
    static pi_cl_dma_cmd_t cmd;
    DM_REQ_NAME(&cmd, "c_cmd");
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 32, PI_CL_DMA_DIR_EXT2LOC, &cmd);
    /*EXTRA*/
    pi_cl_dma_cmd_wait(&cmd);
    printf("ok\n");
"""
    r = run(body.replace("/*EXTRA*/", "cmd.id += 1u;"))
    assert r.returncode == STOP
    (line,) = stop_lines(r.stderr)
    assert "pi_cl_dma_cmd_wait on 'c_cmd': the command's storage changed" in line, line
    assert run(body.replace("/*EXTRA*/", "")).returncode == 0


def test_ram_device_must_be_open_and_addresses_allocated(run) -> None:
    r = run(
        r"""
    static uint8_t b[8];
    pi_cl_ram_req_t q = {0};
    pi_cl_ram_copy(&ram, 0x10000000u, b, 8, 1, &q);
"""
    )
    assert r.returncode == STOP and "the RAM device is not open (pi_ram_open)" in r.stderr
    r = run(
        r"""
    static uint8_t b[64];
    pi_cl_ram_req_t q = {0};
    open_ram();
    uint32_t a = l3_alloc(32);
    pi_cl_ram_copy(&ram, a + 16, b, 32, 1, &q);
"""
    )
    assert r.returncode == STOP and "outside every pi_ram_alloc allocation" in r.stderr
    r = run(
        r"""
    open_ram();
    uint32_t a = l3_alloc(32);
    pi_ram_free(&ram, a, 16);
"""
    )
    assert r.returncode == STOP and "allocated with 32 bytes, freed with 16" in r.stderr


# ---------------------------------------------------------------- races


@pytest.mark.parametrize("engine", ["mchan", "ram"])
def test_a_source_modified_in_flight_stops(run, engine: str) -> None:
    issue = {
        "mchan": "pi_cl_dma_cmd((uintptr_t)dst, (uintptr_t)src, 64, PI_CL_DMA_DIR_LOC2EXT, &c);",
        "ram": "pi_cl_ram_copy(&ram, a, src, 64, 0, &q);",
    }[engine]
    wait = {"mchan": "pi_cl_dma_cmd_wait(&c);", "ram": "pi_cl_ram_copy_wait(&q);"}[engine]
    r = run(
        f"""
    static uint8_t src[64], dst[64];
    pi_cl_dma_cmd_t c = {{0}};
    pi_cl_ram_req_t q = {{0}};
    DM_REQ_NAME(&c, "out_c");
    DM_REQ_NAME(&q, "out_q");
    open_ram();
    uint32_t a = l3_alloc(64);
    (void)a;
    (void)dst;
    fill(src, 64, 1);
    {issue}
    src[5] = 0;  /* the kernel writes the next tile too early */
    {wait}
"""
    )
    assert r.returncode == STOP
    name, hop = ("out_c", "L1->L2") if engine == "mchan" else ("out_q", "L2->L3")
    (msg,) = stop_lines(r.stderr)
    assert msg.startswith(f"dm-host: {hop} transfer on '{name}': source modified while in flight")


def test_a_destination_written_in_flight_stops(run) -> None:
    r = run(
        r"""
    static uint8_t l2[64], l1[64];
    pi_cl_dma_cmd_t c = {0};
    DM_REQ_NAME(&c, "x_in");
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 64, PI_CL_DMA_DIR_EXT2LOC, &c);
    l1[63] = 0;
    pi_cl_dma_cmd_wait(&c);
"""
    )
    assert r.returncode == STOP
    assert "L2->L1 transfer on 'x_in': destination written while in flight" in r.stderr


def test_copies_in_flight_must_not_touch_each_others_bytes(run) -> None:
    # write back an L1 buffer that an inbound copy is still filling
    r = run(
        r"""
    static uint8_t x[64], y[64], l1[64];
    pi_cl_dma_cmd_t in = {0}, out = {0};
    DM_REQ_NAME(&in, "x_in");
    DM_REQ_NAME(&out, "y_out");
    pi_cl_dma_cmd((uintptr_t)x, (uintptr_t)l1, 64, PI_CL_DMA_DIR_EXT2LOC, &in);
    pi_cl_dma_cmd((uintptr_t)y, (uintptr_t)(l1 + 32), 32, PI_CL_DMA_DIR_LOC2EXT, &out);
"""
    )
    assert r.returncode == STOP
    assert stop_lines(r.stderr) == [
        "dm-host: L1->L2 transfer on 'y_out' would read bytes that the L2->L1 transfer in "
        "flight on 'x_in' writes (wait for 'x_in' first)"
    ]
    # prefetch into an L2 buffer that an L3 -> L2 copy is still writing
    r = run(
        r"""
    static uint8_t l2[64], l1[64];
    pi_cl_ram_req_t q = {0};
    pi_cl_dma_cmd_t c = {0};
    DM_REQ_NAME(&q, "w_l3");
    DM_REQ_NAME(&c, "w_l2");
    open_ram();
    uint32_t a = l3_alloc(64);
    pi_cl_ram_copy(&ram, a, l2, 64, 1, &q);
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 64, PI_CL_DMA_DIR_EXT2LOC, &c);
"""
    )
    assert r.returncode == STOP
    assert "L2->L1 transfer on 'w_l2' would read bytes that the L3->L2 transfer" in r.stderr
    # two writes of the same bytes in flight at once
    r = run(
        r"""
    static uint8_t a[64], b[64], l1[64];
    pi_cl_dma_cmd_t c = {0}, d = {0};
    pi_cl_dma_cmd((uintptr_t)a, (uintptr_t)l1, 64, PI_CL_DMA_DIR_EXT2LOC, &c);
    pi_cl_dma_cmd((uintptr_t)b, (uintptr_t)(l1 + 60), 4, PI_CL_DMA_DIR_EXT2LOC, &d);
"""
    )
    assert r.returncode == STOP and "would write bytes that the L2->L1 transfer" in r.stderr


def test_interleaved_2d_write_backs_in_flight_together_are_fine(run) -> None:
    """Two column tiles of one L2 matrix written back at once (double
    buffering): their rows interleave but no byte is shared."""
    r = run(
        r"""
    static uint8_t m[8 * 32], t0[8 * 16], t1[8 * 16];
    pi_cl_dma_cmd_t c[2] = {{0}};
    memset(m, 0, sizeof m);
    memset(t0, 0xA0, sizeof t0);
    memset(t1, 0xB1, sizeof t1);
    pi_cl_dma_cmd_2d((uintptr_t)m, (uintptr_t)t0, 128, 32, 16, PI_CL_DMA_DIR_LOC2EXT, &c[0]);
    pi_cl_dma_cmd_2d((uintptr_t)(m + 16), (uintptr_t)t1, 128, 32, 16, PI_CL_DMA_DIR_LOC2EXT,
                     &c[1]);
    pi_cl_dma_cmd_wait(&c[0]);
    pi_cl_dma_cmd_wait(&c[1]);
    dump("m", m, sizeof m);
"""
    )
    assert r.returncode == 0, r.stderr
    m = dumps(r.stdout)["m"].reshape(8, 32)
    assert (m[:, :16] == 0xA0).all() and (m[:, 16:] == 0xB1).all()


def test_freeing_memory_a_copy_in_flight_uses_stops(run) -> None:
    r = run(
        r"""
    uint8_t *l2 = (uint8_t *)pi_l2_malloc(64);
    static uint8_t l1[64];
    pi_cl_dma_cmd_t c = {0};
    DM_REQ_NAME(&c, "late");
    memset(l2, 1, 64);
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 64, PI_CL_DMA_DIR_EXT2LOC, &c);
    pi_l2_free(l2, 64);
"""
    )
    assert r.returncode == STOP
    assert "pi_l2_free frees memory the L2->L1 transfer on 'late' still uses" in r.stderr


# ---------------------------------------------------------------- 2-D copies

MCHAN_2D = r"""
    static uint8_t back[sizeof big], tile[sizeof big];
    pi_cl_dma_cmd_t c = {0};
    memset(back, 0, sizeof back);
    pi_cl_dma_cmd_2d((uintptr_t)(big + OFF), (uintptr_t)tile, SIZE, STRIDE, LEN,
                     PI_CL_DMA_DIR_EXT2LOC, &c);
    pi_cl_dma_cmd_wait(&c);
    dump("tile", tile, SIZE);
    pi_cl_dma_cmd_2d((uintptr_t)(back + OFF), (uintptr_t)tile, SIZE, STRIDE, LEN,
                     PI_CL_DMA_DIR_LOC2EXT, &c);
    pi_cl_dma_cmd_wait(&c);
    dump("back", back, sizeof back);
"""

RAM_2D = r"""
    static uint8_t tile[sizeof big], back[sizeof big];
    pi_cl_ram_req_t q = {0};
    open_ram();
    uint32_t a = l3_alloc(sizeof big), b = l3_alloc(sizeof big);
    memset(back, 0, sizeof back);
    pi_ram_write(&ram, a, big, sizeof big);
    pi_ram_write(&ram, b, back, sizeof back);
    pi_cl_ram_copy_2d(&ram, a + OFF, tile, SIZE, STRIDE, LEN, 1, &q);
    pi_cl_ram_copy_wait(&q);
    dump("tile", tile, SIZE);
    pi_cl_ram_copy_2d(&ram, b + OFF, tile, SIZE, STRIDE, LEN, 0, &q);
    pi_cl_ram_copy_wait(&q);
    pi_ram_read(&ram, b, back, sizeof back);
    dump("back", back, sizeof back);
    pi_ram_free(&ram, a, sizeof big);
    pi_ram_free(&ram, b, sizeof big);
"""

# (rows, pitch) of the big matrix, box (r0, c0, h, w), bytes short of h * w
BOXES = [
    ((6, 40), (1, 3, 4, 12), 0),
    ((5, 16), (0, 0, 5, 16), 0),  # the whole matrix: stride == length
    ((9, 33), (2, 7, 6, 5), 3),  # the last row is 2 bytes, not 5
    ((4, 100), (3, 0, 1, 100), 0),  # one row
]


@pytest.mark.parametrize("engine", ["mchan", "ram"])
@pytest.mark.parametrize("geom", BOXES, ids=[f"{b[0]}-{b[1]}-{b[2]}" for b in BOXES])
def test_2d_copies_move_the_bytes_numpy_says(run, engine: str, geom) -> None:
    (rows, pitch), (r0, c0, h, w), short = geom
    big = RNG.integers(0, 255, size=(rows, pitch), dtype=np.uint8)  # 255: never the poison
    size = h * w - short
    defs = (
        c_bytes("big", big)
        + f"#define OFF {r0 * pitch + c0}u\n#define SIZE {size}u\n"
        + f"#define STRIDE {pitch}u\n#define LEN {w}u\n"
    )
    r = run(MCHAN_2D if engine == "mchan" else RAM_2D, defs)
    assert r.returncode == 0, r.stderr
    d = dumps(r.stdout)
    want_tile = big[r0 : r0 + h, c0 : c0 + w].ravel()[:size]
    np.testing.assert_array_equal(d["tile"], want_tile)
    want_back = np.zeros_like(big)
    flat = want_back[r0 : r0 + h, c0 : c0 + w].ravel()
    flat[:size] = want_tile
    want_back[r0 : r0 + h, c0 : c0 + w] = flat.reshape(h, w)
    np.testing.assert_array_equal(d["back"].reshape(rows, pitch), want_back)


# ---------------------------------------------------------------- counters and exit


def test_counters_at_exit_are_the_bytes_moved(run) -> None:
    r = run(
        r"""
    static uint8_t l2[4096], l1[4096];
    pi_cl_dma_cmd_t c = {0};
    pi_cl_ram_req_t q = {0};
    uint64_t s[4][2];
    open_ram();
    uint32_t a = l3_alloc(4096);
    pi_ram_write(&ram, a, l2, 4096);                               /* L2->L3 4096 */
    pi_cl_ram_copy(&ram, a, l2, 1000, 1, &q);                      /* L3->L2 1000 */
    pi_cl_ram_copy_wait(&q);
    pi_cl_ram_copy_2d(&ram, a, l2, 300, 100, 30, 1, &q);           /* L3->L2 300 */
    pi_cl_ram_copy_wait(&q);
    pi_cl_ram_copy(&ram, a + 8, l2 + 8, 24, 0, &q);                /* L2->L3 24 */
    pi_cl_ram_copy_wait(&q);
    for (int k = 0; k < 3; k++)                                    /* L2->L1 3 x 512 */
        pi_cl_dma_cmd((uintptr_t)(l2 + 512 * k), (uintptr_t)(l1 + 512 * k), 512,
                      PI_CL_DMA_DIR_EXT2LOC, &c);
    pi_cl_dma_cmd_wait(&c);
    pi_cl_dma_cmd_2d((uintptr_t)l2, (uintptr_t)l1, 640, 128, 64,
                     PI_CL_DMA_DIR_LOC2EXT, &c);                   /* L1->L2 640 */
    pi_cl_dma_cmd_wait(&c);
    pi_cl_dma_flush();
    pi_ram_read(&ram, a, l2, 16);                                  /* L3->L2 16 */
    pi_ram_free(&ram, a, 4096);
    dm_host_dma_stats(s);
    for (int h = 0; h < 4; h++)
        printf("stats %llu %llu\n", (unsigned long long)s[h][0], (unsigned long long)s[h][1]);
"""
    )
    assert r.returncode == 0, r.stderr
    want = {
        "L2->L1": {"transfers": 3, "bytes": 1536},
        "L1->L2": {"transfers": 1, "bytes": 640},
        "L3->L2": {"transfers": 3, "bytes": 1316},
        "L2->L3": {"transfers": 2, "bytes": 4120},
    }
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("dm-host: dma ")]
    assert lines == [
        f"dm-host: dma {hop} transfers={v['transfers']} bytes={v['bytes']}"
        for hop, v in want.items()
    ]
    assert parse_dma_counters(r.stderr) == want  # what `deeploy-mlir run --json` reads
    stats = re.findall(r"stats (\d+) (\d+)", r.stdout)
    assert [(int(t), int(b)) for t, b in stats] == [
        (v["transfers"], v["bytes"]) for v in want.values()
    ]


def test_a_copy_in_flight_at_exit_fails_the_program(run) -> None:
    r = run(
        r"""
    static uint8_t l2[16], l1[16];
    pi_cl_dma_cmd_t c = {0};
    DM_REQ_NAME(&c, "forgotten");
    pi_cl_dma_cmd((uintptr_t)l2, (uintptr_t)l1, 16, PI_CL_DMA_DIR_EXT2LOC, &c);
    printf("done\n");
"""
    )
    assert r.returncode == STOP
    assert r.stdout == "done\n"  # what the program printed is not lost
    assert "dm-host: dma L2->L1 transfers=1 bytes=16" in r.stderr
    assert stop_lines(r.stderr) == [
        "dm-host: 1 DMA transfer(s) still in flight at exit (a missing wait): L2->L1 on 'forgotten'"
    ]


UNISSUED = r"""
    pi_cl_dma_cmd_t c = {0};
    pi_cl_ram_req_t q = {0};
    DM_REQ_NAME(&c, "out[1]");
    DM_REQ_NAME(&q, "w_tok");
    pi_cl_dma_cmd_wait(&c);  /* the prologue of a double-buffered loop */
    pi_cl_dma_cmd_wait(&c);
    pi_cl_ram_copy_wait(&q);
    printf("survived\n");
"""


def test_a_wait_on_a_request_that_never_had_a_transfer(run) -> None:
    """Stops by default: on the board an mchan wait then frees transfer id 0
    and an L3 RAM wait never returns. DM_HOST_LENIENT=1 makes it a warning
    (once per request) and the program goes on; DM_HOST_LENIENT=0 is strict."""
    for env in (None, {"DM_HOST_LENIENT": "0"}, {"DM_HOST_LENIENT": ""}):
        r = run(UNISSUED, env=env)
        assert r.returncode == STOP and "survived" not in r.stdout, env
        (msg,) = stop_lines(r.stderr)
        assert msg.startswith("dm-host: pi_cl_dma_cmd_wait on 'out[1]', which has no transfer")
        assert "frees it, while another transfer may hold it" in msg
    r = run(UNISSUED, env={"DM_HOST_LENIENT": "1"})
    assert r.returncode == 0, r.stderr
    assert "survived" in r.stdout
    warns = [ln for ln in r.stderr.splitlines() if ln.startswith("dm-host: warning")]
    assert len(warns) == 2
    assert "pi_cl_dma_cmd_wait on 'out[1]', which has no transfer issued" in warns[0]
    assert "pi_cl_ram_copy_wait on 'w_tok'" in warns[1] and "never returns" in warns[1]
    r = run(UNISSUED.replace("pi_cl_dma_cmd_wait(&c);", ""))  # the L3 wait alone
    assert r.returncode == STOP
    (msg,) = stop_lines(r.stderr)
    assert "pi_cl_ram_copy_wait on 'w_tok', which has no transfer issued" in msg


# ---------------------------------------------------------------- the synchronous copies


def test_sync_box_copies_still_work(run) -> None:
    big = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    r = run(
        r"""
    static float big[4 * 5 * 6], tile[2 * 3 * 4], back[4 * 5 * 6];
    const uint32_t bs[3] = {4, 5, 6}, ts[3] = {2, 3, 4}, off[3] = {1, 2, 1};
    for (int i = 0; i < 120; i++) big[i] = (float)i;
    memset(back, 0, sizeof back);
    dm_dma_copy_in(big, tile, 4, 3, bs, ts, off);
    dm_dma_copy_out(back, tile, 4, 3, bs, ts, off);
    dump("tile", tile, sizeof tile);
    dump("back", back, sizeof back);
"""
    )
    assert r.returncode == 0, r.stderr
    d = dumps(r.stdout)
    box = big[1:3, 2:5, 1:5]
    np.testing.assert_array_equal(d["tile"].view(np.float32).reshape(2, 3, 4), box)
    want = np.zeros_like(big)
    want[1:3, 2:5, 1:5] = box
    np.testing.assert_array_equal(d["back"].view(np.float32).reshape(big.shape), want)


# ---------------------------------------------------------------- headers and targets


def test_req_name_does_nothing_against_a_real_sdk(tmp_path: Path) -> None:
    """Without the emulation's pmsis.h (no DM_HOST_EMULATION) DM_REQ_NAME
    leaves no call and evaluates neither argument."""
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    (sdk / "pmsis.h").write_text(
        "#include <stdint.h>\nuint32_t pi_core_id(void);\nint pi_cl_team_nb_cores(void);\n"
        "typedef struct { uint32_t tid; } pi_cl_dma_cmd_t;\n"
    )
    src = tmp_path / "t.c"
    src.write_text(
        '#include "dm_dma.h"\n'
        "void use(pi_cl_dma_cmd_t *c);\nvoid f(void);\nvoid f(void)\n{\n"
        "    pi_cl_dma_cmd_t c;\n"
        '    if (pi_core_id() == 0u) DM_REQ_NAME(&c, "c");\n'
        "    use(&c);\n}\n"
    )
    cmd = [GCC, *WARN, f"-I{sdk}", f"-I{RT / 'include'}", str(src)]
    r = subprocess.run([*cmd, "-c", "-o", str(tmp_path / "t.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    pre = subprocess.run([*cmd, "-E"], capture_output=True, text=True, check=True).stdout
    assert "dm_host_name_request" not in pre


def _compile(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "t.c"
    src.write_text(text)
    return subprocess.run(
        [GCC, *WARN, *INCS, "-c", str(src), "-o", str(tmp_path / "t.o")],
        capture_output=True,
        text=True,
    )


OPEN_RAM = """
int f(struct pi_device *d);
int f(struct pi_device *d)
{
    static struct CONF conf;
    CONF_init(&conf);
    pi_open_from_conf(d, &conf);
    return (int)pi_ram_open(d);
}
"""


@pytest.mark.parametrize(
    "includes,conf",
    [
        # pulp-sdk (PULPOpen, Siracusa): HyperRAM
        (
            '#include "pmsis.h"\n#include "bsp/ram.h"\n#include "bsp/ram/hyperram.h"',
            "pi_hyperram_conf",
        ),
        # gap_sdk, GAP9 EVK: the APS25xxxN OctoSPI PSRAM (its bsp/gap9_evk.h default RAM)
        (
            '#include "pmsis.h"\n#include "bsp/ram.h"\n#include "bsp/ram/aps25xxxn.h"',
            "pi_aps25xxxn_conf",
        ),
        # the umbrella header, with gap_sdk's name for the board's default RAM
        ('#include "bsp/bsp.h"', "pi_default_ram_conf"),
    ],
    ids=["pulp-sdk", "gap_sdk-gap9", "bsp"],
)
def test_bsp_headers_of_the_sdks_resolve_to_the_emulation(
    tmp_path: Path, includes: str, conf: str
) -> None:
    r = _compile(tmp_path, includes + "\n" + OPEN_RAM.replace("CONF", conf))
    assert r.returncode == 0, r.stderr


def test_the_ram_api_needs_its_bsp_header(tmp_path: Path) -> None:
    """As on the SDKs, pmsis.h alone does not declare the L3 RAM API: code
    that forgets bsp/ram.h does not build here either."""
    r = _compile(
        tmp_path,
        '#include "pmsis.h"\nvoid f(struct pi_device *d, void *p);\n'
        "void f(struct pi_device *d, void *p)\n{\n    pi_cl_ram_req_t q;\n"
        "    pi_cl_ram_copy(d, 0u, p, 4u, 1, &q);\n}\n",
    )
    assert r.returncode != 0
    assert "pi_cl_ram_req_t" in r.stderr


RV32_FLAGS = [*RV32_COMPILE, "-Wall", "-Wextra", "-Werror"]
RV32_LINK = rv32_link(0x100000, 0x100000)

RV32_MAIN = r"""
    static uint8_t l2[128], l1[128];
    pi_cl_dma_cmd_t c = {0};
    pi_cl_ram_req_t q = {0};
    DM_REQ_NAME(&c, "c");
    DM_REQ_NAME(&q, "q");
    fill(l2, 128, 2);
    pi_cl_dma_cmd_2d((uintptr_t)l2, (uintptr_t)l1, 96, 32, 24, PI_CL_DMA_DIR_EXT2LOC, &c);
    pi_cl_dma_cmd_wait(&c);
    open_ram();
    uint32_t a = l3_alloc(96);
    pi_cl_ram_copy(&ram, a, l1, 96, 0, &q);
    pi_cl_ram_copy_wait(&q);
    memset(l2, 0, 128);
    pi_cl_ram_copy(&ram, a, l2, 96, 1, &q);
    pi_cl_ram_copy_wait(&q);
    pi_ram_free(&ram, a, 96);
    dump("l2", l2, 96);
"""


def test_the_emulation_builds_for_rv32(tmp_path: Path) -> None:
    """The emulation is target C: it builds warning-free for one RV32IMF core
    (picolibc) and, when qemu-system-riscv32 is there, runs the same way."""
    if shutil.which(RV32_CC) is None:
        pytest.skip(
            f"{RV32_CC} is not installed (bash scripts/install-toolchain.sh installs "
            "gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf)"
        )
    src = tmp_path / "main.c"
    src.write_text(_program(RV32_MAIN))
    for f in [HOST, src]:  # each translation unit on its own, then linked
        r = subprocess.run(
            [RV32_CC, *RV32_FLAGS, *INCS, "-c", str(f), "-o", str(tmp_path / f"{f.stem}.o")],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
    elf = tmp_path / "main.elf"
    r = subprocess.run(
        [RV32_CC, *RV32_FLAGS, *RV32_LINK, *INCS, str(src), str(HOST), "-o", str(elf)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    if shutil.which(QEMU) is None:
        return  # built: the point of this test; running needs qemu-system-misc
    proc = subprocess.run(
        qemu_command(elf),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = proc.stdout + proc.stderr  # semihosting may print on either
    rows = filled(2, 128).reshape(4, 32)[:, :24]
    np.testing.assert_array_equal(dumps(text)["l2"], rows.ravel())
    assert parse_dma_counters(text) == {
        "L2->L1": {"transfers": 1, "bytes": 96},
        "L1->L2": {"transfers": 0, "bytes": 0},
        "L3->L2": {"transfers": 1, "bytes": 96},
        "L2->L3": {"transfers": 1, "bytes": 96},
    }
