"""The timed communication hook over a launch the test controls: on the host its marks are host
times written to the recorder; with the event clock they are events held by the step's marks,
the reduction's end stamped from the future's callback."""
import functools
import os
import tempfile
import unittest

import torch

from stepscope_torch.clock_test import FakeDevice, Host, event_clock
from stepscope_torch.comm_hook import TimedHook
from stepscope_torch.marks import StepMarks
from stepscope_torch.recorder import StepRecorder
from stepscope_torch.script_hook import ScriptHook


class _Bucket:
    def __init__(self, tensor):
        self._t = tensor

    def buffer(self):
        return self._t


class _Launch:
    """dist.all_reduce's stand-in: records what is launched, completes when the test says."""

    def __init__(self):
        self.launched = []
        self.future = torch.futures.Future()

    def __call__(self, tensor, async_op):
        assert async_op
        self.launched.append(tensor)
        return self

    def get_future(self):
        return self.future


class Hook(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.rec = StepRecorder(os.path.join(self._tmp.name, "r.jsonl"), rank=0, world=2,
                                warmup_steps=0, grad_norm_every=0)

    def tearDown(self):
        self.rec.close()
        self._tmp.cleanup()

    def test_on_the_host_the_marks_are_host_times_in_the_recorder(self):
        launch = _Launch()
        hook = TimedHook(self.rec, 2, all_reduce=launch)
        fut = hook(_Bucket(torch.full((4,), 2.0)))
        (c,) = self.rec.collectives
        self.assertIsInstance(c.ready, float)
        self.assertLessEqual(c.ready, c.start)
        self.assertEqual(c.bytes, 16)
        self.assertIsNone(c.end)  # not before the reduction completes
        torch.testing.assert_close(launch.launched[0], torch.full((4,), 1.0))  # divided by N
        launch.future.set_result([launch.launched[0] * 2])
        self.assertGreaterEqual(c.end, c.start)
        torch.testing.assert_close(fut.wait(), torch.full((4,), 2.0))

    def test_it_averages_as_ddps_default_would(self):
        # At 3 ranks a division and a multiplication by the reciprocal round differently in
        # some of these values; each way must be DDP's own, bit for bit.
        values = torch.linspace(0.1, 7.3, 64)
        self.assertFalse(torch.equal(values / 3, values * (1.0 / 3)))
        for divide, expected in ((False, values * (1.0 / 3)), (True, values / 3)):
            launch = _Launch()
            hook = TimedHook(self.rec, 3, all_reduce=launch)
            hook.divide = divide
            hook(_Bucket(values.clone()))
            self.assertTrue(torch.equal(launch.launched[0], expected), f"divide={divide}")

    def test_with_events_the_end_is_stamped_in_the_futures_callback(self):
        dev, host = FakeDevice(time=100.0), Host(1.0)
        clock = event_clock(dev, host)
        marks = StepMarks(clock)
        launch = _Launch()
        hook = TimedHook(self.rec, 2, stamp=clock.stamp, collectives=marks, all_reduce=launch)
        marks.backward_start(clock.stamp())
        dev.time = 100.25
        buffer = torch.full((4,), 2.0)
        fut = hook(_Bucket(buffer))
        self.assertEqual(self.rec.collectives, [])  # held by the marks, not the recorder
        (_, c, _), = [m for m in marks._marks if m[0] == 3]
        self.assertIs(c.ready.event, dev.recorded[-2])
        self.assertIs(c.start.event, dev.recorded[-1])
        self.assertIsNone(c.end)
        recorded = len(dev.recorded)
        dev.time = 100.75  # the device reaches the callback's stream when the reduction ended
        launch.future.set_result([launch.launched[0] * 2])
        self.assertEqual(len(dev.recorded), recorded + 1)
        self.assertIs(c.end.event, dev.recorded[-1])
        torch.testing.assert_close(fut.wait(), torch.full((4,), 2.0))
        dev.time = 101.0
        marks.backward_end(clock.stamp())
        clock.resolve()
        marks.replay(self.rec)
        (r,) = self.rec.collectives
        self.assertEqual((r.ready, r.start, r.end, r.bytes), (1.25, 1.25, 1.75, 16))
        self.assertAlmostEqual(self.rec.exposed, 0.5)

    def test_reduced_precision_stamps_the_end_before_the_copy_back(self):
        buffer = torch.full((4,), 2.0)
        # The fake device's time is the bucket's first value: an event recorded after the copy
        # back would read the reduced value.
        dev, host = FakeDevice(clock=lambda: float(buffer[0])), Host(0.0)
        clock = event_clock(dev, host)
        marks = StepMarks(clock)
        launch = _Launch()
        hook = TimedHook(self.rec, 2, wire="fp16", stamp=clock.stamp, collectives=marks,
                         all_reduce=launch)
        fut = hook(_Bucket(buffer))
        wire = launch.launched[0]
        self.assertEqual(wire.dtype, torch.float16)
        c = marks._marks[-1][1]
        self.assertEqual(c.bytes, 8)
        launch.future.set_result([wire * 6])  # 2 / 2 * 6: the reduced bucket holds 6
        self.assertIs(fut.wait(), buffer)
        torch.testing.assert_close(buffer, torch.full((4,), 6.0))
        self.assertEqual(c.end.event.at, 2.0)  # stamped before the copy back

    def test_the_scripts_own_hook_reduces_between_start_and_end(self):
        # With events: the script's hook is called after `start` and its future's completion
        # stamps `end`; what it completes with is handed to DDP unchanged, and kept for the
        # global norm on a sampled step.
        dev, host = FakeDevice(time=10.0), Host(0.0)
        clock = event_clock(dev, host)
        marks = StepMarks(clock)
        rec = StepRecorder(os.path.join(self._tmp.name, "s.jsonl"), rank=0, world=2,
                           warmup_steps=0, grad_norm_every=1)
        self.addCleanup(rec.close)
        called, pending = [], torch.futures.Future()

        def fp16_compress_hook(state, bucket):
            called.append((state, len(dev.recorded)))
            return pending

        # As PyTorch's own, a function of its ddp_comm_hooks package.
        fp16_compress_hook.__module__ = "torch.distributed.algorithms.ddp_comm_hooks.x"
        fp16_compress_hook.__qualname__ = "fp16_compress_hook"
        hook = TimedHook(rec, 2, stamp=clock.stamp, collectives=marks, all_reduce=_Launch())
        hook.script = ScriptHook("state", fp16_compress_hook)
        self.assertEqual((hook.script.name, hook.script.wire), ("fp16_compress_hook", "fp16"))
        buffer = torch.full((4,), 2.0)
        before = len(dev.recorded)
        fut = hook(_Bucket(buffer))
        c = marks._marks[-1][1]
        self.assertEqual(called, [("state", before + 2)])  # after the ready and start events
        self.assertEqual(dev.recorded[before:], [c.ready.event, c.start.event])
        self.assertEqual(c.bytes, 8)  # two bytes a value on the wire
        self.assertIsNone(c.end)
        reduced = torch.full((4,), 1.5)
        dev.time = 10.5
        pending.set_result(reduced)
        self.assertIs(c.end.event, dev.recorded[-1])
        self.assertIs(fut.wait(), reduced)
        self.assertEqual(rec.reduced, [reduced])
        self.assertEqual(len(rec.local_sq), 1)  # the local gradient's norm, before the hook

    def test_a_script_hook_of_unknown_precision_is_counted_at_the_buckets_bytes(self):
        def compress(state, bucket):
            return torch.futures.Future()

        script = ScriptHook(None, functools.partial(compress, extra=1))
        self.assertEqual((script.name, script.wire, script.known), ("Hook.test_a_script_hook_"
                         "of_unknown_precision_is_counted_at_the_buckets_bytes.<locals>."
                         "compress", "fp32", False))
        self.assertEqual(script.wire_bytes(torch.zeros(4, dtype=torch.float64)), 32)

    def test_the_ablation_holds_a_reduction_of_no_time(self):
        dev, host = FakeDevice(time=0.0), Host(0.0)
        clock = event_clock(dev, host)
        marks = StepMarks(clock)
        hook = TimedHook(self.rec, 2, reduce=False, stamp=clock.stamp, collectives=marks,
                         all_reduce=_Launch())
        buffer = torch.full((4,), 3.0)
        self.assertIs(hook(_Bucket(buffer)).wait(), buffer)
        c = marks._marks[-1][1]
        self.assertEqual(c.bytes, 0)
        self.assertIs(c.end, c.ready)


if __name__ == "__main__":
    unittest.main()
