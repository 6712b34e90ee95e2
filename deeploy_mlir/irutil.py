"""Small IR-building helpers the passes share.

`index_const` builds an index constant; `rebuild` makes a compute op of the
same kind on new operands (its properties without the operand segment sizes,
which the new operands set, updated by the ones given; a maxpool2d tile keeps
its `origin` operands); `rewrite_once` applies a rewrite pattern once per op
in program order and lets a DeeployError through; `check_choices` names
the pass, the option and its choices when a pipeline gives a `Literal`
option a value outside them. A library module: it imports xDSL and the training
dialect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Literal, get_args, get_origin, get_type_hints

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.utils.arg_spec import ArgSpec

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError


def index_const(b: Builder, v: int) -> SSAValue:
    """An `arith.constant v : index` inserted at `b`."""
    return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result


def rebuild(
    op: T.TrainingComputeOp,
    ins: Sequence[SSAValue],
    outs: Sequence[SSAValue],
    properties: Mapping[str, Attribute] | None = None,
    origin: Sequence[SSAValue] | None = None,
) -> T.TrainingComputeOp:
    """`op`'s kind on operands `ins` and `outs` (buffer form when `outs` are
    given, tensor form otherwise): its properties updated by `properties`; a
    maxpool2d with `origin` operands (its tile's place in the whole input)
    keeps them unless `origin` replaces them."""
    props = {k: p for k, p in op.properties.items() if k != "operandSegmentSizes"}
    props.update(properties or {})
    if isinstance(op, T.MaxPool2dOp):
        org = list(op.origin) if origin is None else list(origin)
        if org:
            return T.MaxPool2dOp(list(ins), (), list(outs), properties=props, origin=org)
    return type(op)(list(ins), (), list(outs), properties=props)


class _Guarded(RewritePattern):
    """`pattern`, keeping the first DeeployError it raises (and rewriting
    nothing after it) instead of letting the walker wrap it."""

    def __init__(self, pattern: RewritePattern) -> None:
        self.pattern = pattern
        self.error: DeeployError | None = None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.error is not None:
            return
        try:
            self.pattern.match_and_rewrite(op, rewriter)
        except DeeployError as e:
            self.error = e


def rewrite_once(module: ModuleOp, pattern: RewritePattern) -> None:
    """Apply `pattern` to every op of `module` once, in program order (a
    `PatternRewriteWalker` that does not revisit what the rewrites create); a
    DeeployError of a rewrite reaches the caller as it was raised."""
    guarded = _Guarded(pattern)
    PatternRewriteWalker(guarded, apply_recursively=False).rewrite_module(module)
    if guarded.error is not None:
        raise guarded.error


def _one_of(choices: Sequence[object]) -> str:
    quoted = [f"'{c}'" for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def check_choices(cls: type, spec: ArgSpec) -> None:
    """Raise a DeeployError naming the pass, the option and its choices when
    `spec` gives one of `cls`'s `Literal` options a value outside them
    (before xDSL's own type check, whose message names neither)."""
    hints = get_type_hints(cls)
    params = spec.normalize_parameter_names().parameters
    for f in dataclasses.fields(cls):
        t = hints.get(f.name)
        if get_origin(t) is not Literal or f.name not in params:
            continue
        given, choices = params[f.name], get_args(t)
        if len(given) != 1 or given[0] not in choices:
            got = ",".join(str(g) for g in given)
            name = getattr(cls, "name", cls.__name__)
            raise DeeployError(f"{name}: {f.name} must be {_one_of(choices)}, got '{got}'")
