"""Reading the model's files and checking the ONNX graph before any op is built.

* `load_onnx`, `load_checkpoint`, `load_params_npz`: the files, each error a
  one-line DeeployError naming the file (external data is refused: nothing is
  read from paths a model names);
* `topological_order`: Deeploy's exported graphs are not sorted;
* the graph checks the importer runs first (opset, names written once,
  supported ops -- all unsupported ops listed at once --, attribute types from
  the registry and the ONNX schemas, initializers, graph inputs, C names).

Imports only the core (deeploy_mlir/frontend/core.py): what an op is, and its
attribute schema, comes from the registry the op families fill.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import (
    MAX_OPSET,
    MAX_TENSOR_BYTES,
    MIN_OPSET,
    ONNX_DTYPES,
    REGISTRY,
    ArgInfo,
    attribute_types,
    default_opset,
    domain_of,
    entry_of,
    node_label,
)

# --------------------------------------------------------------------------
# Loading files
# --------------------------------------------------------------------------


def load_onnx(path: Path) -> pb.ModelProto:
    if not path.is_file():
        why = "not a regular file" if path.exists() else "no such file"
        raise DeeployError(f"{path}: {why}")
    try:  # external data is refused below: nothing is read from paths a model names
        model = pb.load(str(path))
    except Exception as e:  # protobuf raises several types
        raise DeeployError(f"{path}: not an ONNX model ({type(e).__name__})") from None
    if not model.graph.node and not model.graph.input:
        raise DeeployError(f"{path}: not an ONNX model (empty graph)")
    bad = next((n for n in _names(model) if not isinstance(n, str)), None)
    if bad is not None:  # protobuf hands out a string field that is not UTF-8 as bytes
        raise DeeployError(f"{path}: not an ONNX model (the name {bad!r} is not UTF-8 text)")
    return model


def _names(model: pb.ModelProto) -> Iterator[object]:
    """Every name and string in the model's graph and opsets."""
    g = model.graph
    yield from (o.domain for o in model.opset_import)
    yield from (v.name for v in [*g.input, *g.output, *g.value_info])
    for v in [*g.input, *g.output, *g.value_info]:
        yield from (d.dim_param for d in v.type.tensor_type.shape.dim)
    yield from (t.name for t in g.initializer)
    for n in g.node:
        yield from (n.name, n.op_type, n.domain, *n.input, *n.output)
        yield from (a.name for a in n.attribute)


def load_checkpoint(path: Path) -> dict[str, np.ndarray]:
    from deeploy_mlir.frontend.checkpoint import read_checkpoint_file

    try:
        fast = read_checkpoint_file(path)
    except Exception:  # an unexpected layout: onnxruntime-training decides below
        fast = None
    if fast is not None:
        return fast
    try:
        from onnxruntime.training.api import CheckpointState
    except ImportError:  # the [ort] extra is not installed
        raise DeeployError(
            f"{path}: the built-in reader cannot read this checkpoint; install "
            "onnxruntime-training (pip install 'deeploy-mlir[ort]') or pass --params"
        ) from None
    try:
        state = CheckpointState.load_checkpoint(str(path))
        return {name: np.array(p.data) for name, p in state.parameters}
    except Exception as e:
        raise DeeployError(
            f"{path}: not an onnxruntime-training checkpoint ({type(e).__name__})"
        ) from None


def load_optimizer_state(path: Path) -> Any:
    """The optimizer state a checkpoint holds (checkpoint.OptimizerState), or
    None: none saved, or a layout the built-in reader does not handle (the
    optimizer then starts from zeros, as onnxruntime does without one)."""
    from deeploy_mlir.frontend.checkpoint import read_optimizer_state_file

    try:
        return read_optimizer_state_file(path)
    except Exception:  # an unexpected layout
        return None


def load_params_npz(path: Path) -> dict[str, np.ndarray]:
    from deeploy_mlir.frontend.npz import read_npz

    return read_npz(path)


def topological_order(g: pb.GraphProto) -> list[pb.NodeProto]:
    """The nodes of `g` in an order where every input is produced before use
    (Deeploy's exported graphs are not sorted): Kahn's algorithm, taking the
    earliest ready node first, so a sorted graph keeps its order. Nodes that
    never become ready (an input nobody produces) follow in graph order; the
    importer then names the missing input."""
    known = {"", *(v.name for v in g.input), *(t.name for t in g.initializer)}
    producers: dict[str, list[int]] = {}
    missing = [0] * len(g.node)
    for i, n in enumerate(g.node):
        for name in set(n.input) - known:
            producers.setdefault(name, []).append(i)
            missing[i] += 1
    ready = [i for i, m in enumerate(missing) if m == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for name in g.node[i].output:
            for j in producers.pop(name, []):
                missing[j] -= 1
                if missing[j] == 0:
                    heapq.heappush(ready, j)
    done = set(order)
    order += [i for i in range(len(g.node)) if i not in done]
    return [g.node[i] for i in order]


# --------------------------------------------------------------------------
# Graph checks
# --------------------------------------------------------------------------


_ATTR_TYPES = set(pb.AttributeProto.AttributeType.values())


def _attr_name(t: int) -> str:
    return pb.AttributeProto.AttributeType.Name(t) if t in _ATTR_TYPES else str(t)


def check_opset(model: pb.ModelProto, source: str) -> None:
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not versions:
        raise DeeployError(f"{source}: the model imports no default-domain opset")
    v = max(versions)
    if not MIN_OPSET <= v <= MAX_OPSET:
        raise DeeployError(
            f"{source}: opset {v} is not supported (opsets {MIN_OPSET} to {MAX_OPSET})"
        )


def check_graph(g: pb.GraphProto, source: str) -> None:
    """The graph's names: every tensor written once (by a node, or as a graph
    input or initializer), every graph output listed once, and some node."""
    if not g.node:
        raise DeeployError(f"{source}: the graph has no nodes")
    for what, names in (
        ("graph input", [v.name for v in g.input]),
        ("initializer", [t.name for t in g.initializer]),
        ("graph output", [v.name for v in g.output]),
    ):
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise DeeployError(f"{source}: {what} '{name}' is listed twice")
            seen.add(name)
    inputs = {v.name for v in g.input}
    inits = {t.name for t in g.initializer}
    writer: dict[str, str] = {}
    for i, n in enumerate(g.node):
        label = node_label(n, i)
        # an op whose outputs are all optional (ConvGrad's dX, dW, dB): with
        # none named, nothing is needed and the node is dropped
        entry = entry_of(n)
        optional = entry is not None and entry.optional_outputs
        if not any(n.output) and not optional:
            raise DeeployError(f"{source}: {label}: has no outputs")
        for out in n.output:
            if not out:
                continue
            if out in writer:
                raise DeeployError(
                    f"{source}: {label}: output '{out}' is also written by {writer[out]}"
                )
            if out in inputs:
                raise DeeployError(f"{source}: {label}: output '{out}' is a graph input")
            if out in inits:
                raise DeeployError(f"{source}: {label}: output '{out}' is an initializer")
            writer[out] = label


def check_supported(models: Sequence[tuple[pb.ModelProto, str]]) -> None:
    """Every node has a handler; else one error listing every unsupported op,
    each under the file (`models`: model and its path) that holds it."""
    per_file: list[str] = []
    for m, source in models:
        missing: dict[str, list[str]] = {}
        for n in m.graph.node:
            dom = domain_of(n)
            if (dom, n.op_type) not in REGISTRY:
                key = f"{dom}:{n.op_type}" if dom else n.op_type
                missing.setdefault(key, []).append(n.name or next(iter(n.output), "?"))
        if missing:
            parts = [f"{k} (nodes: {', '.join(v)})" for k, v in sorted(missing.items())]
            per_file.append(f"{source}: unsupported ONNX ops: {'; '.join(parts)}")
    if per_file:
        raise DeeployError("; ".join(per_file))


def check_attributes(model: pb.ModelProto, source: str | None = None) -> None:
    """Attribute types as the op's schema gives them, and finite floats
    (after check_supported: every node is registered). `source`: the file
    the errors name (none: the node alone)."""
    opset = default_opset(model)
    at = f"{source}: " if source is not None else ""
    for i, n in enumerate(model.graph.node):
        types = attribute_types(n, opset)
        for a in n.attribute:
            want = types.get(a.name)
            if want is not None and a.type != want:
                raise DeeployError(
                    f"{at}{node_label(n, i)}: attribute '{a.name}' must be "
                    f"{_attr_name(want)}, got {_attr_name(a.type)}"
                )
            floats = [a.f] if a.type == pb.AttributeProto.FLOAT else []
            if a.type == pb.AttributeProto.FLOATS:
                floats = list(a.floats)
            if not all(np.isfinite(floats)):
                raise DeeployError(
                    f"{at}{node_label(n, i)}: attribute '{a.name}' must be finite, got "
                    f"{[float(f) for f in floats] if len(floats) > 1 else float(floats[0])}"
                )


def read_initializer(t: pb.TensorProto, source: str) -> np.ndarray:
    """An initializer's value; data kept outside the model, or not matching
    the shape, is an error naming it."""
    where = f"{source}: initializer '{t.name}'"
    if t.data_location == pb.TensorProto.EXTERNAL:
        raise DeeployError(
            f"{where} keeps its data in an external file: not supported (save the model "
            "with its data inside)"
        )
    if t.data_type not in pb.TensorProto.DataType.values() or t.data_type in (
        pb.TensorProto.UNDEFINED,
        pb.TensorProto.STRING,
    ):
        kind = (
            pb.TensorProto.DataType.Name(t.data_type)
            if t.data_type in pb.TensorProto.DataType.values()
            else str(t.data_type)
        )
        raise DeeployError(f"{where} has element type {kind}: not a numeric tensor")
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise DeeployError(f"{where} has a negative dimension: shape {dims}")
    n = int(np.prod(dims, dtype=object))
    itemsize = np.dtype(pb.np_dtype(t.data_type)).itemsize
    if n * itemsize > MAX_TENSOR_BYTES:
        raise DeeployError(
            f"{where} of shape {dims} needs {n * itemsize} bytes: more than the 4 GiB a "
            "32-bit target addresses"
        )
    type_name = pb.TensorProto.DataType.Name(t.data_type)
    if t.HasField("raw_data") and len(t.raw_data) != n * itemsize:
        raise DeeployError(
            f"{where} holds {len(t.raw_data)} bytes of data but its shape {dims} of "
            f"{type_name} needs {n * itemsize}"
        )
    try:
        return pb.to_array(t)
    except Exception as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DeeployError(
            f"{where}: its data does not match its shape {dims} of {type_name} ({msg})"
        ) from None


def input_type(vi: pb.ValueInfoProto, source: str) -> tuple[tuple[int, ...], type[np.generic]]:
    """A graph input's static shape and numpy element type."""
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type"):
        raise DeeployError(f"{source}: graph input '{vi.name}' is not a tensor")
    if tt.elem_type not in ONNX_DTYPES:
        raise DeeployError(
            f"{source}: graph input '{vi.name}' has element type "
            f"{pb.TensorProto.DataType.Name(tt.elem_type)}; supported: float, int64, bool"
        )
    shape: list[int] = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            sym = d.dim_param or "?"
            raise DeeployError(
                f"{source}: graph input '{vi.name}' has a dynamic dimension '{sym}': "
                "only static shapes compile"
            )
        if d.dim_value <= 0:
            raise DeeployError(
                f"{source}: graph input '{vi.name}' has a dimension of size {d.dim_value}"
            )
        shape.append(d.dim_value)
    dtype = ONNX_DTYPES[tt.elem_type][1]
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    if nbytes > MAX_TENSOR_BYTES:
        raise DeeployError(
            f"{source}: graph input '{vi.name}' needs {nbytes} bytes: more than the "
            "4 GiB a 32-bit target addresses"
        )
    return tuple(shape), dtype


def check_names(args: list[ArgInfo], source: str) -> None:
    """Distinct names in the C program: two arguments whose names differ
    only in characters C identifiers cannot hold ('w.1', 'w_1') would
    define the same symbol."""
    seen: dict[str, str] = {}
    for a in args:
        ident = "".join(c if c.isalnum() or c == "_" else "_" for c in a.name)
        if ident in seen and seen[ident] != a.name:
            raise DeeployError(
                f"{source}: '{seen[ident]}' and '{a.name}' have the same C name "
                f"'{ident}': rename one"
            )
        seen[ident] = a.name
