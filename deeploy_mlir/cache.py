"""deeploy-mlir's cache directory: what a compile derives from installed
libraries and would otherwise derive again in every process, kept on the
user's machine like Python's byte-code cache.

* ONNX's op schemas' attribute types (deeploy_mlir/frontend/onnx_schemas.py),
  so that a compile need not load onnx's C++ extension;
* the C templates compiled by jinja2 (its own `FileSystemBytecodeCache`,
  keyed by each template's source and the Python version).

The directory is ``$XDG_CACHE_HOME/deeploy-mlir`` (``~/.cache/deeploy-mlir``
when XDG_CACHE_HOME is not set). Nothing depends on it: a directory that
cannot be made or written leaves every compile deriving the data again, with
the same results. Deleting it is always safe.

Imports nothing of deeploy_mlir.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(create: bool = False) -> Path | None:
    """The cache directory (None: no home directory; or, with `create`, it
    cannot be made)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home directory
            return None
    d = Path(base) / "deeploy-mlir"
    if create:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
    return d
