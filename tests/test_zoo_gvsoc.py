"""The zoo's kernels (runtime_c/include/dm_kernels_ext.h) on GVSoC siracusa's
8-core cluster, in parallel, as tests/test_gvsoc_kernels.py does for gemm and
conv: ragged sizes, teams of 1, 2, 3 and 8 cores, each twice with the cores
started in two orders (dm_gvsoc_fork_delay). The host emulation runs the
same program. Kernels of plain float arithmetic and sqrtf (AdamW,
BatchNorm and its gradient, dropout, GatherGrad, Concat/Split, compare,
the activation gradients, clip, leaky relu) must give the host's bits on
every team and order: a race (two cores writing one element, a core
reading what another writes) would make bits depend on the order. Those
with exp and log (sigmoid, tanh, the cross-entropy with ignore_index,
log-softmax: the "libm_" cases, which called picolibc's expf/logf there
and glibc's here until runtime_c/include/dm_mathf.h) compute them with the
same C on both: the host's bits too. Both builds use -ffp-contract=off, as the emitted
code's C_LANG says (runtime_c/gvsoc/gvsoc.mk's own flags do not, so it is
passed in APP_DEFS). Output buffers start as a NaN pattern, so a skipped
element shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gvsoc_program import (
    RUNS,
    assert_one_result_per_kernel,
    c_floats,
    results,
    run_host_and_gvsoc,
    team_program,
)

RNG = np.random.default_rng(2020)
POISON = "7fc0dead"


def _floats(name: str, a: np.ndarray) -> str:
    return c_floats(name, a, "static const")


def _ints(name: str, a: np.ndarray, ctype: str) -> str:
    vals = ", ".join(str(int(v)) for v in a.ravel())
    return f"static const {ctype} {name}[{a.size}] = {{{vals}}};\n"


N_ADAM, BN = 37, (3, 5, 7)
DROP = 101
G_OUT, G_ROWS, G_IN, G_N = 2, 5, 3, 9
SB, SC = 7, 5  # cross-entropy rows, classes
LS = (3, 6, 2)  # log-softmax [outer, len, inner]

GLOBALS = r"""
%(data)s
static float Y[%(ysize)d], Y2[%(ysize)d], Y3[%(ysize)d], S1[64], S2[64], S3[64], S4[64];
static uint8_t U[%(ysize)d];

static void dump8(const char *tag, int n, int order, const uint8_t *v, unsigned len)
{
    printf("R %%s %%d %%d", tag, n, order);
    for (unsigned i = 0; i < len; i++) printf(" %%02x", (unsigned)v[i]);
    printf("\n");
}

static void poison(void)
{
    uint32_t nan = 0x7fc0deadu;
    for (unsigned i = 0; i < %(ysize)du; i++) {
        memcpy(&Y[i], &nan, 4); memcpy(&Y2[i], &nan, 4); memcpy(&Y3[i], &nan, 4); U[i] = 0xee;
    }
    for (unsigned i = 0; i < 64u; i++) {
        memcpy(&S1[i], &nan, 4); memcpy(&S2[i], &nan, 4); memcpy(&S3[i], &nan, 4);
        memcpy(&S4[i], &nan, 4);
    }
}
"""

#: the statements run for each team size n and start order
BODY = r"""
            /* AdamW, step 3, adam_mode 1 and 0 */
            for (int mode = 0; mode < 2; mode++) {
                poison();
                memcpy(Y, aW, sizeof aW); memcpy(Y2, aM1, sizeof aM1); memcpy(Y3, aM2, sizeof aM2);
                static const float lr = 0.01f;
                static const int64_t step = 3;
                dm_adamw_args_t ad = {Y, aG, Y2, Y3, &lr, &step, NULL, %(NA)du,
                                      0.9f, 0.999f, 1e-6f, 0.01f, 1u, (uint32_t)mode};
                pi_cl_team_fork(n, dm_adamw_fp32, &ad);
                dump(mode ? "adamw1_w" : "adamw0_w", n, order, Y, %(NA)du);
                dump(mode ? "adamw1_m" : "adamw0_m", n, order, Y2, %(NA)du);
                dump(mode ? "adamw1_v" : "adamw0_v", n, order, Y3, %(NA)du);
            }
            /* BatchNorm forward and gradient */
            poison();
            dm_batchnorm_args_t bn = {bX, bScale, bBias, bRm, bRv, Y, S1, S2, S3, S4,
                                      %(BN0)du, %(BN1)du, %(BN2)du, 1e-5f, 0.9f};
            pi_cl_team_fork(n, dm_batchnorm_stats_fp32, &bn);
            pi_cl_team_fork(n, dm_batchnorm_apply_fp32, &bn);
            dump("bn_y", n, order, Y, %(BNS)du);
            dump("bn_rm", n, order, S1, %(BN1)du);
            dump("bn_rv", n, order, S2, %(BN1)du);
            dump("bn_mean", n, order, S3, %(BN1)du);
            dump("bn_inv", n, order, S4, %(BN1)du);
            dm_batchnorm_grad_args_t bg = {bdY, bX, bScale, S3, S4, Y2, S1, S2,
                                           %(BN0)du, %(BN1)du, %(BN2)du};
            pi_cl_team_fork(n, dm_batchnorm_grad_reduce_fp32, &bg);
            pi_cl_team_fork(n, dm_batchnorm_grad_apply_fp32, &bg);
            dump("bn_dx", n, order, Y2, %(BNS)du);
            dump("bn_ds", n, order, S1, %(BN1)du);
            dump("bn_db", n, order, S2, %(BN1)du);
            /* dropout and its gradient */
            poison();
            dm_dropout_args_t dr = {dX, Y, U, %(DROP)du, 12345u, 7u, 12582912u, 1.3333334f, 1u, 0u};
            pi_cl_team_fork(n, dm_dropout_fp32, &dr);
            dump("drop_y", n, order, Y, %(DROP)du);
            dump8("drop_mask", n, order, U, %(DROP)du);
            dm_dropout_grad_args_t dg = {dX, U, Y2, %(DROP)du, 1.3333334f};
            pi_cl_team_fork(n, dm_dropout_grad_fp32, &dg);
            dump("drop_dx", n, order, Y2, %(DROP)du);
            /* GatherGrad (scatter-add) and Gather */
            poison();
            dm_gather_grad_args_t gg = {gdY, gIdx, Y, %(GO)du, %(GR)du, %(GI)du, %(GN)du};
            pi_cl_team_fork(n, dm_gather_grad_fp32, &gg);
            dump("gather_grad", n, order, Y, %(GO)du * %(GR)du * %(GI)du);
            dm_gather_args_t ga = {Y, gIdx, Y2, %(GO)du, %(GR)du, %(GI)du, %(GN)du};
            pi_cl_team_fork(n, dm_gather_fp32, &ga);
            dump("gather", n, order, Y2, %(GO)du * %(GN)du * %(GI)du);
            /* Concat of three parts, Split back */
            poison();
            const float *cParts[3] = {cP0, cP1, cP2};
            const uint32_t cLen[3] = {2u, 1u, 4u}, cOff[3] = {0u, 2u, 3u};
            for (uint32_t k = 0; k < 3u; k++) {
                dm_concat_args_t cc = {Y, (float *)cParts[k], 2u, 7u, cOff[k], cLen[k], 3u};
                pi_cl_team_fork(n, dm_concat_fp32, &cc);
            }
            dump("concat", n, order, Y, 2u * 7u * 3u);
            for (uint32_t k = 0; k < 3u; k++) {
                dm_concat_args_t cs = {Y, Y2 + 6u * cOff[k], 2u, 7u, cOff[k], cLen[k], 3u};
                pi_cl_team_fork(n, dm_split_fp32, &cs);
            }
            dump("split", n, order, Y2, 2u * 7u * 3u);
            /* compare with broadcasting, Where */
            poison();
            dm_compare_args_t cm = {cA, cB, U, 3u, {3u, 4u, 5u, 0u}, {20u, 5u, 1u, 0u},
                                    {0u, 0u, 1u, 0u}, 1u};
            pi_cl_team_fork(n, dm_compare_fp32, &cm);
            dump8("ge", n, order, U, 60u);
            dm_where_args_t wh = {U, cA, cB, Y, 3u, {3u, 4u, 5u, 0u}, {20u, 5u, 1u, 0u},
                                  {20u, 5u, 1u, 0u}, {0u, 0u, 1u, 0u}};
            pi_cl_team_fork(n, dm_where_fp32, &wh);
            dump("where", n, order, Y, 60u);
            /* arithmetic activations and gradients */
            for (uint32_t op = 2; op <= 6; op++) {
                poison();
                dm_unary_ext_args_t ue = {cA, Y, 60u, op, 0.1f, -0.5f, 0.75f};
                pi_cl_team_fork(n, dm_unary_ext_fp32, &ue);
                char tag[16]; snprintf(tag, sizeof tag, "unary%%u", (unsigned)op);
                dump(tag, n, order, Y, 60u);
            }
            for (uint32_t op = 0; op <= 4; op++) {
                poison();
                dm_unary_grad_args_t ug = {cA2, cA, Y, 60u, op, 0.1f, -0.5f, 0.75f};
                pi_cl_team_fork(n, dm_unary_grad_fp32, &ug);
                char tag[16]; snprintf(tag, sizeof tag, "ugrad%%u", (unsigned)op);
                dump(tag, n, order, Y, 60u);
            }
            /* libm: sigmoid, tanh, QuickGelu and its gradient */
            for (uint32_t op = 0; op <= 1; op++) {
                poison();
                dm_unary_ext_args_t ue = {cA, Y, 60u, op, 0.1f, 0.0f, 0.0f};
                pi_cl_team_fork(n, dm_unary_ext_fp32, &ue);
                dump(op ? "libm_tanh" : "libm_sigmoid", n, order, Y, 60u);
            }
            poison();
            dm_unary_grad_args_t qg = {cA2, cA, Y, 60u, 5u, 1.0f, 0.0f, 0.0f};
            pi_cl_team_fork(n, dm_unary_grad_fp32, &qg);
            dump("libm_quick_gelu_grad", n, order, Y, 60u);
            /* libm: cross-entropy with ignore_index and its gradient */
            poison();
            dm_sce_ii_args_t sc = {sL, sLab, Y, S1, S2, %(SB)du, %(SC)du, 0u, 1u, -100};
            pi_cl_team_fork(n, dm_sce_ii_logprob_fp32, &sc);
            pi_cl_team_fork(n, dm_sce_ii_reduce_fp32, &sc);
            dump("libm_sce_lp", n, order, Y, %(SB)du * %(SC)du);
            dump("libm_sce_loss", n, order, S2, 1u);
            static const float one = 1.0f;
            dm_sce_ii_grad_args_t sg = {&one, Y, sLab, Y2, %(SB)du, %(SC)du, 0u, 1u, -100};
            pi_cl_team_fork(n, dm_sce_ii_grad_fp32, &sg);
            dump("libm_sce_dx", n, order, Y2, %(SB)du * %(SC)du);
            /* libm: log-softmax along the middle axis and its gradient */
            poison();
            dm_log_softmax_args_t ls = {lX, NULL, Y, %(LS0)du, %(LS1)du, %(LS2)du};
            pi_cl_team_fork(n, dm_log_softmax_fp32, &ls);
            dump("libm_logsoftmax", n, order, Y, %(LSS)du);
            dm_log_softmax_args_t lg = {lX, Y, Y2, %(LS0)du, %(LS1)du, %(LS2)du};
            pi_cl_team_fork(n, dm_log_softmax_grad_fp32, &lg);
            dump("libm_logsoftmax_grad", n, order, Y2, %(LSS)du);
"""


def _program() -> str:
    f = lambda *s: RNG.standard_normal(s).astype(np.float32)  # noqa: E731
    labels = RNG.integers(0, SC, SB)
    labels[[1, 4]] = -100
    bn_c = BN[1]
    data = "".join(
        [
            _floats("aW", f(N_ADAM)),
            _floats("aG", f(N_ADAM)),
            _floats("aM1", f(N_ADAM) * 0.1),
            _floats("aM2", np.abs(f(N_ADAM)) * 0.01),
            _floats("bX", f(*BN) * 2 + 0.5),
            _floats("bdY", f(*BN)),
            _floats("bScale", f(bn_c)),
            _floats("bBias", f(bn_c)),
            _floats("bRm", f(bn_c)),
            _floats("bRv", np.abs(f(bn_c)) + 0.5),
            _floats("dX", f(DROP)),
            _floats("gdY", f(G_OUT, G_N, G_IN)),
            _ints("gIdx", RNG.integers(-G_ROWS, G_ROWS, G_N), "int64_t"),
            _floats("cP0", f(2, 2, 3)),
            _floats("cP1", f(2, 1, 3)),
            _floats("cP2", f(2, 4, 3)),
            _floats("cA", np.round(f(3, 4, 5) * 2, 1)),
            _floats("cA2", f(3, 4, 5)),
            _floats("cB", np.round(f(5) * 2, 1)),
            _floats("sL", f(SB, SC) * 2),
            _ints("sLab", labels, "int64_t"),
            _floats("lX", f(*LS) * 3),
        ]
    )
    subs = {
        "data": data,
        "ysize": 128,
        "NA": N_ADAM,
        "BN0": BN[0],
        "BN1": BN[1],
        "BN2": BN[2],
        "BNS": int(np.prod(BN)),
        "DROP": DROP,
        "GO": G_OUT,
        "GR": G_ROWS,
        "GI": G_IN,
        "GN": G_N,
        "SB": SB,
        "SC": SC,
        "LS0": LS[0],
        "LS1": LS[1],
        "LS2": LS[2],
        "LSS": int(np.prod(LS)),
    }
    return team_program("dm_kernels_ext.h", GLOBALS % subs, BODY % subs)


def _floats_of(words: list[str]) -> np.ndarray:
    return np.array([int(w, 16) for w in words], np.uint32).view(np.float32)


def test_zoo_kernels_parallel_on_gvsoc(tmp_path: Path) -> None:
    # the kernels' orders assume no contraction (the emitted code's C_LANG);
    # gvsoc.mk's APP_FLAGS do not say it, riscv gcc would fuse into fmadd.s
    host_out, text = run_host_and_gvsoc(
        tmp_path,
        _program(),
        host_flags=["-ffp-contract=off"],
        gvsoc_defs="-ffp-contract=off",
        timeout=900,
    )
    want = results(host_out)
    got = results(text)
    assert set(got) == set(want) and len(want) == RUNS * len({k for k, _, _ in want})
    for key, words in want.items():
        assert POISON not in words, f"{key}: the host run left an element unwritten"
        if got[key] != words:
            g, w = _floats_of(got[key]), _floats_of(words)
            pytest.fail(f"{key}: GVSoC's bits differ from the host emulation's: {g} vs {w}")
    assert_one_result_per_kernel(got)
