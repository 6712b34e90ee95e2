"""The registry of reference semantics by op class: a family module under
interp/families/ registers the numpy semantics of its ops with `@semantics`,
and `reference.compute` looks them up before its own built-in cases."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from deeploy_mlir.dialects import training as T

#: the outputs of an op for its input arrays (new arrays, inputs untouched)
Semantics = Callable[[T.TrainingComputeOp, Sequence[np.ndarray]], list[np.ndarray]]

SEMANTICS: dict[type[T.TrainingComputeOp], Semantics] = {}


def semantics(*ops: type[T.TrainingComputeOp]) -> Callable[[Semantics], Semantics]:
    """Registers a function as the reference semantics of `ops`."""

    def register(fn: Semantics) -> Semantics:
        for op in ops:
            if op in SEMANTICS:
                raise ValueError(f"{op.name} has reference semantics twice")
            SEMANTICS[op] = fn
        return fn

    return register


def lookup(op: T.TrainingComputeOp) -> Semantics | None:
    """The registered semantics of `op`'s class (or of a base class)."""
    for cls in type(op).__mro__:
        fn = SEMANTICS.get(cls)  # type: ignore[call-overload]
        if fn is not None:
            return fn
    return None
