"""The clocks a step's marks are taken with, chosen once when the script calls `wrap`.

Both give times in `time.perf_counter()` seconds, the records' clock (recorder.py), through one
interface: `stamp()` takes a mark, `resolve()` is called once at the step's end, after which
`seconds(stamp)` is the mark's time.

- `HostClock`: a stamp is the host's time itself, valid at once (`deferred` is False). The
  helper's CPU path takes its marks with `now()` directly and never calls this clock: the host
  clock only names that choice.
- `CudaEventClock`: a stamp is a CUDA event recorded on the current stream of the model's device,
  so it marks the moment the device reaches that point of the stream, not the moment the host
  queued the work before it. The events are resolved at the step's end: one synchronisation on
  the step's last event, then every event's time as its offset from a per-step anchor event whose
  device time is taken to be the host time at which it was recorded (it is recorded on a drained
  stream, right after that synchronisation, so the device reaches it within the launch latency).
"""
import time
from typing import Any, Callable, List, Optional, Protocol, Tuple

import torch

Stamp = Any  # a host time (float) or an _EventStamp: only its clock reads it


class Clock(Protocol):
    """What the timing hooks need from a clock."""

    deferred: bool  # True when stamps have no time before the step's `resolve()`
    how: str  # the clock as run.json describes it

    def stamp(self) -> Stamp:
        """A mark taken now."""

    def resolve(self) -> None:
        """Called once at the end of every step, after its last stamp."""

    def seconds(self, stamp: Stamp) -> float:
        """The stamp's time in perf_counter seconds (for a deferred clock: after `resolve`)."""


class HostClock:
    """The host's monotonic clock: marks are host times, valid when taken."""

    deferred = False
    how = "CLOCK_MONOTONIC of one host (perf_counter)"
    stamp = staticmethod(time.perf_counter)

    def resolve(self) -> None:
        pass

    def seconds(self, stamp: float) -> float:
        return stamp


class _EventStamp:
    """One mark of the event clock: its event, and its time once the step is resolved."""

    __slots__ = ("event", "seconds")

    def __init__(self, event: Any):
        self.event = event
        self.seconds: Optional[float] = None


class CudaEventClock:
    """Marks as CUDA events on one device, resolved to host seconds at each step's end.

    `event` makes a timing event (`torch.cuda.Event(enable_timing=True)` by default), `stream`
    gives the calling thread's current stream of the device (`torch.cuda.current_stream`),
    `host_now` the host clock (`time.perf_counter`); the tests pass their own.
    """

    deferred = True

    def __init__(self, device: torch.device,
                 event: Optional[Callable[[], Any]] = None,
                 stream: Optional[Callable[[torch.device], Any]] = None,
                 host_now: Callable[[], float] = time.perf_counter):
        self.device = device
        self._event = event or (lambda: torch.cuda.Event(enable_timing=True))
        self._stream = stream or torch.cuda.current_stream
        self._host_now = host_now
        self.how = (f"CUDA events on {device}, mapped to CLOCK_MONOTONIC of one host "
                    "(perf_counter) through each step's anchor event, recorded once the previous "
                    "step's end was synchronised")
        self._taken: List[_EventStamp] = []
        # Wrap time, outside any step: drain the stream once so the first anchor is reached at
        # once too.
        drain = self._event()
        drain.record(self._stream(device))
        drain.synchronize()
        self._anchor, self._anchor_host = self._new_anchor()

    def _new_anchor(self) -> Tuple[Any, float]:
        """An anchor recorded on the stream just drained, with the host time right after: the
        device reaches an event on an idle stream within the launch latency (microseconds)."""
        anchor = self._event()
        anchor.record(self._stream(self.device))
        return anchor, self._host_now()

    def stamp(self) -> _EventStamp:
        """Records an event on the calling thread's current stream of the device: the mark is
        when the device reaches it. No synchronisation."""
        event = self._event()
        event.record(self._stream(self.device))
        s = _EventStamp(event)
        self._taken.append(s)  # one append: safe from the backend's and autograd's threads
        return s

    def resolve(self) -> None:
        """The step's one synchronisation: waits for the last event taken, gives every event of
        the step its host time, and anchors the next step."""
        taken, self._taken = self._taken, []
        if not taken:
            return
        taken[-1].event.synchronize()
        anchor, base = self._anchor, self._anchor_host
        self._anchor, self._anchor_host = self._new_anchor()
        for s in taken:
            event = s.event
            if not event.query():
                # Recorded on another stream that the last one did not wait for (DDP's backward
                # makes the current stream wait for every bucket, so this should not happen).
                event.synchronize()
            s.seconds = base + anchor.elapsed_time(event) / 1e3

    def seconds(self, stamp: _EventStamp) -> float:
        if stamp.seconds is None:
            raise RuntimeError("stepscope_torch: a CUDA event read before its step was resolved")
        return stamp.seconds


def model_device(model: torch.nn.Module) -> Optional[torch.device]:
    """The device of the model's first parameter (of its buffers without parameters)."""
    for tensors in (model.parameters(), model.buffers()):
        for t in tensors:
            return t.device
    return None


def clock_for(model: torch.nn.Module, **event_clock_args: Any) -> Clock:
    """The clock a model is timed with: CUDA events when its parameters are on a CUDA device,
    the host clock otherwise (CPU, or a model without tensors)."""
    device = model_device(model)
    if device is not None and device.type == "cuda":
        return CudaEventClock(device, **event_clock_args)
    return HostClock()
