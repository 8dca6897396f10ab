"""Step records as the helper writes them: stepscope's format, phases from the marks."""
import json
import os
import tempfile
import unittest

from stepscope_torch.recorder import WRITE_EVERY, StepRecorder, _union_length


class Recorder(unittest.TestCase):
    def test_union_of_reduction_intervals(self):
        self.assertAlmostEqual(_union_length([(0, 2), (1, 3), (5, 6)]), 4)
        self.assertEqual(_union_length([]), 0)

    def test_a_step_from_its_marks(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank-1.steps.jsonl")
            rec = StepRecorder(path, rank=1, world=2, warmup_steps=1, grad_norm_every=4)
            rec._start = 10.0
            rec.add_input_wait(0.5, 8)
            rec.add_forward(1.0)
            rec.mark_backward_start(12.0)
            c = rec.add_collective(400, 13.0)
            c.start, c.end = 13.0, 14.5
            rec.mark_backward_end(15.0)
            rec.end_step(0.25, 15.25)
            rec.close()
            with open(path) as f:
                lines = [json.loads(line) for line in f]
        self.assertEqual(len(lines), 1)
        r = lines[0]
        self.assertEqual((r["version"], r["rank"], r["step"], r["warmup"], r["samples"]),
                         (5, 1, 0, True, 8))
        self.assertNotIn("script_comm", r)  # the script's collectives not watched
        self.assertEqual((r["start"], r["end"], r["backward_start"]), (10.0, 15.25, 12.0))
        # backward up to the last bucket's arrival (1 s), the wait for its reduction (to 14.5)
        # exposed communication, DDP's work after it (0.5 s) backward again
        self.assertAlmostEqual(r["backward"], 1.5)
        self.assertAlmostEqual(r["exposed_comm"], 1.5)
        self.assertAlmostEqual(r["compute"], 1.0 + 1.5 + 0.25)
        self.assertAlmostEqual(r["comm_busy"], 1.5)
        self.assertEqual(r["collectives"][0]["bytes"], 400)
        # 400 B in 1.5 s at N = 2: bus bandwidth 400 / 1.5 * 2 (N-1)/N / 1e9
        self.assertAlmostEqual(r["collectives"][0]["busbw_gbps"], 400 / 1.5 / 1e9)
        # step 0 samples norms (every 4th step of a multi-replica run), none were added here
        self.assertEqual(r["local_grad_sq"], -1.0)

    def test_the_scripts_own_collectives_outside_the_phases_are_script_comm(self):
        # A step from 10 to 16: forward 10.5-11.5 with a collective of the model's own inside
        # (SyncBatchNorm's: compute), backward 12-14, a loss all-reduced 14-14.75 and the
        # optimizer 15-16 with a collective reaching into it from 14.9; a barrier at 16.5-17
        # belongs to the next step. A barrier from 9 (before the step began) counts from 10.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank-0.steps.jsonl")
            rec = StepRecorder(path, rank=0, world=2, warmup_steps=1, grad_norm_every=0)
            rec.script_watched = True
            rec._start = 10.0
            rec.script_calls.append((9.0, 10.25, "barrier"))
            rec.add_forward(1.0, 10.5)
            rec.script_calls.append((10.75, 11.0, "all_gather"))
            rec.mark_backward_start(12.0)
            rec.mark_backward_end(14.0)
            rec.script_calls += [(14.0, 14.75, "all_reduce"), (14.9, 15.2, "all_reduce")]
            rec.end_step(1.0, 16.0)
            rec.script_calls.append((16.5, 17.0, "barrier"))
            rec.end_step(0.5, 18.0)
            rec.close()
            with open(path) as f:
                first, second = [json.loads(line) for line in f]
        self.assertAlmostEqual(first["script_comm"], 0.25 + 0.75 + 0.1)
        self.assertAlmostEqual(second["script_comm"], 0.5)
        self.assertEqual(rec.script_counts, {"barrier": 1})  # by name, past the warm-up

    def test_the_hooks_own_work_before_the_launch_is_backward(self):
        # Bucket ready at 13, the hook divides and samples until 13.5 and launches the
        # reduction, which ends at 14.5: exposed from the launch, not from the arrival.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank-0.steps.jsonl")
            rec = StepRecorder(path, rank=0, world=2, warmup_steps=0, grad_norm_every=1)
            rec._start = 10.0
            rec.add_forward(1.0)
            rec.mark_backward_start(12.0)
            c = rec.add_collective(400, 13.0)
            c.start, c.end = 13.5, 14.5
            rec.mark_backward_end(15.0)
            self.assertAlmostEqual(rec.backward, 1.5 + 0.5)
            self.assertAlmostEqual(rec.exposed, 1.0)
            rec.end_step(0.25, 15.25)
            rec.close()
            with open(path) as f:
                r = json.loads(f.readline())
        self.assertEqual(r["collectives"][0]["ready"], 13.0)
        self.assertAlmostEqual(r["exposed_comm"], 1.0)

    def test_norms_and_batched_writes(self):
        import torch
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank-0.steps.jsonl")
            rec = StepRecorder(path, rank=0, world=2, warmup_steps=0, grad_norm_every=2)
            steps = WRITE_EVERY + 3
            for step in range(steps):
                self.assertEqual(rec.sampling_norms, step % 2 == 0)
                if rec.sampling_norms:
                    rec.local_sq.append(torch.tensor(3.0))
                    rec.local_sq.append(torch.tensor(4.0))
                    rec.reduced.append(torch.tensor([1.0, 2.0]))
                    rec.reduced.append(torch.tensor([2.0]))
                    rec.sample_global_norm()
                rec.end_step(0.0, 1.0 + step)
                if step == 0:
                    self.assertEqual(os.path.getsize(path), 0)  # held until WRITE_EVERY
            rec.close()
            rec.close()  # a second close (at exit after an explicit one) is harmless
            with open(path) as f:
                lines = [json.loads(line) for line in f]
        self.assertEqual([r["step"] for r in lines], list(range(steps)))
        self.assertEqual((lines[0]["local_grad_sq"], lines[0]["global_grad_sq"]), (7.0, 9.0))
        self.assertEqual((lines[1]["local_grad_sq"], lines[1]["global_grad_sq"]), (-1.0, -1.0))

    def test_the_global_norm_queued_then_set_after_the_steps_wait(self):
        # The CUDA path: the dot products are queued before the optimizer and read at the
        # step's end; the host path's sample_global_norm gives the same value.
        import torch
        with tempfile.TemporaryDirectory() as tmp:
            rec = StepRecorder(os.path.join(tmp, "r.jsonl"), rank=0, world=2, warmup_steps=0,
                               grad_norm_every=1)
            rec.reduced = [torch.tensor([1.0, 2.0]), torch.tensor([2.0])]
            dots = rec.queue_global_norm()
            self.assertEqual(rec.reduced, [])
            self.assertEqual(rec.global_grad_sq, -1.0)  # nothing read yet
            rec.set_global_norm(dots)
            self.assertEqual(rec.global_grad_sq, 9.0)
            rec.end_step(0.0, 1.0)
            rec.set_global_norm(rec.queue_global_norm())  # an unsampled step: nothing kept
            self.assertEqual(rec.global_grad_sq, -1.0)
            rec.close()

    def test_a_norm_that_is_not_finite_is_not_measured(self):
        # A step whose gradient holds an infinity (one AMP's GradScaler skips) or a NaN: JSON
        # has no such numbers (json.dumps would write Infinity, which stepscope cannot read).
        import torch
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank-0.steps.jsonl")
            rec = StepRecorder(path, rank=0, world=2, warmup_steps=0, grad_norm_every=1)
            for bad in (float("inf"), float("nan")):
                rec.local_sq.append(torch.tensor(bad))
                rec.reduced.append(torch.tensor([bad, 1.0]))
                rec.sample_global_norm()
                rec.end_step(0.0, 1.0)
            rec.set_global_norm([torch.tensor(float("inf"))])
            self.assertEqual(rec.global_grad_sq, -1.0)
            rec.close()
            with open(path) as f:
                text = f.read()
        self.assertNotIn("Infinity", text)
        self.assertNotIn("NaN", text)
        for r in map(json.loads, text.splitlines()):
            self.assertEqual((r["local_grad_sq"], r["global_grad_sq"]), (-1.0, -1.0))

    def test_a_skipped_update_ends_its_step_and_hands_on_the_batch_drawn_after_it(self):
        # Step 0 drew 8 samples, ran backward and skipped its update; the script drew the next
        # batch (4 samples, 0.5 s of waiting) before its zero_grad: that batch is step 1's, and
        # step 0 ends where its draw began.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank-0.steps.jsonl")
            rec = StepRecorder(path, rank=0, world=2, warmup_steps=0, grad_norm_every=4)
            rec._start = 10.0
            rec.add_input_wait(0.25, 8)
            rec.add_forward(1.0)
            rec.mark_backward_start(11.5)
            rec.mark_backward_end(12.5)
            rec.add_input_wait(0.5, 4)
            draw_start = rec.last_draw[0]
            self.assertEqual(rec.draws, 2)
            rec.end_step(0.0, draw_start, update_skipped=True, carry_last_draw=True)
            rec.add_forward(1.0)
            rec.end_step(0.1, draw_start + 2.0)
            rec.close()
            with open(path) as f:
                skipped, updated = [json.loads(line) for line in f]
        self.assertEqual((skipped["samples"], skipped["input_wait"], skipped["optimizer"],
                          skipped["micro_batches"], skipped["end"]), (8, 0.25, 0.0, 1, draw_start))
        self.assertTrue(skipped["update_skipped"])
        self.assertEqual((updated["samples"], updated["input_wait"], updated["start"]),
                         (4, 0.5, draw_start))
        self.assertNotIn("update_skipped", updated)


if __name__ == "__main__":
    unittest.main()
