"""The one exception type that reaches users as a one-line error (exit code 2)."""


class DeeployError(Exception):
    """A problem with the user's input: the message names the thing and the reason."""


class L1BudgetError(DeeployError):
    """An op's smallest tiles (or, untiled, its whole tensors) do not fit the
    L1 arena budget. `needs` is the bytes of L1 arena that op alone needs: no
    smaller budget compiles (minimal-l1 jumps to it)."""

    def __init__(self, message: str, needs: int) -> None:
        super().__init__(message)
        self.needs = needs
