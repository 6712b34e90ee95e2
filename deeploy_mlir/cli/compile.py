"""Compiling a model for a command: import, the pipeline of its CompileConfig,
and the C project (`lower` writes it)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from deeploy_mlir.cli.options import board_isa, config_of, inputs
from deeploy_mlir.config import CompileConfig
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.outputs import check_dir_output, check_file_output, write_file

if TYPE_CHECKING:  # numpy is imported where it is used: Ctrl-C at start-up is handled
    import numpy as np


@dataclass
class Compiled:
    model: object
    project: object
    data: dict[str, np.ndarray]
    #: wall-clock seconds per pass (for `report`; never in the IR or the project)
    seconds: dict[str, float] = field(default_factory=dict)
    #: what was compiled
    config: CompileConfig | None = None


def search_notes(module: object) -> list[str]:
    """One line per search that stopped before proving its optimum: each
    tile-select op (as the pass listed them) and each exact arena plan."""
    from xdsl.dialects.builtin import ModuleOp

    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.dialects.tiling import stopped_early

    assert isinstance(module, ModuleOp)
    notes = [
        f"note: tile-select: stopped before proving the optimum for {op} ({why})"
        for op, why in stopped_early(module) or []
    ]
    for lv in ("L1", "L2", "L3"):
        arena = T.arena_of(module, lv)
        if arena is not None and arena.is_proven is False:
            notes.append(
                f"note: arena-plan: stopped before proving the smallest {lv} arena (Z3 resource "
                "limit): the best plan found is used"
            )
    return notes


def program_budget(cfg: CompileConfig, module: object) -> CompileConfig:
    """`cfg` with the L1 budget split for this program: the cluster stacks
    sized for the kernels it forks (targets/stacks.py), the arena gets the
    rest of --l1. A config that keeps no stacks beside the arena (l1_stacks
    0: minimal-l1's search, a caller's own split) is kept as it is."""
    from deeploy_mlir.cli.options import with_stacks
    from deeploy_mlir.targets.stacks import program_kernels

    return with_stacks(cfg, program_kernels(module))


def compile_model(
    args: argparse.Namespace,
    need_data: bool,
    notes: bool = True,
    cfg: CompileConfig | None = None,
    keep_ir: bool = True,
) -> Compiled:
    """Import `args.model`, run the pipeline of `cfg` (default: the command
    line's) and make the project. `notes`: print on stderr a line for each
    search that stopped before proving its optimum. Every arena over its
    budget fails in its arena-plan pass. Without `keep_ir` the caller needs
    neither the imported IR nor the pipeline's afterwards (`lower` without
    --emit-ir): the pipeline runs on the imported module and kernel-select on
    the pipeline's, without the copies that are most of a large graph's
    peak memory."""
    from deeploy_mlir.emitters.c import EmitOptions, Project
    from deeploy_mlir.frontend.data import check_minibatches, load_data, zero_data
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.pipeline import pipeline, run_pipeline

    cfg = config_of(args) if cfg is None else cfg
    passes = pipeline(cfg)  # bad pipelines fail before any work
    from deeploy_mlir import progress

    progress.stage(f"import {args.model}")
    model = import_model(args.model, args.params, seed=cfg.seed)
    steps, accum = cfg.steps, cfg.accum
    check_minibatches(model, steps, accum)  # before any array is made or read
    n = steps * accum
    if getattr(args, "feeds", None) is not None:  # arrays given by the caller (`test`)
        data = args.feeds(model)
    elif getattr(args, "data", None):
        data = load_data(args.data, model, n)
    elif need_data:
        raise DeeployError("--data is required")
    else:
        data = zero_data(model, n)
    cfg = program_budget(cfg, model.module)
    passes = pipeline(cfg)
    module = model.module.clone() if keep_ir else model.module
    seconds: dict[str, float] = {}
    emit_ir = getattr(args, "emit_ir", None)
    try:
        run_pipeline(
            module,
            passes,
            verify_each=cfg.verify_each,
            seconds=seconds,
            keep_before=emit_ir is not None,
        )
        if cfg.pass_pipeline is not None:
            # a user's pipeline need not plan against the budgets: the arenas
            # it planned are still held to --l1/--l2/--l3 (the default
            # pipeline's arena-plan passes check them themselves)
            from deeploy_mlir.interp.attrs import check_arenas

            check_arenas(
                module, {"l1": cfg.l1, "l1_stacks": cfg.l1_stacks, "l2": cfg.l2, "l3": cfg.l3}
            )
    except DeeployError as e:
        if emit_ir is not None:  # the IR that failed, for the user to look at
            name, ir = getattr(e, "ir_before", ("", module))
            try:
                write_file(Path(emit_ir), str(ir) + "\n")
            except OSError as w:
                raise DeeployError(f"--emit-ir {emit_ir}: cannot write it ({w.strerror})") from None
            where = f"before pass {name}" if name else "after the pipeline"
            print(f"deeploy-mlir: note: wrote the IR {where} to {emit_ir}", file=sys.stderr)
        raise
    if notes:
        for line in search_notes(module):
            print(line, file=sys.stderr)
    progress.stage("C emission")
    opts = EmitOptions(
        target=cfg.target,
        steps=steps,
        accum=accum,
        lr=cfg.lr,
        l1_as_l2=cfg.l1_as_l2,
        profile=bool(getattr(args, "profile", False)),
        gvsoc_isa=board_isa(getattr(args, "board", None)),
    )
    project = Project(
        module, model.params, data, opts, opt_state=model.opt_state, own_module=not keep_ir
    )
    if cfg.l1_stacks and project.stacks.total > cfg.l1_stacks:  # program_kernels missed one
        raise DeeployError(
            f"internal: the cluster stacks ({project.stacks.total} bytes) exceed the "
            f"{cfg.l1_stacks} bytes the L1 budget kept for them"
        )
    progress.done()
    return Compiled(model, project, data, seconds, cfg)


def cmd_lower(args: argparse.Namespace) -> int:
    from deeploy_mlir.emitters.c import write_project

    read = inputs(args)
    target = check_dir_output(args.output, "-o", read, force=args.force)
    ir = None
    if args.emit_ir is not None:
        ir = check_file_output(args.emit_ir, "--emit-ir", read, within=target)
    out = Path(args.output)
    c = compile_model(args, need_data=False, keep_ir=ir is not None)
    write_project(c.project, target, force=args.force)  # type: ignore[arg-type]
    if ir is not None:
        write_file(ir, str(c.project.module) + "\n")  # type: ignore[attr-defined]
    if not args.data:
        print("note: no --data given: the harness trains on zero-filled inputs", file=sys.stderr)
    print(f"wrote {out}/ ({args.target})")
    return 0
