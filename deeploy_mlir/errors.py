"""The one exception type that reaches users as a one-line error (exit code 2)."""


class DeeployError(Exception):
    """A problem with the user's input: the message names the thing and the reason."""
