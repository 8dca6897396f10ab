"""A step's held marks, replayed onto the recorder once resolved: the same phases as the host
path's immediate marks."""
import json
import os
import tempfile
import unittest

from stepscope_torch.clock import HostClock
from stepscope_torch.clock_test import FakeDevice, Host, event_clock
from stepscope_torch.marks import StepMarks
from stepscope_torch.recorder import StepRecorder


def _record(rec, path):
    rec.close()
    with open(path) as f:
        return [json.loads(line) for line in f]


class Replay(unittest.TestCase):
    def test_two_micro_batches_as_the_host_path_records_them(self):
        # Host times as stamps (HostClock): the replay must give what immediate marks give. The
        # first micro-batch's backward reduced nothing (no_sync); only the last one's buckets
        # are the step's reductions.
        with tempfile.TemporaryDirectory() as tmp:
            held_path = os.path.join(tmp, "held.jsonl")
            direct_path = os.path.join(tmp, "direct.jsonl")
            held = StepRecorder(held_path, rank=0, world=2, warmup_steps=0, grad_norm_every=0)
            direct = StepRecorder(direct_path, rank=0, world=2, warmup_steps=0,
                                  grad_norm_every=0)
            for rec in (held, direct):
                rec._start = 10.0
            marks = StepMarks(HostClock())
            backward_open = []

            marks.forward(10.0, 10.5)
            direct.add_forward(0.5)
            marks.backward_start(10.75)
            direct.mark_backward_start(10.75)
            marks.backward_end(11.0)
            direct.mark_backward_end(11.0)
            backward_open.append(marks.backward_open)
            marks.forward(11.0, 11.5)
            direct.add_forward(0.5)
            marks.backward_start(11.75)
            direct.mark_backward_start(11.75)
            backward_open.append(marks.backward_open)
            for ready, start, end in ((12.0, 12.25, 13.0), (12.5, 12.5, 13.5)):
                for sink in (marks, direct):
                    c = sink.add_collective(100, ready)
                    c.start, c.end = start, end
            marks.backward_end(14.0)
            direct.mark_backward_end(14.0)
            self.assertEqual(held.micro_batches, 0)  # nothing reaches the recorder before
            marks.replay(held)
            for rec in (held, direct):
                rec.end_step(0.5, 14.5)
            held_lines, direct_lines = _record(held, held_path), _record(direct, direct_path)
        self.assertEqual(backward_open, [False, True])
        self.assertEqual(held_lines, direct_lines)
        r = held_lines[0]
        self.assertEqual(r["micro_batches"], 2)
        self.assertEqual([(c["index"], c["ready"], c["end"]) for c in r["collectives"]],
                         [(0, 12.0, 13.0), (1, 12.5, 13.5)])
        # 0.25 + (12.5 - 11.75) + (14 - 13.5): backward; 13.5 - 12.5: exposed
        self.assertAlmostEqual(r["backward"], 0.25 + 0.75 + 0.5)
        self.assertAlmostEqual(r["exposed_comm"], 1.0)

    def test_event_stamps_reach_the_recorder_as_resolved_host_seconds(self):
        dev, host = FakeDevice(time=2000.0), Host(20.0)
        clock = event_clock(dev, host)
        marks = StepMarks(clock)
        stamps = []
        for t in (2000.5, 2001.0, 2001.25, 2001.5, 2002.0, 2003.0):
            dev.time = t
            stamps.append(clock.stamp())
        f0, f1, b0, ready, end, b1 = stamps
        marks.forward(f0, f1)
        marks.backward_start(b0)
        c = marks.add_collective(64, ready)
        c.end = end  # start stays `ready`, as the no-reduction ablation leaves it
        marks.backward_end(b1)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.jsonl")
            rec = StepRecorder(path, rank=0, world=2, warmup_steps=0, grad_norm_every=0)
            rec._start = 20.0
            early = StepMarks(clock)
            early.forward(f0, f1)
            with self.assertRaises(RuntimeError):
                early.replay(rec)  # the events have no time before the step's end
            clock.resolve()
            marks.replay(rec)
            marks.replay(rec)  # emptied by the first: nothing twice
            rec.end_step(0.0, 23.0)
            (r,) = _record(rec, path)
        self.assertEqual((r["forward"], r["micro_batches"], r["backward_start"]), (0.5, 1, 21.25))
        self.assertEqual([(c["ready"], c["start"], c["end"]) for c in r["collectives"]],
                         [(21.5, 21.5, 22.0)])
        self.assertAlmostEqual(r["exposed_comm"], 0.5)
        self.assertAlmostEqual(r["backward"], 0.25 + 1.0)


if __name__ == "__main__":
    unittest.main()
