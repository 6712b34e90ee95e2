"""runtime_c/gvsoc's PMSIS calls on GVSoC siracusa, one program: the L1 and L2
allocators (a request larger than the heap gets NULL, frees merge back into
the largest block), 16 cluster-DMA transfers in flight at once on 16
commands (mchan's 16 transfer counters), a 2-D transfer, the cycle counter,
a fork's team size, and a 1-D transfer too large for mchan's 16-bit size,
which stops the program with a `dm-gvsoc:` line (PULPOS would truncate it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from deeploy_mlir.targets import gvsoc

RT = Path(__file__).resolve().parents[1] / "runtime_c"

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "pmsis.h"

#define CHUNK 256
static uint8_t *l2_src, *l2_dst, *l1_buf;
static volatile int team_seen[8];

static void note_team(void *arg)
{
    (void)arg;
    team_seen[pi_core_id()] = pi_cl_team_nb_cores();
}

static void task(void *arg)
{
    (void)arg;
    pi_cl_dma_cmd_t cmds[16];
    for (int i = 0; i < 16; i++)
        pi_cl_dma_cmd((uint32_t)(l2_src + i * CHUNK), (uint32_t)(l1_buf + i * CHUNK), CHUNK,
                      PI_CL_DMA_DIR_EXT2LOC, &cmds[i]);
    for (int i = 15; i >= 0; i--) pi_cl_dma_cmd_wait(&cmds[i]);
    int bad = 0;
    for (int i = 0; i < 16 * CHUNK; i++) bad += l1_buf[i] != (uint8_t)(i * 7 + 1);
    printf("dma16 bad=%d\n", bad);
    /* 2-D out: 16 rows of 128 bytes, every 256 bytes in L2 */
    pi_cl_dma_cmd_2d((uint32_t)l2_dst, (uint32_t)l1_buf, 16 * 128, 256, 128,
                     PI_CL_DMA_DIR_LOC2EXT, &cmds[0]);
    pi_cl_dma_cmd_wait(&cmds[0]);
    bad = 0;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 128; c++) bad += l2_dst[r * 256 + c] != l1_buf[r * 128 + c];
    printf("dma2d bad=%d\n", bad);
    pi_perf_conf(1u << PI_PERF_CYCLES);
    pi_perf_reset();
    pi_perf_start();
    for (volatile int i = 0; i < 1000; i++) {
    }
    pi_perf_stop();
    unsigned a = pi_perf_read(PI_PERF_CYCLES);
    pi_perf_start();
    for (volatile int i = 0; i < 1000; i++) {
    }
    pi_perf_stop();
    unsigned b = pi_perf_read(PI_PERF_CYCLES);
    printf("perf a=%u b=%u\n", a, b);
    pi_cl_team_fork(3, note_team, NULL);
    printf("team %d %d %d %d nb=%d\n", team_seen[0], team_seen[1], team_seen[2], team_seen[3],
           pi_cl_team_nb_cores());
    printf("oversize\n");
    pi_cl_dma_cmd((uint32_t)l2_src, (uint32_t)l1_buf, 65536u, PI_CL_DMA_DIR_EXT2LOC, &cmds[0]);
    printf("not reached\n");
}

int main(void)
{
    struct pi_device cluster;
    struct pi_cluster_conf conf;
    struct pi_cluster_task t;
    pi_cluster_conf_init(&conf);
    pi_open_from_conf(&cluster, &conf);
    pi_cluster_open(&cluster);
    uint32_t l1 = dm_gvsoc_l1_largest_free(), l2 = dm_gvsoc_l2_largest_free();
    void *a = pi_cl_l1_malloc(&cluster, l1);
    void *b = pi_cl_l1_malloc(&cluster, 8);
    pi_cl_l1_free(&cluster, a, (int)l1);
    void *c = pi_cl_l1_malloc(&cluster, l1);
    printf("l1 largest=%lu full=%d null=%d again=%d\n", (unsigned long)l1, a != NULL, b == NULL,
           c == a);
    pi_cl_l1_free(&cluster, c, (int)l1);
    void *x = pi_l2_malloc(64), *y = pi_l2_malloc(64), *z = pi_l2_malloc(64);
    pi_l2_free(x, 64);
    pi_l2_free(z, 64);
    pi_l2_free(y, 64);
    void *big = pi_l2_malloc((int)l2 + 8);
    printf("l2 largest=%lu merged=%d null=%d\n", (unsigned long)l2,
           dm_gvsoc_l2_largest_free() == l2, big == NULL);
    /* the whole L2 heap is memory of the model: its last word too */
    volatile uint32_t *all = pi_l2_malloc((int)l2);
    all[0] = 0x12345678u;
    all[l2 / 4u - 1u] = 0x9abcdef0u;
    printf("l2 ends ok=%d\n", all[0] == 0x12345678u && all[l2 / 4u - 1u] == 0x9abcdef0u);
    pi_l2_free((void *)all, (int)l2);
    l2_src = pi_l2_malloc(16 * CHUNK);
    l2_dst = pi_l2_malloc(16 * 256);
    l1_buf = pi_cl_l1_malloc(&cluster, 16 * CHUNK);
    for (int i = 0; i < 16 * CHUNK; i++) l2_src[i] = (uint8_t)(i * 7 + 1);
    pi_cluster_send_task_to_cl(&cluster, pi_cluster_task(&t, task, NULL));
    pi_cluster_close(&cluster);
    return 0;
}
"""


def test_runtime_calls_on_gvsoc(tmp_path: Path) -> None:
    (tmp_path / "r.c").write_text(PROGRAM)
    (tmp_path / "runtime").symlink_to(RT)
    setup = gvsoc.find_setup()
    b = subprocess.run(
        [
            *("make", "-s", "-f", "runtime/gvsoc/gvsoc.mk", "APP_SRCS=r.c", "OUT=build/r.elf"),
            f"PULP_RUNTIME_HOME={setup.pulp_runtime}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert b.returncode == 0, b.stdout + b.stderr
    with pytest.raises(RuntimeError) as e:
        gvsoc.run(tmp_path / "build" / "r.elf", "siracusa", setup, timeout=300)
    out = str(e.value)
    # the first line of the error names the stop, the rest is the program's output
    assert "dm-gvsoc: pi_cl_dma_cmd: size does not fit 16 bits (65536)" in out.splitlines()[0]
    assert "not reached" not in out
    m = re.search(r"l1 largest=(\d+) full=1 null=1 again=1", out)
    assert m, out
    # siracusa's 256 KiB L1 less the 8 cores' boot stacks (gvsoc.BOOT_STACK:
    # the dispatch loop only, a task's stacks come from this heap) and the
    # static L1 data
    assert 250_000 < int(m.group(1)) <= 256 * 1024 - 8 * gvsoc.BOOT_STACK
    m = re.search(r"l2 largest=(\d+) merged=1 null=1", out)
    assert m and int(m.group(1)) > 1_500_000, out
    assert "l2 ends ok=1" in out
    assert "dma16 bad=0" in out and "dma2d bad=0" in out
    m = re.search(r"perf a=(\d+) b=(\d+)", out)
    assert m, out
    a, b2 = int(m.group(1)), int(m.group(2))
    assert a > 1000 and 1.5 * a < b2 < 2.5 * a  # two equal loops accumulate
    assert "team 3 3 3 0 nb=3" in out


# ---- the cluster task's stacks ------------------------------------------------

STACKS_PROGRAM = r"""
#include <stdio.h>
#include "pmsis.h"

static volatile uint32_t sp_of[8];
static volatile uint32_t deep_sink;

static inline uint32_t dm_sp(void)
{
    uint32_t sp;
    __asm__ __volatile__("mv %0, sp" : "=r"(sp));
    return sp;
}

/* writes all `n` bytes of a local array just below its caller's frame */
static __attribute__((noinline)) void use_stack(uint32_t n)
{
    volatile uint8_t buf[n];
    for (uint32_t i = 0; i < n; i++) buf[i] = (uint8_t)i;
    deep_sink = buf[0];
}

static void worker(void *arg)
{
    (void)arg;
    sp_of[pi_core_id()] = dm_sp();
    if (pi_core_id() == WORKER_DEEP_CORE) use_stack(WORKER_DEEP);
}

static void task(void *arg)
{
    (void)arg;
    sp_of[0] = dm_sp();
    use_stack(CC_DEEP);
    pi_cl_team_fork(0, worker, NULL);
}

int main(void)
{
    struct pi_device cluster;
    struct pi_cluster_conf conf;
    struct pi_cluster_task t;
    pi_cluster_conf_init(&conf);
    pi_open_from_conf(&cluster, &conf);
    pi_cluster_open(&cluster);
    /* L1 taken before the task, as the harness's L1 arena: the stacks come
     * after it in the heap, and an overflow of the controller's lands in it */
    void *arena = pi_cl_l1_malloc(&cluster, 4096);
    uint32_t before = dm_gvsoc_l1_largest_free();
    pi_cluster_task(&t, task, NULL);
    t.stack_size = CC_SIZE;
    t.slave_stack_size = WORKER_SIZE;
    int r = pi_cluster_send_task_to_cl(&cluster, &t);
    printf("sent=%d stacks=%lu heap_before=%lu heap_after=%lu\n", r, (unsigned long)t.stacks,
           (unsigned long)before, (unsigned long)dm_gvsoc_l1_largest_free());
    for (int c = 0; c < 8; c++)
        printf("core %d sp=%lu used=%lu\n", c, (unsigned long)sp_of[c],
               (unsigned long)dm_gvsoc_stack_used(c));
    /* a task whose stacks do not fit L1 is not run: -1 */
    struct pi_cluster_task huge;
    pi_cluster_task(&huge, task, NULL);
    huge.stack_size = 0x100000;
    printf("huge=%d\n", pi_cluster_send_task_to_cl(&cluster, &huge));
    pi_cluster_close(&cluster);
    pi_cl_l1_free(&cluster, arena, 4096);
    printf("DONE\n");
    return 0;
}
"""

CC_SIZE, WORKER_SIZE = 1968, 848


def _stacks_program(tmp: Path, **defs: int) -> str:
    """Build STACKS_PROGRAM with `defs` and run it on GVSoC siracusa: its
    output (a program stopped by the runtime raises RuntimeError)."""
    (tmp / "s.c").write_text(STACKS_PROGRAM)
    (tmp / "runtime").symlink_to(RT)
    setup = gvsoc.find_setup()
    d = " ".join(f"-D{k}={v}" for k, v in defs.items())
    b = subprocess.run(
        [
            *("make", "-s", "-f", "runtime/gvsoc/gvsoc.mk", "APP_SRCS=s.c", "OUT=build/s.elf"),
            f"APP_DEFS={d}",
            f"PULP_RUNTIME_HOME={setup.pulp_runtime}",
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
    )
    assert b.returncode == 0, b.stdout + b.stderr
    return gvsoc.run(tmp / "build" / "s.elf", "siracusa", setup, timeout=300)


def _defs(**over: int) -> dict[str, int]:
    base = {
        "CC_SIZE": CC_SIZE,
        "WORKER_SIZE": WORKER_SIZE,
        "CC_DEEP": 1000,
        "WORKER_DEEP": 400,
        "WORKER_DEEP_CORE": 5,
    }
    return base | over


def test_task_runs_on_its_stacks(tmp_path: Path) -> None:
    """The task's stack_size / slave_stack_size are the stacks the cores run
    on, as PULPOS lays them out (pe-eu-v3.S): one block of stack_size + 7 x
    slave_stack_size bytes from the L1 heap; the cluster controller's sp
    starts at stacks + stack_size, core i's at stacks + stack_size + i x
    slave_stack_size. The paint measures what each core used; a task whose
    stacks do not fit L1 is refused (-1)."""
    out = _stacks_program(tmp_path, **_defs())
    m = re.search(r"sent=0 stacks=(\d+) heap_before=(\d+) heap_after=(\d+)", out)
    assert m, out
    base, before, after = map(int, m.groups())
    total = CC_SIZE + 7 * WORKER_SIZE
    assert 0x10000000 <= base < 0x10040000  # in siracusa's L1
    assert before - after == total  # taken from the L1 heap (a multiple of 8)
    cores = {
        int(c): (int(sp), int(used))
        for c, sp, used in re.findall(r"core (\d) sp=(\d+) used=(\d+)", out)
    }
    assert sorted(cores) == list(range(8)), out
    tops = [base + CC_SIZE + i * WORKER_SIZE for i in range(8)]
    lows = [base] + [base + CC_SIZE + (i - 1) * WORKER_SIZE for i in range(1, 8)]
    for c, (sp, used) in cores.items():
        # the sp inside the function lies in the core's own stack, near its top
        assert lows[c] < sp < tops[c], (c, sp, lows[c], tops[c])
        assert tops[c] - sp < 128, (c, tops[c] - sp)
        assert 0 < used < tops[c] - lows[c], (c, used)
    # the local arrays: 1000 bytes on the controller, 400 on core 5 only
    assert cores[0][1] >= 1000 and cores[5][1] >= 400
    assert all(cores[c][1] < 400 for c in (1, 2, 3, 4, 6, 7))
    assert "huge=-1" in out and "DONE" in out


@pytest.mark.parametrize(
    ("over", "core", "field"),
    [
        ({"CC_DEEP": 2500}, 0, "stack_size"),
        ({"WORKER_DEEP": 1200, "WORKER_DEEP_CORE": 3}, 3, "slave_stack_size"),
    ],
    ids=["cluster-controller", "worker"],
)
def test_too_small_a_stack_is_detected(
    over: dict[str, int], core: int, field: str, tmp_path: Path
) -> None:
    """A task that writes more stack than its stack_size (or a fork more than
    slave_stack_size) stops the program with a `dm-gvsoc:` line naming the
    core: the sizes the task sets are the ones the cores run on."""
    with pytest.raises(RuntimeError) as e:
        _stacks_program(tmp_path, **_defs(**over))
    first = str(e.value).splitlines()[0]
    assert f"dm-gvsoc: the cluster task overflowed the stack of core {core}" in first, first
    assert f"pi_cluster_task.{field}" in first
    assert "DONE" not in str(e.value)


def test_app_flags_hold_the_emitted_codes_language(tmp_path: Path) -> None:
    """gvsoc.mk compiles the application with C_LANG (-ffp-contract=off among
    them), as the host and SDK builds do: no make run passes them itself."""
    from deeploy_mlir.emitters.c import C_LANG

    (tmp_path / "x.c").write_text("int x;\n")
    r = subprocess.run(
        [
            *("make", "-n", "-f", str(RT / "gvsoc" / "gvsoc.mk"), "APP_SRCS=x.c"),
            *("OUT=b/p.elf", "PULP_RUNTIME_HOME=/nonexistent", "b/obj/app/x.o"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    cmd = next(ln for ln in r.stdout.splitlines() if ln.rstrip().endswith("b/obj/app/x.o"))
    for flag in C_LANG:
        assert flag in cmd.split(), (flag, cmd)
