"""transpose-fold (deeploy_mlir/passes/transpose_fold.py): matrix transposes
folded into the products that read or write them.

* The gemm kernel gives the same bits for each rewrite the pass makes, in
  every transpose form: a transpose materialized before the product against
  the operand's flag flipped, and the product transposed after it against
  B'^T A'^T (operands swapped, flags flipped), alpha != 1 included.
* On the example CCT (one block of the published CCT's two: 6 weight
  transposes and 6 transposed weight gradients): every matrix transpose is gone, the
  weight gradients' accumulations fuse into their gemms, and the reference
  interpreter trains the folded module like the unfolded one.
* The pass is in the default pipeline unless CompileConfig.transpose_fold is
  off, and its options parse from pipeline text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_runtime_kernels import (
    CFLAGS,
    HOST,
    INCS,
    KERNELS,
    PROBE_C,
    GemmArgs,
    Runtime,
    _gcc,
    _probe_layout_c,
    f32,
    ptr,
)
from validation import train

from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.passes.transpose_fold import TransposeFold
from deeploy_mlir.pipeline import bufferize_only, parse_pipeline, pipeline, run_pipeline

ROOT = Path(__file__).resolve().parents[1]
CCT = ROOT / "examples" / "cct"


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """runtime_c built with the host emulation, 8 cores (test_runtime_kernels' rt)."""
    d = tmp_path_factory.mktemp("tfold")
    probe = d / "probe.c"
    probe.write_text(PROBE_C + _probe_layout_c())
    lib = d / "libdm_runtime.so"
    _gcc(*CFLAGS, "-fPIC", "-shared", *INCS, *KERNELS, HOST, probe, "-o", lib, "-lm")
    return Runtime(lib, 8)


def _run(rt: Runtime, a, b, m, n, k, ta, tb, alpha, team):
    """Y = alpha A' B' by dm_gemm_fp32 (no C), with a guard row."""
    y = np.full((m + 1, n), 7.0, np.float32)
    args = GemmArgs(ptr(a), ptr(b), None, ptr(y), m, n, k, ta, tb, alpha, 0.0, 0, 0)
    rt.run("dm_gemm_fp32", args, nb_cores=team)
    assert (y[m] == 7.0).all()
    return y[:m]


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.int32)


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize(("m", "n", "k"), [(7, 5, 3), (13, 9, 17), (37, 16, 10), (64, 24, 33)])
def test_the_kernel_gives_the_folded_products_bits(
    rt: Runtime, ta: int, tb: int, m: int, n: int, k: int
) -> None:
    for alpha, team in ((1.0, 0), (0.5, 3)):
        a = f32(k, m) if ta else f32(m, k)
        b = f32(n, k) if tb else f32(k, n)
        y = _run(rt, a, b, m, n, k, ta, tb, alpha, team)
        # the sums differ from one form's to another's only in bits if the
        # kernel broke its order; a product of random data has no zero rows
        assert np.abs(y).min() > 0
        # operands: A stored transposed (what a transpose feeding A gives),
        # read with trans_a flipped; B likewise
        at = np.ascontiguousarray(a.T)
        bt = np.ascontiguousarray(b.T)
        np.testing.assert_array_equal(
            _bits(_run(rt, at, b, m, n, k, 1 - ta, tb, alpha, team)), _bits(y)
        )
        np.testing.assert_array_equal(
            _bits(_run(rt, a, bt, m, n, k, ta, 1 - tb, alpha, team)), _bits(y)
        )
        # results: Y^T = B'^T A'^T, an N x M product of (B, A)
        yt = _run(rt, b, a, n, m, k, 1 - tb, 1 - ta, alpha, team)
        np.testing.assert_array_equal(_bits(yt.T), _bits(y))


def _census(module) -> dict[str, int]:
    out: dict[str, int] = {}
    for op in module.walk():
        key = None
        if isinstance(op, T.TransposeOp):
            key = f"transpose{op.perm_list()}" + (" onto" if op.onto is not None else "")
        elif isinstance(op, T.GemmOp | T.MatmulOp | T.BatchMatmulOp):
            key = op.name + (" onto" if op.onto is not None else "")
        elif isinstance(op, T.AccumulateOp):
            key = "accumulate"
        if key is not None:
            out[key] = out.get(key, 0) + 1
    return out


def test_the_example_cct_loses_its_matrix_transposes() -> None:
    """6 weight transposes (each read by 2 batch_matmuls) and 6 transposed
    weight gradients (gemms): all gone, the gradients' 6 accumulations fused
    into gemms instead of transposes; the head permutations stay."""
    before, after = import_model(CCT), import_model(CCT)
    run_pipeline(before.module, bufferize_only(fold=False))
    run_pipeline(after.module, bufferize_only())
    b, a = _census(before.module), _census(after.module)
    assert b["transpose[1, 0]"] == 6 and b["transpose[1, 0] onto"] == 6
    assert not [k for k in a if k.startswith("transpose[1, 0]")]
    assert a["training.gemm onto"] == b.get("training.gemm onto", 0) + 6
    assert a["accumulate"] == b["accumulate"]  # the same ones fuse, into other ops
    for k in b:
        if k.startswith("transpose[0"):
            assert a[k] == b[k], k
    assert a["training.batch_matmul"] == b["training.batch_matmul"]


def test_the_interpreter_trains_the_folded_cct_alike() -> None:
    """The reference interpreter, before and after transpose-fold alone (the
    translation validation of tests/test_translation_validation.py covers it
    inside every pipeline): the same losses and parameters, bit for bit (its
    products of transposed operands sum like the materialized ones)."""
    model = import_model(CCT)
    losses0, state0 = train(model.module, model.params, CCT)
    run_pipeline(model.module, [TransposeFold()])
    assert not any(
        isinstance(o, T.TransposeOp) and o.perm_list() == [1, 0] for o in model.module.walk()
    )
    losses, state = train(model.module, model.params, CCT)
    assert np.asarray(losses, np.float32).tobytes() == np.asarray(losses0, np.float32).tobytes()
    for k in state0:
        assert np.asarray(state[k]).tobytes() == np.asarray(state0[k]).tobytes(), k


def test_the_default_pipeline_runs_it_first() -> None:
    names = [p.name for p in pipeline(CompileConfig())]
    assert names[0] == "transpose-fold"
    assert names.index("transpose-fold") < names.index("training-inplace-alias")
    assert "transpose-fold" not in [p.name for p in pipeline(CompileConfig(transpose_fold=False))]
    (p,) = parse_pipeline("transpose-fold{operands=false results=true}")
    assert isinstance(p, TransposeFold) and not p.operands and p.results
