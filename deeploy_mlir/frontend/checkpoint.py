"""Read an onnxruntime-training checkpoint without onnxruntime.

The checkpoint is a FlatBuffers buffer (file identifier ``ODTC``) of
onnxruntime's schema ``ort_training_checkpoint.fbs``. Only what the compiler
needs is read, through the ``flatbuffers`` runtime's table accessor with the
schema's field slots:

* ``Checkpoint``: version (slot 0), module_state (slot 1, a ``ModuleState``),
  optimizer_groups (slot 2, a vector of ``OptimizerGroup``);
* ``ModuleState``: requires_grad_params (slot 0), frozen_params (slot 1),
  both vectors of ``Tensor``;
* ``OptimizerGroup``: group_name (slot 0), step (slot 1, int64),
  optimizer_states (slot 3, a vector of ``ParameterOptimizerState``:
  param_name (slot 0), momentums (slot 1, a vector of ``Tensor`` named
  momentum0, momentum1));
* ``Tensor`` (onnxruntime's ``ort.fbs``): name (slot 0), dims (slot 2,
  int64), data_type (slot 3, ONNX's element type), raw_data (slot 4,
  ubyte), external_data_offset (slot 6, int64, -1 when the data is inline).

Anything else (external data, element types other than float) returns None:
the caller then asks onnxruntime-training (the ``[ort]`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_IDENTIFIER = b"ODTC"
_FLOAT = 1  # onnx.TensorProto.FLOAT


def _field(slot: int) -> int:
    """The vtable offset of field `slot` (FlatBuffers: 4 + 2 * slot)."""
    return 4 + 2 * slot


def _root(buf: bytes) -> Any:
    from flatbuffers import number_types as nt
    from flatbuffers.table import Table
    from flatbuffers.util import BufferHasIdentifier

    if len(buf) < 8 or not BufferHasIdentifier(buf, 0, _IDENTIFIER):
        return None
    return Table(buf, nt.UOffsetTFlags.py_type(int.from_bytes(buf[0:4], "little")))


def _sub_table(t: Any, slot: int) -> Any:
    from flatbuffers.table import Table

    o = t.Offset(_field(slot))
    return Table(t.Bytes, t.Indirect(o + t.Pos)) if o else None


def _tables(t: Any, slot: int) -> list[Any]:
    from flatbuffers.table import Table

    o = t.Offset(_field(slot))
    if not o:
        return []
    start = t.Vector(o)
    return [Table(t.Bytes, t.Indirect(start + 4 * j)) for j in range(t.VectorLen(o))]


def _string(t: Any, slot: int) -> str | None:
    o = t.Offset(_field(slot))
    return t.String(o + t.Pos).decode() if o else None


def _tensors(ts: list[Any]) -> dict[str, np.ndarray] | None:
    """Float tensors stored inline by name (None: another kind)."""
    from flatbuffers import number_types as nt

    out: dict[str, np.ndarray] = {}
    for t in ts:
        name = _string(t, 0)
        if name is None:
            return None
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


def read_checkpoint(buf: bytes) -> dict[str, np.ndarray] | None:
    """The parameters of a checkpoint buffer by name, or None when this reader
    does not handle it (not a checkpoint, external data, non-float tensors)."""
    root = _root(buf)
    state = _sub_table(root, 1) if root is not None else None
    if state is None:
        return None
    return _tensors(_tables(state, 0) + _tables(state, 1))


def read_optimizer_state(buf: bytes) -> OptimizerState | None:
    """The optimizer state a checkpoint holds (onnxruntime-training writes it
    with include_optimizer_state): the first group's step count and, per
    parameter, its momentums by name; None when there is none or this reader
    does not handle it."""
    from flatbuffers import number_types as nt

    root = _root(buf)
    groups = _tables(root, 2) if root is not None else []
    if not groups:
        return None
    g = groups[0]
    step_o = g.Offset(_field(1))
    step = int(g.Get(nt.Int64Flags, step_o + g.Pos)) if step_o else 0
    moments: dict[str, dict[str, np.ndarray]] = {}
    for ps in _tables(g, 3):
        name = _string(ps, 0)
        tensors = _tensors(_tables(ps, 1))
        if name is None or tensors is None:
            return None
        moments[name] = tensors
    return OptimizerState(step, moments)


@dataclass(frozen=True)
class OptimizerState:
    #: optimizer steps done (onnxruntime's OptimizerGroup.step)
    step: int
    #: parameter name -> its momentums by name (momentum0, momentum1 for AdamW)
    moments: dict[str, dict[str, np.ndarray]]


def read_checkpoint_file(path: Path) -> dict[str, np.ndarray] | None:
    return read_checkpoint(path.read_bytes())


def read_optimizer_state_file(path: Path) -> OptimizerState | None:
    return read_optimizer_state(path.read_bytes())
