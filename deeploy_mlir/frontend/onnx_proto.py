"""ONNX's protobuf classes and the few onnx helpers the frontend uses, without
importing the onnx package.

`import onnx` executes onnx/__init__.py: its C++ extension (the checker,
shape inference, the op schemas), onnx.hub (urllib, http, email, ssl) and a
dozen submodules, about 10 MiB before the first model is read and 5 MiB more
for the schema registry. Reading a model needs only the protobuf classes,
which onnx generates into onnx/onnx_ml_pb2.py, a module that imports nothing
but google.protobuf. This module loads that file from the installed onnx
package with importlib (`find_spec` locates the package without executing
it; `spec_from_file_location` loads the one file), so the classes are onnx's
own, from its own descriptor: the protobuf runtime keeps one class per
message type, and a later `import onnx` in the same process (a fallback
below, the tests, the reference interpreter) adds the identical file to the
descriptor pool and gets the same classes.

The helpers are the onnx functions the frontend called, for the cases a
training graph uses (`attribute_value`, `to_array`, `np_dtype`, `load`);
anything else (a text-format model file, bfloat16 or float8 data, a big-endian
host, external data) is handed to onnx itself, imported then, so every input
is read exactly as onnx reads it. ONNX's op schemas (attribute types) come
from deeploy_mlir/frontend/onnx_schemas.py.

Imports numpy and google.protobuf only (no module of deeploy_mlir).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from onnx.onnx_ml_pb2 import (
        AttributeProto,
        GraphProto,
        ModelProto,
        NodeProto,
        TensorProto,
        ValueInfoProto,
    )


def _load_pb2() -> ModuleType:
    """onnx/onnx_ml_pb2.py of the installed onnx (onnx's own module when onnx
    is imported already)."""
    if "onnx" in sys.modules:
        import onnx.onnx_ml_pb2

        return onnx.onnx_ml_pb2
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the onnx package is not installed")
    path = os.path.join(next(iter(spec.submodule_search_locations)), "onnx_ml_pb2.py")
    pb2_spec = importlib.util.spec_from_file_location("onnx.onnx_ml_pb2", path)
    assert pb2_spec is not None and pb2_spec.loader is not None
    module = importlib.util.module_from_spec(pb2_spec)
    pb2_spec.loader.exec_module(module)
    return module


if not TYPE_CHECKING:
    _pb2 = _load_pb2()
    AttributeProto = _pb2.AttributeProto
    GraphProto = _pb2.GraphProto
    ModelProto = _pb2.ModelProto
    NodeProto = _pb2.NodeProto
    TensorProto = _pb2.TensorProto
    ValueInfoProto = _pb2.ValueInfoProto

__all__ = [
    "AttributeProto",
    "GraphProto",
    "ModelProto",
    "NodeProto",
    "TensorProto",
    "ValueInfoProto",
    "attribute_value",
    "load",
    "np_dtype",
    "to_array",
]

#: file name suffixes onnx.load reads as text (JSON, textproto, onnxtxt);
#: every other name is binary protobuf
_TEXT_SUFFIXES = frozenset({".textproto", ".prototxt", ".pbtxt", ".json", ".onnxjson", ".onnxtxt"})


def load(path: str) -> ModelProto:
    """`onnx.load(path, load_external_data=False)`: binary protobuf parsed
    here, the text formats by onnx."""
    if Path(path).suffix in _TEXT_SUFFIXES:
        import onnx

        return onnx.load(path, load_external_data=False)
    with open(path, "rb") as f:
        data = f.read()
    model = ModelProto()
    decoded = model.ParseFromString(data)
    if decoded is not None and decoded != len(data):
        from google.protobuf.message import DecodeError

        raise DecodeError(f"Protobuf decoding consumed too few bytes: {decoded} of {len(data)}")
    return model


#: AttributeProto type -> the field holding its value, and whether it repeats
_ATTRIBUTE_FIELDS: dict[int, tuple[str, bool]] = {
    AttributeProto.FLOAT: ("f", False),
    AttributeProto.INT: ("i", False),
    AttributeProto.STRING: ("s", False),
    AttributeProto.TENSOR: ("t", False),
    AttributeProto.SPARSE_TENSOR: ("sparse_tensor", False),
    AttributeProto.GRAPH: ("g", False),
    AttributeProto.TYPE_PROTO: ("tp", False),
    AttributeProto.FLOATS: ("floats", True),
    AttributeProto.INTS: ("ints", True),
    AttributeProto.STRINGS: ("strings", True),
    AttributeProto.TENSORS: ("tensors", True),
    AttributeProto.SPARSE_TENSORS: ("sparse_tensors", True),
    AttributeProto.GRAPHS: ("graphs", True),
    AttributeProto.TYPE_PROTOS: ("type_protos", True),
}


def attribute_value(a: AttributeProto) -> Any:
    """`onnx.helper.get_attribute_value`: the value its type names (a list
    for the repeated types, None for UNDEFINED)."""
    if a.ref_attr_name:
        raise ValueError(f"Cannot get value of reference attribute: {a}")
    if a.type == AttributeProto.UNDEFINED:
        return None
    field = _ATTRIBUTE_FIELDS.get(a.type)
    if field is None:
        raise ValueError(f"Unsupported ONNX attribute: {a}")
    value = getattr(a, field[0])
    return list(value) if field[1] else value


#: TensorProto data type -> (numpy dtype, the field holding it when there is
#: no raw_data); the types onnx maps one to one onto numpy
_PLAIN: dict[int, tuple[np.dtype[Any], str, np.dtype[Any]]] = {
    TensorProto.FLOAT: (np.dtype(np.float32), "float_data", np.dtype(np.float32)),
    TensorProto.DOUBLE: (np.dtype(np.float64), "double_data", np.dtype(np.float64)),
    TensorProto.INT64: (np.dtype(np.int64), "int64_data", np.dtype(np.int64)),
    TensorProto.INT32: (np.dtype(np.int32), "int32_data", np.dtype(np.int32)),
    TensorProto.INT16: (np.dtype(np.int16), "int32_data", np.dtype(np.int32)),
    TensorProto.INT8: (np.dtype(np.int8), "int32_data", np.dtype(np.int32)),
    TensorProto.UINT64: (np.dtype(np.uint64), "uint64_data", np.dtype(np.uint64)),
    TensorProto.UINT32: (np.dtype(np.uint32), "uint64_data", np.dtype(np.uint32)),
    TensorProto.UINT16: (np.dtype(np.uint16), "int32_data", np.dtype(np.int32)),
    TensorProto.UINT8: (np.dtype(np.uint8), "int32_data", np.dtype(np.int32)),
    TensorProto.BOOL: (np.dtype(np.bool_), "int32_data", np.dtype(np.int32)),
}


def np_dtype(data_type: int) -> np.dtype[Any]:
    """`onnx.helper.tensor_dtype_to_np_dtype`."""
    plain = _PLAIN.get(data_type)
    if plain is not None:
        return plain[0]
    import onnx.helper

    return onnx.helper.tensor_dtype_to_np_dtype(data_type)


def to_array(t: TensorProto) -> np.ndarray:
    """`onnx.numpy_helper.to_array`, read-only as onnx's is when the data
    is raw."""
    plain = _PLAIN.get(t.data_type)
    if (
        plain is None
        or sys.byteorder != "little"
        or t.HasField("segment")
        or t.data_location == TensorProto.EXTERNAL
    ):
        import onnx.numpy_helper

        return onnx.numpy_helper.to_array(t)
    dtype, field, storage = plain
    dims: Sequence[int] = t.dims
    if t.HasField("raw_data"):
        return np.frombuffer(t.raw_data, dtype=dtype).reshape(dims)
    return np.asarray(getattr(t, field), dtype=storage).astype(dtype).reshape(dims)
