"""The stall watchdog over real step recorders and a clock of the test's: a reduction in flight
for the timeout ends the run with one line naming the ranks it waits for, from their progress
files; nothing else does."""
import json
import os
import tempfile
import unittest

from stepscope_torch.recorder import StepRecorder
from stepscope_torch.watchdog import STALL_EXIT_CODE, Watchdog


class Clock:
    def __init__(self):
        self.t = 100.0
        self.wall = 5000.0

    def advance(self, seconds):
        self.t += seconds
        self.wall += seconds


class Rank:
    """One rank's recorder and watchdog in `run_dir`, its exit and its lines kept."""

    def __init__(self, run_dir, rank, clock, timeout=10.0, alone=False, stack=None):
        self.rec = StepRecorder(os.path.join(run_dir, f"rank-{rank}.steps.jsonl"), rank,
                                1 if alone else 2, 0, 0)
        self.exits, self.lines, self.flushed = [], [], []
        self.dog = Watchdog(self.rec, run_dir, rank, timeout, exit=self.exits.append,
                            clock=lambda: clock.t, wall=lambda: clock.wall,
                            say=self.lines.append, before_exit=lambda: self.flushed.append(1),
                            alone=alone, stack=stack)

    def progress(self):
        with open(self.dog.path) as f:
            return json.load(f)


class StallWatchdog(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.clock = Clock()
        self.r0 = Rank(self.tmp.name, 0, self.clock)
        self.r1 = Rank(self.tmp.name, 1, self.clock)
        for r in (self.r0, self.r1):
            self.addCleanup(r.rec.close)

    def reduce_on_rank0(self):
        """Rank 0 at step 3 launches bucket 0's reduction, which does not complete."""
        rec = self.r0.rec
        rec.step = 3
        rec.mark_backward_start(self.clock.t)
        return rec.add_collective(400, self.clock.t)

    def test_a_reduction_in_flight_past_the_timeout_names_the_rank_it_waits_for(self):
        self.reduce_on_rank0()
        self.r1.rec.step = 3
        self.r1.rec.drawing = self.clock.t  # rank 1 asks its loader for a batch, and waits
        self.r1.dog.tick()
        self.clock.advance(9.5)
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [])  # 9.5 s: under the timeout
        state = self.r0.progress()
        self.assertEqual((state["rank"], state["step"], state["waiting"]), (0, 3, True))
        self.assertEqual(state["where"], "in the gradient all-reduce of bucket 0")
        self.clock.advance(1.0)
        self.r1.dog.tick()
        self.r1.dog.tick()
        self.assertEqual(self.r1.exits, [])  # waiting for its loader is not a stall
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [STALL_EXIT_CODE])
        self.assertEqual(self.r0.flushed, [1])
        self.assertEqual(len(self.r0.lines), 1)
        line = self.r0.lines[0]
        self.assertTrue(line.startswith(
            f"stepscope: rank 0 (host {self.r0.dog.host}): waited 10 s at step 3 in the gradient "
            f"all-reduce of bucket 0; rank 1 (host {self.r1.dog.host}) is at step 3, waiting for "
            "a batch from its loader, idle for the last 10 s. The run is ended (stall timeout "
            "10 s, diagnose --stall-timeout"), line)

    def test_the_ranks_it_waits_for_are_asked_where_they_are_when_it_ends(self):
        asked = []

        def ask(run_dir, rank):
            asked.append((run_dir, rank))
            return "train.py line 7 in evaluate"

        self.r0.dog._ask = ask
        self.reduce_on_rank0()
        self.r1.dog.tick()
        self.clock.advance(5)
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertEqual(asked, [])  # not while under the timeout
        self.clock.advance(6)
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [STALL_EXIT_CODE])
        self.assertEqual(asked, [(self.tmp.name, 1)])  # once, when ending
        self.assertIn("idle for the last 11 s, at train.py line 7 in evaluate. The run is ended",
                      self.r0.lines[0])

    def test_a_rank_still_working_alone_holds_the_stall_until_it_is_idle(self):
        # Rank 1 validates through the model (forward calls, no step) while rank 0 waits.
        self.reduce_on_rank0()
        self.r1.dog.tick()
        for _ in range(15):
            self.clock.advance(1)
            self.r1.rec.forwards_without_grad += 1
            self.r1.dog.tick()
            self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [])
        self.assertEqual(len(self.r0.lines), 1)  # said once
        self.assertTrue(self.r0.lines[0].startswith(
            "stepscope_torch: rank 0: waited 10 s at step 3 in the gradient all-reduce of "
            f"bucket 0, but rank 1 (host {self.r1.dog.host}) is still working at step 0, "
            "evaluating (calling the model's forward without gradients) (its last activity 0 s "
            "ago): waiting on"), self.r0.lines[0])
        while not self.r0.exits:  # then it stops: idle for the timeout, the run is ended
            self.clock.advance(1)
            self.r1.dog.tick()
            self.r0.dog.tick()
        # within the two ticks a change takes to be seen and read (interval 1 s)
        self.assertIn("idle for the last 8 s", self.r0.lines[-1])

    def test_a_rank_whose_progress_stopped_being_written_is_frozen_or_gone(self):
        self.reduce_on_rank0()
        self.r1.dog.tick()
        self.clock.advance(11)  # rank 1 writes nothing more: its interpreter is held
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [STALL_EXIT_CODE])
        self.assertIn("rank 1 (host ", self.r0.lines[0])
        self.assertIn("has said nothing for 11 s (last at step 0, outside the loader, forward and "
                      "backward (its optimizer or its own code)): its process is frozen or gone",
                      self.r0.lines[0])

    def test_ranks_all_waiting_in_reductions_do_not_match(self):
        self.reduce_on_rank0()
        self.r1.rec.mark_backward_start(self.clock.t)
        self.r1.rec.add_collective(400, self.clock.t)
        self.clock.advance(10)
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertIn("every other rank waits in a collective too (rank 1 at step 0 in the "
                      "gradient all-reduce of bucket 0): the ranks' collectives do not match",
                      self.r0.lines[0])

    def test_many_ranks_waiting_elsewhere_are_named_four_and_counted(self):
        self.reduce_on_rank0()
        for rank in range(1, 7):
            with open(os.path.join(self.tmp.name, f"rank-{rank}.progress.json"), "w") as f:
                json.dump({"rank": rank, "host": "h", "step": 3, "where": "in the script's own "
                           "dist.barrier", "for_s": 10, "idle_s": 10, "waiting": True,
                           "written": self.clock.wall + 10}, f)
        self.clock.advance(10)
        self.r0.dog.tick()
        self.assertIn("every other rank waits in a collective too (rank 1 at step 3 in the "
                      "script's own dist.barrier, rank 2 at step 3 in the script's own "
                      "dist.barrier, rank 3 at step 3 in the script's own dist.barrier, rank 4 "
                      "at step 3 in the script's own dist.barrier, and 2 more): the ranks' "
                      "collectives do not match", self.r0.lines[0])

    def test_a_wait_in_the_scripts_own_collective_names_the_rank_it_waits_for(self):
        # Rank 0 in the script's own barrier at the epoch's end; rank 1 in its loader.
        self.r0.rec.step = 7
        self.r0.rec.script_collective = ("dist.barrier", self.clock.t)
        self.r1.rec.step = 7
        self.r1.rec.drawing = self.clock.t
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertEqual(self.r0.progress()["where"], "in the script's own dist.barrier")
        self.assertTrue(self.r0.progress()["waiting"])
        self.clock.advance(10)
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [STALL_EXIT_CODE])
        self.assertTrue(self.r0.lines[0].startswith(
            f"stepscope: rank 0 (host {self.r0.dog.host}): waited 10 s at step 7 in the script's "
            f"own dist.barrier; rank 1 (host {self.r1.dog.host}) is at step 7, waiting for a "
            "batch from its loader, idle for the last 10 s. The run is ended"), self.r0.lines[0])
        # one rank in the barrier, the other in the next step's reduction: they do not match
        self.r1.rec.drawing = None
        self.r1.rec.mark_backward_start(self.clock.t)
        self.r1.rec.add_collective(400, self.clock.t)
        self.r1.dog.tick()
        self.r0.dog.tick()
        self.assertIn("every other rank waits in a collective too (rank 1 at step 7 in the "
                      "gradient all-reduce of bucket 0)", self.r0.lines[-1])

    def test_nothing_but_a_reduction_in_flight_is_a_stall(self):
        c = self.reduce_on_rank0()
        self.clock.advance(5)
        c.end = self.clock.t  # completed: DDP copies back, the rank finishes its step alone
        self.clock.advance(600)  # a long validation on this rank only
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [])
        self.assertEqual(self.r0.progress()["where"], "in its backward pass")
        self.r0.rec.mark_backward_end(self.clock.t)
        self.r0.dog.tick()
        self.assertEqual(self.r0.exits, [])
        self.assertTrue(self.r0.progress()["where"].startswith("outside the loader"))

    def test_the_dump_is_stood_down_at_the_first_tick_that_finds_a_handler_then_left(self):
        answers = [False, False, True]
        calls = []

        def stand_down():
            calls.append(1)
            return answers[len(calls) - 1]

        dog = Watchdog(self.r0.rec, self.tmp.name, 0, 10.0, exit=self.r0.exits.append,
                       clock=lambda: self.clock.t, wall=lambda: self.clock.wall,
                       say=self.r0.lines.append, stand_down=stand_down)
        for _ in range(5):
            dog.tick()
        self.assertEqual(len(calls), 3)  # not asked again once the process file says so
        self.assertEqual(self.r0.exits, [])

    def test_stop_removes_the_progress_file(self):
        self.r0.dog.tick()
        self.assertTrue(os.path.exists(self.r0.dog.path))
        self.r0.dog.stop()
        self.assertFalse(os.path.exists(self.r0.dog.path))


if __name__ == "__main__":
    unittest.main()


class AloneWatchdog(unittest.TestCase):
    """One process: only a batch that never comes from its loader after the first step ends the
    run, with the script's line."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.clock = Clock()
        # Where the script's main thread waits (the tests' own frames are the helper's).
        stack = [("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", 628,
                  "__next__"), ("/x/python/stepscope_torch/loader.py", 88, "__iter__"),
                 ("/job/train.py", 60, "main")]
        self.r = Rank(self.tmp.name, 0, self.clock, alone=True, stack=lambda: stack)
        self.addCleanup(self.r.rec.close)

    def wait_for_a_batch(self, seconds):
        self.r.rec.drawing = self.clock.t
        for _ in range(int(seconds)):
            self.clock.advance(1)
            self.r.dog.tick()

    def test_a_loader_that_stops_delivering_ends_the_run(self):
        self.r.rec.step = 3
        self.wait_for_a_batch(9)
        self.assertEqual(self.r.exits, [])
        self.wait_for_a_batch(10)
        self.assertEqual(self.r.exits, [STALL_EXIT_CODE])
        self.assertEqual(self.r.flushed, [1])
        self.assertRegex(self.r.lines[0], r"^stepscope: rank 0 \(host [^)]*\): waited 10 s at step 3 "
                         r"for a batch from its loader; the job's only process, no other would "
                         r"notice \(the script waits at train\.py line 60 in main, inside "
                         r"__next__ \(dataloader\.py line 628\)\)\. The run is ended "
                         r"\(stall timeout 10 s, diagnose --stall-timeout: raise it where a batch "
                         r"legitimately takes that long\)$")

    def test_the_first_batch_and_work_outside_the_loader_are_left_alone(self):
        self.wait_for_a_batch(30)  # step 0: a loader's start (a dataset opened) may take long
        self.r.rec.step = 1
        self.r.rec.drawing = None
        for _ in range(30):  # a long step of its own (a checkpoint)
            self.clock.advance(1)
            self.r.dog.tick()
        self.assertEqual(self.r.exits, [])
