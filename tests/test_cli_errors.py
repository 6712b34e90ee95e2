"""Bad input to `deeploy-mlir lower`/`run`: one line naming the problem, exit
code 2, no traceback and no output directory left behind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_cli
from onnx import TensorProto, helper
from onnx_builders import deeploy_mlp, make_model, vi


def _assert_user_error(r, *needles: str) -> None:
    assert r.code == 2, (r.code, r.out, r.err)
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1, r.err
    assert "Traceback" not in r.err + r.out
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.fixture
def mlp(tmp_path: Path) -> Path:
    m, _ = deeploy_mlp()
    p = tmp_path / "mlp.onnx"
    onnx.save(m, p)
    return p


@pytest.fixture
def mlp_data(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    p = tmp_path / "data.npz"
    np.savez(
        p, x=rng.standard_normal((2, 3, 4)).astype(np.float32), labels=rng.integers(0, 5, (2, 3))
    )
    return p


def test_unknown_ops_are_all_listed(tmp_path: Path) -> None:
    m = make_model(
        [
            helper.make_node("Relu", ["x"], ["a"]),
            helper.make_node("Foo", ["a"], ["b"], name="foo1"),
            helper.make_node("Bar", ["b"], ["c"], name="bar1"),
            helper.make_node("Foo", ["c"], ["y"], name="foo2"),
        ],
        [vi("x", [2, 2])],
        [vi("y", [2, 2])],
    )
    p = tmp_path / "m.onnx"
    onnx.save(m, p)
    out = tmp_path / "out"
    r = run_cli("lower", p, "-o", out)
    _assert_user_error(r, "unsupported ONNX ops", "Foo (nodes: foo1, foo2)", "Bar (nodes: bar1)")
    assert not out.exists()


def test_missing_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run_cli("lower", tmp_path / "nope.onnx", "-o", out)
    _assert_user_error(r, "nope.onnx", "no such file")
    assert not out.exists()


@pytest.mark.parametrize("content", [b"", b"hello, I am not a protobuf\xff\xfe", b"\x08" * 7])
def test_not_onnx(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "bad.onnx"
    p.write_bytes(content)
    out = tmp_path / "out"
    r = run_cli("lower", p, "-o", out)
    _assert_user_error(r, "bad.onnx", "not an ONNX model")
    assert not out.exists()


def test_dynamic_dimension(tmp_path: Path) -> None:
    m = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["batch", 4])], [vi("y", ["batch", 4])]
    )
    p = tmp_path / "dyn.onnx"
    onnx.save(m, p)
    r = run_cli("lower", p, "-o", tmp_path / "out")
    _assert_user_error(r, "'x'", "dynamic dimension 'batch'")


def test_inconsistent_gemm_shapes(tmp_path: Path) -> None:
    m = make_model(
        [helper.make_node("Gemm", ["a", "b"], ["y"], name="g0")],
        [vi("a", [2, 3]), vi("b", [4, 5])],
        [vi("y", [2, 5])],
    )
    p = tmp_path / "g.onnx"
    onnx.save(m, p)
    r = run_cli("lower", p, "-o", tmp_path / "out")
    _assert_user_error(r, "node 'g0' (Gemm)", "inner dimensions differ")


@pytest.mark.parametrize(
    "arrays, needles",
    [
        ({"x": np.zeros((2, 3, 4), np.float32)}, ["no array for graph input 'labels'"]),
        (
            {"x": np.zeros((2, 3, 5), np.float32), "labels": np.zeros((2, 3), np.int64)},
            ["array 'x' has shape [2, 3, 5]", "expected [2, 3, 4]"],
        ),
        (
            {"x": np.zeros((1, 3, 4), np.float32), "labels": np.zeros((1, 3), np.int64)},
            ["array 'x' has shape [1, 3, 4]"],
        ),
        (
            {"x": np.zeros((2, 3, 4), np.float32), "labels": np.full((2, 3), 7, np.int64)},
            ["label 7, outside [0, 5)"],
        ),
        (
            {"x": np.zeros((2, 3, 4), np.float32), "labels": np.zeros((2, 3), np.float32)},
            ["array 'labels' must hold integers"],
        ),
        (
            {"x": np.full((2, 3, 4), np.nan, np.float32), "labels": np.zeros((2, 3), np.int64)},
            ["array 'x' holds NaN or Inf"],
        ),
        (
            {
                "x": np.zeros((2, 3, 4), np.float32),
                "labels": np.zeros((2, 3), np.int64),
                "extra": np.zeros(1),
            },
            ["array 'extra' matches no graph input"],
        ),
    ],
)
def test_data_not_matching_graph(tmp_path: Path, mlp: Path, arrays, needles) -> None:
    d = tmp_path / "bad.npz"
    np.savez(d, **arrays)
    out = tmp_path / "out"
    r = run_cli("lower", mlp, "-o", out, "--data", d, "--steps", "2", "--accum", "1")
    _assert_user_error(r, *needles)
    assert not out.exists()
    r = run_cli("run", mlp, "--data", d, "--steps", "2")
    _assert_user_error(r, *needles)


def test_data_file_not_npz(tmp_path: Path, mlp: Path) -> None:
    d = tmp_path / "data.npz"
    d.write_text("not a zip")
    r = run_cli("run", mlp, "--data", d)
    _assert_user_error(r, "data.npz", "not a .npz file")


@pytest.mark.parametrize(
    "pipeline, needle",
    [
        ("no-such-pass", "no-such-pass"),
        ("arena-plan{level=L9}", "level must be one of"),
        ("arena-plan{bogus=1}", "bogus"),
        ("arena-plan{", "arena-plan{"),
    ],
)
def test_bad_pipeline(tmp_path: Path, mlp: Path, pipeline: str, needle: str) -> None:
    out = tmp_path / "out"
    r = run_cli("lower", mlp, "-o", out, "--pass-pipeline", pipeline)
    _assert_user_error(r, needle)
    assert not out.exists()


@pytest.mark.parametrize(
    "opts, needle",
    [
        (["--steps", "0"], "--steps must be positive"),
        (["--l2", "abc"], "--l2 must be an integer"),
        (["--lr", "nan"], "learning rate must be finite"),
        (["--target", "x86"], "unknown target"),
    ],
)
def test_bad_options(tmp_path: Path, mlp: Path, opts: list[str], needle: str) -> None:
    out = tmp_path / "out"
    r = run_cli("lower", mlp, "-o", out, *opts)
    _assert_user_error(r, needle)
    assert not out.exists()


def test_l2_budget_too_small(tmp_path: Path, mlp: Path) -> None:
    out = tmp_path / "out"
    for budget in ("1", "64", "100"):
        r = run_cli("lower", mlp, "-o", out, "--l2", budget)
        _assert_user_error(
            r,
            f"the L2 budget of {budget} bytes is too small",
            "with every tensor that can live in L3 there",
        )
        assert not out.exists()


def test_params_with_wrong_shape(tmp_path: Path, mlp: Path) -> None:
    pp = tmp_path / "p.npz"
    np.savez(pp, w=np.zeros((2, 2), np.float32), b=np.zeros(5, np.float32))
    r = run_cli("lower", mlp, "-o", tmp_path / "out", "--params", pp)
    _assert_user_error(r, "parameter 'w'", "shape [2, 2]", "expects [5, 4]")


def test_artifact_dir_without_training_model(tmp_path: Path) -> None:
    r = run_cli("lower", tmp_path, "-o", tmp_path / "out")
    _assert_user_error(r, "without training_model.onnx")


def test_bool_input_model_error_is_one_line(tmp_path: Path) -> None:
    m = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", [2], TensorProto.DOUBLE)],
        [vi("y", [2], TensorProto.DOUBLE)],
    )
    p = tmp_path / "d.onnx"
    onnx.save(m, p)
    r = run_cli("lower", p, "-o", tmp_path / "out")
    _assert_user_error(r, "'x'", "DOUBLE")


def test_deeploy_opt_reports_bad_ir_without_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "bad.mlir"
    bad.write_text(
        'func.func @f(%a: memref<8x6xf32, "L2">, %b: memref<4x6xf32, "L1">, %i: index) {\n'
        '  %t = dma.copy %a[%i] -> %b[%i, %i] sizes [4, 6] : memref<8x6xf32, "L2">, '
        'memref<4x6xf32, "L1">\n'
        "  func.return\n}\n"
    )
    unparsable = tmp_path / "junk.mlir"
    unparsable.write_text("func.func @f( {\n")
    for f, msg in [
        (bad, "expects one source offset per source dim (2), got 1"),
        (unparsable, "deeploy-opt: error:"),
    ]:
        r = subprocess.run(
            [sys.executable, "-m", "deeploy_mlir.opt", str(f)], capture_output=True, text=True
        )
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        assert r.stderr.startswith("deeploy-opt: error:") and msg in r.stderr
