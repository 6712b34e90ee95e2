"""The kernel dialect's field lists (deeploy_mlir/dialects/kernel.py, what
kernel-select fills and the kernel.call verifier checks) against runtime_c's
C declarations, read by tests/c_structs.py: a field added, removed, renamed,
retyped or reordered in C, an enumeration or a kernel changed, fails here."""

from __future__ import annotations

import ctypes

import pytest
from c_structs import RT, Header, flat_fields, header, kernel_structs, mirror, parse

from deeploy_mlir.dialects import kernel as K

_PTR_TYPES = {"float*", "int64_t*", "uint8_t*", "void*"}


def _ext() -> Header:
    """dm_kernels_ext.h alone: the zoo's kernels (issue 20), which dm_kernels.h
    includes; the dialect lists those that kernel-select chooses."""
    return parse((RT / "include" / "dm_kernels_ext.h").read_text())


def test_every_struct_as_declared_in_c() -> None:
    """Every struct of dm_kernels.h's headers is the dialect's, but for the
    zoo's (dm_kernels_ext.h) that no kernel-select family uses yet."""
    h, ext = header(), _ext()
    assert set(K.STRUCTS) <= set(h.structs), sorted(set(K.STRUCTS) - set(h.structs))
    missing = set(h.structs) - set(K.STRUCTS)
    assert missing <= set(ext.structs), sorted(missing - set(ext.structs))
    for name, fields in K.STRUCTS.items():
        assert list(fields) == flat_fields(name), name


def test_field_types_are_those_the_dialect_checks() -> None:
    """Every C type a kernel struct uses is one the verifier has a rule for."""
    for fields in K.STRUCTS.values():
        for _, ctype in fields:
            assert (
                ctype in _PTR_TYPES
                or ctype in ("uint32_t", "float")
                or (ctype.startswith("uint32_t["))
            ), ctype


def test_enumerations_as_declared_in_c() -> None:
    h, ext = header(), _ext()
    assert set(K.ENUMS) <= set(h.enums)
    assert set(h.enums) - set(K.ENUMS) <= set(ext.enums)
    for name, consts in K.ENUMS.items():
        # the dialect prints the names; C gives them their values in order from 0
        assert h.enums[name] == [(c, i) for i, c in enumerate(consts)], name
    listed = {k: v for k, v in h.enum_fields.items() if k[0] in K.STRUCTS}
    assert K.ENUM_FIELDS == listed


def test_kernels_and_the_struct_each_takes() -> None:
    """The kernels dm_kernels.h offers are the dialect's, each with its struct,
    but for those of the zoo (dm_kernels_ext.h) not yet selectable (issue 20);
    every kernel defined in runtime_c/kernels is declared in a header."""
    h, ext = header(), _ext()
    assert set(K.KERNELS) <= set(h.kernels), sorted(set(K.KERNELS) - set(h.kernels))
    unlisted = set(h.kernels) - set(K.KERNELS)
    assert unlisted <= set(ext.kernels), sorted(unlisted - set(ext.kernels))
    defined = kernel_structs()
    assert {k: defined[k] for k in K.KERNELS} == K.KERNELS
    assert set(defined) <= set(h.kernels), sorted(set(defined) - set(h.kernels))


def test_the_reader_sees_a_changed_field() -> None:
    """The comparison above can fail: a header with one field renamed and one
    retyped reads differently from the real one."""
    text = (RT / "include" / "dm_gelu.h").read_text()
    assert flat_fields("dm_gelu_args_t") == list(K.STRUCTS["dm_gelu_args_t"])
    changed = parse(text.replace("uint32_t size;", "uint16_t count;", 1), Header())
    assert changed.structs["dm_gelu_args_t"] != list(K.STRUCTS["dm_gelu_args_t"])
    assert ("count", "uint16_t") in changed.structs["dm_gelu_args_t"]


def test_reader_on_a_small_header() -> None:
    h = parse(
        """
        #define N_MAX 3u
        typedef enum { A_X = 0, A_Y = 1, /* note */ } a_e;
        typedef struct {
            const float *p, *q;  /* two pointers */
            int64_t *idx;
            uint32_t m, n;
            uint32_t arr[N_MAX];
            uint32_t kind; /* a_e */
        } inner_t;
        typedef struct { inner_t in; float eps; } outer_t;
        void k_fp32(void *args);
        """
    )
    assert h.enums == {"a_e": [("A_X", 0), ("A_Y", 1)]}
    assert h.structs["inner_t"] == [
        ("p", "float*"),
        ("q", "float*"),
        ("idx", "int64_t*"),
        ("m", "uint32_t"),
        ("n", "uint32_t"),
        ("arr", "uint32_t[3]"),
        ("kind", "uint32_t"),
    ]
    assert h.enum_fields == {("inner_t", "kind"): "a_e"}
    assert flat_fields("outer_t", h)[0] == ("in.p", "float*")
    assert flat_fields("outer_t", h)[-1] == ("eps", "float")
    assert h.kernels == ["k_fp32"]


@pytest.mark.parametrize("struct", sorted(K.STRUCTS))
def test_mirror_has_every_field(struct: str) -> None:
    """The ctypes mirror the kernel tests use has the header's fields (nested
    structs as their own mirrors): pointers as void *, arrays of their length."""
    m = mirror(struct)
    names = [f[0] for f in m._fields_]
    assert names == [n for n, _ in header().structs[struct]]
    for name, ctype in header().structs[struct]:
        t = dict(m._fields_)[name]
        if ctype.endswith("*"):
            assert t is ctypes.c_void_p
        elif ctype.endswith("]"):
            assert t._length_ == int(ctype[ctype.index("[") + 1 : -1])  # type: ignore[attr-defined]
