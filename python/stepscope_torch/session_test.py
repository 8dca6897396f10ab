"""A session over a small CPU model (one process): the host path when the model is on the CPU,
and the CUDA path's wiring driven by the event clock over fake events."""
import atexit
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from stepscope_torch.clock import HostClock
from stepscope_torch.clock_test import FakeDevice, event_clock
from stepscope_torch.session import _Session
from stepscope_torch.settings import read_settings


class _Run:
    """A session in a temporary run directory, its exit hooks taken back at the end."""

    def __init__(self, test, clock=None, step_function=False, **env):
        self._tmp = tempfile.TemporaryDirectory()
        test.addCleanup(self._tmp.cleanup)
        excepthook = sys.excepthook
        test.addCleanup(setattr, sys, "excepthook", excepthook)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        data = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
        settings = read_settings(dict(env, STEPSCOPE_RUN_DIR=self._tmp.name,
                                      STEPSCOPE_WARMUP_STEPS="0"))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(data, batch_size=4)
        if step_function:
            loss_fn = nn.CrossEntropyLoss()

            def train_step(x, y):
                optimizer.zero_grad()
                loss_fn(self.session.model(x), y).backward()
                optimizer.step()

            self.session = _Session(settings, model, None, loader, clock=clock, step=train_step)
        else:
            self.session = _Session(settings, model, optimizer, loader, clock=clock)
        atexit.unregister(self.session.finish)
        self.path = os.path.join(self._tmp.name, "rank-0.steps.jsonl")
        self.losses = []  # each iteration's, where the loop computes it (not a step function)

    def train(self, steps, evaluate=False):
        """`evaluate`: a forward without gradients too, every iteration (an evaluation)."""
        s = self.session
        loss_fn = nn.CrossEntropyLoss()
        returned = []
        for step, (x, y) in enumerate(s.loader):
            if step == steps:
                break
            if evaluate:
                with torch.no_grad():
                    s.model(x)
            if s.step is not None:
                s.step(x, y)
            else:
                s.optimizer.zero_grad()
                loss = loss_fn(s.model(x), y)
                loss.backward()
                s.optimizer.step()
                self.losses.append(loss.item())
            returned.append(time.perf_counter())
        return returned

    def records(self):
        self.session.recorder.close()
        with open(self.path) as f:
            return [json.loads(line) for line in f]


class Session(unittest.TestCase):
    def test_a_cpu_model_is_timed_on_the_host(self):
        run = _Run(self)
        s = run.session
        self.assertIsInstance(s.clock, HostClock)
        self.assertIsNone(s.marks)  # the host path: marks go straight to the recorder
        before = time.perf_counter()
        returned = run.train(2)
        records = run.records()
        self.assertEqual([r["step"] for r in records], [0, 1])
        for r, t in zip(records, returned):
            self.assertTrue(before <= r["start"] <= r["backward_start"] <= r["end"] <= t)
            self.assertGreater(r["forward"], 0)

    def test_a_forward_without_gradients_is_not_the_steps_compute(self):
        # An evaluation inside the loop takes no marks: the steps' marks are the training's.
        dev = FakeDevice(clock=lambda: time.perf_counter() + 100.0)
        run = _Run(self, clock=event_clock(dev, time.perf_counter))
        run.train(2, evaluate=True)
        records = run.records()
        self.assertEqual(len(dev.recorded), 2 + 2 * 7)
        self.assertEqual([r["micro_batches"] for r in records], [1, 1])

    def test_the_cuda_path_resolves_each_step_once_at_its_end(self):
        # The fake device's clock is the host's plus 100 s: resolved marks are host times again.
        dev = FakeDevice(clock=lambda: time.perf_counter() + 100.0)
        clock = event_clock(dev, time.perf_counter)
        run = _Run(self, clock=clock)
        s = run.session
        self.assertIs(s.clock, clock)
        waits_at_wrap = len(dev.waits)
        before = time.perf_counter()
        returned = run.train(2)
        records = run.records()
        self.assertEqual(len(dev.waits), waits_at_wrap + 2)  # one per step, nothing inside
        self.assertEqual([r["step"] for r in records], [0, 1])
        # each step's wait is on the optimizer's end, its last mark, which ends the record
        for r, t, end in zip(records, returned, dev.waits[waits_at_wrap:]):
            self.assertAlmostEqual(r["end"], end.at - 100.0, delta=1e-3)
            self.assertTrue(before <= r["start"] <= r["backward_start"] <= r["end"] <= t)
            self.assertGreater(r["forward"], 0)
            self.assertGreater(r["backward"], 0)
            self.assertGreater(r["optimizer"], 0)
            self.assertEqual(r["micro_batches"], 1)
        self.assertEqual(records[1]["start"], records[0]["end"])
        self.assertEqual([r["loss"] for r in records], run.losses)
        # marks per step: forward's two, backward's two, the optimizer's two, and the anchor
        # recorded after the wait
        self.assertEqual(len(dev.recorded), 2 + 2 * 7)

    def test_on_the_cuda_path_an_accumulated_step_waits_once(self):
        # STEPSCOPE_ACCUM=2: four of the script's iterations are two steps, each resolved
        # once at its end, with both micro-batches' forward and backward in its record.
        dev = FakeDevice(clock=lambda: time.perf_counter() + 100.0)
        run = _Run(self, clock=event_clock(dev, time.perf_counter), STEPSCOPE_ACCUM="2")
        waits_at_wrap = len(dev.waits)
        run.train(4)
        records = run.records()
        self.assertEqual(len(dev.waits), waits_at_wrap + 2)
        self.assertEqual([(r["step"], r["samples"], r["micro_batches"]) for r in records],
                         [(0, 8, 2), (1, 8, 2)])
        # each step's loss: the mean of its two iterations'
        for r, pair in zip(records, (run.losses[:2], run.losses[2:])):
            self.assertAlmostEqual(r["loss"], sum(pair) / 2, places=12)
        for r in records:
            self.assertTrue(r["start"] <= r["backward_start"] <= r["end"])
            self.assertGreater(r["backward"], 0)

    def test_on_the_cuda_path_a_skipped_update_ends_its_step_at_the_next_draw(self):
        # The update of iteration 1 is skipped (as GradScaler does), zero_grad at the top of
        # the loop: four steps, each resolved once; the skipped one's marks replayed at its end,
        # which is where the next batch's draw began (host time).
        dev = FakeDevice(clock=lambda: time.perf_counter() + 100.0)
        run = _Run(self, clock=event_clock(dev, time.perf_counter))
        s = run.session
        waits_at_wrap = len(dev.waits)
        for i, (x, y) in enumerate(s.loader):
            s.optimizer.zero_grad()
            nn.functional.cross_entropy(s.model(x), y).backward()
            if i != 1:
                s.optimizer.step()
        records = run.records()
        self.assertEqual(len(dev.waits), waits_at_wrap + 4)
        self.assertEqual([r.get("update_skipped", False) for r in records],
                         [False, True, False, False])
        for r in records:
            self.assertTrue(r["start"] <= r["backward_start"] <= r["end"])
            self.assertGreater(r["backward"], 0)
            self.assertEqual((r["samples"], r["micro_batches"]), (4, 1))
        self.assertEqual(records[1]["optimizer"], 0.0)
        self.assertEqual([r["start"] for r in records[1:]], [r["end"] for r in records[:-1]])

    def test_on_the_cuda_path_a_step_function_resolves_once_at_its_return(self):
        dev = FakeDevice(clock=lambda: time.perf_counter() + 100.0)
        run = _Run(self, clock=event_clock(dev, time.perf_counter), step_function=True)
        waits_at_wrap = len(dev.waits)
        returned = run.train(2)
        records = run.records()
        self.assertEqual(len(dev.waits), waits_at_wrap + 2)
        for r, t, end in zip(records, returned, dev.waits[waits_at_wrap:]):
            self.assertAlmostEqual(r["end"], end.at - 100.0, delta=1e-3)
            self.assertTrue(r["start"] <= r["backward_start"] <= r["end"] <= t)
            for phase in ("forward", "backward", "optimizer"):
                self.assertGreater(r[phase], 0, phase)
        self.assertEqual([r["step"] for r in records], [0, 1])


# A script that takes its batches with next() from a generator and counts its own steps (10),
# past diagnose's step limit.
_NEXT_SCRIPT = """
import sys, torch
from torch import nn
import stepscope_torch
torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def batches(n):
    for _ in range(n):
        yield torch.randn(4, 8), torch.randint(0, 2, (4,))
model, optimizer, loader = stepscope_torch.wrap(model, optimizer, batches(int(sys.argv[1])))
for step in range(10):
    x, y = next(loader)
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
"""


class IteratorLoaders(unittest.TestCase):
    def run_script(self, batches, **env):
        with tempfile.TemporaryDirectory() as tmp:
            python_path = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            proc = subprocess.run(
                [sys.executable, "-c", _NEXT_SCRIPT, str(batches)], capture_output=True,
                text=True, timeout=120,
                env=dict(os.environ, PYTHONPATH=python_path, STEPSCOPE_RUN_DIR=tmp,
                         STEPSCOPE_WARMUP_STEPS="0", **env))
            records = []
            if os.path.exists(os.path.join(tmp, "rank-0.steps.jsonl")):
                with open(os.path.join(tmp, "rank-0.steps.jsonl")) as f:
                    records = [json.loads(line) for line in f]
            return proc, records, os.path.exists(os.path.join(tmp, "run.json"))

    def test_next_on_the_loader_and_the_step_limit_ends_the_script_cleanly(self):
        # The limit reached, the script's StopIteration is the end of the run: exit 0,
        # run.json written; the synthetic ablation replays a loader without a length too.
        for variant in ("baseline", "synthetic_input"):
            proc, records, finished = self.run_script(100, STEPSCOPE_STEPS="4",
                                                      STEPSCOPE_VARIANT=variant)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("the step limit (STEPSCOPE_STEPS=4) ended the loader", proc.stderr)
            self.assertTrue(finished, variant)
            self.assertEqual([r["samples"] for r in records], [4] * 4, variant)

    def test_a_loader_that_runs_out_before_the_limit_is_the_scripts_failure(self):
        proc, records, finished = self.run_script(3, STEPSCOPE_STEPS="4")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("StopIteration", proc.stderr)
        self.assertFalse(finished)
        self.assertEqual(len(records), 3)


if __name__ == "__main__":
    unittest.main()
