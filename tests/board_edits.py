"""Board files with one field changed, for the bad-board tests (test_boards.py
and the CLI corpus in bad_inputs/corpus.py)."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from deeploy_mlir.targets.boards import BOARDS_DIR

#: as a value in `edited`'s changes: remove the field
DELETE = object()


def siracusa() -> dict[str, Any]:
    return yaml.safe_load((BOARDS_DIR / "siracusa.yaml").read_text())


def edited(doc: dict[str, Any], changes: dict[str, object]) -> dict[str, Any]:
    """A copy of `doc` where each "a.b.c" of `changes` is set to its value
    (DELETE removes it)."""
    doc = copy.deepcopy(doc)
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = doc
        for p in parents:
            node = node[p]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return doc
