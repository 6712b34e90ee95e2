"""The attribute types of ONNX's op schemas, read from the installed onnx and
kept in a cache file, so that a compile need not load onnx's C++ extension.

The schemas live in onnx's C++ extension (`onnx.defs.get_schema`); importing
it and building the schema registry costs about 12 MiB of a compile's peak
(it is most of what `import onnx` costs) for a table of a few kilobytes: the
types of the attributes of the ops the frontend handles. The first compile
reads that table from onnx for every op the registry names and every opset
the frontend accepts, and writes it to
``onnx-schemas-<key>.json`` in deeploy-mlir's cache directory
(deeploy_mlir/cache.py); `<key>` is derived from the location, size and
modification time of onnx's C++ extension, so another onnx gets its own file.
Later compiles read the file. Nothing of ONNX's is copied into the
repository: the cache is onnx's answer, recorded on the user's machine like
Python's byte-code cache, and every question it cannot answer goes to onnx.
A cache that cannot be read (missing, another format, corrupt) is rebuilt; a
directory that cannot be written leaves every compile asking onnx directly,
with the same answers.

Imports deeploy_mlir.cache only; onnx when the cache misses.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path

from deeploy_mlir.cache import cache_dir

#: bump when the file's layout changes
FORMAT = 1

#: "Op@opset" -> {attribute name: AttributeProto type}, or None: ONNX has no
#: schema for the op at that opset
Table = dict[str, dict[str, int] | None]

_table: Table | None = None


def cache_path() -> Path | None:
    """The cache file for the installed onnx (None: onnx's extension not found)."""
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        return None
    pkg = Path(next(iter(spec.submodule_search_locations)))
    ext = sorted(pkg.glob("onnx_cpp2py_export*"))
    if not ext:
        return None
    st = ext[0].stat()
    key = zlib.crc32(f"{FORMAT}:{ext[0]}:{st.st_size}:{st.st_mtime_ns}".encode())
    d = cache_dir()
    return None if d is None else d / f"onnx-schemas-{key:08x}.json"


def _read(path: Path | None) -> Table:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    table = data.get("schemas")
    if not isinstance(table, dict):
        return {}
    out: Table = {}
    for k, v in table.items():  # pyright: ignore[reportUnknownVariableType]
        if v is None:
            out[str(k)] = None  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(v, dict) and all(
            isinstance(t, int)
            for t in v.values()  # pyright: ignore[reportUnknownVariableType]
        ):
            out[str(k)] = {str(n): t for n, t in v.items()}  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        else:  # not what this module writes
            return {}
    return out


def _write(path: Path | None, table: Table) -> None:
    if path is None:
        return
    with contextlib.suppress(OSError):
        if cache_dir(create=True) is None:
            return
        fd, tmp = tempfile.mkstemp(prefix=".onnx-schemas-", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"format": FORMAT, "schemas": table}, f, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def from_onnx(name: str, opset: int) -> dict[str, int] | None:
    """The attribute types of ONNX's schema of the default-domain op `name`
    at `opset`, asked of onnx itself (None: no such schema)."""
    import onnx.defs

    try:
        schema = onnx.defs.get_schema(name, opset, "")
    except onnx.defs.SchemaError:
        return None
    return {k: int(v.type) for k, v in schema.attributes.items()}


def attribute_types(
    name: str, opset: int, every_name: Iterable[str], opsets: Iterable[int]
) -> dict[str, int] | None:
    """The attribute types of ONNX's schema of the default-domain op `name`
    at `opset` (None: ONNX has none). On a miss, onnx answers for every op in
    `every_name` at every opset in `opsets`, and the cache keeps it."""
    global _table
    key = f"{name}@{opset}"
    if _table is None:
        _table = _read(cache_path())
    if key in _table:
        return _table[key]
    table = dict(_table)
    table[key] = from_onnx(name, opset)
    for n in every_name:
        for o in opsets:
            k = f"{n}@{o}"
            if k not in table:
                table[k] = from_onnx(n, o)
    _write(cache_path(), table)
    _table = table
    return table[key]
