"""The pieces the parallel-kernel tests on GVSoC share (test_gvsoc_kernels,
test_data_kernels_gvsoc, test_zoo_gvsoc): a test program (team_program) runs
the test's kernel calls on the cluster once per team size (TEAMS) and start
order of the team's cores, and prints `R tag team order word...` lines; it is
built twice, against the host emulation and for GVSoC
(runtime_c/gvsoc/gvsoc.mk), and the two runs' lines are compared."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from deeploy_mlir.targets import gvsoc

RT = Path(__file__).resolve().parents[1] / "runtime_c"

#: the team sizes every kernel call of a team_program runs at
TEAMS = (1, 2, 3, 8)
#: the start orders per team size: order 0 starts core c FORK_DELAY * c busy-wait
#: iterations late, order 1 FORK_DELAY * (7 - c) (runtime_c/gvsoc's
#: dm_gvsoc_fork_delay; the host emulation has no such delay)
ORDERS, FORK_DELAY = 2, 97
#: the `R` lines of each tag: one per team size and order
RUNS = len(TEAMS) * ORDERS

#: dump(tag, n, order, v, words): the `R` line of `words` 32-bit words from v
DUMP = r"""
static void dump(const char *tag, int n, int order, const void *v, unsigned words)
{
    printf("R %s %d %d", tag, n, order);
    for (unsigned i = 0; i < words; i++) {
        uint32_t u;
        memcpy(&u, (const char *)v + 4u * i, 4);
        printf(" %08lx", (unsigned long)u);
    }
    printf("\n");
}
"""

#: the fabric controller's main: open the cluster, run `run` on it, close it
CLUSTER_MAIN = r"""
int main(void)
{
    struct pi_device cluster;
    struct pi_cluster_conf conf;
    struct pi_cluster_task task;
    pi_cluster_conf_init(&conf);
    pi_open_from_conf(&cluster, &conf);
    if (pi_cluster_open(&cluster) != 0) return 1;
    pi_cluster_send_task_to_cl(&cluster, pi_cluster_task(&task, run, NULL));
    pi_cluster_close(&cluster);
    return 0;
}
"""


#: team_program's cluster entry: `body` for each team size and start order
RUN = r"""
static void run(void *arg)
{
    (void)arg;
    static const int teams[%(nteams)d] = {%(teams)s};
    for (int t = 0; t < %(nteams)d; t++) {
        for (int order = 0; order < %(orders)d; order++) {
            int n = teams[t];
#ifdef DM_GVSOC
            for (int c = 0; c < 8; c++)
                dm_gvsoc_fork_delay[c] = (uint32_t)(order == 0 ? c : 7 - c) * %(delay)du;
#endif
%(body)s        }
    }
    printf("DONE\n");
}
"""


def team_program(header: str, globals_: str, body: str) -> str:
    """A whole test program: stdio, string, pmsis and the kernels' `header`,
    DUMP, the test's `globals_` (data, buffers, its poison()), the cluster
    entry `run` (RUN), which runs `body` (statements indented for its loops,
    a leading newline aside; `n` is the team size, `order` the start order)
    for each of TEAMS and ORDERS with the order's start delays set, and
    CLUSTER_MAIN."""
    run = RUN % {
        "nteams": len(TEAMS),
        "teams": ", ".join(map(str, TEAMS)),
        "orders": ORDERS,
        "delay": FORK_DELAY,
        "body": body.removeprefix("\n"),
    }
    includes = '#include <stdio.h>\n#include <string.h>\n#include "pmsis.h"\n'
    return f'\n{includes}#include "{header}"\n{DUMP}{globals_}{run}{CLUSTER_MAIN}'


def c_floats(name: str, a: np.ndarray, qualifier: str = "static") -> str:
    """A C array definition holding `a` as exact float32 literals."""
    vals = ", ".join(f"{float(v)!r}f" for v in np.asarray(a, np.float32).ravel())
    return f"{qualifier} float {name}[{a.size}] = {{{vals}}};\n"


def results(text: str) -> dict[tuple[str, int, int], list[str]]:
    """(tag, team size, start order) -> the hex words of each `R` line."""
    out = {}
    for line in text.splitlines():
        p = line.split()
        if p[:1] == ["R"]:
            out[(p[1], int(p[2]), int(p[3]))] = p[4:]
    return out


def assert_one_result_per_kernel(got: dict[tuple[str, int, int], list[str]]) -> None:
    """Every team size and start order gives a kernel the same words (no race,
    no sum split across cores)."""
    for kernel in {k for k, _, _ in got}:
        runs = {tuple(v) for (k, _, _), v in got.items() if k == kernel}
        assert len(runs) == 1, f"{kernel}: results differ across team sizes or start orders"


def run_host_and_gvsoc(
    tmp: Path,
    program: str,
    host_flags: Sequence[str] = (),
    gvsoc_defs: str = "",
    timeout: float = 600,
) -> tuple[str, str]:
    """Build `program` (k.c) with every kernel of runtime_c against the host
    emulation (`host_flags` added to gcc's) and for GVSoC siracusa
    (`gvsoc_defs` as gvsoc.mk's APP_DEFS), run both, return their outputs."""
    (tmp / "k.c").write_text(program)
    (tmp / "runtime").symlink_to(RT)
    kernels = [f"runtime/kernels/{p.name}" for p in sorted((RT / "kernels").glob("*.c"))]
    host = subprocess.run(
        [
            *("gcc", "-std=gnu11", *host_flags, "-O2", "-Wall", "-Wextra", "-Werror"),
            *("-Iruntime/include", "-Iruntime/host", "k.c", *kernels),
            *("runtime/host/pmsis_host.c", "-o", "k", "-lm"),
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
    )
    assert host.returncode == 0, host.stderr
    hr = subprocess.run([str(tmp / "k")], capture_output=True, text=True, check=True)
    setup = gvsoc.find_setup()
    defs = [f"APP_DEFS={gvsoc_defs}"] if gvsoc_defs else []
    b = subprocess.run(
        [
            *("make", "-s", "-f", "runtime/gvsoc/gvsoc.mk", "APP_SRCS=k.c " + " ".join(kernels)),
            *("APP_INCS=-Iruntime/include", *defs, "OUT=build/k.elf"),
            f"PULP_RUNTIME_HOME={setup.pulp_runtime}",
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
    )
    assert b.returncode == 0, b.stdout + b.stderr
    return hr.stdout, gvsoc.run(tmp / "build" / "k.elf", "siracusa", setup, timeout=timeout)
