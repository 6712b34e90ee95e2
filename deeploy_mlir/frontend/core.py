"""The importer's core: what every op handler needs, and nothing op-specific.

* the result records (`ArgInfo`, `ImportedModel`) and the argument kinds;
* the handler registry: `handles(...)` registers a function for ONNX op types,
  with what the graph checks need to know about them (their attribute schema,
  whether all their outputs are optional); `FOLDERS` are tried on every node
  before its handler;
* `Importer`, the state of one import (the value table `env`, the constants
  `inits`, the shapes the graph declares, the builder, the function's results)
  and the helpers handlers build with (`value`, `static_ints`, `constant`,
  `emit`, `emit_typed`, `bind`, `bind_named`, `reshape_to`, `add_result`);
* error labels (`node_label`) and the ONE function that writes the
  ``training.*`` metadata of arguments and results (`training_attrs`).

It imports no op family and no other frontend module: the families import it
(deeploy_mlir/frontend/ops/), and onnx_import.py drives the import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend import onnx_schemas

ONNX_DTYPES: dict[int, tuple[Attribute, type[np.generic]]] = {
    pb.TensorProto.FLOAT: (f32, np.float32),
    pb.TensorProto.INT64: (i64, np.int64),
    pb.TensorProto.BOOL: (i1, np.bool_),
}
ONNX_DTYPES_BY_NP: dict[Any, Attribute] = {np.float32: f32, np.int64: i64, np.bool_: i1}

KIND_INPUT = "input"
KIND_PARAM = "param"
KIND_GRAD = "grad_accum"
KIND_RESET = "reset_flag"
KIND_LR = "lr"
KIND_OUTPUT = "output"
KIND_RUNNING = "running_stat"

MS = "com.microsoft"
MIN_OPSET, MAX_OPSET = 11, 21
#: the emitted C addresses a tensor with 32-bit sizes
MAX_TENSOR_BYTES = (1 << 32) - 1

Props = dict[str, Attribute | None]


@dataclass
class ArgInfo:
    name: str
    kind: str
    shape: tuple[int, ...]
    dtype: type[np.generic]


@dataclass
class ImportedModel:
    module: ModuleOp
    #: initial values of every parameter (and batch norm running statistic), by name
    params: dict[str, np.ndarray]
    #: the arguments of @training_step, in order
    train_args: list[ArgInfo]
    #: the parameters that train (have a gradient), in optimizer order
    trainable: list[str]
    source: str
    style: str  # "ort" or "deeploy"
    #: the optimizer's state arguments of @optimizer_step (AdamW's step count
    #: and moments) and their initial values, by name
    opt_state: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])

    @property
    def user_inputs(self) -> list[ArgInfo]:
        return [a for a in self.train_args if a.kind == KIND_INPUT]

    @property
    def running_stats(self) -> list[str]:
        """The running statistics (state the step updates, no gradient)."""
        return [a.name for a in self.train_args if a.kind == KIND_RUNNING]


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------


def tensor_type(shape: Sequence[int], elem: Attribute) -> TensorType[Attribute]:
    return TensorType(elem, list(shape))


def attrs(node: pb.NodeProto) -> dict[str, Any]:
    return {a.name: pb.attribute_value(a) for a in node.attribute}


def node_label(node: pb.NodeProto, index: int | None = None) -> str:
    name = node.name or next((o for o in node.output if o), None)
    if name is None:
        name = f"#{index}" if index is not None else "?"
    return f"node '{name}' ({node.op_type})"


def ssa_name(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else f"v{out}"


def domain_of(node: pb.NodeProto) -> str:
    """The node's domain as the registry keys it ("" for the default domain)."""
    return "" if node.domain in ("", "ai.onnx") else node.domain


def default_opset(model: pb.ModelProto) -> int:
    return max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def training_attrs(
    name: str, kind: str | None = None, updates: int | None = None
) -> dict[str, Attribute]:
    """The metadata of a function argument (its kind and ONNX name) or result
    (its ONNX name and, when it is the new value of an argument, that
    argument's index), as the training dialect's registered attributes. The
    only place the frontend writes it."""
    if kind is not None:
        return T.arg_attrs(kind, name)
    return T.result_attrs(name, updates)


def arg_attrs(args: Sequence[ArgInfo]) -> ArrayAttr[DictionaryAttr]:
    """The `arg_attrs` of a function whose arguments are `args`."""
    return ArrayAttr(DictionaryAttr(training_attrs(a.name, kind=a.kind)) for a in args)


def result_attrs(results: Sequence[Result]) -> ArrayAttr[DictionaryAttr]:
    """The `res_attrs` of a function returning `results`."""
    return ArrayAttr(DictionaryAttr(training_attrs(r.name, updates=r.updates)) for r in results)


@dataclass
class Result:
    """A result of the function being built, with its metadata."""

    value: SSAValue
    name: str
    updates: int | None = None


# --------------------------------------------------------------------------
# The handler registry
# --------------------------------------------------------------------------


Handler = Callable[["Importer", pb.NodeProto], None]
#: a folder that returns True has evaluated the node at import time (all its
#: inputs constant: shape arithmetic)
Folder = Callable[["Importer", pb.NodeProto], bool]


@dataclass(frozen=True)
class OpEntry:
    handler: Handler
    #: the default-domain op whose ONNX schema types the attributes (None:
    #: the op's own name in the default domain, no check elsewhere)
    schema: str | None = None
    #: attribute types of an op outside the ONNX schemas (replaces `schema`)
    attributes: tuple[tuple[str, int], ...] | None = None
    #: every output may be unnamed (the node is then dropped)
    optional_outputs: bool = False


REGISTRY: dict[tuple[str, str], OpEntry] = {}
FOLDERS: list[Folder] = []


def handles(
    *keys: str,
    schema: str | None = None,
    attributes: dict[str, int] | None = None,
    optional_outputs: bool = False,
) -> Callable[[Handler], Handler]:
    """Register an importer function for ONNX op types ("Gemm",
    "com.microsoft:ReluGrad"). `schema`: the default-domain op whose
    attributes a com.microsoft op shares ("Conv" for ConvGrad);
    `attributes`: {name: pb.AttributeProto type} of an op no ONNX schema
    describes; `optional_outputs`: a node naming none of its outputs is legal."""

    def deco(f: Handler) -> Handler:
        own = tuple(attributes.items()) if attributes is not None else None
        for k in keys:
            dom, _, op = k.rpartition(":")
            if (dom, op) in REGISTRY:
                raise AssertionError(f"two handlers for the ONNX op {k}")
            REGISTRY[(dom, op)] = OpEntry(f, schema, own, optional_outputs)
        return f

    return deco


def entry_of(node: pb.NodeProto) -> OpEntry | None:
    return REGISTRY.get((domain_of(node), node.op_type))


def attribute_types(node: pb.NodeProto, opset: int) -> dict[str, int]:
    """The attribute types the op's registration or ONNX schema declares ({}:
    none known)."""
    entry = entry_of(node)
    if entry is not None and entry.attributes is not None:
        return dict(entry.attributes)
    name = node.op_type if domain_of(node) == "" else (entry.schema if entry else None)
    if name is None:
        return {}
    return onnx_schemas.attribute_types(name, opset, schema_names(), OPSETS) or {}


#: the opsets the frontend accepts
OPSETS = range(MIN_OPSET, MAX_OPSET + 1)


def schema_names() -> list[str]:
    """The default-domain ops whose ONNX schemas type the registered ops' attributes."""
    names = {op for (dom, op), e in REGISTRY.items() if dom == "" and e.attributes is None}
    names |= {e.schema for e in REGISTRY.values() if e.schema is not None and e.attributes is None}
    return sorted(names)


# --------------------------------------------------------------------------
# The state of one import
# --------------------------------------------------------------------------


@dataclass
class Importer:
    train: pb.ModelProto
    opt: pb.ModelProto | None
    given_params: dict[str, np.ndarray] | None
    source: str
    env: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    inits: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    value_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict[str, tuple[int, ...]])
    builder: Builder | None = None
    results: list[Result] = field(default_factory=list[Result])
    arg_index: dict[str, int] = field(default_factory=dict[str, int])
    deeploy_params: list[str] = field(default_factory=list[str])
    #: outputs that are only completion flags (InPlaceAccumulatorV2 output 0)
    dropped: set[str] = field(default_factory=set[str])
    #: --params PARAMS.npz when the initial values come from it (None: checkpoint or graph)
    params_file: str | None = None
    #: the checkpoint's optimizer state (frontend.checkpoint.OptimizerState), if any
    opt_state: Any = None

    def opset(self) -> int:
        return default_opset(self.train)

    def add_result(self, value: SSAValue, name: str, updates: int | None = None) -> None:
        """Return `value` from the function; `updates`: the index of the
        argument it is the new value of."""
        self.results.append(Result(value, name, updates))

    @property
    def updated(self) -> set[str]:
        """The names of the results that are the new value of an argument."""
        return {r.name for r in self.results if r.updates is not None}

    # -- reading a node's inputs ----------------------------------------------
    def value(self, node: pb.NodeProto, i: int) -> SSAValue:
        name = self.input_name(node, i)
        if name in self.env:
            return self.env[name]
        if name in self.inits:
            try:
                v = self.constant(self.inits[name])
            except DeeployError as e:
                raise DeeployError(f"{node_label(node)}: input '{name}': {e}") from None
            self.env[name] = v
            return v
        raise DeeployError(f"{node_label(node)}: input '{name}' is not defined before use")

    def input_name(self, node: pb.NodeProto, i: int) -> str:
        """The name of input #i, which the node must have."""
        if i >= len(node.input) or not node.input[i]:
            raise DeeployError(
                f"{node_label(node)}: input #{i} is missing ({node.op_type} needs it)"
            )
        return node.input[i]

    def static_ints(self, node: pb.NodeProto, i: int) -> list[int]:
        name = self.input_name(node, i)
        if name not in self.inits:
            raise DeeployError(
                f"{node_label(node)}: input '{name}' must be a constant (an initializer)"
            )
        return [int(x) for x in np.asarray(self.inits[name]).reshape(-1)]

    # -- building ops -----------------------------------------------------------
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
        t = tensor_type(arr.shape, elem)
        flat = arr.reshape(-1).tolist()
        attr = DenseIntOrFPElementsAttr.from_list(t, flat)  # pyright: ignore[reportCallIssue, reportArgumentType]
        return self.builder.insert(T.ConstantOp(attr)).result

    def emit(
        self,
        node: pb.NodeProto,
        cls: type[T.TrainingComputeOp],
        ins: Sequence[SSAValue],
        props: Props | None = None,
        n_results: int = 1,
    ) -> list[SSAValue]:
        """Create `cls` with result types from its own shape rules."""
        assert self.builder is not None
        probe = cls(ins, [tensor_type((), f32)] * n_results, properties=props)
        try:
            probe.check_inputs()
            shapes = probe.infer_shapes()
            elems = probe.output_elem_types()
        except VerifyException as e:
            raise DeeployError(f"{node_label(node)}: {e}") from None
        finally:
            probe.erase(safe_erase=False)
        for s, e in zip(shapes, elems, strict=True):
            if int(np.prod(s, dtype=object)) * T.elem_type_bytes(e) > MAX_TENSOR_BYTES:
                raise DeeployError(
                    f"{node_label(node)}: a result of shape {list(s)} is larger than the 4 GiB "
                    "a 32-bit target addresses"
                )
        types = [tensor_type(s, e) for s, e in zip(shapes, elems, strict=True)]
        op = self.builder.insert(cls(ins, types, properties=props))
        for r, out_name in zip(op.res, node.output, strict=False):
            if out_name:
                r.name_hint = ssa_name(out_name)
        return list(op.res)

    def emit_typed(
        self,
        node: pb.NodeProto,
        cls: type[T.TrainingComputeOp],
        ins: Sequence[SSAValue],
        out_types: Sequence[Attribute],
        props: Props | None = None,
    ) -> list[SSAValue]:
        """Create `cls` with declared result types (ops whose output shape is
        not a function of their inputs: pooling gradients, reshape); its
        verifier checks them."""
        assert self.builder is not None
        op = cls(ins, out_types, properties=props)
        try:
            op.verify()
        except VerifyException as e:
            op.erase(safe_erase=False)
            raise DeeployError(f"{node_label(node)}: {e}") from None
        self.builder.insert(op)
        return list(op.res)

    def bind(self, node: pb.NodeProto, values: Sequence[SSAValue]) -> None:
        for name, v in zip(node.output, values, strict=False):
            if name:
                self.env[name] = v

    def bind_named(self, names: Sequence[str], vals: Sequence[SSAValue]) -> None:
        """Bind ONNX output names to values (also when some outputs are unnamed)."""
        for name, v in zip(names, vals, strict=True):
            v.name_hint = ssa_name(name)
            self.env[name] = v

    def reshape_to(self, node: pb.NodeProto, x: SSAValue, shape: Sequence[int]) -> None:
        """Bind the node's output to x under `shape` (resolved, non-negative):
        x itself when the shape is x's, else a `training.reshape` of it."""
        out = node.output[0]
        if tuple(shape) == T.shape_of(x.type):
            self.env[out] = x
            return
        t = TensorType(T.elem_of(x.type), list(shape))
        res = self.emit_typed(node, T.ReshapeOp, [x], [t])
        self.bind_named([out], res)
