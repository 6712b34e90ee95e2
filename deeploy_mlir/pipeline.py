"""Pass pipelines: the pipeline of a CompileConfig as pass objects, the one
parser and printer of pipeline text (xdsl-opt syntax, `--pass-pipeline` and
`--print-pipeline`), and running a pipeline with our passes."""

from __future__ import annotations

import time
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, VerifyException

from deeploy_mlir.config import BUFFERINGS, TILINGS, CompileConfig
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.universe import DIALECTS, PASSES

__all__ = [
    "BUFFERINGS",
    "TILINGS",
    "bufferize_only",
    "l2_pipeline",
    "make_context",
    "parse_pipeline",
    "pipeline",
    "print_pipeline",
    "run_pipeline",
]


def _tile_select(cfg: CompileConfig, **options: Any) -> ModulePass:
    """tile-select with `options`, scoring tiles with the DMA engines of the
    board `cfg` names (--board), else its target's."""
    from deeploy_mlir.passes.tile_select import TileSelect
    from deeploy_mlir.targets.target import get_target

    return TileSelect(board=cfg.board or get_target(cfg.target).board, **options)


def pipeline(cfg: CompileConfig) -> tuple[ModulePass, ...]:
    """The passes `cfg` asks for: its --pass-pipeline parsed, or the default
    pipeline: transposes folded into matrix products (transpose-fold), ReLU
    masks and ReluGrads folded into pooling (relu-fuse{conv=false}),
    bufferization, the L3 homes (`l2`: the L2 budget, tensors that
    do not fit go to L3; `weights=L3` forces the parameters there, `home=L3`
    every tensor that lives across a step), then for `tiled` Z3-chosen tiles in
    L1 (`untiled`: one tile per tensor, the whole tensor in L1) -- operands in
    L3 staged through L2 in tiles that fit what the L2 plan leaves free --
    materialized with copies, multi-buffered (`double`: every hop; `double-l3`:
    the L3 hop only; `single`: none; with L3 homes, l3-overlap drops the L3
    copies an L2 buffer makes needless (forwarding), and with `double` and
    `double-l3` also moves the L3 copies around one-stage-tile ops to overlap
    the ops next to them), decomposed for the target's DMA engines,
    and the L2/L3/L1 plans, each checked against its budget. `none` runs
    kernels on L2 (L3 tensors staged whole around each op).

    With a `regime` (auto, resident, spill, stream), memory-regime chooses the
    homes from the capacities of `board` (default: the target's; `l2`/`l3`
    when given) instead of memory-home."""
    if cfg.pass_pipeline is not None:
        return parse_pipeline(cfg.pass_pipeline)
    from deeploy_mlir.passes.accumulate_fuse import AccumulateFuse
    from deeploy_mlir.passes.arena_plan import ArenaPlan
    from deeploy_mlir.passes.dma_decompose import DmaDecompose
    from deeploy_mlir.passes.dma_multibuffer import DmaMultibuffer
    from deeploy_mlir.passes.memory_home import MemoryHome
    from deeploy_mlir.passes.memory_regime import MemoryRegime
    from deeploy_mlir.passes.relu_fuse import ReluFuse
    from deeploy_mlir.passes.tiling_materialize import TilingMaterialize
    from deeploy_mlir.passes.training_bufferize import TrainingBufferize
    from deeploy_mlir.passes.training_inplace_alias import TrainingInplaceAlias
    from deeploy_mlir.passes.transpose_fold import TransposeFold
    from deeploy_mlir.targets.target import get_target

    target = get_target(cfg.target)
    named = cfg.name_options
    passes: list[ModulePass] = [TransposeFold()] if cfg.transpose_fold else []
    # relu-fuse's conv rewrite (the ReLU at the conv's store) is off: on
    # GVSoC it made ds_cnn's untiled step 3.8% slower (289,744 cycles
    # against 279,165), its L2-resident ReLUs being cheaper as ops of their own;
    # `--pass-pipeline` with relu-fuse{conv=true} turns it on
    passes += [ReluFuse(conv=False)] if cfg.relu_fuse else []
    passes += [TrainingInplaceAlias()] if cfg.inplace else []
    passes.append(TrainingBufferize(level="L2"))
    if cfg.accumulate_fuse:
        passes.append(AccumulateFuse())
    l3 = bool(cfg.l2) or cfg.weights != "L2" or cfg.home != "L2"
    if cfg.regime is not None:
        passes.append(
            MemoryRegime(board=cfg.board or target.board, regime=cfg.regime, l2=cfg.l2, l3=cfg.l3)
        )
        l3 = True  # plan L3 (an empty plan when the regime keeps all in L2)
    elif l3:
        passes.append(
            MemoryHome(
                l2=cfg.l2,
                weights=cfg.weights,
                home=cfg.home,
                prefetch=cfg.buffering != "single",
                stage="whole" if cfg.tiling == "none" else "tiled",
            )
        )
    l2_plan = ArenaPlan(level="L2", capacity=cfg.l2, name_option=named)
    l3_plan = ArenaPlan(level="L3", capacity=cfg.l3, name_option=named)
    if cfg.tiling == "none":
        passes.append(l2_plan)
        if l3:
            passes.append(l3_plan)
    else:
        buffers = 2 if cfg.buffering == "double" and cfg.tiling == "tiled" else 1
        limit = {} if cfg.rlimit is None else {"rlimit": cfg.rlimit}
        passes += [
            _tile_select(
                cfg,
                l1=cfg.l1,
                stacks=cfg.l1_stacks,
                l2=cfg.l2,
                solver=cfg.solver if cfg.tiling == "tiled" else "untiled",
                buffers=cfg.tile_buffers or buffers,
                # the L3 stage tiles are double-buffered by `double` and `double-l3`
                l3_buffers=1 if cfg.buffering == "single" else 2,
                **limit,
            ),
            TilingMaterialize(),
        ]
        if cfg.buffering == "double":
            passes.append(DmaMultibuffer(count=2, levels="all"))
        elif cfg.buffering == "double-l3":
            passes.append(DmaMultibuffer(count=2, levels="l3-only"))
    passes.append(DmaDecompose(engine=target.name))  # type: ignore[arg-type]
    if l3 and cfg.tiling != "none":
        # l3-overlap's forwarding (deeploy_mlir/memory/forward.py: a fetch of
        # bytes an L2 buffer still holds reads that buffer, a store overwritten
        # unread goes, a loop-invariant stage fetch is issued once) with every
        # buffering, so that single and double buffering of the same tiles move
        # the same copies; `double` and `double-l3` also issue the fetches of
        # one-stage-tile ops one op early and wait for their stores one op late
        # (overlap). Opt out with --pass-pipeline and l3-overlap{forward=false}.
        from deeploy_mlir.passes.l3_overlap import L3Overlap

        passes.append(L3Overlap(l2=cfg.l2, overlap=cfg.buffering != "single"))
    if cfg.tiling != "none":
        passes.append(l2_plan)
        if l3:
            passes.append(l3_plan)
        passes.append(
            ArenaPlan(level="L1", capacity=cfg.l1, stacks=cfg.l1_stacks, name_option=named)
        )
    return tuple(passes)


def bufferize_only(
    inplace: bool = True, fuse: bool = True, fold: bool = True
) -> tuple[ModulePass, ...]:
    """transpose-fold (with `fold`), relu-fuse (with `fuse`),
    training-inplace-alias (with `inplace`), training-bufferize{level=L2} and
    accumulate-fuse (with `fuse`), as `pipeline` runs them by default
    (relu-fuse without its conv rewrite): the tensor program bufferized, as
    memory-regime sees it."""
    from deeploy_mlir.passes.accumulate_fuse import AccumulateFuse
    from deeploy_mlir.passes.relu_fuse import ReluFuse
    from deeploy_mlir.passes.training_bufferize import TrainingBufferize
    from deeploy_mlir.passes.training_inplace_alias import TrainingInplaceAlias
    from deeploy_mlir.passes.transpose_fold import TransposeFold

    first: tuple[ModulePass, ...] = (TransposeFold(),) if fold else ()
    first += (ReluFuse(conv=False),) if fuse else ()
    first += (TrainingInplaceAlias(),) if inplace else ()
    last: tuple[ModulePass, ...] = (AccumulateFuse(),) if fuse else ()
    return (*first, TrainingBufferize(level="L2"), *last)


def l2_pipeline(
    inplace: bool = True, strategy: Literal["greedy", "exact"] = "greedy"
) -> tuple[ModulePass, ...]:
    """Kernels straight on the L2 buffers (no tiles, no L1): bufferized (with
    in-place reuse: `inplace`) and the L2 arena planned (`strategy`)."""
    from deeploy_mlir.passes.arena_plan import ArenaPlan

    return (*bufferize_only(inplace), ArenaPlan(level="L2", strategy=strategy))


def print_pipeline(passes: Sequence[ModulePass]) -> str:
    """The pipeline's text (xdsl-opt syntax): parse_pipeline gives the passes back."""
    return ",".join(str(p) for p in passes)


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    from xdsl.transforms import get_all_passes  # only for a pipeline given as text

    out = dict(get_all_passes())
    out.update(PASSES)
    return out


def make_context() -> Context:
    from xdsl.dialects import get_all_dialects

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def _choices(hint: object) -> tuple[object, ...]:
    """The values of a Literal option's type (also inside `... | None`); () otherwise."""
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    out: tuple[object, ...] = ()
    for arg in typing.get_args(hint):
        if typing.get_origin(arg) is Literal:
            out += typing.get_args(arg)
    return out


def check_choices(
    spec: str, available: dict[str, Callable[[], type[ModulePass]]] | None = None
) -> None:
    """A Literal option of a pass in `spec` given a value not among its
    choices: one line naming the pass, the option and the choices. (xDSL
    checks them too, in words that name neither the pass nor the option.)"""
    from xdsl.utils.arg_spec import parse_pipeline as parse_specs

    available = available_passes() if available is None else available
    for s in parse_specs(spec):
        factory = available.get(s.name)
        if factory is None:
            continue
        hints = typing.get_type_hints(factory())
        for key, values in s.normalize_parameter_names().parameters.items():
            choices = _choices(hints.get(key))
            if choices and (len(values) != 1 or values[0] not in choices):
                got = ",".join(str(v) for v in values)
                raise DeeployError(
                    f"{s.name}: {key} must be one of {', '.join(map(str, choices))}, got '{got}'"
                )


def parse_pipeline(spec: str) -> tuple[ModulePass, ...]:
    """The passes of pipeline text `spec` (xdsl-opt syntax); a bad one is one line."""
    try:
        check_choices(spec)
        return PassPipeline.parse_spec(available_passes(), spec).passes
    except DeeployError:
        raise
    except ArgSpecParseError as e:  # a BaseException in xdsl 0.74
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        raise DeeployError(f"--pass-pipeline '{spec}': {lines[-1]} ({lines[1]})") from None
    except Exception as e:  # unknown passes or options: ValueError and friends
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DeeployError(f"--pass-pipeline '{spec}': {msg}") from None


def run_pipeline(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    verify_each: bool = True,
    seconds: dict[str, float] | None = None,
    keep_before: bool = False,
) -> list[str]:
    """Run `passes` on `module`; returns the pass names. The IR is verified after
    each pass (`verify_each`, what tests and deeploy-opt do: a failure names
    the pass) or only after the last one (what `lower` does by default: a
    large graph's verification costs more than most passes). `seconds`, when
    given, receives the wall-clock time of each pass by name (summed over its
    runs): timings stay out of the IR, which is the same from run to run. With
    `keep_before`, a DeeployError of a pass carries `ir_before`: (the pass's
    name, a copy of the IR it was given)."""
    from deeploy_mlir import progress

    assert not isinstance(passes, str), "run_pipeline takes passes: parse_pipeline(text)"
    ctx = make_context()
    names: list[str] = []
    for i, p in enumerate(passes):
        progress.stage(f"pass {i + 1}/{len(passes)} {p.name}")
        before = module.clone() if keep_before else None
        try:
            try:
                t0 = time.perf_counter()
                p.apply(ctx, module)
                if seconds is not None:
                    seconds[p.name] = seconds.get(p.name, 0.0) + time.perf_counter() - t0
                if verify_each:
                    module.verify()
            except VerifyException as e:
                raise DeeployError(
                    f"pass {p.name}: the IR it produced does not verify: {e}"
                ) from None
        except DeeployError as e:
            if before is not None:  # for --emit-ir: the IR the failing pass was given
                e.ir_before = (p.name, before)  # type: ignore[attr-defined]
            raise
        names.append(p.name)
    progress.done()
    if not verify_each:
        try:
            module.verify()
        except VerifyException as e:
            raise DeeployError(
                f"the IR after the pipeline does not verify (rerun with --verify-each to find "
                f"the pass that broke it): {e}"
            ) from None
    return names
