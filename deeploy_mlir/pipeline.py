"""Pass pipelines: parsing (xdsl-opt syntax) and running with our passes."""

from __future__ import annotations

import time
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes
from xdsl.utils.exceptions import ArgSpecParseError, VerifyException

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.universe import DIALECTS, PASSES

#: kernels straight on the L2 buffers (no tiles, no L1)
DEFAULT_PIPELINE = "training-inplace-alias,training-bufferize{level=L2},arena-plan{level=L2}"
#: the same without in-place reuse: every result gets its own buffer
NO_INPLACE_PIPELINE = "training-bufferize{level=L2},arena-plan{level=L2}"
TILINGS = ("tiled", "untiled", "none")


BUFFERINGS = ("single", "double", "double-l3")
#: the board whose capacities and cycle numbers a target defaults to
TARGET_BOARDS = {"pulp-open": "siracusa", "gap9": "gap9_evk"}


def pipeline_for(
    tiling: str = "tiled",
    l1: int = 65536,
    inplace: bool = True,
    target: str = "pulp-open",
    buffering: str = "double",
    l2: int = 0,
    weights: str = "L2",
    home: str = "L2",
    regime: str | None = None,
    board: str | None = None,
    l3_budget: int = 0,
    rlimit: int | None = None,
    stacks: int = 0,
) -> str:
    """The pipeline `lower`/`run` use: bufferization, the L3 homes (`l2`: the
    L2 budget, tensors that do not fit go to L3; `weights=L3` forces the
    parameters there, `home=L3` every tensor that lives across a step), then
    for `tiled` Z3-chosen tiles in L1 (`untiled`: one tile per tensor, the
    whole tensor in L1) -- operands in L3 staged through L2 in tiles that fit
    what the L2 plan leaves free -- materialized with copies, multi-buffered
    (`double`: every hop; `double-l3`: the L3 hop only; `single`: none),
    decomposed for the target's DMA engines, and the L2/L3/L1 plans. `none`
    runs kernels on L2 (L3 tensors staged whole around each op).

    With a `regime` (auto, resident, spill, stream), memory-regime chooses the
    homes from the capacities of `board` (default: the target's, TARGET_BOARDS;
    `l2`/`l3_budget` when given) instead of memory-home.

    `rlimit`: tile-select's Z3 resource limit per solve (None: the pass's
    default). `l1` is the arena's budget; `stacks`, the L1 the cluster stacks take
    beside it, is only named in tile-select's errors."""
    passes = ["training-inplace-alias"] if inplace else []
    where = board or TARGET_BOARDS.get(target, "siracusa")
    passes.append("training-bufferize{level=L2}")
    l3 = bool(l2) or weights != "L2" or home != "L2"
    if regime is not None:
        passes.append(f'memory-regime{{board="{where}" regime={regime} l2={l2} l3={l3_budget}}}')
        l3 = True  # plan L3 (an empty plan when the regime keeps all in L2)
    elif l3:
        prefetch = "true" if buffering != "single" else "false"
        stage = "whole" if tiling == "none" else "tiled"
        passes.append(
            f"memory-home{{l2={l2} weights={weights} home={home} prefetch={prefetch} "
            f"stage={stage}}}"
        )
    if tiling == "none":
        passes.append("arena-plan{level=L2}")
        if l3:
            passes.append("arena-plan{level=L3}")
    else:
        solver = "z3" if tiling == "tiled" else "untiled"
        buffers = 2 if buffering == "double" and tiling == "tiled" else 1
        # the L3 stage tiles are double-buffered by `double` and `double-l3`
        l3_buffers = 1 if buffering == "single" else 2
        limit = "" if rlimit is None else f" rlimit={rlimit}"
        reserved = f" stacks={stacks}" if stacks else ""
        passes += [
            f"tile-select{{l1={l1}{reserved} l2={l2} solver={solver} buffers={buffers} "
            f'l3_buffers={l3_buffers}{limit} board="{where}"}}',
            "tiling-materialize",
        ]
        if buffering == "double":
            passes.append("dma-multibuffer{count=2 levels=all}")
        elif buffering == "double-l3":
            passes.append("dma-multibuffer{count=2 levels=l3-only}")
    passes.append(f"dma-decompose{{engine={target}}}")
    if tiling != "none":
        passes.append(f"arena-plan{{level=L2 capacity={l2}}}" if l2 else "arena-plan{level=L2}")
        if l3:
            passes.append("arena-plan{level=L3}")
        passes.append("arena-plan{level=L1}")
    return ",".join(passes)


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
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


def parse_pipeline(spec: str) -> PassPipeline:
    try:
        return PassPipeline.parse_spec(available_passes(), spec)
    except ArgSpecParseError as e:  # a BaseException in xdsl 0.74
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        raise DeeployError(f"--pass-pipeline '{spec}': {lines[-1]} ({lines[1]})") from None
    except Exception as e:  # unknown passes or options: ValueError and friends
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DeeployError(f"--pass-pipeline '{spec}': {msg}") from None


def run_pipeline(
    module: ModuleOp,
    spec: str,
    verify_each: bool = True,
    seconds: dict[str, float] | None = None,
    keep_before: bool = False,
) -> list[str]:
    """Run `spec` on `module`; returns the pass names. The IR is verified after
    each pass (`verify_each`, what tests and deeploy-opt do: a failure names
    the pass) or only after the last one (what `lower` does by default: a
    large graph's verification costs more than most passes). `seconds`, when
    given, receives the wall-clock time of each pass by name (summed over its
    runs): timings stay out of the IR, which is the same from run to run. With
    `keep_before`, a DeeployError of a pass carries `ir_before`: (the pass's
    name, a copy of the IR it was given)."""
    from deeploy_mlir import progress

    pipeline = parse_pipeline(spec)
    ctx = make_context()
    names: list[str] = []
    for i, p in enumerate(pipeline.passes):
        progress.stage(f"pass {i + 1}/{len(pipeline.passes)} {p.name}")
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
