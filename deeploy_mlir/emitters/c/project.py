"""The C project of a planned buffer-form module: buffers, constants, the
step functions' statements (emitters/c/printer.py), the templates' context,
the manifest, and writing it all out whole or not at all."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp

from deeploy_mlir.dialects import kernel as K
from deeploy_mlir.dialects import training as T
from deeploy_mlir.emitters.c.common import (
    C_LANG,
    CValues,
    c_float,
    c_ident,
    c_type,
    c_values,
    level,
    runtime_dir,
    template_env,
)
from deeploy_mlir.emitters.c.dma import FnCtx
from deeploy_mlir.emitters.c.printer import StatementPrinter
from deeploy_mlir.emitters.c.profile import Profile
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.interp.attrs import (
    arena_sizes,
    dense_to_array,
    func_named,
)
from deeploy_mlir.memory.buffers import nbytes
from deeploy_mlir.outputs import staged_dir
from deeploy_mlir.passes.kernel_select import select_kernels
from deeploy_mlir.targets.stacks import ClusterStacks, cluster_stacks
from deeploy_mlir.targets.target import get_target


@dataclass
class Buffer:
    name: str
    kind: str
    level: str
    offset: int
    size: int
    ctype: str
    shape: tuple[int, ...]


def _arg_meta(fn: func.FuncOp, i: int) -> tuple[int | None, str, str]:
    """The arena offset, name and kind of argument `i` of a step function."""
    info = T.arg_info(fn, i)
    return info.offset, info.name_or(f"arg{i}"), info.kind


@dataclass
class EmitOptions:
    target: str = "pulp-open"
    steps: int = 1
    accum: int = 1
    lr: float = 0.01
    num_cores: int = 8
    #: L1 buffers allocated in L2 and the L2 <-> L1 copies done with memcpy
    #: (a baseline and debugging mode: the numbers must not change)
    l1_as_l2: bool = False
    #: cycle probes around every kernel call, DMA copy and wait (emitters/c/profile.py)
    profile: bool = False
    #: the cluster cores' float ISA the Makefile's `make gvsoc` builds for by
    #: default (GVSOC_ISA): the board's (boards.BOARD_ISAS)
    gvsoc_isa: str = "f"


@dataclass
class Project:
    """Everything the templates need, computed once from the module."""

    module: ModuleOp
    params: Mapping[str, np.ndarray]
    data: Mapping[str, np.ndarray]
    opts: EmitOptions
    buffers: list[Buffer] = field(default_factory=list[Buffer])
    constants: list[tuple[str, str, int, str]] = field(
        default_factory=list[tuple[str, str, int, str]]
    )
    #: the C statements of each step function
    functions: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    n_calls: int = 0
    #: a kernel call reads the mini-batch count (`#kernel.minibatch`, dropout):
    #: the network then defines `dm_minibatch` and the harness sets it
    minibatch: bool = False
    #: the caller hands the module over: kernel-select rewrites it in place
    #: instead of a copy (`lower` without --emit-ir: a large graph's copy is
    #: most of the compile's peak memory). Its metadata, all that the project
    #: reads afterwards, is the same either way
    own_module: bool = False
    env: jinja2.Environment = field(default_factory=lambda: template_env())
    #: initial values of the optimizer's state arguments (AdamW's moments and
    #: step count) by name; a state not given, or all zeros, starts zeroed
    opt_state: Mapping[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    #: the kernels the step functions fork (their cluster stacks: `stacks`)
    kernels: set[str] = field(default_factory=set[str])
    #: the profile's sites (opts.profile), else None
    profile: Profile | None = None

    def __post_init__(self) -> None:
        globals_: dict[str, str] = {}
        for op in self.module.ops:
            if isinstance(op, memref.GlobalOp):
                name = "dm_" + c_ident(op.sym_name.data)
                init = op.initial_value
                assert isinstance(init, DenseIntOrFPElementsAttr)
                arr = dense_to_array(init, op.type)
                self.constants.append((name, c_type(op.type), max(arr.size, 1), c_values(arr)))
                globals_[op.sym_name.data] = name
        # kernel-select on a copy: the module (the pipeline's IR) keeps its compute ops
        selected = self.module if self.own_module else self.module.clone()
        self.profile = Profile() if self.opts.profile else None
        printer = StatementPrinter(self.env, self.profile)
        seen: set[str] = set()
        for fname in ("training_step", "optimizer_step"):
            fn = func_named(selected, fname)
            self.functions[fname] = self._function(fn, printer, globals_, seen)
        self.n_calls = printer.n_calls
        self.kernels = {
            op.callee.root_reference.data for op in selected.walk() if isinstance(op, K.CallOp)
        }

    @property
    def stacks(self) -> ClusterStacks:
        """The cluster task's stacks, sized for the kernels the program forks."""
        return cluster_stacks(self.opts.num_cores, self.kernels)

    def _function(
        self,
        fn: func.FuncOp,
        printer: StatementPrinter,
        globals_: dict[str, str],
        seen: set[str],
    ) -> list[str]:
        cx = FnCtx(l1_as_l2=self.opts.l1_as_l2)
        block = fn.body.blocks.first
        assert block is not None
        for i, a in enumerate(block.args):
            off, name, kind = _arg_meta(fn, i)
            if off is None:
                raise DeeployError(
                    f"@{fn.sym_name.data}: argument '{name}' has no arena offset "
                    "(run arena-plan before emitting C)"
                )
            lv = level(a.type)
            cx.exprs[a] = (
                f"((uint32_t)(dm_arena_L3 + {off}u))"  # an L3 address, not a pointer
                if lv == "L3"
                else f"(({c_type(a.type)} *)(dm_arena_{lv} + {off}u))"
            )
            if name not in seen:
                seen.add(name)
                self.buffers.append(
                    Buffer(name, kind, lv, off, nbytes(a.type), c_type(a.type), T.shape_of(a.type))
                )
        select_kernels(fn)
        self.minibatch = self.minibatch or any(
            isinstance(v, K.MinibatchAttr)
            for op in fn.walk()
            if isinstance(op, K.CallOp)
            for v in op.values.data
        )
        return printer.function(block, cx, globals_, fn.sym_name.data)

    def _tiling(self) -> dict[str, Any]:
        """What tile selection decided (no timings: the output is byte-identical
        from one compile to the next)."""
        from deeploy_mlir.dialects.tiling import stopped_early

        stopped = stopped_early(self.module)
        if stopped is None:
            return {}
        ops = [{"op": op, "reason": why} for op, why in stopped]
        return {"tiling": {"stopped_early": len(ops), "stopped_early_ops": ops}}

    def _rv32_memory(self) -> dict[str, str]:
        """Flash (code + constant data) and RAM (arenas + stack) for QEMU's virt
        machine, sized to the model with room to spare, in whole MiB."""
        mib = 1 << 20
        data = sum(np.asarray(v).nbytes for v in self.data.values())
        data += sum(np.asarray(v).nbytes for v in self.params.values())
        flash = (2 * data + 2 * mib + mib - 1) // mib * mib
        ram = (sum(arena_sizes(self.module).values()) + 2 * mib + mib - 1) // mib * mib
        return {"flash": hex(flash), "ram": hex(ram), "ram_base": hex(0x80000000 + flash)}

    # -- views for the templates ---------------------------------------------
    def arg_buffers(self, kind: str) -> list[Buffer]:
        return [b for b in self.buffers if b.kind == kind]

    def context(self) -> dict[str, Any]:
        sizes = arena_sizes(self.module)
        n_mb = self.opts.steps * self.opts.accum
        data_arrays = []
        for b in self.arg_buffers("input"):
            arr = np.asarray(self.data[b.name])
            data_arrays.append(
                {
                    "buf": b,
                    "ident": c_ident(b.name),
                    "per_mb": int(np.prod(b.shape, dtype=np.int64)),
                    "text": CValues(arr.reshape(n_mb, -1).astype(_NP[b.ctype])),
                    "count": n_mb * max(int(np.prod(b.shape, dtype=np.int64)), 1),
                }
            )
        params, running_stats = (
            [
                {
                    "buf": b,
                    "ident": c_ident(b.name),
                    "text": CValues(np.asarray(self.params[b.name], dtype=np.float32)),
                    "count": max(b.size // 4, 1),
                }
                for b in self.arg_buffers(kind)
            ]
            for kind in ("param", "running_stat")
        )
        states = []
        for b in self.arg_buffers("optimizer_state"):
            v = self.opt_state.get(b.name)
            nonzero = v is not None and bool(np.any(np.asarray(v)))
            states.append(
                {
                    "buf": b,
                    "ident": c_ident(b.name),
                    "text": CValues(np.asarray(v).astype(_NP[b.ctype])) if nonzero else None,
                    "count": max(int(np.prod(b.shape, dtype=np.int64)), 1),
                }
            )
        return {
            "opts": self.opts,
            "states": states,
            "arenas": sizes,
            "constants": self.constants,
            "functions": self.functions,
            "buffers": self.buffers,
            "inputs": data_arrays,
            "params": params,
            "running_stats": running_stats,
            # initial values whose home is L3 (data.h's DM_L3_INIT)
            "l3_inits": any(p["buf"].level == "L3" for p in params + running_stats)
            or any(st["buf"].level == "L3" and st["text"] is not None for st in states),
            "grads": self.arg_buffers("grad_accum"),
            "resets": self.arg_buffers("reset_flag"),
            "lrs": self.arg_buffers("lr"),
            "outputs": self.arg_buffers("output"),
            "n_minibatches": n_mb,
            "minibatch": self.minibatch,
            "c_float": c_float,
            "c_ident": c_ident,
            "n_calls": self.n_calls,
            "sdk": get_target(self.opts.target).sdk,
            "c_lang": " ".join(C_LANG),
            "stacks": self.stacks,
            "rv32": self._rv32_memory(),
            "profile_sites": len(self.profile.sites) if self.profile is not None else 0,
        }

    def manifest(self) -> dict[str, Any]:
        from deeploy_mlir.memory.report import MANIFEST_VERSION, memory_summary

        summary = memory_summary(self.module)  # the schema: docs/manifest.md
        stacks = self.stacks
        summary["memory"]["L1"]["stack_bytes"] = stacks.total
        return {
            "version": MANIFEST_VERSION,
            "target": self.opts.target,
            "regime": summary["regime"],
            "footprint": summary["footprint"],
            "memory": summary["memory"],
            "buffers": summary["buffers"],
            "kernel_calls": self.n_calls,
            "cluster_stacks": {
                "stack_size": stacks.cc,
                "slave_stack_size": stacks.worker,
                "cores": stacks.cores,
                "l1_bytes": stacks.total,
            },
            **self._tiling(),
        }


_NP = {"float": np.float32, "int64_t": np.int64, "uint8_t": np.bool_}


#: the generated files made from templates (<name>.j2), in this order
_TEMPLATED = (
    "Makefile.sdk",
    "Network.h",
    "Network.c",
    "TrainingNetwork.c",
    "OptimizerNetwork.c",
    "data.h",
    "harness.c",
    "Makefile",
    "README.md",
)


def _pieces(project: Project) -> dict[str, Iterable[str]]:
    """File name -> its text in pieces, made as they are read (jinja2's
    generate: an array's initializer text exists only while it is written).
    The context is made here: its errors (a non-finite value) come before
    anything is written."""
    get_target(project.opts.target)  # an unknown target: one line
    env = project.env
    ctx = project.context()
    files: dict[str, Iterable[str]] = {
        name: env.get_template(name + ".j2").generate(**ctx) for name in _TEMPLATED
    }
    files["manifest.json"] = [json.dumps(project.manifest(), indent=2) + "\n"]
    if project.profile is not None:
        sites = [s.as_json() for s in project.profile.sites]
        files["profile.json"] = [json.dumps({"sites": sites}, indent=1) + "\n"]
    return files


def render(project: Project) -> dict[str, str]:
    """File name -> text of every generated file (runtime sources excluded)."""
    return {name: "".join(pieces) for name, pieces in _pieces(project).items()}


def write_project(project: Project, out: Path, *, force: bool = False) -> None:
    """Write the project to `out` whole or not at all: into a hidden directory
    beside it, which replaces `out` when complete (deeploy_mlir.outputs). An
    existing `out` is replaced only if it is a previous output (or `force`).
    The files are streamed: written piece by piece as the templates make
    them."""
    files = _pieces(project)
    with staged_dir(out, force=force) as tmp:
        write_project_files(project, tmp, files)


def write_project_files(
    project: Project, directory: Path, files: Mapping[str, Iterable[str]] | None = None
) -> None:
    """Write the project's files (`files`: their texts, or their pieces as
    _pieces makes them; default: streamed from the templates) and the
    runtime sources into the existing empty `directory`."""
    files = _pieces(project) if files is None else files
    rt = runtime_dir()
    for name, text in files.items():
        with open(directory / name, "w") as f:
            f.writelines([text] if isinstance(text, str) else text)
    for sub in ("include", "kernels", "host", "gvsoc"):
        shutil.copytree(
            rt / sub, directory / "runtime" / sub, ignore=shutil.ignore_patterns("*.o", "*.so")
        )


def emitted_sources(files: Mapping[str, str]) -> Sequence[str]:
    return [k for k in files if k.endswith((".c", ".h"))]
