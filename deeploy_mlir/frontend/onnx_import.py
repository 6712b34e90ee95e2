"""ONNX training graphs -> the `training` dialect.

Two conventions are read:

* onnxruntime-training artifacts: a directory with training_model.onnx (forward,
  loss, backward, InPlaceAccumulatorV2 gradient accumulation with its
  lazy_reset_grad input), optimizer_model.onnx (SGDOptimizerV2 over sequences of
  parameters and gradients) and checkpoint (the initial parameters);
* Deeploy-style training ONNX: one file in which parameters are initializers,
  SoftmaxCrossEntropyLoss has only the log-probability output,
  SoftmaxCrossEntropyLossGrad takes (log_prob, labels) and SGD (attribute `lr`)
  returns the updated weight.

The result is a module with two functions, ``@training_step`` and
``@optimizer_step``. Their arguments carry ``training.arg = #training.arg<KIND
"NAME">`` (the kind: input, param, grad_accum, reset_flag, lr; the ONNX name); a
result carries ``training.result = #training.result<"NAME">``, with
``updates I`` when it is the new value of argument I.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError

ONNX_DTYPES: dict[int, tuple[Attribute, type[np.generic]]] = {
    onnx.TensorProto.FLOAT: (f32, np.float32),
    onnx.TensorProto.INT64: (i64, np.int64),
    onnx.TensorProto.BOOL: (i1, np.bool_),
}

KIND_INPUT = "input"
KIND_PARAM = "param"
KIND_GRAD = "grad_accum"
KIND_RESET = "reset_flag"
KIND_LR = "lr"
KIND_OUTPUT = "output"

MS = "com.microsoft"
MIN_OPSET, MAX_OPSET = 11, 21
#: the emitted C addresses a tensor with 32-bit sizes
MAX_TENSOR_BYTES = (1 << 32) - 1


@dataclass
class ArgInfo:
    name: str
    kind: str
    shape: tuple[int, ...]
    dtype: type[np.generic]


@dataclass
class ImportedModel:
    module: ModuleOp
    #: initial values of every parameter, by name
    params: dict[str, np.ndarray]
    #: the arguments of @training_step, in order
    train_args: list[ArgInfo]
    #: the parameters that train (have a gradient), in optimizer order
    trainable: list[str]
    source: str
    style: str  # "ort" or "deeploy"

    @property
    def user_inputs(self) -> list[ArgInfo]:
        return [a for a in self.train_args if a.kind == KIND_INPUT]


# --------------------------------------------------------------------------
# Loading files
# --------------------------------------------------------------------------


def _load_onnx(path: Path) -> onnx.ModelProto:
    if not path.is_file():
        why = "not a regular file" if path.exists() else "no such file"
        raise DeeployError(f"{path}: {why}")
    try:  # external data is refused below: nothing is read from paths a model names
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:  # protobuf raises several types
        raise DeeployError(f"{path}: not an ONNX model ({type(e).__name__})") from None
    if not model.graph.node and not model.graph.input:
        raise DeeployError(f"{path}: not an ONNX model (empty graph)")
    bad = next((n for n in _names(model) if not isinstance(n, str)), None)
    if bad is not None:  # protobuf hands out a string field that is not UTF-8 as bytes
        raise DeeployError(f"{path}: not an ONNX model (the name {bad!r} is not UTF-8 text)")
    return model


def _names(model: onnx.ModelProto) -> Iterator[object]:
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


def _load_checkpoint(path: Path) -> dict[str, np.ndarray]:
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


def load_params_npz(path: Path) -> dict[str, np.ndarray]:
    from deeploy_mlir.frontend.npz import read_npz

    return read_npz(path)


def import_model(path: str | Path, params_file: str | Path | None = None) -> ImportedModel:
    """Import an artifact directory or a single training ONNX file."""
    p = Path(path)
    if p.is_dir():
        train_path = p / "training_model.onnx"
        if not train_path.is_file():
            raise DeeployError(f"{p}: artifact directory without training_model.onnx")
        opt_path = p / "optimizer_model.onnx"
        ckpt = p / "checkpoint"
    elif p.exists():
        train_path, opt_path, ckpt = p, p.parent / "__none__", p.parent / "__none__"
    else:
        raise DeeployError(f"{p}: no such file or directory")
    train = _load_onnx(train_path)
    opt = _load_onnx(opt_path) if opt_path.is_file() else None
    given = load_params_npz(Path(params_file)) if params_file is not None else None
    checkpoint = _load_checkpoint(ckpt) if given is None and ckpt.is_file() else None
    imp = _Importer(train, opt, given if given is not None else checkpoint, str(train_path))
    imp.params_file = str(params_file) if given is not None else None
    return imp.run()


# --------------------------------------------------------------------------
# The importer
# --------------------------------------------------------------------------


def _tensor_type(shape: Sequence[int], elem: Attribute) -> TensorType[Attribute]:
    return TensorType(elem, list(shape))


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def topological_order(g: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The nodes of `g` in an order where every input is produced before use
    (Deeploy's exported graphs are not sorted): Kahn's algorithm, taking the
    earliest ready node first, so a sorted graph keeps its order. Nodes that
    never become ready (an input nobody produces) follow in graph order; the
    importer then names the missing input."""
    import heapq

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


def _node_label(node: onnx.NodeProto, index: int | None = None) -> str:
    name = node.name or next((o for o in node.output if o), None)
    if name is None:
        name = f"#{index}" if index is not None else "?"
    return f"node '{name}' ({node.op_type})"


def _attr_name(t: int) -> str:
    return onnx.AttributeProto.AttributeType.Name(t) if t in _ATTR_TYPES else str(t)


_ATTR_TYPES = set(onnx.AttributeProto.AttributeType.values())
#: com.microsoft gradient ops whose attributes are their forward op's
_FORWARD_OF = {
    "ConvGrad": "Conv",
    "MaxPoolGrad": "MaxPool",
    "AveragePoolGrad": "AveragePool",
    "SoftmaxGrad": "Softmax",
    "SoftmaxGrad_13": "Softmax",
    "LayerNormalizationGrad": "LayerNormalization",
    "SoftmaxCrossEntropyLossGrad": "SoftmaxCrossEntropyLoss",
}
#: attributes of ops outside the default domain's schemas
_OWN_ATTRIBUTES = {"SGD": {"lr": onnx.AttributeProto.FLOAT}}


def _attribute_types(node: onnx.NodeProto, opset: int) -> dict[str, int]:
    """The attribute types the op's ONNX schema declares ({}: no schema known)."""
    if node.op_type in _OWN_ATTRIBUTES:
        return dict(_OWN_ATTRIBUTES[node.op_type])
    default = node.domain in ("", "ai.onnx")
    name = node.op_type if default else _FORWARD_OF.get(node.op_type)
    if name is None:
        return {}
    try:
        schema = onnx.defs.get_schema(name, opset, "")
    except onnx.defs.SchemaError:
        return {}
    return {k: int(v.type) for k, v in schema.attributes.items()}


Handler = Callable[["_Importer", onnx.NodeProto], None]
HANDLERS: dict[tuple[str, str], Handler] = {}
#: tried on every node before its handler: a folder that returns True has
#: evaluated the node at import time (all its inputs constant: shape arithmetic)
FOLDERS: list[Callable[[_Importer, onnx.NodeProto], bool]] = []


def handles(*keys: str) -> Callable[[Handler], Handler]:
    """Register an importer function for ONNX op types ("Gemm", "com.microsoft:ReluGrad")."""

    def deco(f: Handler) -> Handler:
        for k in keys:
            dom, _, op = k.rpartition(":")
            HANDLERS[(dom, op)] = f
        return f

    return deco


@dataclass
class _Importer:
    train: onnx.ModelProto
    opt: onnx.ModelProto | None
    given_params: dict[str, np.ndarray] | None
    source: str
    env: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    inits: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    value_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict[str, tuple[int, ...]])
    builder: Builder | None = None
    results: list[tuple[SSAValue, dict[str, Attribute]]] = field(
        default_factory=list[tuple[SSAValue, dict[str, Attribute]]]
    )
    arg_index: dict[str, int] = field(default_factory=dict[str, int])
    deeploy_params: list[str] = field(default_factory=list[str])
    #: outputs that are only completion flags (InPlaceAccumulatorV2 output 0)
    _dropped: set[str] = field(default_factory=set[str])
    #: --params PARAMS.npz when the initial values come from it (None: checkpoint or graph)
    params_file: str | None = None

    # -- entry --------------------------------------------------------------
    def run(self) -> ImportedModel:
        g = self.train.graph
        self._check_opset(self.train)
        self._check_graph(g)
        self._check_supported([self.train] + ([self.opt] if self.opt else []))
        self._check_attributes(g)
        self.inits = {t.name: self._initializer(t) for t in g.initializer}
        for vi in [*g.value_info, *g.output]:
            dims = vi.type.tensor_type.shape.dim
            # a value without a shape field is of unknown shape, not a scalar
            has_shape = vi.type.tensor_type.HasField("shape")
            if has_shape and all(d.HasField("dim_value") for d in dims):
                self.value_shapes[vi.name] = tuple(d.dim_value for d in dims)
        style = "ort" if any(n.op_type == "InPlaceAccumulatorV2" for n in g.node) else "deeploy"
        args = self._training_args(style)
        train_fn = self._function("training_step", args, topological_order(g))
        params = self._param_values(args)
        self._check_names(args)
        funcs = [train_fn]
        trainable = [a.name for a in args if a.kind == KIND_PARAM and self._has_grad(a.name, style)]
        funcs.append(self._optimizer_function(args, trainable, style))
        module = ModuleOp(funcs)
        try:
            module.verify()
        except VerifyException as e:  # an importer bug, or a graph we mis-read
            raise DeeployError(f"{self.source}: imported IR does not verify: {e}") from None
        return ImportedModel(module, params, args, trainable, self.source, style)

    def _check_opset(self, model: onnx.ModelProto) -> None:
        versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
        if not versions:
            raise DeeployError(f"{self.source}: the model imports no default-domain opset")
        v = max(versions)
        if not MIN_OPSET <= v <= MAX_OPSET:
            raise DeeployError(
                f"{self.source}: opset {v} is not supported (opsets {MIN_OPSET} to {MAX_OPSET})"
            )

    def _check_graph(self, g: onnx.GraphProto) -> None:
        """The graph's names: every tensor written once (by a node, or as a graph
        input or initializer), every graph output listed once, and some node."""
        if not g.node:
            raise DeeployError(f"{self.source}: the graph has no nodes")
        for what, names in (
            ("graph input", [v.name for v in g.input]),
            ("initializer", [t.name for t in g.initializer]),
            ("graph output", [v.name for v in g.output]),
        ):
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    raise DeeployError(f"{self.source}: {what} '{name}' is listed twice")
                seen.add(name)
        inputs = {v.name for v in g.input}
        inits = {t.name for t in g.initializer}
        writer: dict[str, str] = {}
        for i, n in enumerate(g.node):
            label = _node_label(n, i)
            # ConvGrad's outputs (dX, dW, dB) are all optional: with none named,
            # no gradient is needed and the node is dropped (conv_import)
            optional = n.op_type == "ConvGrad" and n.domain == MS
            if not any(n.output) and not optional:
                raise DeeployError(f"{label}: has no outputs")
            for out in n.output:
                if not out:
                    continue
                if out in writer:
                    raise DeeployError(f"{label}: output '{out}' is also written by {writer[out]}")
                if out in inputs:
                    raise DeeployError(f"{label}: output '{out}' is a graph input")
                if out in inits:
                    raise DeeployError(f"{label}: output '{out}' is an initializer")
                writer[out] = label

    def _check_attributes(self, g: onnx.GraphProto) -> None:
        """Attribute types as the op's schema gives them, and finite floats."""
        opset = max(o.version for o in self.train.opset_import if o.domain in ("", "ai.onnx"))
        for i, n in enumerate(g.node):
            types = _attribute_types(n, opset)
            for a in n.attribute:
                want = types.get(a.name)
                if want is not None and a.type != want:
                    raise DeeployError(
                        f"{_node_label(n, i)}: attribute '{a.name}' must be "
                        f"{_attr_name(want)}, got {_attr_name(a.type)}"
                    )
                floats = [a.f] if a.type == onnx.AttributeProto.FLOAT else []
                if a.type == onnx.AttributeProto.FLOATS:
                    floats = list(a.floats)
                if not all(np.isfinite(floats)):
                    raise DeeployError(
                        f"{_node_label(n, i)}: attribute '{a.name}' must be finite, got "
                        f"{[float(f) for f in floats] if len(floats) > 1 else float(floats[0])}"
                    )

    def _initializer(self, t: onnx.TensorProto) -> np.ndarray:
        """An initializer's value; data kept outside the model, or not matching
        the shape, is an error naming it."""
        where = f"{self.source}: initializer '{t.name}'"
        if t.data_location == onnx.TensorProto.EXTERNAL:
            raise DeeployError(
                f"{where} keeps its data in an external file: not supported (save the model "
                "with its data inside)"
            )
        if t.data_type not in onnx.TensorProto.DataType.values() or t.data_type in (
            onnx.TensorProto.UNDEFINED,
            onnx.TensorProto.STRING,
        ):
            kind = (
                onnx.TensorProto.DataType.Name(t.data_type)
                if t.data_type in onnx.TensorProto.DataType.values()
                else str(t.data_type)
            )
            raise DeeployError(f"{where} has element type {kind}: not a numeric tensor")
        dims = list(t.dims)
        if any(d < 0 for d in dims):
            raise DeeployError(f"{where} has a negative dimension: shape {dims}")
        n = int(np.prod(dims, dtype=object))
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
        if n * itemsize > MAX_TENSOR_BYTES:
            raise DeeployError(
                f"{where} of shape {dims} needs {n * itemsize} bytes: more than the 4 GiB a "
                "32-bit target addresses"
            )
        type_name = onnx.TensorProto.DataType.Name(t.data_type)
        if t.HasField("raw_data") and len(t.raw_data) != n * itemsize:
            raise DeeployError(
                f"{where} holds {len(t.raw_data)} bytes of data but its shape {dims} of "
                f"{type_name} needs {n * itemsize}"
            )
        try:
            return numpy_helper.to_array(t)
        except Exception as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise DeeployError(
                f"{where}: its data does not match its shape {dims} of {type_name} ({msg})"
            ) from None

    def _check_supported(self, models: Sequence[onnx.ModelProto]) -> None:
        missing: dict[str, list[str]] = {}
        for m in models:
            for n in m.graph.node:
                dom = "" if n.domain in ("", "ai.onnx") else n.domain
                if (dom, n.op_type) not in HANDLERS:
                    key = f"{dom}:{n.op_type}" if dom else n.op_type
                    missing.setdefault(key, []).append(n.name or next(iter(n.output), "?"))
        if missing:
            parts = [f"{k} (nodes: {', '.join(v)})" for k, v in sorted(missing.items())]
            raise DeeployError(f"{self.source}: unsupported ONNX ops: {'; '.join(parts)}")

    # -- arguments ------------------------------------------------------------
    def _training_args(self, style: str) -> list[ArgInfo]:
        g = self.train.graph
        accum_bufs = {n.input[0] for n in g.node if n.op_type == "InPlaceAccumulatorV2"}
        known = set(self.given_params or {})
        args: list[ArgInfo] = []
        for vi in g.input:
            if vi.name in self.inits:
                continue  # an initializer listed as input (old IR): a constant
            shape, dtype = self._input_type(vi)
            if vi.name in accum_bufs:
                kind = KIND_GRAD
            elif dtype is np.bool_:
                kind = KIND_RESET
            elif vi.name in known or f"{vi.name}_grad.accumulation.buffer" in accum_bufs:
                kind = KIND_PARAM
            else:
                kind = KIND_INPUT
            args.append(ArgInfo(vi.name, kind, shape, dtype))
        if style == "deeploy":
            # parameters are the float initializers that an SGD node updates
            for n in g.node:
                if n.op_type == "SGD" and n.input[0] in self.inits:
                    w = self.inits[n.input[0]]
                    args.append(ArgInfo(n.input[0], KIND_PARAM, tuple(w.shape), np.float32))
                    self.deeploy_params.append(n.input[0])
        return args

    def _input_type(self, vi: onnx.ValueInfoProto) -> tuple[tuple[int, ...], type[np.generic]]:
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise DeeployError(f"{self.source}: graph input '{vi.name}' is not a tensor")
        if tt.elem_type not in ONNX_DTYPES:
            raise DeeployError(
                f"{self.source}: graph input '{vi.name}' has element type "
                f"{onnx.TensorProto.DataType.Name(tt.elem_type)}; supported: float, int64, bool"
            )
        shape: list[int] = []
        for d in tt.shape.dim:
            if not d.HasField("dim_value"):
                sym = d.dim_param or "?"
                raise DeeployError(
                    f"{self.source}: graph input '{vi.name}' has a dynamic dimension '{sym}': "
                    "only static shapes compile"
                )
            if d.dim_value <= 0:
                raise DeeployError(
                    f"{self.source}: graph input '{vi.name}' has a dimension of size {d.dim_value}"
                )
            shape.append(d.dim_value)
        dtype = ONNX_DTYPES[tt.elem_type][1]
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        if nbytes > MAX_TENSOR_BYTES:
            raise DeeployError(
                f"{self.source}: graph input '{vi.name}' needs {nbytes} bytes: more than the "
                "4 GiB a 32-bit target addresses"
            )
        return tuple(shape), dtype

    def _has_grad(self, name: str, style: str) -> bool:
        if style == "deeploy":
            return name in self.deeploy_params
        return any(
            n.op_type == "InPlaceAccumulatorV2" and n.input[0] == f"{name}_grad.accumulation.buffer"
            for n in self.train.graph.node
        )

    def _check_names(self, args: list[ArgInfo]) -> None:
        """Distinct names in the C program: two arguments whose names differ
        only in characters C identifiers cannot hold ('w.1', 'w_1') would
        define the same symbol."""
        seen: dict[str, str] = {}
        for a in args:
            ident = "".join(c if c.isalnum() or c == "_" else "_" for c in a.name)
            if ident in seen and seen[ident] != a.name:
                raise DeeployError(
                    f"{self.source}: '{seen[ident]}' and '{a.name}' have the same C name "
                    f"'{ident}': rename one"
                )
            seen[ident] = a.name

    def _param_values(self, args: list[ArgInfo]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        source = self.given_params
        if self.params_file is not None and source is not None:
            names = [a.name for a in args if a.kind == KIND_PARAM]
            extra = sorted(set(source) - set(names))
            if extra:
                listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
                raise DeeployError(
                    f"{self.params_file}: array '{extra[0]}' matches no parameter of the graph "
                    f"(parameters: {listed or 'none'})"
                )
        for a in args:
            if a.kind != KIND_PARAM:
                continue
            if source is not None and a.name in source:
                v = source[a.name]
            elif a.name in self.inits:
                v = self.inits[a.name]
            else:
                raise DeeployError(
                    f"{self.source}: no initial value for parameter '{a.name}' (give a checkpoint "
                    "or --params PARAMS.npz)"
                )
            if tuple(v.shape) != a.shape:
                raise DeeployError(
                    f"parameter '{a.name}': initial value has shape {list(v.shape)} but the graph "
                    f"expects {list(a.shape)}"
                )
            v = np.asarray(v)
            if v.dtype != np.float32 and (
                v.dtype.kind not in "biuf" or not np.can_cast(v.dtype, np.float32, "safe")
            ):
                raise DeeployError(
                    f"parameter '{a.name}': initial value has dtype {v.dtype}; expected float32 "
                    "(or a dtype that converts to it exactly)"
                )
            if not np.all(np.isfinite(v)):
                raise DeeployError(f"parameter '{a.name}': initial value holds NaN or Inf")
            out[a.name] = np.asarray(v, dtype=np.float32)
        return out

    # -- function building ------------------------------------------------------
    def _function(self, name: str, args: list[ArgInfo], nodes: list[onnx.NodeProto]) -> func.FuncOp:
        types = [_tensor_type(a.shape, ONNX_DTYPES_BY_NP[a.dtype]) for a in args]
        block = Block(arg_types=types)
        self.env = {}
        self.results = []
        self.arg_index = {}
        for i, (a, v) in enumerate(zip(args, block.args, strict=True)):
            v.name_hint = _ssa_name(a.name)
            self.env[a.name] = v
            self.arg_index[a.name] = i
        self.builder = Builder(InsertPoint.at_end(block))
        for node in nodes:
            dom = "" if node.domain in ("", "ai.onnx") else node.domain
            if any(fold(self, node) for fold in FOLDERS):
                continue
            try:
                HANDLERS[(dom, node.op_type)](self, node)
            except (ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
                # a hostile graph the handler's own checks did not foresee: name the node
                if os.environ.get("DEEPLOY_MLIR_DEBUG"):
                    raise
                msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
                raise DeeployError(
                    f"{_node_label(node)}: cannot import it ({type(e).__name__}: {msg})"
                ) from None
        if name == "training_step":
            self._graph_outputs()
        self.builder.insert(func.ReturnOp(*[v for v, _ in self.results]))
        fn = func.FuncOp(
            name,
            (types, [v.type for v, _ in self.results]),
            Region(block),
            arg_attrs=_arg_attrs(args),
            res_attrs=ArrayAttr(DictionaryAttr(d) for _, d in self.results),
        )
        return fn

    def _graph_outputs(self) -> None:
        g = self.train.graph
        for out in g.output:
            if out.name in self._updated:
                continue  # added with its update target already
            if out.name not in self.env and out.name in self.inits:
                # a value evaluated at import (folded shape arithmetic)
                self.env[out.name] = self.constant(self.inits[out.name])
            if out.name not in self.env:
                if out.name in self._dropped:
                    continue
                raise DeeployError(f"{self.source}: graph output '{out.name}' is never computed")
            v = self.env[out.name]
            self.results.append((v, T.result_attrs(out.name)))

    @property
    def _updated(self) -> set[str]:
        infos = [T.result_dict_info(d) for _, d in self.results]
        return {r.name for r in infos if r.updates is not None and r.name is not None}

    def _optimizer_function(
        self, train_args: list[ArgInfo], trainable: list[str], style: str
    ) -> func.FuncOp:
        by_name = {a.name: a for a in train_args}
        args: list[ArgInfo] = []
        if style == "ort" and trainable:
            args.append(ArgInfo("learning_rate", KIND_LR, (1,), np.float32))
            for p in trainable:
                args.append(by_name[p])
                args.append(by_name[f"{p}_grad.accumulation.buffer"])
        types = [_tensor_type(a.shape, ONNX_DTYPES_BY_NP[a.dtype]) for a in args]
        block = Block(arg_types=types)
        for a, v in zip(args, block.args, strict=True):
            v.name_hint = _ssa_name(a.name)
        b = Builder(InsertPoint.at_end(block))
        results: list[SSAValue] = []
        res_attrs: list[DictionaryAttr] = []
        if args:
            self._check_optimizer()
            lr = block.args[0]
            for i, p in enumerate(trainable):
                w, g = block.args[1 + 2 * i], block.args[2 + 2 * i]
                op = b.insert(T.SgdOp([w, g, lr], [w.type]))
                results.append(op.res[0])
                res_attrs.append(DictionaryAttr(T.result_attrs(p, 1 + 2 * i)))
        b.insert(func.ReturnOp(*results))
        return func.FuncOp(
            "optimizer_step",
            (types, [r.type for r in results]),
            Region(block),
            arg_attrs=_arg_attrs(args),
            res_attrs=ArrayAttr(res_attrs),
        )

    def _check_optimizer(self) -> None:
        if self.opt is None:
            raise DeeployError(
                f"{self.source}: onnxruntime-training graph without optimizer_model.onnx beside it"
            )
        kinds = [n.op_type for n in self.opt.graph.node]
        if kinds != ["SGDOptimizerV2"]:
            raise DeeployError(
                f"optimizer_model.onnx: expected one SGDOptimizerV2 node, got {', '.join(kinds)}"
            )

    # -- helpers for op handlers ----------------------------------------------
    def value(self, node: onnx.NodeProto, i: int) -> SSAValue:
        name = self.input_name(node, i)
        if name in self.env:
            return self.env[name]
        if name in self.inits:
            try:
                v = self.constant(self.inits[name])
            except DeeployError as e:
                raise DeeployError(f"{_node_label(node)}: input '{name}': {e}") from None
            self.env[name] = v
            return v
        raise DeeployError(f"{_node_label(node)}: input '{name}' is not defined before use")

    def input_name(self, node: onnx.NodeProto, i: int) -> str:
        """The name of input #i, which the node must have."""
        if i >= len(node.input) or not node.input[i]:
            raise DeeployError(
                f"{_node_label(node)}: input #{i} is missing ({node.op_type} needs it)"
            )
        return node.input[i]

    def static_ints(self, node: onnx.NodeProto, i: int) -> list[int]:
        name = self.input_name(node, i)
        if name not in self.inits:
            raise DeeployError(
                f"{_node_label(node)}: input '{name}' must be a constant (an initializer)"
            )
        return [int(x) for x in np.asarray(self.inits[name]).reshape(-1)]

    def constant(self, arr: np.ndarray) -> SSAValue:
        assert self.builder is not None
        arr = np.asarray(arr)
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise DeeployError("a constant (initializer) holds NaN or Inf")
        if arr.dtype == np.float64:
            if np.any(np.abs(arr) > np.finfo(np.float32).max):
                raise DeeployError("a constant (initializer) holds values beyond float32's range")
            arr = arr.astype(np.float32)
        elem = ONNX_DTYPES_BY_NP.get(arr.dtype.type)
        if elem is None:
            raise DeeployError(f"constant of dtype {arr.dtype} is not supported")
        t = _tensor_type(arr.shape, elem)
        flat = arr.reshape(-1).tolist()
        attr = DenseIntOrFPElementsAttr.from_list(t, flat)  # pyright: ignore[reportCallIssue, reportArgumentType]
        return self.builder.insert(T.ConstantOp(attr)).result

    def emit(
        self,
        node: onnx.NodeProto,
        cls: type[T.TrainingComputeOp],
        ins: Sequence[SSAValue],
        props: dict[str, Attribute | None] | None = None,
        n_results: int = 1,
    ) -> list[SSAValue]:
        """Create `cls` with result types from its own shape rules."""
        assert self.builder is not None
        probe = cls(ins, [_tensor_type((), f32)] * n_results, properties=props)
        try:
            probe.check_inputs()
            shapes = probe.infer_shapes()
            elems = probe.output_elem_types()
        except VerifyException as e:
            raise DeeployError(f"{_node_label(node)}: {e}") from None
        finally:
            probe.erase(safe_erase=False)
        for s, e in zip(shapes, elems, strict=True):
            if int(np.prod(s, dtype=object)) * T.elem_type_bytes(e) > MAX_TENSOR_BYTES:
                raise DeeployError(
                    f"{_node_label(node)}: a result of shape {list(s)} is larger than the 4 GiB "
                    "a 32-bit target addresses"
                )
        types = [_tensor_type(s, e) for s, e in zip(shapes, elems, strict=True)]
        op = self.builder.insert(cls(ins, types, properties=props))
        for r, out_name in zip(op.res, node.output, strict=False):
            if out_name:
                r.name_hint = _ssa_name(out_name)
        return list(op.res)

    def bind(self, node: onnx.NodeProto, values: Sequence[SSAValue]) -> None:
        for name, v in zip(node.output, values, strict=False):
            if name:
                self.env[name] = v


ONNX_DTYPES_BY_NP: dict[Any, Attribute] = {np.float32: f32, np.int64: i64, np.bool_: i1}


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _ssa_name(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else f"v{out}"


def _arg_attrs(args: list[ArgInfo]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr(DictionaryAttr(T.arg_attrs(a.kind, a.name)) for a in args)


# --------------------------------------------------------------------------
# Op handlers
# --------------------------------------------------------------------------


@handles("Gemm")
def _gemm(im: _Importer, node: onnx.NodeProto) -> None:
    a = _attrs(node)
    ins = [im.value(node, 0), im.value(node, 1)]
    beta = float(a.get("beta", 1.0))
    if len(node.input) > 2 and node.input[2] and beta != 0.0:
        ins.append(im.value(node, 2))
    props: dict[str, Attribute | None] = {
        "trans_a": UnitAttr() if a.get("transA", 0) else None,
        "trans_b": UnitAttr() if a.get("transB", 0) else None,
        "alpha": FloatAttr(float(a.get("alpha", 1.0)), f32),
        "beta": FloatAttr(beta, f32),
    }
    ranks = [len(T.shape_of(v.type)) for v in ins]
    # Deeploy's Gemm also multiplies batched operands (over their last two dims)
    cls = T.GemmOp if ranks[:2] == [2, 2] and ranks[2:] in ([], [0], [1], [2]) else None
    im.bind(node, im.emit(node, cls or T.BatchMatmulOp, ins, props))


@handles("MatMul")
def _matmul(im: _Importer, node: onnx.NodeProto) -> None:
    ins = [im.value(node, 0), im.value(node, 1)]
    ranks = [len(T.shape_of(v.type)) for v in ins]
    if ranks == [2, 2]:
        im.bind(node, im.emit(node, T.MatmulOp, ins))
        return
    if min(ranks) < 2:
        raise DeeployError(
            f"{_node_label(node)}: MatMul of rank-1 operands is not supported, got ranks {ranks}"
        )
    im.bind(node, im.emit(node, T.BatchMatmulOp, ins))


@handles("Add", "Sub", "Mul", "Div", "Pow")
def _binary(im: _Importer, node: onnx.NodeProto) -> None:
    if node.op_type == "Pow" and node.input[1] in im.inits and node.input[1] not in im.env:
        # an integer exponent (x ** 2 in an MSE loss) is a float one here
        exp = np.asarray(im.inits[node.input[1]])
        if exp.dtype.kind in "iu":
            im.env[node.input[1]] = im.constant(exp.astype(np.float32))
    ins = [im.value(node, 0), im.value(node, 1)]
    kind = StringAttr(node.op_type.lower())
    im.bind(node, im.emit(node, T.BinaryOp, ins, {"kind": kind}))


@handles("Relu")
def _relu(im: _Importer, node: onnx.NodeProto) -> None:
    im.bind(node, im.emit(node, T.ReluOp, [im.value(node, 0)]))


@handles(f"{MS}:ReluGrad")
def _relu_grad(im: _Importer, node: onnx.NodeProto) -> None:
    im.bind(node, im.emit(node, T.ReluGradOp, [im.value(node, 0), im.value(node, 1)]))


@handles("Identity")
def _identity(im: _Importer, node: onnx.NodeProto) -> None:
    im.env[node.output[0]] = im.value(node, 0)


def _reduction(node: onnx.NodeProto) -> StringAttr:
    a = _attrs(node)
    red = a.get("reduction", b"mean")
    red = red.decode() if isinstance(red, bytes) else str(red)
    if red not in T.REDUCTIONS:
        raise DeeployError(f"{_node_label(node)}: reduction '{red}' is not supported (mean, sum)")
    if "ignore_index" in a:
        raise DeeployError(f"{_node_label(node)}: ignore_index is not supported")
    return StringAttr(red)


@handles("SoftmaxCrossEntropyLoss")
def _sce(im: _Importer, node: onnx.NodeProto) -> None:
    if len(node.input) > 2 and node.input[2]:
        raise DeeployError(f"{_node_label(node)}: class weights are not supported")
    loss, log_prob = im.emit(
        node,
        T.SoftmaxCrossEntropyLossOp,
        [im.value(node, 0), im.value(node, 1)],
        {"reduction": _reduction(node)},
        n_results=2,
    )
    outs = [o for o in node.output]
    if len(outs) == 1 and _is_log_prob(im, node, outs[0]):
        # Deeploy's convention: the only output is the log-probabilities
        loss.name_hint, log_prob.name_hint = None, _ssa_name(outs[0])
        im.env[outs[0]] = log_prob
        return
    im.bind(node, [loss, log_prob])


def _is_log_prob(im: _Importer, node: onnx.NodeProto, name: str) -> bool:
    if len(im.value_shapes.get(name, ())) == 2:
        return True
    return any(
        n.op_type == "SoftmaxCrossEntropyLossGrad" and len(n.input) == 2 and n.input[0] == name
        for n in im.train.graph.node
    )


@handles(f"{MS}:SoftmaxCrossEntropyLossGrad")
def _sce_grad(im: _Importer, node: onnx.NodeProto) -> None:
    if len(node.input) == 2:
        # Deeploy: (log_prob, labels), no dY. Deeploy's kernel scales by 1/B
        # twice ("one for the loss norm, one for the gradient norm"), whatever
        # the reduction: the gradient of a mean loss with dY = 1/B
        lp, lab = im.value(node, 0), im.value(node, 1)
        b = T.shape_of(lp.type)[0] if T.shape_of(lp.type) else 1
        per = 1.0 / b if _reduction(node).data == "mean" else 1.0 / (b * b)
        dy = im.constant(np.array(per, dtype=np.float32))
    else:
        if len(node.input) > 3 and node.input[3]:
            raise DeeployError(f"{_node_label(node)}: class weights are not supported")
        dy, lp, lab = im.value(node, 0), im.value(node, 1), im.value(node, 2)
    im.bind(
        node,
        im.emit(
            node, T.SoftmaxCrossEntropyLossGradOp, [dy, lp, lab], {"reduction": _reduction(node)}
        ),
    )


@handles("ReduceSum", "ReduceMean")
def _reduce_sum(im: _Importer, node: onnx.NodeProto) -> None:
    a = _attrs(node)
    x = im.value(node, 0)
    rank = len(T.shape_of(x.type))
    if len(node.input) > 1 and node.input[1]:
        axes = im.static_ints(node, 1)
    else:
        axes = [int(v) for v in a.get("axes", [])]
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            im.env[node.output[0]] = x
            return
        axes = list(range(rank))
    if any(not -rank <= ax < rank for ax in axes):
        raise DeeployError(f"{_node_label(node)}: axes {axes} out of range for rank {rank}")
    norm = sorted({ax % rank for ax in axes})
    props: dict[str, Attribute | None] = {
        "axes": DenseArrayBase.from_list(i64, norm),
        "keepdims": UnitAttr() if a.get("keepdims", 1) else None,
    }
    cls = T.ReduceMeanOp if node.op_type == "ReduceMean" else T.ReduceSumOp
    im.bind(node, im.emit(node, cls, [x], props))


@handles(f"{MS}:InPlaceAccumulatorV2")
def _accumulate(im: _Importer, node: onnx.NodeProto) -> None:
    buf_name = node.input[0]
    if buf_name not in im.arg_index:
        raise DeeployError(
            f"{_node_label(node)}: the accumulation buffer '{buf_name}' must be a graph input"
        )
    if len(node.input) < 3 or not node.input[2]:
        raise DeeployError(f"{_node_label(node)}: the lazy_reset_grad input is required")
    (res,) = im.emit(node, T.AccumulateOp, [im.value(node, i) for i in range(3)])
    # output 0 is only a completion flag; the buffer itself is the state
    im._dropped.add(node.output[0])
    if len(node.output) > 1 and node.output[1]:
        im.env[node.output[1]] = res
    im.results.append(
        (
            res,
            T.result_attrs(buf_name, im.arg_index[buf_name]),
        )
    )


@handles("SGD")
def _sgd(im: _Importer, node: onnx.NodeProto) -> None:
    a = _attrs(node)
    if "lr" not in a:
        raise DeeployError(f"{_node_label(node)}: SGD needs an 'lr' attribute")
    w_name = node.input[0]
    if w_name not in im.arg_index:
        raise DeeployError(
            f"{_node_label(node)}: the updated weight '{w_name}' must be a parameter"
        )
    if not float(a["lr"]) > 0:
        raise DeeployError(f"{_node_label(node)}: lr must be positive, got {float(a['lr']):g}")
    lr = im.constant(np.array([a["lr"]], dtype=np.float32))
    (res,) = im.emit(node, T.SgdOp, [im.value(node, 0), im.value(node, 1), lr])
    im.env[node.output[0]] = res
    im.results.append(
        (
            res,
            T.result_attrs(node.output[0], im.arg_index[w_name]),
        )
    )


@handles(f"{MS}:SGDOptimizerV2")
def _sgd_v2(im: _Importer, node: onnx.NodeProto) -> None:  # pragma: no cover - see below
    # The optimizer graph is expanded by _optimizer_function; this entry only
    # marks the op as supported for the unsupported-op check.
    raise AssertionError("SGDOptimizerV2 is expanded by the optimizer builder")


# Convolution networks (Conv, ConvGrad, pooling and their gradients, Sum, and
# the static shape arithmetic around Flatten/Reshape) register their handlers
# from their own module.
from deeploy_mlir.frontend import conv_import as _conv_import  # noqa: E402

_ = _conv_import

# Transformer ops (batched products aside: Gemm and MatMul above): Softmax,
# LayerNormalization, Gelu, their gradients, Transpose, Squeeze, Unsqueeze.
from deeploy_mlir.frontend import transformer_import as _transformer_import  # noqa: E402

_ = _transformer_import
