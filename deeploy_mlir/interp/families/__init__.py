"""Reference semantics (numpy) of op families registered through
`deeploy_mlir.interp.registry.semantics`. Importing this package imports
every family; a new family is a module here plus its line below."""

from __future__ import annotations

from deeploy_mlir.interp.families import gather_split as gather_split

FAMILIES: tuple[str, ...] = ("gather_split",)
