"""The error the helper raises when the script's objects or loop are not ones it can measure, and
the line a rank writes when it ends the run, which diagnose reports as the run's cause."""
import socket


class HelperError(RuntimeError):
    """The script's objects are not ones the helper can measure; the message says what to do."""


def cause_line(rank, message):
    """`stepscope: rank R (host H): message`: the line diagnose takes for a failed run's cause
    (src/sweep/failure_cause.cc)."""
    return f"stepscope: rank {rank} (host {socket.gethostname()}): {message}"
