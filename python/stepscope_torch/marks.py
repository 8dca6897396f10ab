"""A step's marks held as clock stamps until the clock resolves them, then handed to the
recorder as host seconds, in the order they were taken.

The helper's CUDA path needs this: its stamps are CUDA events, which have no time before the
step's end (clock.py). Replayed in order, the marks reach the recorder exactly as the CPU path's
host times do (a backward start drops the buckets of an earlier micro-batch's backward, and so
on), so both paths assemble the record with the same code (recorder.py).
"""
from typing import Any, List, Tuple

from .clock import Clock, Stamp
from .recorder import Collective, StepRecorder

_FORWARD, _BACKWARD_START, _BACKWARD_END, _COLLECTIVE = range(4)


class StepMarks:
    """Collects one step's marks (forward spans, backward start and end, the buckets'
    reductions); `replay` empties it into the recorder. `add_collective` has the recorder's
    signature, so the communication hook writes to either."""

    def __init__(self, clock: Clock):
        self._clock = clock
        self._marks: List[Tuple[int, Any, Any]] = []
        self.backward_open = False  # a backward started and its end not marked yet

    def forward(self, start: Stamp, end: Stamp) -> None:
        self._marks.append((_FORWARD, start, end))

    def backward_start(self, stamp: Stamp) -> None:
        self._marks.append((_BACKWARD_START, stamp, None))
        self.backward_open = True

    def backward_end(self, stamp: Stamp) -> None:
        self._marks.append((_BACKWARD_END, stamp, None))
        self.backward_open = False

    def add_collective(self, nbytes: int, ready: Stamp) -> Collective:
        """A bucket's reduction; the hook sets its `start` and, from the reduction's completion
        callback, its `end` (stamps, like `ready`). The recorder numbers it on replay."""
        c = Collective(None, nbytes, ready)
        self._marks.append((_COLLECTIVE, c, None))
        return c

    def replay(self, recorder: StepRecorder) -> None:
        """Hands the marks to the recorder as host seconds; the clock must have resolved them
        (`clock.resolve()`, at the step's end)."""
        seconds = self._clock.seconds
        marks, self._marks = self._marks, []
        for kind, a, b in marks:
            if kind == _FORWARD:
                recorder.add_forward(seconds(b) - seconds(a))
            elif kind == _BACKWARD_START:
                recorder.mark_backward_start(seconds(a))
            elif kind == _BACKWARD_END:
                recorder.mark_backward_end(seconds(a))
            else:
                c = recorder.add_collective(a.bytes, seconds(a.ready))
                c.start = seconds(a.start)
                c.end = seconds(a.end) if a.end is not None else None
