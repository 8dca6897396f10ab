"""End-to-end tests of `stepscope diagnose --torch`: real PyTorch DDP jobs (torch_jobs/ddp_job.py,
gloo on CPU, 1 and 2 ranks, compute paced by sleeps so that a shared 2-core host measures the
job's shape) run through PyTorch's launcher with the stepscope_torch helper. Each known shape is
named, the first lever recommended helps when re-measured, bad scripts are reported by run and
log while the sweep goes on, and the example of docs/torch.md runs as is."""
import json
import os
import time
import re
import statistics
import subprocess
import sys
import unittest

from analyze_test import torch_python
from diagnose_test import diagnose
from harness import TempDirTest, read_json, read_jsonl
from predict_test import predict

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "torch_jobs", "ddp_job.py")
DOCS = os.path.join(HERE, "..", "..", "..", "docs", "torch.md")
# Runs last a few seconds of steps against about ten of start-up (PyTorch's launcher and the
# interpreters importing torch): 30 steps, 5 of them warm-up, cost little and steady the medians.
STEPS = ["--steps", "30", "--warmup-steps", "5"]
# The runs diagnose adds after the sweep (the reduced-precision check, the noise-scale run), only
# where a test asks for them.
NO_CHECKS = ["--wire-check-steps", "0", "--noise-scale-steps", "0"]


class TorchTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.python = torch_python()

    def setUp(self):
        super().setUp()
        if self.python is None:
            self.skipTest("no python3 with torch (scripts/setup.sh installs python3-torch)")

    def command(self, *args):
        return " ".join([self.python, JOB] + list(args))

    def diagnose_job(self, shape, *extra, replicas="1,2", name="d", check=True, script=(),
                     checks=NO_CHECKS):
        """diagnose --torch over the job of `shape` (`script`: more of its own flags), with
        diagnose's flags `extra`; the runs after the sweep only where a test asks (`checks`)."""
        out = self.path(name)
        proc = diagnose(["--torch", self.command("--shape", shape, "--batch", "{batch}",
                                                 "--workers", "{workers}", *script),
                         "--loader-workers", "0", "--replicas", replicas, "--out", out]
                        + STEPS + list(checks) + list(extra), check=check)
        return proc, read_json(os.path.join(out, "diagnosis.json")), out


def once_more_on_failure(test):
    """A timing test that a shared host may plausibly have disturbed (a co-tenant slowing one
    rank or one run) is repeated once, in a fresh directory, before it fails."""
    def run(self):
        try:
            test(self, "d")
        except AssertionError as e:
            print(f"\n{test.__name__}: once more, after: {str(e).splitlines()[0][:300]}",
                  file=sys.stderr, flush=True)
            test(self, "d-again")
    run.__name__ = test.__name__
    run.__doc__ = test.__doc__
    return run


class Shapes(TorchTest):
    """Each shape named right; where a lever applies, the first one recommended helps."""

    def first_lever_helps(self, d):
        """The first lever recommended, re-measured: the run with it (on its own at the largest
        count when several were applied, else the after-levers curve) beats the baseline."""
        v = d["verdict"]
        self.assertTrue(v["levers"], v["explanation"])
        first = v["levers"][0]["lever"]
        before = d["points"][-1]["samples_per_s"]
        applied = {a["lever"]: a for a in d["after"]["levers_applied"]}
        self.assertIn(first, applied, json.dumps(d["after"]["levers_applied"]))
        a = applied[first]
        after = a["alone_samples_per_s"] if a["alone_samples_per_s"] > 0 else \
            d["after"]["points"][-1]["samples_per_s"]
        self.assertGreater(after, 1.1 * before, f"{first}: {before} -> {after}")
        return first

    @once_more_on_failure
    def test_comm_heavy_small_batch(self, name):
        # 3.2 M parameters (12.8 MB of gradient) against 4 samples per step.
        # Each rank of the job draws its own examples through a shuffling DistributedSampler,
        # whose seed the reduced-precision check's reseeded run (STEPSCOPE_SEED) reseeds.
        _, d, out = self.diagnose_job("comm_heavy", "--batch", "4", "--ablate-at", "2",
                                      name=name, script=("--shuffle", "--steps", "200"),
                                      checks=["--wire-check-steps", "30",
                                              "--noise-scale-steps", "200"])
        v = d["verdict"]
        self.assertEqual(v["binding"], "communication", v["explanation"])
        # The reduced wire's numerical cost, checked from the losses the helper recorded: the
        # three runs' final losses are the job's (cross-entropy over 10 classes, near ln 10),
        # and the reseeded run drifted. gloo has no bf16 all-reduce: the lever, and so the
        # check, is fp16.
        w = v["wire_check"]
        self.assertIsNotNone(w, json.dumps(d.get("warnings")))
        self.assertEqual((w["dtype"], w["replicas"], w["steps"]), ("fp16", 2, 30))
        for key in ("loss_fp32", "loss_reduced", "loss_fp32_reseeded"):
            self.assertTrue(1.5 < w[key] < 3.5, json.dumps(w))
        self.assertGreater(w["spread"], 0, json.dumps(w))
        # the reduced gradient's own error against fp32 (fp16: a few 1e-4), from the reduced run
        self.assertGreater(w["error_steps"], 0, json.dumps(w))
        self.assertTrue(0 < w["relative_error"] <= w["relative_error_max"] < 0.01, json.dumps(w))
        self.assertEqual(w["kept"], w["difference"] <= w["spread"])
        if not w["kept"]:  # a lever kept may still be ruled out by its gain
            self.assertNotIn("low_precision_reduction", [x["lever"] for x in v["levers"]])
        for run in ("wire_fp32-n2", "wire_reduced-n2", "wire_fp32_seed2-n2"):
            recs = read_jsonl(os.path.join(out, "runs", run, "rank-0.steps.jsonl"))
            self.assertTrue(recs and all("loss" in r for r in recs), run)
        # The noise scale over the script's own training: its run of 200 steps (about 11 s)
        # sampled the gradient norms at every step, and the decision reads it.
        noise = d["noise_scale"]
        self.assertEqual(noise["method"], "over_training", json.dumps(noise))
        self.assertIn("noise_scale-n2", noise["reason"])
        recs = read_jsonl(os.path.join(out, "runs", "noise_scale-n2", "rank-1.steps.jsonl"))
        self.assertEqual(len(recs), 200)
        self.assertGreater(noise["b_noise"], 0)
        self.assertTrue(all(r["local_grad_sq"] >= 0 and r["global_grad_sq"] >= 0 for r in recs))
        # The first lever is the bigger micro-batch, and the double-batch ablation is exactly
        # its change (the script at {batch} 8) measured at 2 replicas: it helps.
        self.assertEqual(v["levers"][0]["lever"], "bigger_micro_batch", v["explanation"])
        doubled = read_json(os.path.join(out, "runs", "double_batch-n2", "run.json"))
        self.assertEqual(doubled["config"]["batch"], 8)
        self.assertGreater(doubled["samples_per_s"], 1.1 * d["points"][-1]["samples_per_s"])
        # The helper's records: one collective per bucket with bytes, ready <= start <= end;
        # the no-reduce ablation sends nothing; synthetic input waits for nothing.
        recs = read_jsonl(os.path.join(out, "runs", "baseline-n2", "rank-1.steps.jsonl"))
        self.assertEqual(len(recs), 30)
        for r in recs:
            if r["warmup"]:
                continue
            self.assertGreater(sum(c["bytes"] for c in r["collectives"]), 12_000_000)
            for c in r["collectives"]:
                self.assertLessEqual(r["backward_start"], c["ready"])
                self.assertLessEqual(c["ready"], c["start"])
                self.assertLessEqual(c["start"], c["end"])
        sampled = [r for r in recs if r["local_grad_sq"] >= 0]
        self.assertTrue(sampled and all(r["global_grad_sq"] > 0 for r in sampled))
        no_reduce = read_jsonl(os.path.join(out, "runs", "no_reduce-n2", "rank-0.steps.jsonl"))
        self.assertTrue(all(c["bytes"] == 0 for r in no_reduce for c in r["collectives"]))
        no_reduce_run = read_json(os.path.join(out, "runs", "no_reduce-n2", "run.json"))
        self.assertFalse(no_reduce_run["config"]["reducer"]["reduce"])
        # The reduction's latency, probed at wrap over DDP's group (16 small all-reduces); not
        # where nothing is reduced.
        probe = read_json(os.path.join(out, "runs", "baseline-n2", "run.json"))["latency_probe"]
        self.assertEqual(probe["bytes"], 1024)
        self.assertEqual(len(probe["seconds"]), 16)
        self.assertTrue(all(x > 0 for x in probe["seconds"]), probe)
        self.assertIsNone(no_reduce_run["latency_probe"])
        self.assertTrue(read_json(os.path.join(out, "runs", "synthetic_input-n2", "run.json"))
                        ["config"]["synthetic_input"])

    @once_more_on_failure
    def test_slow_loader(self, name):
        # 3 ms per sample in the Dataset, no workers: every device waits for its input (a cost
        # already there at one replica, so not a scaling loss); more workers fix it. The script
        # takes its batches with next() for 40 steps of its own: diagnose's limit, 30, ends it at
        # the loader's StopIteration, a clean end.
        _, d, out = self.diagnose_job("slow_loader", "--no-ablations", "--apply-levers",
                                      name=name, script=("--next",))
        v = d["verdict"]
        self.assertEqual(v["throughput_constraint"], "input", v["explanation"])
        self.assertIn(v["binding"], ("none", "input"), v["explanation"])
        self.assertEqual(v["straggler_ranks"], [])
        self.assertEqual(self.first_lever_helps(d), "loader_workers_prefetch")
        run = read_json(os.path.join(out, "runs", "levers-n2", "run.json"))
        self.assertEqual(run["config"]["loader_workers"], 2)
        self.assertEqual(run["config"]["dataloader_num_workers"], 2)
        with open(os.path.join(out, "runs", "levers-n2", "log.txt")) as f:
            self.assertIn("the step limit (STEPSCOPE_STEPS=30) ended the loader", f.read())

    @once_more_on_failure
    def test_slow_rank(self, name):
        # Rank 1 computes 3 times as long: named by rank from its arrivals (one run, at 2). The
        # script trains through a step function wrapped by wrap_step, its optimizer inside.
        _, d, out = self.diagnose_job("slow_rank", "--no-ablations", replicas="2", name=name,
                                      script=("--step-function",))
        v = d["verdict"]
        self.assertEqual(v["binding"], "stragglers", v["explanation"])
        self.assertEqual(v["straggler_ranks"], [1])
        run = read_json(os.path.join(out, "runs", "baseline-n2", "run.json"))
        self.assertEqual(run["config"]["optimizer"]["kind"], "step_function")

    @once_more_on_failure
    def test_healthy(self, name):
        # A small model, every sample paced (3 ms in forward): it scales. The
        # script has no {accum} placeholder, so --accum 2 is the helper's (STEPSCOPE_ACCUM):
        # two of the script's iterations per step, which the runs and the model say. After each
        # iteration rank 0 writes a log (10 ms) while the other waits in the script's barrier:
        # the helper records that wait, and the evidence names it and whom it waits for.
        _, d, out = self.diagnose_job("healthy", "--no-ablations", "--accum", "2", name=name,
                                      script=("--barrier-every", "1", "--rank0-log-ms", "10"))
        v = d["verdict"]
        waits = [e for e in v["evidence"] if "in the job's own collectives" in e]
        self.assertEqual(len(waits), 1, json.dumps(v["evidence"]))
        self.assertRegex(waits[0], r"^rank 1 is blocked \d+\.\d+ ms per step .*\(dist\.barrier 2 "
                                   r"a step\).* it waits there for rank 0, which spends")
        job = d["points"][-1]["components"]  # along the critical path: rank 0's or rank 1's
        self.assertTrue(0 <= job["script_comm"] <= job["overhead"], json.dumps(job))
        self.assertGreater(d["points"][-1]["efficiency"], 0.8, v["explanation"])
        self.assertIn(v["binding"], ("none", "compute"), v["explanation"])
        self.assertEqual(v["straggler_ranks"], [])
        run = os.path.join(out, "runs", "baseline-n2")
        config = read_json(os.path.join(run, "run.json"))["config"]
        self.assertEqual((config["batch"], config["accum"]), (32, 2))
        waited = []
        for r in read_jsonl(os.path.join(run, "rank-1.steps.jsonl")):
            self.assertEqual((r["samples"], r["micro_batches"], len(r["collectives"])),
                             (64, 2, 1))
            if not r["warmup"]:
                waited.append(r["script_comm"])
        self.assertGreater(statistics.median(waited), 0.015)  # two barriers after rank 0's logs
        one = read_jsonl(os.path.join(out, "runs", "baseline-n1", "rank-0.steps.jsonl"))
        self.assertTrue(all("script_comm" not in r for r in one))  # one process: not watched
        self.assertEqual((d["model"]["reference"]["batch"], d["model"]["reference"]["accum"]),
                         (32, 2))


class OwnHook(TorchTest):
    """A script that reduces through a communication hook of its own (PyTorch's fp16
    compression), registered on the model wrap returns."""

    def test_the_scripts_hook_is_timed_and_its_precision_left_to_it(self):
        # At 2 replicas only: the hook is the same at 1, and its runs would add 10 s.
        _, d, out = self.diagnose_job("comm_heavy", "--batch", "4", "--no-ablations",
                                      "--apply-levers", replicas="2",
                                      script=("--comm-hook", "fp16"))
        # Every run reduced through the script's hook, the levered ones too: half the bytes.
        runs = sorted(os.listdir(os.path.join(out, "runs")))
        self.assertIn("levers-n2", runs)
        for name in runs:
            if not name.endswith("n2"):
                continue
            reducer = read_json(os.path.join(out, "runs", name, "run.json"))["config"]["reducer"]
            self.assertEqual((reducer["comm_hook"], reducer["dtype"], reducer["comm_hook_bytes"]),
                             ("fp16_compress_hook", "fp16", "wire"), name)
            for r in read_jsonl(os.path.join(out, "runs", name, "rank-0.steps.jsonl")):
                self.assertTrue(6_000_000 < sum(c["bytes"] for c in r["collectives"])
                                < 7_000_000, name)
        # The precision is the script's lever: neither recommended nor applied.
        v = d["verdict"]
        levers = [lever["lever"] for lever in v["levers"]] + \
            [a["lever"] for a in d["after"]["levers_applied"]]
        self.assertNotIn("low_precision_reduction", levers)
        self.assertTrue(any("own communication hook (fp16_compress_hook)" in e
                            for e in v["evidence"]), v["evidence"])
        # The model knows the hook, and refuses a what-if on its precision.
        self.assertEqual(d["model"]["reference"]["comm_hook"], "fp16_compress_hook")
        proc = predict([out, "--replicas", "4", "--reduce-dtype", "fp32"], check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("own communication hook (fp16_compress_hook)", proc.stderr)


class BadInput(TorchTest):
    """A failing script, one that never calls the helper, and a refused plan."""

    def test_failures_are_named_and_the_sweep_goes_on(self):
        out = self.path("d")
        # The script fails at start at N=1 and runs without the helper at N=2.
        job = os.path.join(self.tmp, "job.py")
        with open(job, "w") as f:
            f.write("import os, runpy, sys\n"
                    "if os.environ['WORLD_SIZE'] == '1':\n"
                    "    sys.exit('job: failing on purpose')\n"
                    "sys.argv = [sys.argv[0], '--fail', 'no_helper', '--steps', '4']\n"
                    f"runpy.run_path({JOB!r}, run_name='__main__')\n")
        proc = diagnose(["--torch", f"{self.python} {job}", "--replicas", "1,2",
                         "--no-ablations", "--out", out] + NO_CHECKS, check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("baseline-n1 (1 replica): FAILED", proc.stderr)
        self.assertIn(os.path.join(out, "runs", "baseline-n1") + "/log.txt", proc.stderr)
        with open(os.path.join(out, "runs", "baseline-n1", "log.txt")) as f:
            self.assertIn("job: failing on purpose", f.read())
        self.assertRegex(proc.stderr, r"baseline-n2 \(2 replicas\): FAILED \(exit 0\): exited 0 "
                         r"but wrote no run.json; no rank-R.steps.jsonl in the run's folder: "
                         r"the script does not call stepscope_torch.wrap \(docs/torch.md\); a "
                         r"script that writes PyTorch profiler traces instead can be diagnosed "
                         r"with --torch-traces")
        self.assertIn("[run 2/2]", proc.stderr)  # the sweep went on after the first failure

    def test_a_rank_that_dies_or_hangs_is_named(self):
        # Killed: PyTorch's launcher ends the others; the cause is the killed rank, not the one
        # its summary calls the root cause (rank 0, which lost its peer).
        proc = diagnose(["--torch", self.command("--fail", "die", "--batch", "{batch}"),
                         "--replicas", "2", "--no-ablations", "--out", self.path("die")]
                        + NO_CHECKS, check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("baseline-n2 (2 replicas): FAILED (exit 1): rank 1 (host ", proc.stderr)
        self.assertIn(") died of signal 9 (SIGKILL)", proc.stderr)
        # Hung: rank 0 waits in its reduction; the stall timeout ends the run within seconds
        # (gloo's own would take 30 minutes) and names rank 1 and where it is.
        started = time.monotonic()
        proc = diagnose(["--torch", self.command("--fail", "hang", "--batch", "{batch}"),
                         "--replicas", "2", "--no-ablations", "--stall-timeout", "4",
                         "--out", self.path("hang")] + NO_CHECKS, check=False)
        self.assertLess(time.monotonic() - started, 120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertRegex(proc.stderr, r"baseline-n2 \(2 replicas\): FAILED \(exit 1\): rank 0 "
                         r"\(host [^)]*\): waited [4-9] s at step 3 in the gradient all-reduce of "
                         r"bucket 0; rank 1 \(host [^)]*\) is at step 3, outside the loader, "
                         r"forward and backward \(its optimizer or its own code\), idle for the "
                         r"last \d+ s, at ddp_job\.py line \d+ in after_step\. The run is ended "
                         r"\(stall timeout 4 s, diagnose --stall-timeout")
        # Hung while the others wait in the script's own barrier, outside any reduction.
        proc = diagnose(["--torch", self.command("--fail", "hang", "--barrier-every", "1",
                                                 "--batch", "{batch}"),
                         "--replicas", "2", "--no-ablations", "--stall-timeout", "4",
                         "--out", self.path("hang-barrier")] + NO_CHECKS, check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertRegex(proc.stderr, r"baseline-n2 \(2 replicas\): FAILED \(exit 1\): rank 0 "
                         r"\(host [^)]*\): waited [4-9] s at step 3 in the script's own "
                         r"dist\.barrier; rank 1 \(host [^)]*\) is at step 3, outside the loader"
                         r".*, at ddp_job\.py line \d+ in after_step\. The run is ended")

    def test_ranks_stuck_before_wrap_are_ended_with_where_they_were(self):
        # Rank 1 sleeps before init_process_group, where rank 0 waits for it: no rank reaches
        # wrap, beyond the helper's stall watchdog; --start-timeout ends the run, saying where
        # each rank was (their stacks, asked through the helper's stack dump). 12 s: time for
        # both ranks to import torch and the helper on a busy host.
        out = self.path("stuck")
        started = time.monotonic()
        proc = diagnose(["--torch", self.command("--fail", "hang_at_start", "--batch", "{batch}"),
                         "--replicas", "2", "--no-ablations", "--start-timeout", "12",
                         "--out", out] + NO_CHECKS, check=False)
        self.assertLess(time.monotonic() - started, 120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        run = os.path.join(out, "runs", "baseline-n2")
        self.assertRegex(proc.stderr, r"baseline-n2 \(2 replicas\): FAILED \(exit -?\d+\): ranks "
                         r"0, 1 of 2 had not reached stepscope_torch.wrap 12 s after the run "
                         r"started \(--start-timeout\): the run was ended \(raise --start-timeout "
                         r"for a script whose start takes longer\); where the script's processes "
                         r"were when asked: rank 0 \(pid \d+, host [^)]*\) at ddp_job\.py line "
                         r"\d+ in train, inside init_process_group \(distributed_c10d\.py line "
                         r"\d+\); rank 1 \(pid \d+, host [^)]*\) at ddp_job\.py line \d+ in "
                         r"train; every thread's stack in "
                         + re.escape(run) + r"/process-\*\.stacks\.txt")
        infos = []
        for name in os.listdir(run):
            if name.startswith("process-") and name.endswith(".json"):
                with open(os.path.join(run, name)) as f:
                    infos.append(json.load(f))
        self.assertEqual(sorted(i["rank"] for i in infos), [0, 1])
        with open(os.path.join(run, next(i for i in infos if i["rank"] == 0)["stacks"])) as f:
            self.assertIn("in init_process_group", f.read())

    def test_a_script_that_starts_its_own_processes(self):
        # Under PyTorch's launcher its processes would hang in init_process_group: refused.
        proc = diagnose(["--torch", self.command("--spawn", "2", "--batch", "{batch}"),
                         "--replicas", "2", "--no-ablations", "--out", self.path("refused")]
                        + NO_CHECKS, check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertRegex(proc.stderr, r"FAILED \(exit 1\): rank [01] \(host ")  # either, first
        self.assertIn("the script starts its own processes (torch.multiprocessing.spawn) in a "
                      "process PyTorch's launcher started", proc.stderr)
        # With the interpreter as its launcher and {n} as its process count, it is measured.
        out = self.path("spawned")
        diagnose(["--torch", self.command("--spawn", "{n}", "--batch", "{batch}"),
                  "--launcher", self.python, "--replicas", "2", "--no-ablations", "--out", out]
                 + NO_CHECKS)
        run = os.path.join(out, "runs", "baseline-n2")
        self.assertTrue(os.path.exists(os.path.join(run, "rank-1.steps.jsonl")))
        with open(os.path.join(run, "run.json")) as f:
            self.assertEqual(json.load(f)["replicas"], 2)

    def test_no_step_is_named_in_the_log(self):
        out = self.path("d")
        proc = diagnose(["--torch", self.command("--steps", "0", "--batch", "{batch}"),
                         "--replicas", "1", "--no-ablations", "--out", out] + NO_CHECKS,
                        check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("finished without completing a step", proc.stderr)
        self.assertIn("baseline-n1 (1 replica): FAILED (exit 0): exited 0 but wrote no run.json; "
                      "the helper was called (rank-0.steps.jsonl) but rank 0 never completed a "
                      "step", proc.stderr)
        self.assertIn(os.path.join(out, "runs", "baseline-n1") + "/log.txt", proc.stderr)

    def test_missing_batch_placeholder_refused_before_running(self):
        out = self.path("d")
        proc = diagnose(["--torch", self.command("--batch", "8"), "--replicas", "1,2",
                         "--out", out], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("no {batch} placeholder", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.json")))
        proc = diagnose(["--torch", self.command("--batch", "8"), "--model", "gpt",
                         "--no-ablations", "--out", out], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("option --model: not used with --torch", proc.stderr)
        # Without the helper (--torch-traces) only a placeholder can change the accumulation.
        proc = diagnose(["--torch", self.command("--batch", "{batch}"), "--torch-traces",
                         "--accum", "2", "--no-ablations", "--out", out], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("option --accum 2: with --torch-traces", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.json")))
        # --start-timeout watches for the helper's wrap: without the helper it means nothing.
        proc = diagnose(["--torch", self.command("--batch", "{batch}"), "--torch-traces",
                         "--start-timeout", "60", "--no-ablations", "--out", out], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("option --start-timeout: only with --torch and the helper", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.json")))
        # A misspelt placeholder would reach the script as text; it is refused with the nearest.
        proc = diagnose(["--torch", self.command("--batch", "{batch_size}"), "--out", out],
                        check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("option --torch: '{batch_size}' in '{batch_size}' is not a placeholder "
                      "stepscope fills (did you mean {batch}?)", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.json")))

    def test_unsupported_wrappers_are_refused(self):
        code = ("import torch, stepscope_torch\n"
                "m = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n"
                "o = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                "try:\n"
                "    stepscope_torch.wrap(m, o, [])\n"
                "except stepscope_torch.HelperError as e:\n"
                "    print(e)\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "..", "..", "python"),
                   STEPSCOPE_RUN_DIR=self.tmp)
        out = subprocess.run([self.python, "-c", code], capture_output=True, text=True, env=env,
                             timeout=120)
        self.assertIn("DataParallel, which the helper does not measure", out.stdout, out.stderr)


class TraceFallback(TorchTest):
    """--torch-traces: a script without the helper that writes profiler traces per rank; the runs
    are completed through analyze's importers, and only the double-batch ablation runs. After each
    step rank 0 writes a log (10 ms) while rank 1 waits in the script's barrier: the traces tell
    that barrier from DDP's reduction, so its wait is not communication, and the evidence names
    it and whom it waits for."""

    def test_runs_from_profiler_traces(self):
        out = self.path("d")
        proc = diagnose(["--torch", self.command("--shape", "healthy", "--batch", "{batch}",
                                                 "--fail", "no_helper", "--profile-into-run-dir",
                                                 "--steps", "20", "--barrier-every", "1",
                                                 "--rank0-log-ms", "10"),
                         "--torch-traces", "--batch", "4", "--replicas", "2", "--out", out]
                        + STEPS)
        self.assertIn("ablations need the stepscope_torch helper", proc.stderr)
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual([p["replicas"] for p in d["points"]], [2])
        runs = sorted(os.listdir(os.path.join(out, "runs")))
        # Two ranks on two cores with the profiler's threads: a rank named a straggler from the
        # one run is confirmed by a second baseline (and only then).
        confirmed = "confirming straggler" in proc.stderr
        self.assertEqual(runs, ["baseline-n2"] + (["baseline-n2-r2"] if confirmed else [])
                         + ["double_batch-n2"], proc.stderr[-2000:])
        run = read_json(os.path.join(out, "runs", "double_batch-n2", "run.json"))
        self.assertEqual(run["config"]["batch"], 8)
        self.assertIn("profiler traces", run["source"])
        recs = read_jsonl(os.path.join(out, "runs", "baseline-n2", "rank-1.steps.jsonl"))
        self.assertGreaterEqual(len(recs), 15)
        self.assertTrue(all(r["samples"] == 4 for r in recs))
        self.assertTrue(all(r["collectives"] for r in recs if not r["warmup"]))
        steady = [r for r in recs if not r["warmup"]]
        self.assertGreater(statistics.median(r["script_comm"] for r in steady), 0.007)
        waits = [e for e in d["verdict"]["evidence"] if "in the job's own collectives" in e]
        self.assertEqual(len(waits), 1, json.dumps(d["verdict"]["evidence"]))
        self.assertRegex(waits[0], r"^rank 1 is blocked \d+\.\d+ ms per step .*\(barrier 1 a "
                                   r"step\).* it waits there for rank 0, which spends")


class DocsExample(TorchTest):
    """The first python block of docs/torch.md runs as is under diagnose --torch."""

    def test_first_python_block_runs(self):
        with open(DOCS) as f:
            block = re.search(r"```python\n(.*?)```", f.read(), re.S).group(1)
        script = self.path("example.py")
        with open(script, "w") as f:
            f.write(block)
        out = self.path("d")
        diagnose(["--torch", f"{self.python} {script} --batch {{batch}}", "--batch", "16",
                  "--replicas", "1,2", "--no-ablations", "--out", out] + STEPS + NO_CHECKS)
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual([p["replicas"] for p in d["points"]], [1, 2])
        for n in (1, 2):
            run = read_json(os.path.join(out, "runs", f"baseline-n{n}", "run.json"))
            self.assertEqual(run["source"], "stepscope_torch")
            self.assertEqual(run["replicas"], n)
            self.assertEqual(run["steps"], 30)


if __name__ == "__main__":
    unittest.main()
