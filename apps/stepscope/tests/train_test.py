"""End-to-end tests of `stepscope train`: equivalence, learning, outputs, errors, faults."""
import json
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import TempDirTest, read_floats, read_json, read_jsonl, run  # noqa: E402

SMALL_MLP = ["train", "--model", "mlp", "--hidden", "64,32", "--quiet", "--no-eval", "--seed", "7"]


def max_rel_diff(a, b):
    assert len(a) == len(b), (len(a), len(b))
    scale = max(abs(x) for x in a) or 1.0
    return max(abs(x - y) for x, y in zip(a, b)) / scale


class Equivalence(TempDirTest):
    """N replicas at micro-batch b == 1 replica at batch N*b == 1 replica with --accum N."""

    def test_two_replicas_equal_one_at_double_batch_and_accumulation(self):
        common = SMALL_MLP + ["--steps", "12", "--lr", "0.05"]
        run(common + ["--batch", "16", "--save-params", self.path("two.f32")], np=2)
        run(common + ["--batch", "32", "--save-params", self.path("one.f32")])
        run(common + ["--batch", "16", "--accum", "2", "--save-params", self.path("acc.f32")])
        two, one, acc = (read_floats(self.path(n)) for n in ("two.f32", "one.f32", "acc.f32"))
        initial = run(common + ["--steps", "1", "--lr", "1e-9", "--batch", "32",
                                "--save-params", self.path("init.f32")])
        moved = max_rel_diff(one, read_floats(self.path("init.f32")))
        self.assertGreater(moved, 1e-3, "training did not move the parameters")
        self.assertLess(max_rel_diff(two, one), 1e-4)
        self.assertLess(max_rel_diff(acc, one), 1e-4)

    def test_every_allreduce_algorithm_agrees(self):
        common = SMALL_MLP + ["--steps", "8", "--batch", "16", "--bucket-mb", "0.01"]
        results = {}
        for algo in ("mpi", "ring", "shm"):
            run(common + ["--allreduce", algo, "--save-params", self.path(algo)], np=3)
            results[algo] = read_floats(self.path(algo))
        self.assertLess(max_rel_diff(results["ring"], results["mpi"]), 1e-5)
        self.assertLess(max_rel_diff(results["shm"], results["mpi"]), 1e-5)


class Outputs(TempDirTest):
    """run.json, rank-R.steps.jsonl and rank-R.trace.json follow docs/train-output.md."""

    def test_files_follow_schema(self):
        out = self.path("run")
        run(SMALL_MLP + ["--steps", "20", "--batch", "32", "--bucket-mb", "0.005", "--out", out,
                         "--warmup-steps", "3"], np=2)
        info = read_json(os.path.join(out, "run.json"))
        for key in ("config", "model", "replicas", "samples_per_s", "final_loss",
                    "gradient_noise", "emulation", "software", "hosts", "clock"):
            self.assertIn(key, info)
        self.assertEqual(info["replicas"], 2)
        self.assertGreater(info["samples_per_s"], 0)
        self.assertEqual(info["steady_steps"], 17)
        self.assertFalse(info["emulation"]["emulated"])
        self.assertEqual(info["model"]["gradient_bytes"], 4 * info["model"]["parameters"])
        # The slices backward made ready, which tile the gradient.
        self.assertGreater(len(info["model"]["ready_slices_bytes"]), 1)
        self.assertEqual(sum(info["model"]["ready_slices_bytes"]), info["model"]["gradient_bytes"])
        # When each was ready within backward: one share per slice, in order, the last near the
        # end (nothing but the slices' own arithmetic after it) and the first well before it.
        shares = info["model"]["ready_slices_backward_share"]
        self.assertEqual(len(shares), len(info["model"]["ready_slices_bytes"]))
        self.assertEqual(shares, sorted(shares))
        self.assertTrue(all(0 <= x <= 1 for x in shares), shares)
        self.assertGreater(shares[-1], 0.5, shares)
        self.assertLess(shares[0], shares[-1], shares)
        # Memory per replica: the model's buffers at this micro-batch, and the measured peak of
        # the process that holds them (at least as large).
        mem = info["memory"]
        self.assertEqual(mem["parameters_bytes"], 4 * info["model"]["parameters"])
        self.assertEqual(mem["activations_bytes"],
                         32 * info["model"]["activation_bytes_per_sample"])
        self.assertEqual(mem["model_bytes"], mem["parameters_bytes"] + mem["gradients_bytes"] +
                         mem["optimizer_state_bytes"] + mem["activations_bytes"])
        self.assertGreaterEqual(mem["peak_resident_bytes"], mem["model_bytes"])
        self.assertIn(mem["peak_rank"], (0, 1))
        # CPU per steady step: every rank computed, so each took some CPU, and the busiest
        # host's share of its cores is a share.
        cpu = info["cpu"]
        self.assertEqual(len(cpu["per_rank_per_step_s"]), 2)
        for per_step in cpu["per_rank_per_step_s"]:
            self.assertGreater(per_step, 0)
        self.assertAlmostEqual(cpu["per_step_s"], sum(cpu["per_rank_per_step_s"]) / 2)
        self.assertGreater(cpu["busiest_host_share"], 0)
        self.assertLessEqual(cpu["busiest_host_share"], 1.05)
        # The latency probe: 16 small all-reduces after the steps, each timed (the least over
        # the ranks) at 256 fp32 values per rank.
        probe = info["latency_probe"]
        self.assertEqual(probe["bytes"], 1024)
        self.assertEqual(len(probe["seconds"]), 16)
        self.assertTrue(all(s > 0 for s in probe["seconds"]), probe)
        for rank in (0, 1):
            steps = read_jsonl(os.path.join(out, f"rank-{rank}.steps.jsonl"))
            self.assertEqual(len(steps), 20)
            self.assertEqual([s["step"] for s in steps], list(range(20)))
            for s in steps:
                self.assertEqual(s["rank"], rank)
                self.assertGreaterEqual(s["end"], s["start"])
                parts = s["input_wait"] + s["compute"] + s["exposed_comm"]
                self.assertLessEqual(parts, s["end"] - s["start"] + 1e-6)
                self.assertAlmostEqual(s["compute"], s["forward"] + s["backward"] + s["optimizer"],
                                       places=9)
                self.assertGreater(len(s["collectives"]), 1, "bucket cap should split gradients")
                self.assertEqual(s["version"], 5)
                self.assertNotIn("tokens", s)  # fixed-size batches
                # Unpaced: the time spent waiting for a core is measured, and part of compute.
                self.assertGreaterEqual(s["cpu_wait"], 0)
                self.assertLessEqual(s["cpu_wait"], s["compute"])
                # Backward starts after the forward pass and before any bucket is ready; every
                # bucket is ready by the end of backward (one micro-batch: one backward pass).
                bwd = s["backward_start"]
                self.assertGreaterEqual(bwd, s["start"] + s["input_wait"] + s["forward"] - 1e-6)
                for c in s["collectives"]:
                    self.assertLessEqual(bwd, c["ready"] + 1e-6)
                    self.assertLessEqual(c["ready"], bwd + s["backward"] + 1e-6)
                    self.assertLessEqual(c["ready"], c["start"] + 1e-6)
                    self.assertLessEqual(c["start"], c["end"])
                    self.assertGreater(c["bytes"], 0)
                if s["step"] % 4 == 0:  # --grad-norm-every 4 (the default)
                    self.assertGreater(s["local_grad_sq"], 0)
                    self.assertGreater(s["global_grad_sq"], 0)
                else:
                    self.assertEqual(s["local_grad_sq"], -1)
            trace = read_json(os.path.join(out, f"rank-{rank}.trace.json"))
            events = trace["traceEvents"]
            threads = {e["args"]["name"] for e in events
                       if e.get("ph") == "M" and e.get("name") == "thread_name"}
            self.assertEqual(threads, {"main (compute)", "communication", "loader"})
            names = {e.get("name", "") for e in events if e.get("ph") == "X"}
            self.assertIn("forward", names)
            # The trace's forward pass of each step starts before the record's backward_start.
            by_step = {s["step"]: s for s in steps}
            starts = {e["name"]: e["ts"] * 1e-6 for e in events
                      if e.get("ph") == "X" and e.get("cat") == "step"}
            forwards = sorted(e["ts"] * 1e-6 for e in events
                              if e.get("ph") == "X" and e.get("name") == "forward")
            for step, s in by_step.items():
                begin = starts[f"step {step}"]
                fwd = [t for t in forwards if begin - 1e-6 <= t < s["end"]]
                self.assertEqual(len(fwd), 1, f"rank {rank} step {step}")
                self.assertLessEqual(fwd[0], s["backward_start"] + 1e-6)
            self.assertTrue(any(n.startswith("all-reduce bucket") for n in names))
            self.assertIn("load batch", names)

    def test_backward_start_is_the_reduced_micro_batchs(self):
        # With --accum 2 the buckets are reduced in the second backward pass: backward_start is
        # its start, after the first micro-batch's forward and backward passes.
        out = self.path("run")
        run(SMALL_MLP + ["--steps", "4", "--batch", "8", "--accum", "2", "--bucket-mb", "0.005",
                         "--out", out])
        for s in read_jsonl(os.path.join(out, "rank-0.steps.jsonl")):
            bwd = s["backward_start"]
            self.assertGreaterEqual(bwd, s["start"] + s["input_wait"] + s["forward"] - 1e-6)
            self.assertLessEqual(bwd, s["end"])
            for c in s["collectives"]:
                self.assertLessEqual(bwd, c["ready"] + 1e-6)
        trace = read_json(os.path.join(out, "rank-0.trace.json"))
        backwards = [e["ts"] * 1e-6 for e in trace["traceEvents"]
                     if e.get("ph") == "X" and e.get("name") == "backward"]
        for s in read_jsonl(os.path.join(out, "rank-0.steps.jsonl")):
            within = [t for t in backwards if s["start"] - 1e-6 <= t < s["end"]]
            self.assertEqual(len(within), 2)
            self.assertAlmostEqual(s["backward_start"], max(within), delta=2e-6)

    def test_bucket_count_follows_cap(self):
        out = self.path("run")
        # 784*64+64 + 64*32+32 + 32*10+10 parameters; a cap above the total is one bucket.
        run(SMALL_MLP + ["--steps", "2", "--batch", "8", "--bucket-mb", "100", "--out", out])
        steps = read_jsonl(os.path.join(out, "rank-0.steps.jsonl"))
        self.assertEqual(len(steps[-1]["collectives"]), 1)
        self.assertEqual(steps[-1]["collectives"][0]["bytes"],
                         4 * (784 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10))

    def test_injections_and_lengths_are_labelled(self):
        out = self.path("run")
        run(["train", "--model", "gpt", "--layers", "1", "--width", "32", "--heads", "2",
             "--context", "32", "--batch", "4", "--steps", "6", "--warmup-steps", "1",
             "--no-eval", "--quiet", "--variable-length", "--inject-straggler", "1:1.5,0:1.2",
             "--inject-noise", "1:0.2", "--out", out], np=2)
        with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
            info = json.load(f)
        config = info["config"]
        self.assertTrue(config["variable_length"])
        # What bucketing would change, by the job's own sampler (docs/train-output.md).
        lengths = info["lengths"]
        self.assertFalse(lengths["balanced"])
        self.assertGreater(lengths["padded_share"], 0)
        self.assertLess(lengths["bucketed_work_ratio"], 1)
        self.assertEqual(lengths["bucketed_spread"], sorted(lengths["bucketed_spread"]))
        self.assertFalse(config["balance_lengths"])
        self.assertEqual(config["injection"]["stragglers"],
                         [{"rank": 1, "factor": 1.5}, {"rank": 0, "factor": 1.2}])
        self.assertEqual(config["injection"]["noise"], {"rank": 1, "share": 0.2})
        for rank in (0, 1):
            steps = read_jsonl(os.path.join(out, f"rank-{rank}.steps.jsonl"))
            self.assertEqual(len(steps), 6)
            self.assertTrue(all(math.isfinite(s["loss"]) for s in steps))
            # Paced compute takes its emulated time whatever the core's queue: no cpu_wait.
            self.assertTrue(all("cpu_wait" not in s for s in steps))
            # The positions each step computed: 4 examples padded to the longest of 32 tokens.
            self.assertTrue(all(4 <= s["tokens"] <= 4 * 32 for s in steps))
            self.assertGreater(len({s["tokens"] for s in steps}), 1)

    def test_no_reduce_lets_replicas_drift(self):
        out = self.path("run")
        run(SMALL_MLP + ["--steps", "5", "--batch", "16", "--no-reduce", "--out", out], np=2)
        steps = read_jsonl(os.path.join(out, "rank-0.steps.jsonl"))
        self.assertEqual(steps[-1]["global_grad_sq"], -1)
        self.assertTrue(all(c["busbw_gbps"] == 0 for c in steps[-1]["collectives"]))
        # Nothing reduced, so nothing to probe.
        self.assertIsNone(read_json(os.path.join(out, "run.json"))["latency_probe"])


class Errors(TempDirTest):
    def test_invalid_option_fails_before_work(self):
        proc = run(["train", "--batch", "0"], check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--batch", proc.stderr)

    def test_unknown_model_named(self):
        proc = run(["train", "--model", "resnet"], check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("resnet", proc.stderr)

    def test_missing_data_names_the_file(self):
        proc = run(SMALL_MLP + ["--data", self.path("nowhere"), "--steps", "1"], check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("nowhere", proc.stderr)

    def test_straggler_rank_must_exist(self):
        proc = run(SMALL_MLP + ["--inject-straggler", "5:2"], np=2, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--inject-straggler", proc.stderr)
        proc = run(SMALL_MLP + ["--inject-straggler", "1:2,1:3"], np=2, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("named twice", proc.stderr)

    def test_lengths_only_for_the_gpt(self):
        proc = run(SMALL_MLP + ["--variable-length"], check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--variable-length", proc.stderr)


# Options whose value is a spec of several numbers, with a valid value for each.
SPEC_OPTIONS = {"--hidden": "64,64", "--emulate-link": "0.012,50",
                "--inject-straggler": "1:1.7,0:1.2", "--inject-noise": "1:0.3",
                "--inject-hang": "1:10", "--inject-crash": "1:10"}


def numeric_options(command):
    """(option, valid value) for every option `stepscope COMMAND --help` lists with a numeric
    type (INT, UINT, FLOAT), taking the value from its default or 1."""
    text = run([command, "--help"]).stdout
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or not words[0].startswith("--"):
            continue
        kind, _, default = words[1].partition("=")
        if kind.split(":")[0] in ("INT", "UINT", "FLOAT"):
            found[words[0]] = default if default and default not in ("-1",) else "1"
    return found


class StrictNumbers(TempDirTest):
    """Every number an option carries is read whole: trailing garbage is refused, naming the
    option and an example, before any work starts."""

    def check_refused(self, command, option, value, extra=()):
        proc = run([command, *extra, option, value], check=False, timeout=60)
        self.assertNotEqual(proc.returncode, 0, f"{option} {value} was accepted")
        self.assertIn(option, proc.stderr, proc.stderr)
        self.assertIn("e.g.", proc.stderr, proc.stderr)

    def test_train_numeric_options(self):
        options = numeric_options("train")
        self.assertGreaterEqual(len(options), 20, options)
        for option, value in {**options, **SPEC_OPTIONS}.items():
            for bad in (value + "abc", value + "x", value + " 1"):
                with self.subTest(option=option, value=bad):
                    self.check_refused("train", option, bad, ["--print-model"])

    def test_diagnose_and_analyze_numeric_options(self):
        for command in ("diagnose", "analyze"):
            options = numeric_options(command)
            self.assertTrue(options, command)
            if command == "diagnose":
                options.update({"--replicas": "1,2", "--ablate-at": "2"})
            for option, value in options.items():
                with self.subTest(command=command, option=option):
                    self.check_refused(command, option, value + "x")

    def test_every_number_in_a_spec(self):
        for option, bad in [("--emulate-link", "0.05,50us"), ("--emulate-link", "0.05abc"),
                            ("--inject-straggler", "1:1.7x"), ("--inject-straggler", "1x:1.7"),
                            ("--hidden", "64,,64"), ("--inject-crash", "1:2.5"),
                            ("--inject-straggler", "1.0:1.7"), ("--inject-straggler", "1e20:2"),
                            ("--seed", "-1"), ("--batch", "99999999999")]:
            with self.subTest(option=option, value=bad):
                self.check_refused("train", option, bad, ["--print-model"])
        for bad in ("1,2,", ",1", "1,,2"):
            with self.subTest(option="--replicas", value=bad):
                self.check_refused("diagnose", "--replicas", bad)

    def test_leading_zeros_are_decimal(self):
        # CLI11 would read "010" as octal (8); the number is handed on as the decimal 10.
        out = self.path("run")
        run(["train", "--model", "mlp", "--hidden", "16", "--batch", "010", "--steps", "3",
             "--warmup-steps", "1", "--no-eval", "--quiet", "--out", out])
        with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
            config = json.load(f)["config"]
        self.assertEqual(config["batch"], 10, config)


class Faults(TempDirTest):
    """A rank that stalls or dies ends the whole job with a message naming it."""

    def test_stalled_rank_is_named(self):
        out = self.path("run")
        proc = run(SMALL_MLP + ["--steps", "30", "--batch", "16", "--inject-hang", "1:5",
                                "--stall-timeout", "4", "--out", out], np=3, check=False,
                   timeout=120)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("rank 1 stopped at step 5", proc.stderr)
        # What was measured before the stall is kept.
        self.assertEqual(len(read_jsonl(os.path.join(out, "rank-0.steps.jsonl"))), 5)

    def test_dead_rank_is_named(self):
        proc = run(SMALL_MLP + ["--steps", "30", "--batch", "16", "--inject-crash", "1:3",
                                "--stall-timeout", "10"], np=2, check=False, timeout=120)
        self.assertNotEqual(proc.returncode, 0)
        self.assertRegex(proc.stderr + proc.stdout, r"rank 1")


if __name__ == "__main__":
    unittest.main()
