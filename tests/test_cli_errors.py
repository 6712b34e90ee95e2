"""Bad input to `deeploy-mlir lower`/`run`: one line naming the problem, exit
code 2, no traceback and no output directory left behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
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
        (
            ["--solver", "front", "--rlimit", "5"],
            "--rlimit limits Z3's search: it needs --solver z3",
        ),
        (["--solver", "anneal"], "invalid choice: 'anneal'"),
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


def _interrupt(argv: list[str], delay: float) -> subprocess.CompletedProcess[str]:
    """Run `python -m argv`, wait until the child has our code running (its
    imports reached numpy: the interpreter's own start-up, before any line of
    ours runs, is not ours to handle), then `delay` seconds more, and press Ctrl-C."""
    p = subprocess.Popen(
        [sys.executable, "-m", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    maps = Path(f"/proc/{p.pid}/maps")
    end = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < end:
        try:
            if "_multiarray_umath" in maps.read_text():
                break
        except OSError:
            break
        time.sleep(0.005)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


@pytest.mark.parametrize("delay", [0.0, 0.2, 0.6])
def test_ctrl_c_while_starting_or_compiling(tmp_path: Path, delay: float) -> None:
    """Ctrl-C while the CLI imports its packages or compiles: one line, exit
    130, no traceback, no output (after the notes the compile printed before
    the signal: at 0.6 s it can be past the import)."""
    out = tmp_path / "out"
    model = Path(__file__).resolve().parents[1] / "examples" / "cct"
    r = _interrupt(["deeploy_mlir.cli", "lower", str(model), "-o", str(out)], delay)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == 130, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert lines[-1:] == ["deeploy-mlir: interrupted"]
    assert all(line.startswith("note: ") for line in lines[:-1]), lines
    assert not out.exists()


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_ctrl_c_in_deeploy_opt(tmp_path: Path, delay: float) -> None:
    """deeploy-opt the same, while it imports or runs tile-select on the CCT
    (seconds of work after numpy is loaded)."""
    from deeploy_mlir.frontend.onnx_import import import_model

    f = tmp_path / "cct.mlir"
    cct = Path(__file__).resolve().parents[1] / "examples" / "cct"
    f.write_text(str(import_model(cct).module) + "\n")
    pipeline = "training-inplace-alias,training-bufferize,arena-plan,tile-select{l1=2048}"
    r = _interrupt(["deeploy_mlir.opt", str(f), "-p", pipeline], delay)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert r.stderr.splitlines() == ["deeploy-opt: interrupted"]
    assert r.stdout == ""


def test_extra_mini_batches_are_noted(tmp_path: Path, mlp: Path) -> None:
    """More mini-batches than --steps x --accum: accepted (the first ones
    train), and a note says how many are not used."""
    rng = np.random.default_rng(1)
    d = tmp_path / "d.npz"
    np.savez(
        d,
        x=rng.standard_normal((5, 3, 4)).astype(np.float32),
        labels=rng.integers(0, 5, (5, 3)),
    )
    out = tmp_path / "out"
    r = run_cli("lower", mlp, "-o", out, "--data", d, "--steps", "2")
    assert r.code == 0, r.err
    assert r.err.splitlines() == [
        f"note: {d}: 5 mini-batches given, the first 2 used (--steps x --accum); the other 3 "
        "are not"
    ]
    # the harness holds exactly the first two mini-batches
    text = (out / "data.h").read_text()
    assert "2 mini-batches per user input" in text


def test_exact_dtype_conversions_are_accepted(tmp_path: Path, mlp: Path) -> None:
    """float16 inputs and int32 labels convert exactly (numpy's safe casting):
    the project is the same as with float32 and int64 arrays."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float16)
    labels = rng.integers(0, 5, (2, 3))
    exact, narrow = tmp_path / "exact.npz", tmp_path / "narrow.npz"
    np.savez(exact, x=x.astype(np.float32), labels=labels.astype(np.int64))
    np.savez(narrow, x=x, labels=labels.astype(np.int32))
    texts = []
    for data in (exact, narrow):
        out = tmp_path / data.stem
        r = run_cli("lower", mlp, "-o", out, "--data", data, "--steps", "2")
        assert r.code == 0 and r.err == "", r.err
        texts.append((out / "data.h").read_text())
    assert texts[0] == texts[1]


HALF_BUILT = """
import {mod} as m
class HalfBuilt:  # as a z3.Context stopped by Ctrl-C inside its __init__
    def __init__(self):
        raise KeyboardInterrupt
    def __del__(self):
        if self.owner:
            pass
def work(*args):
    HalfBuilt()
# the work the entry's handler wraps: deeploy-opt's _main, the CLI's parser
m.{hook} = work
try:
    code = m.main([])
except SystemExit as e:
    code = e.code
raise SystemExit(code)
"""


@pytest.mark.parametrize(
    ("mod", "hook"), [("deeploy_mlir.opt", "_main"), ("deeploy_mlir.cli", "build_parser")]
)
def test_ctrl_c_hides_a_half_built_objects_del(mod: str, hook: str) -> None:
    """An interrupt inside an object's __init__ leaves it half built; its
    __del__ fails when the traceback is freed. After Ctrl-C that is not
    printed (it was, as an 'Exception ignored ... Traceback', seen when the
    Ctrl-C test hit z3.Context's __init__)."""
    r = subprocess.run(
        [sys.executable, "-c", HALF_BUILT.format(mod=mod, hook=hook)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert r.stderr.strip().endswith("interrupted"), r.stderr
