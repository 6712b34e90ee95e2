"""The frontend's ONNX reading without the onnx package (issue 22's start-up):
deeploy_mlir/frontend/onnx_proto.py against onnx's own functions, and the
cache of ONNX's schema attribute types (deeploy_mlir/frontend/onnx_schemas.py)
against onnx.defs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.defs
import pytest
from onnx import TensorProto, helper, numpy_helper

import deeploy_mlir.frontend.onnx_import  # noqa: F401 (the op families register)
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend import onnx_schemas
from deeploy_mlir.frontend.core import OPSETS, REGISTRY, schema_names

ROOT = Path(__file__).resolve().parents[1]
TRANSFORMER = ROOT.parent / "shared" / "models" / "deeploy" / "Transformer_Train" / "network.onnx"

#: every type the fast path reads itself, with values at the edges of its range
PLAIN = [
    (TensorProto.FLOAT, np.array([[1.5, -0.0], [3e38, -1e-30]], dtype=np.float32)),
    (TensorProto.DOUBLE, np.array([1e300, -2.5], dtype=np.float64)),
    (TensorProto.INT64, np.array([2**62, -(2**63)], dtype=np.int64)),
    (TensorProto.INT32, np.array([[2**31 - 1, -(2**31)]], dtype=np.int32)),
    (TensorProto.INT16, np.array([-32768, 32767], dtype=np.int16)),
    (TensorProto.INT8, np.array([-128, 127], dtype=np.int8)),
    (TensorProto.UINT64, np.array([2**64 - 1, 0], dtype=np.uint64)),
    (TensorProto.UINT32, np.array([2**32 - 1, 7], dtype=np.uint32)),
    (TensorProto.UINT16, np.array([65535, 1], dtype=np.uint16)),
    (TensorProto.UINT8, np.array([255, 0], dtype=np.uint8)),
    (TensorProto.BOOL, np.array([True, False, True], dtype=np.bool_)),
    (TensorProto.FLOAT, np.zeros((0, 3), dtype=np.float32)),
    (TensorProto.FLOAT, np.array(2.0, dtype=np.float32)),  # a scalar
]


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("raw", [True, False], ids=["raw_data", "typed_field"])
@pytest.mark.parametrize("case", range(len(PLAIN)))
def test_to_array_reads_what_onnx_reads(case: int, raw: bool) -> None:
    data_type, arr = PLAIN[case]
    t = helper.make_tensor("t", data_type, arr.shape, arr.reshape(-1).tolist(), raw=False)
    if raw:
        t = numpy_helper.from_array(arr, "t")
    assert t.HasField("raw_data") == raw
    _same(pb.to_array(t), numpy_helper.to_array(t))
    _same(pb.to_array(t), arr)


def test_to_array_hands_the_rest_to_onnx() -> None:
    # float16 in int32_data (bit patterns), bfloat16, strings: onnx's own reading
    f16 = helper.make_tensor("h", TensorProto.FLOAT16, [2], np.array([1.5, -2.0], np.float16))
    bf16 = helper.make_tensor("b", TensorProto.BFLOAT16, [2], [1.0, -3.0])
    strings = helper.make_tensor("s", TensorProto.STRING, [1], [b"x"])
    for t in (f16, bf16, strings):
        _same(pb.to_array(t), numpy_helper.to_array(t))
    bad = numpy_helper.from_array(np.ones(3, np.float32), "t")
    bad.raw_data = bad.raw_data[:-1]  # not a whole number of floats: onnx's error
    with pytest.raises(ValueError):
        numpy_helper.to_array(bad)
    with pytest.raises(ValueError):
        pb.to_array(bad)


def test_attribute_value_and_np_dtype_are_onnxs() -> None:
    g = helper.make_graph([], "g", [], [])
    values = [
        1.25,
        -3,
        b"text",
        numpy_helper.from_array(np.ones(2, np.float32)),
        g,
        [1.0, 2.5],
        [4, 5],
        [b"a", b"b"],
        [numpy_helper.from_array(np.zeros(1, np.int64))],
        [g],
    ]
    for v in values:
        a = helper.make_attribute("x", v)
        assert pb.attribute_value(a) == helper.get_attribute_value(a), a.type
    assert pb.attribute_value(onnx.AttributeProto(name="u")) is None
    ref = onnx.AttributeProto(name="r", ref_attr_name="outer", type=onnx.AttributeProto.INT)
    with pytest.raises(ValueError):
        pb.attribute_value(ref)
    for data_type in TensorProto.DataType.values():
        if data_type == TensorProto.UNDEFINED:
            continue
        assert pb.np_dtype(data_type) == helper.tensor_dtype_to_np_dtype(data_type)


def test_load_parses_as_onnx_load(tmp_path: Path) -> None:
    model = pb.load(str(TRANSFORMER))
    assert isinstance(model, onnx.ModelProto)  # the same class: onnx's
    assert model == onnx.load(str(TRANSFORMER), load_external_data=False)
    # bytes after the message that protobuf does not take: onnx's error
    p = tmp_path / "m.onnx"
    p.write_bytes(TRANSFORMER.read_bytes() + b"\xff\xff\xff")
    with pytest.raises(Exception) as ours:
        pb.load(str(p))
    with pytest.raises(Exception) as theirs:
        onnx.load(str(p), load_external_data=False)
    assert type(ours.value) is type(theirs.value)
    # a text-format file is read by onnx, as onnx.load reads it
    text = tmp_path / "m.textproto"
    onnx.save(model, str(text))
    assert pb.load(str(text)) == model


def test_reading_a_model_imports_no_onnx() -> None:
    code = (
        "import sys\n"
        "from deeploy_mlir.frontend import onnx_proto as pb\n"
        f"m = pb.load({str(TRANSFORMER)!r})\n"
        "x = pb.to_array(m.graph.initializer[0])\n"
        "print(len(m.graph.node), x.shape, 'onnx' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    n, *_, imported = r.stdout.split()
    assert int(n) == len(onnx.load(str(TRANSFORMER)).graph.node)
    assert imported == "False"


# -- the cache of ONNX's schema attribute types --------------------------------


def _fresh(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(onnx_schemas, "_table", None)


def test_cached_attribute_types_are_onnxs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    names = schema_names()
    # every registered default-domain op that no registration types itself
    assert {"Gemm", "Conv", "Softmax", "LayerNormalization"} <= set(names)
    assert onnx_schemas.attribute_types("Gemm", 13, names, OPSETS) == {
        "alpha": onnx.AttributeProto.FLOAT,
        "beta": onnx.AttributeProto.FLOAT,
        "transA": onnx.AttributeProto.INT,
        "transB": onnx.AttributeProto.INT,
    }
    path = onnx_schemas.cache_path()
    assert path is not None and path.is_file()
    table = json.loads(path.read_text())["schemas"]
    assert len(table) >= len(names) * len(OPSETS)
    # a new process reads the file: each entry is what onnx.defs answers
    monkeypatch.setattr(onnx_schemas, "_table", None)
    for name in names:
        for opset in OPSETS:
            try:
                want = {
                    k: int(v.type)
                    for k, v in onnx.defs.get_schema(name, opset, "").attributes.items()
                }
            except onnx.defs.SchemaError:
                want = None
            got = onnx_schemas.attribute_types(name, opset, names, OPSETS)
            assert got == want, (name, opset)
    # LayerNormalization came with opset 17: none before
    assert onnx_schemas.attribute_types("LayerNormalization", 16, names, OPSETS) is None


def test_cache_is_rebuilt_and_optional(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    path = onnx_schemas.cache_path()
    assert path is not None
    path.parent.mkdir(parents=True)
    for junk in ("not json", json.dumps({"format": 1, "schemas": {"Gemm@13": {"alpha": "x"}}})):
        path.write_text(junk)
        monkeypatch.setattr(onnx_schemas, "_table", None)
        assert onnx_schemas.attribute_types("Relu", 14, ["Relu"], [14]) == {}
        assert json.loads(path.read_text())["schemas"]["Relu@14"] == {}
    # a cache directory that cannot be made: onnx answers, nothing is written
    blocker = tmp_path / "file"
    blocker.write_text("")
    _fresh(monkeypatch, blocker)
    got = onnx_schemas.attribute_types("Softmax", 13, ["Softmax"], [13])
    assert got == {"axis": onnx.AttributeProto.INT}
    assert blocker.read_text() == ""


def test_registry_types_what_the_schemas_do_not() -> None:
    # an op outside ONNX's default domain is typed by its registration or by
    # the default-domain op it names (`schema`); no schema lookup is missing
    for (dom, op), e in REGISTRY.items():
        if dom != "" and e.attributes is None and e.schema is not None:
            assert e.schema in schema_names(), op


def test_wrong_attribute_type_still_refused(tmp_path: Path) -> None:
    # the cache answers as the schema does: a FLOAT transA is one error line
    node = helper.make_node("Gemm", ["A", "B"], ["Y"], name="n0", transA=1.0)
    g = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [2, 2]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 2])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, str(tmp_path / "m.onnx"))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "deeploy_mlir.cli", "lower", str(tmp_path / "m.onnx")]
    for _ in range(2):  # cache empty, then filled
        r = subprocess.run(
            [*cmd, "-o", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            env=env,
        )
        assert r.returncode == 2
        assert r.stderr.strip().endswith("attribute 'transA' must be INT, got FLOAT"), r.stderr
