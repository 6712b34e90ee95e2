"""Mutated inputs: valid ONNX models and training data, changed the way a
corrupted or hostile file would be (truncated, bytes flipped, dims changed or
flipped, element types changed, initializers cut short, random attributes,
inputs and nodes removed). Whatever the mutation, the CLI either succeeds
(exit 0, the output written) or prints one line and exits 2 (nothing
written): never a traceback, never an internal error (exit 1).

`lower` runs in this process (main() is the CLI's entry point; a fresh
interpreter per example would cost seconds), `run` in a subprocess. The
examples are derandomized: CI sees the same ones every time."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from onnx_builders import deeploy_mlp

from deeploy_mlir.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@dataclass(frozen=True)
class Base:
    """A valid model: a single Deeploy-style file, or an artifact directory."""

    name: str
    model: onnx.ModelProto
    artifact: Path | None  # the example directory (checkpoint, optimizer) or None
    opts: tuple[str, ...]  # lower options (--tiling none keeps the larger ones fast)


def _bases() -> list[Base]:
    m, _ = deeploy_mlp(batch=3, fin=4, classes=5, lr=0.1)
    out = [Base("deeploy_mlp", m, None, ())]
    for name in ("mlp_small", "ds_cnn", "cct"):
        d = EXAMPLES / name
        out.append(Base(name, onnx.load(str(d / "training_model.onnx")), d, ("--tiling", "none")))
    return out


BASES = _bases()


def _write_model(base: Base, data: bytes, d: Path) -> Path:
    """The model bytes where `lower` reads them: a file, or an artifact dir."""
    if base.artifact is None:
        p = d / "m.onnx"
        p.write_bytes(data)
        return p
    a = d / "artifact"
    a.mkdir()
    for f in ("optimizer_model.onnx", "checkpoint"):
        shutil.copy(base.artifact / f, a / f)
    (a / "training_model.onnx").write_bytes(data)
    return a


def _lower(argv: list[str], out: Path, report=note) -> None:
    """Run the CLI's main() and check the outcome: 0 with the output, or 2
    with one line and no output."""
    err, std = io.StringIO(), io.StringIO()
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(std),
    ):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse
            code = int(e.code or 0)
    text = err.getvalue()
    report(f"exit {code}: {text.strip()}")
    assert "Traceback" not in text + std.getvalue()
    assert code in (0, 2), text
    if code == 2:
        lines = text.splitlines()
        assert len(lines) == 1 and lines[0].startswith("deeploy-mlir"), text
        assert not out.exists()
    else:
        assert (out / "manifest.json").is_file()


# --------------------------------------------------------------------------
# ONNX mutations

INTS = st.sampled_from([0, -1, 1, 2, 3, 5, 7, 64, 1 << 20, 1 << 31, -(1 << 40)])
FLOATS = st.sampled_from([0.0, -1.0, 1e-3, 0.5, 2.0, 1e30, float("nan"), float("inf")])
ATTR_NAMES = [
    "axis",
    "axes",
    "alpha",
    "beta",
    "transA",
    "transB",
    "lr",
    "epsilon",
    "kernel_shape",
    "strides",
    "pads",
    "dilations",
    "group",
    "keepdims",
    "reduction",
    "perm",
    "auto_pad",
    "ceil_mode",
    "approximate",
    "stash_type",
]
ELEM_TYPES = [1, 2, 3, 5, 6, 7, 9, 10, 11, 16]


def _random_attribute(draw: st.DrawFn, name: str) -> onnx.AttributeProto:
    AP = onnx.AttributeProto
    kind = draw(st.sampled_from([AP.INT, AP.FLOAT, AP.STRING, AP.INTS, AP.FLOATS]))
    a = onnx.AttributeProto(name=name, type=kind)
    if kind == AP.INT:
        a.i = draw(INTS)
    elif kind == AP.FLOAT:
        a.f = draw(FLOATS)
    elif kind == AP.STRING:
        a.s = draw(
            st.sampled_from([b"", b"mean", b"sum", b"none", b"tanh", b"SAME_UPPER", b"\xff"])
        )
    elif kind == AP.INTS:
        a.ints.extend(draw(st.lists(INTS, max_size=5)))
    else:
        a.floats.extend(draw(st.lists(FLOATS, max_size=3)))
    return a


def _tensor_infos(g: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    return [
        v
        for v in [*g.input, *g.output, *g.value_info]
        if v.type.HasField("tensor_type") and v.type.tensor_type.shape.dim
    ]


def _mutate_bytes(draw: st.DrawFn, data: bytearray, kind: str) -> bytes:
    if kind == "truncate":
        return bytes(data[: draw(st.integers(0, len(data) - 1))])
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= draw(st.integers(1, 255))
    return bytes(data)


def _mutate_value_info(draw: st.DrawFn, g: onnx.GraphProto, kind: str) -> None:
    tt = draw(st.sampled_from(_tensor_infos(g))).type.tensor_type
    if kind == "dim":
        dim = tt.shape.dim[draw(st.integers(0, len(tt.shape.dim) - 1))]
        if draw(st.booleans()):
            dim.dim_value = draw(INTS)
        else:
            dim.dim_param = "n"
    elif kind == "flip_dims":
        dims = [onnx.TensorShapeProto.Dimension() for _ in tt.shape.dim]
        for new, old in zip(dims, reversed(tt.shape.dim), strict=True):
            new.CopyFrom(old)
        del tt.shape.dim[:]
        tt.shape.dim.extend(dims)
    else:
        tt.elem_type = draw(st.sampled_from(ELEM_TYPES))


def _mutate_initializer(draw: st.DrawFn, g: onnx.GraphProto, kind: str) -> None:
    t = g.initializer[draw(st.integers(0, len(g.initializer) - 1))]
    if kind == "init_dtype":
        t.data_type = draw(st.sampled_from(ELEM_TYPES))
    elif kind == "init_raw":
        t.raw_data = t.raw_data[: draw(st.integers(0, max(len(t.raw_data) - 1, 0)))]
    elif t.dims:
        i = draw(st.integers(0, len(t.dims) - 1))
        t.dims[i] = draw(INTS) if draw(st.booleans()) else t.dims[-1 - i]


def _mutate_node(draw: st.DrawFn, g: onnx.GraphProto, kind: str) -> None:
    if kind == "drop_node":
        del g.node[draw(st.integers(0, len(g.node) - 1))]
        return
    node = g.node[draw(st.integers(0, len(g.node) - 1))]
    if kind == "attribute":
        name = draw(st.sampled_from([a.name for a in node.attribute] + ATTR_NAMES))
        keep = [a for a in node.attribute if a.name != name]
        del node.attribute[:]
        node.attribute.extend([*keep, _random_attribute(draw, name)])
        return
    if not node.input:
        return
    i = draw(st.integers(0, len(node.input) - 1))
    if kind == "rename_input":
        names = sorted({n for x in g.node for n in x.input if n} | {"ghost"})
        node.input[i] = draw(st.sampled_from(names))
    elif draw(st.booleans()):
        node.input[i] = ""
    else:
        del node.input[i]


KINDS = {
    "truncate": "bytes",
    "flip_bytes": "bytes",
    "dim": "value_info",
    "flip_dims": "value_info",
    "elem_type": "value_info",
    "init_dtype": "initializer",
    "init_raw": "initializer",
    "init_dims": "initializer",
    "attribute": "node",
    "drop_input": "node",
    "rename_input": "node",
    "drop_node": "node",
    "drop_output": "output",
}


@st.composite
def mutated_models(draw: st.DrawFn) -> tuple[Base, str, bytes]:
    base = draw(st.sampled_from(BASES))
    m = onnx.ModelProto()
    m.CopyFrom(base.model)
    g = m.graph
    kind = draw(st.sampled_from(sorted(KINDS)))
    family = KINDS[kind]
    if family == "bytes":
        return base, kind, _mutate_bytes(draw, bytearray(m.SerializeToString()), kind)
    if family == "value_info":
        _mutate_value_info(draw, g, kind)
    elif family == "initializer" and g.initializer:
        _mutate_initializer(draw, g, kind)
    elif family == "node":
        _mutate_node(draw, g, kind)
    elif family == "output" and len(g.output) > 1:
        del g.output[draw(st.integers(0, len(g.output) - 1))]
    return base, kind, m.SerializeToString()


@SETTINGS
@given(mutated_models())
def test_mutated_models_lower_or_fail_in_one_line(tmp_path_factory, case) -> None:
    base, kind, data = case
    note(f"{base.name}: {kind}")
    d = tmp_path_factory.mktemp("mut")
    model = _write_model(base, data, d)
    out = d / "out"
    _lower(["lower", str(model), "-o", str(out), *base.opts], out)


# --------------------------------------------------------------------------
# training data mutations

MLP_SMALL = EXAMPLES / "mlp_small"
DTYPES = [
    "float64",
    "float32",
    "float16",
    "int64",
    "int32",
    "int8",
    "uint64",
    "bool",
    "complex64",
    "U2",
]


@st.composite
def mutated_data(draw: st.DrawFn) -> tuple[str, dict[str, np.ndarray] | bytes, int, int]:
    with np.load(MLP_SMALL / "data.npz") as z:
        arrays = {k: np.array(z[k]) for k in z.files}
    steps, accum = draw(st.integers(1, 6)), draw(st.integers(1, 3))
    kind = draw(
        st.sampled_from(
            ["dtype", "flip_dims", "cut_batches", "drop", "extra", "nan", "label", "bytes", "trunc"]
        )
    )
    name = draw(st.sampled_from(sorted(arrays)))
    a = arrays[name]
    if kind == "dtype":
        arrays[name] = a.astype(draw(st.sampled_from(DTYPES)))
    elif kind == "flip_dims":
        arrays[name] = np.ascontiguousarray(a.T)
    elif kind == "cut_batches":
        arrays[name] = a[: draw(st.integers(0, a.shape[0]))]
    elif kind == "drop":
        del arrays[name]
    elif kind == "extra":
        arrays[draw(st.sampled_from(["extra", "x", "lr"]))] = a
    elif kind == "nan" and a.dtype.kind == "f":
        a.reshape(-1)[draw(st.integers(0, a.size - 1))] = draw(FLOATS)
    elif kind == "label" and a.dtype.kind == "i":
        a.reshape(-1)[draw(st.integers(0, a.size - 1))] = draw(INTS)
    if kind in ("bytes", "trunc"):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        raw = bytearray(buf.getvalue())
        if kind == "trunc":
            return kind, bytes(raw[: draw(st.integers(0, len(raw) - 1))]), steps, accum
        for _ in range(draw(st.integers(1, 3))):
            raw[draw(st.integers(0, len(raw) - 1))] ^= draw(st.integers(1, 255))
        return kind, bytes(raw), steps, accum
    return kind, arrays, steps, accum


def _write_data(data: dict[str, np.ndarray] | bytes, p: Path) -> None:
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        np.savez(p, **data)


@SETTINGS
@given(mutated_data())
def test_mutated_data_lowers_or_fails_in_one_line(tmp_path_factory, case) -> None:
    kind, data, steps, accum = case
    note(f"{kind}, --steps {steps} --accum {accum}")
    d = tmp_path_factory.mktemp("data")
    _write_data(data, d / "data.npz")
    out = d / "out"
    argv = ["lower", str(MLP_SMALL), "-o", str(out), "--data", str(d / "data.npz")]
    _lower([*argv, "--steps", str(steps), "--accum", str(accum), "--tiling", "none"], out)


@settings(SETTINGS, max_examples=4)
@given(mutated_data())
def test_mutated_data_runs_or_fails_in_one_line(tmp_path_factory, case) -> None:
    """The same through a real `run` (build and train on the host emulation)."""
    kind, data, steps, accum = case
    note(f"{kind}, --steps {steps} --accum {accum}")
    d = tmp_path_factory.mktemp("run")
    _write_data(data, d / "data.npz")
    r = subprocess.run(
        [
            *(sys.executable, "-m", "deeploy_mlir.cli", "run", str(MLP_SMALL)),
            *("--data", str(d / "data.npz"), "--steps", str(steps), "--accum", str(accum)),
            *("--tiling", "none"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    note(r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode in (0, 2), r.stderr
    if r.returncode == 2:
        assert len(r.stderr.splitlines()) == 1
    else:
        assert len(r.stdout.splitlines()) == steps * accum  # one loss per mini-batch


@pytest.mark.parametrize("base", BASES, ids=[b.name for b in BASES])
def test_the_unmutated_bases_lower(base: Base, tmp_path: Path) -> None:
    """The mutation tests start from inputs that compile (exit 0)."""
    model = _write_model(base, base.model.SerializeToString(), tmp_path)
    out = tmp_path / "out"
    _lower(["lower", str(model), "-o", str(out), *base.opts], out, report=print)
    assert (out / "manifest.json").is_file()
