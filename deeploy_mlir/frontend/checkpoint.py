"""Read an onnxruntime-training checkpoint without onnxruntime.

The checkpoint is a FlatBuffers buffer (file identifier ``ODTC``) of
onnxruntime's schema ``ort_training_checkpoint.fbs``. Only what the compiler
needs is read, through the ``flatbuffers`` runtime's table accessor with the
schema's field slots:

* ``Checkpoint``: version (slot 0), module_state (slot 1, a ``ModuleState``);
* ``ModuleState``: requires_grad_params (slot 0), frozen_params (slot 1),
  both vectors of ``Tensor``;
* ``Tensor`` (onnxruntime's ``ort.fbs``): name (slot 0), dims (slot 2,
  int64), data_type (slot 3, ONNX's element type), raw_data (slot 4,
  ubyte), external_data_offset (slot 6, int64, -1 when the data is inline).

Anything else (external data, element types other than float) returns None:
the caller then asks onnxruntime-training (the ``[ort]`` extra).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_IDENTIFIER = b"ODTC"
_FLOAT = 1  # onnx.TensorProto.FLOAT


def _field(slot: int) -> int:
    """The vtable offset of field `slot` (FlatBuffers: 4 + 2 * slot)."""
    return 4 + 2 * slot


def read_checkpoint(buf: bytes) -> dict[str, np.ndarray] | None:
    """The parameters of a checkpoint buffer by name, or None when this reader
    does not handle it (not a checkpoint, external data, non-float tensors)."""
    from flatbuffers import number_types as nt
    from flatbuffers.table import Table
    from flatbuffers.util import BufferHasIdentifier

    if len(buf) < 8 or not BufferHasIdentifier(buf, 0, _IDENTIFIER):
        return None
    root = Table(buf, nt.UOffsetTFlags.py_type(int.from_bytes(buf[0:4], "little")))

    def sub_table(t: Table, slot: int) -> Table | None:
        o = t.Offset(_field(slot))
        return Table(t.Bytes, t.Indirect(o + t.Pos)) if o else None

    def tables(t: Table, slot: int) -> list[Table]:
        o = t.Offset(_field(slot))
        if not o:
            return []
        start = t.Vector(o)
        return [Table(t.Bytes, t.Indirect(start + 4 * j)) for j in range(t.VectorLen(o))]

    state = sub_table(root, 1)
    if state is None:
        return None
    out: dict[str, np.ndarray] = {}
    for t in tables(state, 0) + tables(state, 1):
        name_o = t.Offset(_field(0))
        if not name_o:
            return None
        name = t.String(name_o + t.Pos).decode()
        dtype_o = t.Offset(_field(3))
        dtype = t.Get(nt.Int32Flags, dtype_o + t.Pos) if dtype_o else 0
        ext_o = t.Offset(_field(6))
        external = t.Get(nt.Int64Flags, ext_o + t.Pos) if ext_o else -1
        if dtype != _FLOAT or external >= 0:
            return None
        dims_o = t.Offset(_field(2))
        dims = [int(d) for d in t.GetVectorAsNumpy(nt.Int64Flags, dims_o)] if dims_o else []
        raw_o = t.Offset(_field(4))
        raw = t.GetVectorAsNumpy(nt.Uint8Flags, raw_o).tobytes() if raw_o else b""
        arr = np.frombuffer(raw, dtype="<f4")
        if arr.size != int(np.prod(dims)):
            return None
        out[name] = arr.reshape(dims).astype(np.float32)
    return out


def read_checkpoint_file(path: Path) -> dict[str, np.ndarray] | None:
    return read_checkpoint(path.read_bytes())
