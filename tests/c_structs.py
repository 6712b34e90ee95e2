"""The kernels' argument structs as runtime_c declares them, read from its C
sources: one source for the tests' ctypes mirrors (a field changed in C
changes the mirror, or fails the test that uses the old name) and for
tests/test_kernel_structs.py, which checks the kernel dialect's field lists
(deeploy_mlir/dialects/kernel.py) against them.

A small reader of the subset of C the headers use: `#define NAME 4u`,
`typedef enum { A = 0, ... } name_e;`, `typedef struct { T *a; T b, c; T
d[N]; other_t e; } name_t;` (a `/* name_e */` comment after a uint32_t field
names the enumeration it holds), and each kernel's
`const name_t *a = (const name_t *)args;` in runtime_c/kernels/*.c."""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

RT = Path(__file__).resolve().parents[1] / "runtime_c"

_SCALARS = {
    "uint32_t": ctypes.c_uint32,
    "float": ctypes.c_float,
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
}


@dataclass
class Header:
    """What the headers declare."""

    defines: dict[str, int] = field(default_factory=dict[str, int])
    #: enum name -> (constant, value) in order
    enums: dict[str, list[tuple[str, int]]] = field(
        default_factory=dict[str, list[tuple[str, int]]]
    )
    #: struct name -> (field, C type) in order; C types: "float*" (const
    #: dropped), "uint32_t", "uint32_t[4]", or another struct's name
    structs: dict[str, list[tuple[str, str]]] = field(
        default_factory=dict[str, list[tuple[str, str]]]
    )
    #: (struct, field) -> the enumeration a `/* name_e */` comment names
    enum_fields: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])
    #: kernels: every `void NAME(void *args);`
    kernels: list[str] = field(default_factory=list[str])


def _decls(body: str, struct: str, h: Header) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in body.splitlines():
        tag = re.search(r"/\*\s*(\w+_e)\s*\*/", line)
        code = re.sub(r"/\*.*?\*/|//.*", "", line).strip()
        if not code:
            continue
        for decl in filter(None, (d.strip() for d in code.split(";"))):
            m = re.fullmatch(r"(?:const\s+)?(\w+)\s+(.*)", decl)
            if m is None:
                raise ValueError(f"{struct}: cannot read the declaration '{decl}'")
            base, names = m.groups()
            for name in (n.strip() for n in names.split(",")):
                ptr = name.startswith("*")
                name = name.lstrip("* ")
                arr = re.fullmatch(r"(\w+)\[(\w+)\]", name)
                if arr is not None:
                    name, n = arr.groups()
                    count = h.defines[n] if n in h.defines else int(n.rstrip("uU"))
                    ctype = f"{base}[{count}]"
                else:
                    ctype = base + ("*" if ptr else "")
                out.append((name, ctype))
                if tag is not None:
                    h.enum_fields[(struct, name)] = tag.group(1)
    return out


def parse(text: str, h: Header | None = None) -> Header:
    """The declarations of one header's text (added to `h`)."""
    h = Header() if h is None else h
    for name, value in re.findall(r"#define\s+(\w+)\s+(\d+)[uU]?\b", text):
        h.defines[name] = int(value)
    for body, name in re.findall(r"typedef\s+enum\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        items = [i.strip() for i in body.split(",") if i.strip()]
        h.enums[name] = [(k.strip(), int(v)) for k, v in (i.split("=") for i in items)]
    for body, name in re.findall(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        h.structs[name] = _decls(body, name, h)
    h.kernels += re.findall(r"^\s*void\s+(\w+)\s*\(\s*void\s*\*\s*args\s*\)\s*;", text, re.M)
    return h


@cache
def header() -> Header:
    """Every runtime_c/include/dm_*.h, in the order dm_kernels.h includes them."""
    h = Header()
    order = re.findall(r'#include\s+"(dm_\w+\.h)"', (RT / "include" / "dm_kernels.h").read_text())
    for name in order:
        parse((RT / "include" / name).read_text(), h)
    return h


def flat_fields(struct: str, h: Header | None = None) -> list[tuple[str, str]]:
    """A struct's fields with nested structs flattened (`outer.inner`)."""
    h = header() if h is None else h
    out: list[tuple[str, str]] = []
    for name, ctype in h.structs[struct]:
        if ctype in h.structs:
            out += [(f"{name}.{n}", t) for n, t in flat_fields(ctype, h)]
        else:
            out.append((name, ctype))
    return out


@cache
def kernel_structs() -> dict[str, str]:
    """Kernel -> the struct its definition casts `args` to (runtime_c/kernels/*.c)."""
    out: dict[str, str] = {}
    for src in sorted((RT / "kernels").glob("*.c")):
        text = src.read_text()
        pat = (
            r"^void\s+(\w+)\s*\(\s*void\s*\*\s*args\s*\)\s*\{"
            r"\s*const\s+(\w+)\s*\*\s*\w+\s*=\s*\(const\s+\2\s*\*\)\s*args\s*;"
        )
        for kernel, struct in re.findall(pat, text, re.M):
            out[kernel] = struct
    return out


def _ctype(ctype: str) -> type:
    if ctype.endswith("*"):
        return ctypes.c_void_p
    m = re.fullmatch(r"(\w+)\[(\d+)\]", ctype)
    if m is not None:
        return _SCALARS[m.group(1)] * int(m.group(2))
    if ctype in _SCALARS:
        return _SCALARS[ctype]
    return mirror(ctype)


@cache
def mirror(struct: str) -> type[ctypes.Structure]:
    """A ctypes.Structure with `struct`'s fields, as the header declares them
    (its `c_name` is the C type name)."""
    fields = [(name, _ctype(t)) for name, t in header().structs[struct]]
    return type(struct, (ctypes.Structure,), {"_fields_": fields, "c_name": struct})


def enum(name: str) -> dict[str, int]:
    """An enumeration's constants and values."""
    return dict(header().enums[name])
