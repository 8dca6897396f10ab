"""The clocks: the host clock on CPU, and the CUDA-event clock's logic over fake events (no
CUDA here): record order and streams, one wait per step, resolution to host seconds through
each step's anchor. `FakeDevice` is used by the other tests of the CUDA path too."""
import itertools
import time
import unittest

import torch
from torch import nn

from stepscope_torch.clock import CudaEventClock, HostClock, clock_for, model_device


class FakeStream:
    """`ordered`: waiting for an event of another stream also covers this one's earlier events
    (the stream was made to wait, as DDP's backward does for the reductions' streams)."""

    def __init__(self, name, ordered=True):
        self.name = name
        self.ordered = ordered


class FakeEvent:
    """A timing event: reached at the fake device's time when recorded, complete only once
    waited for (directly, or through a later event)."""

    def __init__(self, device):
        self.device = device
        self.stream = None
        self.at = None
        self.seq = None
        self.complete = False

    def record(self, stream):
        self.stream = stream
        self.at = self.device.now()
        self.seq = next(self.device.seq)
        self.device.recorded.append(self)

    def synchronize(self):
        self.device.waits.append(self)
        for e in self.device.recorded:
            if e.seq <= self.seq and (e.stream is self.stream or e.stream.ordered):
                e.complete = True

    def query(self):
        return self.complete

    def elapsed_time(self, end):
        if not (self.complete and end.complete):
            raise RuntimeError("CUDA error: device not ready")
        return (end.at - self.at) * 1e3


class FakeDevice:
    """The event and stream functions CudaEventClock takes. Device time is `self.time` (set by
    the test), or `clock()` when given."""

    def __init__(self, time=1000.0, clock=None):
        self.time = time
        self._clock = clock
        self.seq = itertools.count()
        self.recorded = []
        self.waits = []
        self.asked = []  # the devices whose current stream was asked for
        self.current = FakeStream("current")

    def now(self):
        return self._clock() if self._clock else self.time

    def event(self):
        return FakeEvent(self)

    def stream(self, device):
        self.asked.append(device)
        return self.current


class Host:
    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


def event_clock(dev, host, device=torch.device("cuda", 1)):
    return CudaEventClock(device, event=dev.event, stream=dev.stream, host_now=host)


class CudaEvents(unittest.TestCase):
    def test_wrap_time_drains_the_stream_then_anchors(self):
        dev, host = FakeDevice(), Host(5.0)
        event_clock(dev, host)
        drain, anchor = dev.recorded
        self.assertEqual(dev.waits, [drain])  # outside any step
        self.assertIs(anchor.stream, dev.current)
        self.assertEqual(dev.asked, [torch.device("cuda", 1)] * 2)

    def test_stamps_are_events_recorded_in_order_without_waiting(self):
        dev, host = FakeDevice(), Host(5.0)
        clock = event_clock(dev, host)
        waits = len(dev.waits)
        stamps = []
        for i in range(3):
            dev.time += 0.1
            stamps.append(clock.stamp())
        self.assertEqual([s.event for s in stamps], dev.recorded[-3:])
        self.assertEqual([s.event.seq for s in stamps],
                         sorted(s.event.seq for s in stamps))
        self.assertTrue(all(s.event.stream is dev.current for s in stamps))
        self.assertEqual(dev.asked[-3:], [torch.device("cuda", 1)] * 3)
        self.assertEqual(len(dev.waits), waits)  # no synchronisation inside the step
        with self.assertRaises(RuntimeError):
            clock.seconds(stamps[0])  # no time before the step is resolved

    def test_a_step_resolves_to_host_seconds_from_its_anchor_with_one_wait(self):
        # The device clock reads 1000 s ahead of the host's; the host ran ahead of the device
        # (every stamp taken at host 5.0), yet each mark gets the device's time on the host clock.
        dev, host = FakeDevice(time=1005.0), Host(5.0)
        clock = event_clock(dev, host)
        stamps = []
        for device_t in (1005.25, 1005.5, 1006.0):
            dev.time = device_t
            stamps.append(clock.stamp())
        waits = len(dev.waits)
        host.t = 6.5  # the wait ends on the host at 6.5, the device idle at 1006.0
        clock.resolve()
        self.assertEqual(dev.waits[waits:], [stamps[-1].event])  # one wait, on the last event
        self.assertEqual([clock.seconds(s) for s in stamps], [5.25, 5.5, 6.0])

        # The next step's anchor is recorded after that wait: host 6.5 is device 1006.0 now
        # (the clocks drifted by 0.5 s), and the next step's marks are read from it.
        dev.time = 1006.125
        nxt = clock.stamp()
        host.t = 9.0
        clock.resolve()
        self.assertEqual(clock.seconds(nxt), 6.5 + 0.125)
        self.assertEqual(clock.seconds(stamps[0]), 5.25)  # resolved marks keep their time

    def test_an_event_the_last_did_not_wait_for_is_waited_for_itself(self):
        dev, host = FakeDevice(time=1000.0), Host(0.0)
        clock = event_clock(dev, host)
        other = FakeStream("side", ordered=False)
        dev.current = other
        dev.time = 1000.5
        side = clock.stamp()
        dev.current = FakeStream("current")
        dev.time = 1000.25
        last = clock.stamp()
        waits = len(dev.waits)
        clock.resolve()
        self.assertEqual(dev.waits[waits:], [last.event, side.event])
        self.assertEqual((clock.seconds(side), clock.seconds(last)), (0.5, 0.25))

    def test_a_step_without_marks_waits_for_nothing(self):
        dev, host = FakeDevice(), Host(1.0)
        clock = event_clock(dev, host)
        waits = len(dev.waits)
        clock.resolve()
        self.assertEqual(len(dev.waits), waits)

    def test_the_run_json_description_names_the_device(self):
        clock = event_clock(FakeDevice(), Host(0.0))
        self.assertIn("CUDA events on cuda:1", clock.how)
        self.assertTrue(clock.deferred)


class _OnDevice:
    """A stand-in module whose parameters report a device."""

    def __init__(self, device):
        self._p = type("P", (), {"device": torch.device(device)})()

    def parameters(self):
        return iter([self._p])

    def buffers(self):
        return iter([])


class Choice(unittest.TestCase):
    def test_a_cpu_model_gets_the_host_clock(self):
        clock = clock_for(nn.Linear(2, 2))
        self.assertIsInstance(clock, HostClock)
        self.assertFalse(clock.deferred)
        self.assertEqual(clock.how, "CLOCK_MONOTONIC of one host (perf_counter)")
        a = clock.stamp()
        b = time.perf_counter()
        self.assertLessEqual(a, b)  # the host's perf_counter itself
        clock.resolve()
        self.assertEqual(clock.seconds(a), a)

    def test_no_tensors_or_a_meta_model_gets_the_host_clock(self):
        self.assertIsInstance(clock_for(nn.ReLU()), HostClock)
        self.assertIsInstance(clock_for(nn.Linear(2, 2, device="meta")), HostClock)

    def test_buffers_name_the_device_without_parameters(self):
        m = nn.BatchNorm1d(2, affine=False)
        self.assertEqual(model_device(m), torch.device("cpu"))

    def test_a_cuda_model_gets_the_event_clock_on_its_device(self):
        dev = FakeDevice()
        clock = clock_for(_OnDevice("cuda:3"), event=dev.event, stream=dev.stream,
                          host_now=Host(0.0))
        self.assertIsInstance(clock, CudaEventClock)
        self.assertEqual(clock.device, torch.device("cuda", 3))
        self.assertEqual(set(dev.asked), {torch.device("cuda", 3)})


if __name__ == "__main__":
    unittest.main()
