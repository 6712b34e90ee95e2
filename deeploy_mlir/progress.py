"""What a long command is doing, on stderr, only when stderr is a terminal.

The CLI turns it on (`enable`) for lower, run, report, minimal-l1, test and
sweep unless `--quiet` is given or stderr is not a terminal; everything else
calls the module functions, which do nothing while it is off (scripts and
the JSON outputs stay clean). The display is rich's: a spinner line with the
current stage (import, each pass, tile selection per op with the op count,
the C build, the training steps), and one kept line per finished stage.
rich is imported only when the display is on.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

_display: _Display | None = None
#: inside `nested()`, stages are details of the caller's stage (no kept lines)
_depth = 0


class _Display:
    def __init__(self, command: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
            # stdout is the command's (losses, JSON): never drawn into the display
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.bar.add_task(command, total=None)
        self.stage_name = ""
        self.stage_start = time.perf_counter()
        self.bar.start()

    def stage(self, text: str, total: int | None) -> None:
        self.finish_stage()
        self.stage_name = text
        self.stage_start = time.perf_counter()
        # a new task: the count (None: unknown) and the clock are the stage's
        self.bar.remove_task(self.task)
        self.task = self.bar.add_task(text, total=total)
        self.bar.refresh()

    def update(self, text: str, completed: int | None, total: int | None) -> None:
        kw: dict[str, Any] = {"description": text, "refresh": True}
        if total is not None:
            kw["total"] = total
        if completed is not None:
            kw["completed"] = completed
        self.bar.update(self.task, **kw)

    def finish_stage(self) -> None:
        if self.stage_name:
            took = time.perf_counter() - self.stage_start
            self.console.print(f"[green]done[/] {self.stage_name} [dim]({took:.2f} s)[/]")
            self.stage_name = ""

    def stop(self) -> None:
        self.finish_stage()
        self.bar.stop()


def wanted(quiet: bool) -> bool:
    """Whether a command shows progress: not --quiet and stderr a terminal."""
    return not quiet and sys.stderr.isatty()


def enable(command: str) -> None:
    global _display
    if _display is None:
        _display = _Display(command)


def disable() -> None:
    global _display
    if _display is not None:
        _display.stop()
        _display = None


def active() -> bool:
    return _display is not None


def stage(text: str, total: int | None = None) -> None:
    """A new stage (the previous one is reported done)."""
    if _display is not None:
        if _depth:
            _display.update(text, None, None)
        else:
            _display.stage(text, total)


@contextlib.contextmanager
def nested() -> Iterator[None]:
    """Work repeated under one stage (minimal-l1's bisection): the stages of
    the work show as the stage's detail, with no kept lines."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def update(text: str, completed: int | None = None, total: int | None = None) -> None:
    """The current stage's detail (e.g. `tile selection: op 3/12`)."""
    if _display is not None:
        _display.update(text, completed, total)


def done() -> None:
    """The current stage is over."""
    if _display is not None and not _depth:
        _display.finish_stage()


def run_lines(
    cmd: Sequence[str],
    timeout: float,
    on_line: Callable[[str], None],
) -> subprocess.CompletedProcess[str]:
    """subprocess.run(cmd, capture_output=True, text=True, timeout=timeout),
    with `on_line` called on each stdout line as it comes while the display
    is on (stderr is read at the end)."""
    import subprocess

    if _display is None:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    import tempfile

    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        assert p.stdout is not None
        for line in p.stdout:
            lines.append(line)
            on_line(line)
            if time.monotonic() > deadline:
                p.kill()
                p.wait()
                raise subprocess.TimeoutExpired(cmd, timeout)
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise
        err.seek(0)
        return subprocess.CompletedProcess(cmd, p.returncode, "".join(lines), err.read())
