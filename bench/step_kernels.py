"""The kernel calls of one training step, read from an emitted project's
TrainingNetwork.c (`deeploy-mlir lower -o DIR`): every `pi_cl_team_fork` of
a kernel with the literal fields of its argument struct, and how often one
training step runs it (the product of the trip counts of the `for` loops
around it). bench/gvsoc.py's `--only step-kernels` measures each distinct
call in isolation on GVSoC (gvsoc_probe.measure_kernels) and weights it by
its count, so the table adds up to the step's kernel cycles of a family.

    python bench/step_kernels.py DIR        # the calls of DIR's step, grouped
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import gvsoc_probe as P

_FOR = re.compile(r"for \(uint32_t (\w+) = (\d+)u; \1 < (\d+)u; \1 \+= (\d+)u\)")
_FORK = re.compile(r"pi_cl_team_fork\(NUM_CORES, (\w+), &args\)")
_FIELD = re.compile(r"^\s*\.([\w.]+) = (.*?),?\s*$")
_OP = re.compile(r"\{ /\* (training\.[^*]+?) \*/")
_ARGS = re.compile(r"_args_t args = \{")


@dataclass(frozen=True)
class Call:
    op: str  # the training op the call belongs to
    fn: str  # the kernel
    #: the struct's literal scalar fields (pointers and expressions left out;
    #: a NULL pointer is 0)
    fields: tuple[tuple[str, int | float | tuple[int, ...]], ...]
    #: the pointer fields that are set (not NULL)
    pointers: tuple[str, ...] = ()

    def get(self, name: str) -> int:
        for k, v in self.fields:
            if k == name:
                assert isinstance(v, int), name
                return v
        raise KeyError(name)

    def ints(self, name: str) -> tuple[int, ...]:
        for k, v in self.fields:
            if k == name:
                assert isinstance(v, tuple), name
                return v
        raise KeyError(name)


def _value(text: str) -> int | float | tuple[int, ...] | None:
    t = text.strip()
    if m := re.fullmatch(r"(\d+)u", t):
        return int(m.group(1))
    if re.fullmatch(r"[-+]?[\d.]+(e[-+]?\d+)?f", t):
        return float(t[:-1])
    if m := re.fullmatch(r"\{([\du, ]*)\}", t):
        return tuple(int(x.strip()[:-1]) for x in m.group(1).split(",") if x.strip())
    if t == "NULL":
        return 0
    return None


def step_calls(c_source: str) -> Counter[Call]:
    """{call: times one run of the file's functions makes it}."""
    out: Counter[Call] = Counter()
    depth = 0
    loops: list[tuple[int, int]] = []  # (depth inside the loop, trips)
    fields: dict[str, int | float | tuple[int, ...]] = {}
    pointers: set[str] = set()
    op = "?"
    for line in c_source.splitlines():
        if m := _OP.search(line):
            op = m.group(1)
        if _ARGS.search(line):
            fields, pointers = {}, set()
        if m := _FIELD.match(line):
            v = _value(m.group(2))
            if v is None:
                pointers.add(m.group(1))
            else:
                fields[m.group(1)] = v
        if m := _FORK.search(line):
            trips = 1
            for _, t in loops:
                trips *= t
            key = Call(op, m.group(1), tuple(sorted(fields.items())), tuple(sorted(pointers)))
            out[key] += trips
        f = _FOR.search(line)
        opened, closed = line.count("{"), line.count("}")
        if f:
            lo, hi, st = int(f.group(2)), int(f.group(3)), int(f.group(4))
            depth += opened - closed
            loops.append((depth, max(0, (hi - lo + st - 1) // st)))
            continue
        depth += opened - closed
        while loops and depth < loops[-1][0]:
            loops.pop()
    return out


def step_calls_of(project: Path) -> Counter[Call]:
    return step_calls((project / "TrainingNetwork.c").read_text())


#: the kernels bench/gvsoc.py's step-kernels mode measures: fn -> table group
FAMILIES = {
    "dm_gemm_fp32": "gemm",
    "dm_batch_matmul_fp32": "batch_matmul",
    "dm_conv2d_fp32": "conv2d",
    "dm_conv2d_grad_input_fp32": "conv2d_grad dX",
    "dm_conv2d_grad_weight_fp32": "conv2d_grad dW",
}


def _literal(v: int | float | tuple[int, ...]) -> str:
    if isinstance(v, tuple):
        return "{" + ", ".join(f"{x}u" for x in v) + "}"
    if isinstance(v, float):
        return f"{v!r}f"
    return f"{v}u"


def probe_case(call: Call) -> P.KernelCase:
    """The call as a gvsoc_probe kernel case: its literal fields, its
    pointers on buffers in L1 as large as the fields say."""
    f = dict(call.fields)
    name = FAMILIES[call.fn]
    if call.fn in ("dm_gemm_fp32", "dm_batch_matmul_fp32"):
        g = "gemm." if call.fn == "dm_batch_matmul_fp32" else ""
        M, N, K = f[g + "M"], f[g + "N"], f[g + "K"]
        ta, tb = f.get(g + "trans_a", 0), f.get(g + "trans_b", 0)
        count, a_off, b_off, c_off = 1, 0, 0, 0
        if g:
            rank = call.get("batch_rank")
            shape = call.ints("batch_shape")[:rank]
            for d in range(rank):
                count *= shape[d]
                a_off += (shape[d] - 1) * call.ints("a_strides")[d]
                b_off += (shape[d] - 1) * call.ints("b_strides")[d]
                c_off += (shape[d] - 1) * call.ints("c_strides")[d]
        sizes = {"A": a_off + M * K, "B": b_off + K * N, "Y": count * M * N, "C": c_off + M * N}
        macs, units, outputs = count * M * N * K, M, count * M * N
        mn: tuple[int, int] | None = (M, N)
        form = {(0, 0): "A B", (0, 1): "A B^T", (1, 0): "A^T B", (1, 1): "A^T B^T"}[(ta, tb)]
        shape_s = (f"{count}x " if g else "") + f"M{M} N{N} K{K} {form}"
        if f.get(g + "acc_Y"):
            shape_s += " acc"
        if f.get(g + "partial"):
            shape_s += " partial"
        if g + "C" in call.pointers:
            shape_s += " +C"
    else:
        cg = f["in_ch"] // f["groups"]
        xs = f["batch"] * f["in_ch"] * f["in_h"] * f["in_w"]
        ys = f["batch"] * f["out_ch"] * f["out_h"] * f["out_w"]
        ws = f["out_ch"] * cg * f["k_h"] * f["k_w"]
        sizes = {
            "X": xs,
            "Y": ys,
            "dY": ys,
            "dX": xs,
            "W": ws,
            "dW": ws,
            "B": f["out_ch"],
            "dB": f["out_ch"],
        }
        macs, units, mn = ys * cg * f["k_h"] * f["k_w"], 0, None
        outputs = {"dm_conv2d_fp32": ys, "dm_conv2d_grad_input_fp32": xs}.get(call.fn, ws)
        shape_s = (
            f"{f['batch']}x{f['in_ch']}x{f['in_h']}x{f['in_w']}->{f['out_ch']} k{f['k_h']}"
            f" s{f['stride_h']}" + (f" g{f['groups']}" if f["groups"] != 1 else "")
        )
        for acc in ("acc_dX", "acc_dW", "acc_dB"):
            if f.get(acc) and acc[4:] in call.pointers:
                shape_s += f" {acc}"
        if "dB" in call.pointers:
            shape_s += " +dB"
    decl_t = (
        "dm_batch_matmul_args_t"
        if call.fn == "dm_batch_matmul_fp32"
        else {
            "dm_gemm_fp32": "dm_gemm_args_t",
            "dm_conv2d_fp32": "dm_conv2d_args_t",
        }.get(call.fn, "dm_conv2d_grad_args_t")
    )
    decl = f"{decl_t} a = {{0}};\n"
    for i, ptr in enumerate(call.pointers):
        base = ptr.split(".")[-1]
        if base.startswith("reset_"):  # accumulate-fuse's flag word: 0 = add onto the buffer
            decl += f"{{ uint8_t *r = (uint8_t *)l1f(1u, 0); r[0] = 0u; a.{ptr} = r; }}\n"
            continue
        decl += f"a.{ptr} = l1f({sizes[base]}u, {i + 1});\n"
    for k, v in call.fields:
        if k in call.pointers or k.split(".")[-1] in sizes:
            continue  # NULL pointers stay 0
        if isinstance(v, tuple):
            decl += "".join(f"a.{k}[{i}] = {x}u; " for i, x in enumerate(v)) + "\n"
        else:
            decl += f"a.{k} = {_literal(v)};\n"
    family = {
        "dm_conv2d_grad_input_fp32": "conv_dx",
        "dm_conv2d_grad_weight_fp32": "conv_dw",
        "dm_conv2d_fp32": "conv",
    }.get(call.fn, name)
    return P.KernelCase(name, family, name, shape_s, macs, call.fn, decl, units, outputs, mn)


def main(argv: list[str]) -> int:
    calls = step_calls_of(Path(argv[0]))
    by_fn: Counter[str] = Counter()
    for c, n in calls.items():
        by_fn[c.fn] += n
    for fn, n in by_fn.most_common():
        print(f"{fn}: {n} calls, {sum(1 for c in calls if c.fn == fn)} distinct")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
