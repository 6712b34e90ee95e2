"""What every part of the C emitter shares: C spellings of names, types,
floats and arrays, the C dialect of the builds, the templates and runtime_c."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jinja2
import jinja2.bccache
import numpy as np
from xdsl.ir import Attribute

from deeploy_mlir.cache import cache_dir
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"

#: the C dialect of every build of the emitted code and the runtime: GNU C (the
#: SDK headers use `asm`), and no a*b+c contracted by the compiler (ISO C
#: modes' default, not GNU's), so every build gives the host's bits: the
#: kernels fuse where they say so, with fmaf
C_LANG = ("-std=gnu11", "-ffp-contract=off")

C_TYPE = {"f32": "float", "i64": "int64_t", "i1": "uint8_t"}


def c_ident(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return s if s and not s[0].isdigit() else f"_{s}"


def c_type(t: Attribute) -> str:
    return C_TYPE[str(T.elem_of(t))]


def c_float(x: float) -> str:
    if not abs(float(x)) <= float(np.finfo(np.float32).max):  # NaN, Inf, or beyond float32
        raise DeeployError(f"cannot emit the float {x}: not finite as a float32")
    v = np.float32(x)
    return np.format_float_scientific(v, unique=True, exp_digits=2) + "f"


#: elements formatted at a time by c_values (a chunk is a multiple of 8, the
#: elements per line): the per-element strings of a large array never all
#: exist at once, only its text
_CHUNK = 8 * 1024


def _items(flat: np.ndarray) -> list[str]:
    if flat.dtype == np.float32:
        # 9 significant digits give back every float32 exactly
        return ["%.8ef" % v for v in flat.tolist()]  # noqa: UP031
    if flat.dtype == np.bool_:
        return [str(int(v)) for v in flat.tolist()]
    return [f"{int(v)}LL" for v in flat.tolist()]


def _checked(arr: np.ndarray) -> np.ndarray:
    """`arr` flat; a non-finite float32 is an error."""
    flat = np.asarray(arr).reshape(-1)
    if flat.dtype == np.float32:
        bad = ~np.isfinite(flat)
        if bad.any():
            raise DeeployError(f"cannot emit the non-finite float {flat[bad][0]}")
    return flat


def c_values(arr: np.ndarray) -> str:
    """The elements of `arr` as a C initializer's text, 8 per line."""
    return _text(_checked(arr))


class CValues:
    """c_values(arr) for a template, checked now and made when the template
    writes it (`str`): a project streamed to its files (write_project) holds
    one array's text at a time, not every array's at once."""

    __slots__ = ("flat",)

    def __init__(self, arr: np.ndarray) -> None:
        self.flat = _checked(arr)

    def __str__(self) -> str:
        return _text(self.flat)


def _text(flat: np.ndarray) -> str:
    chunks: list[str] = []
    for start in range(0, len(flat), _CHUNK):
        items = _items(flat[start : start + _CHUNK])
        lines = [", ".join(items[i : i + 8]) for i in range(0, len(items), 8)]
        chunks.append(",\n    ".join(lines))
    return ",\n    ".join(chunks)


def level(t: Attribute) -> str:
    """The memory level of a memref type (an error if it has none)."""
    lv = T.memory_level(t)
    if lv is None:
        raise DeeployError(f"buffer of type {t} has no memory level")
    return lv


def runtime_dir() -> Path:
    """runtime_c/ of this checkout (editable install), else the copy a wheel
    installs under <prefix>/share/deeploy-mlir (pyproject's data-files)."""
    here = Path(__file__).resolve().parents[3] / "runtime_c"
    installed = Path(sys.prefix) / "share" / "deeploy-mlir" / "runtime_c"
    for d in (here, installed):
        if (d / "include").is_dir():
            return d
    raise DeeployError(
        f"runtime_c/ not found at {here} nor {installed}: reinstall deeploy-mlir "
        "(pip install -e . from its source tree)"
    )


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """jinja2's cache of compiled templates, in deeploy-mlir's cache
    directory; a write that fails leaves the template compiled in memory."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def template_env() -> jinja2.Environment:
    """The templates' environment. Compiling them costs every process about
    0.6 MiB of peak memory: jinja2 keeps the compiled code in deeploy-mlir's
    cache directory (deeploy_mlir/cache.py), keyed by each template's source."""
    d = cache_dir(create=True)
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(TEMPLATES / "common")]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_TemplateCache(str(d)) if d is not None else None,
    )
