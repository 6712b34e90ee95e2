"""Reference semantics (numpy) of op families registered through
`deeploy_mlir.interp.registry.semantics`. Importing this package imports
every family; a new family is a module here plus its line below."""

from __future__ import annotations

from deeploy_mlir.interp.families import loss

FAMILIES: tuple[str, ...] = ("loss",)
_MODULES = (loss,)
