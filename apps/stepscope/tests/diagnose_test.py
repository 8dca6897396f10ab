"""End-to-end tests of `stepscope diagnose`: injected causes are named (ground truth), the
attribution sums exactly, a failed run is reported while the sweep goes on, and an interrupted
sweep resumes without losing finished runs. Small workloads, emulated where N exceeds the cores."""
import json
import os
import signal
import subprocess
import time
import unittest

from harness import STEPSCOPE, TempDirTest, read_json, read_jsonl, run, skip_without_namespaces

# A small fast workload: runs of a few seconds each.
MLP = ["--model", "mlp", "--hidden", "64,64", "--batch", "32", "--steps", "10",
       "--warmup-steps", "3"]
# A compute-bound one: a small convnet paced to a tenth of a core (about 15 ms of compute per
# step against well under a millisecond of exposed communication at N = 4).
CNN = ["--model", "cnn", "--channels", "8", "--batch", "16", "--steps", "10",
       "--warmup-steps", "3", "--emulate-device-speed", "0.1"]
# A small gpt paced to a tenth of a core, for variable-length batches.
GPT = ["--model", "gpt", "--layers", "1", "--width", "64", "--heads", "2", "--context", "64",
       "--batch", "8", "--steps", "30", "--warmup-steps", "5", "--emulate-device-speed", "0.1"]


def diagnose(args, timeout=400, check=True):
    # These tests check the verdict's truth, not the noise scale (predict_test.Decision does):
    # no dedicated noise-scale run unless a test asks for one.
    if "--noise-scale-steps" not in args:
        args = list(args) + ["--noise-scale-steps", "0"]
    proc = subprocess.run([STEPSCOPE, "diagnose"] + list(args), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"diagnose {' '.join(args)} exited {proc.returncode}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def check_waterfall(test, d):
    """The attribution explains the lost devices by the step's components alone: no residual
    line (it appears only when samples per step are not N times the 1-replica run's, which a
    sweep of one workload never does), and the component lines sum to lost_devices."""
    a = d["attribution"]
    residual = [line for line in a["lines"] if line["component"] == "residual"]
    test.assertEqual(residual, [], json.dumps(a))
    total = sum(line["devices"] for line in a["lines"] if line["component"] != "residual")
    test.assertAlmostEqual(total, a["lost_devices"], places=6, msg=json.dumps(a))
    return a


class GroundTruth(TempDirTest):
    """Each injected cause must come out as the binding constraint."""

    def check_attribution(self, d):
        n = d["points"][-1]["replicas"]
        a = check_waterfall(self, d)
        # Lost devices: N - measured speed-up, and the components sum to it exactly.
        self.assertAlmostEqual(n - a["lost_devices"], a["measured_speedup"], places=6)

    def test_straggler(self):
        out = self.path("d")
        diagnose(CNN + ["--replicas", "1,4", "--inject-straggler", "2:3", "--ablate-at", "largest",
                        "--out", out])
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual(d["verdict"]["binding"], "stragglers", d["verdict"]["explanation"])
        self.assertEqual(d["verdict"]["straggler_ranks"], [2])
        self.assertTrue(d["emulation"]["emulated"])
        self.check_attribution(d)
        # Named from one run, the straggler was confirmed by a second baseline at 4 replicas.
        self.assertTrue(os.path.exists(os.path.join(out, "runs", "baseline-n4-r2", "run.json")))
        self.assertFalse(os.path.exists(os.path.join(out, "runs", "baseline-n1-r2")))
        self.assertIn("rank 2 is a straggler in 2 of the point's 2 runs",
                      " ".join(d["points"][-1]["skew"]["evidence"]))

    def test_two_stragglers(self):
        out = self.path("d")
        diagnose(CNN + ["--replicas", "1,4", "--inject-straggler", "1:3,3:2", "--no-ablations",
                        "--out", out])
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual(d["verdict"]["binding"], "stragglers", d["verdict"]["explanation"])
        self.assertEqual(d["verdict"]["straggler_ranks"], [1, 3],
                         json.dumps(d["points"][-1]["skew"]["ranks"]))
        self.check_attribution(d)

    def test_noisy_co_tenant(self):
        # A co-tenant beside rank 2 takes 40 % of its core on average, in bursts: rank 2 is
        # slow (named), and the run says the noise was injected.
        out = self.path("d")
        diagnose(CNN + ["--replicas", "1,4", "--steps", "16", "--inject-noise", "2:0.4",
                        "--no-ablations", "--out", out])
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual(d["verdict"]["binding"], "stragglers", d["verdict"]["explanation"])
        self.assertEqual(d["verdict"]["straggler_ranks"], [2])
        run = read_json(os.path.join(out, "runs", "baseline-n4", "run.json"))
        self.assertEqual(run["config"]["injection"]["noise"], {"rank": 2, "share": 0.4})

    def test_rotating_imbalance(self):
        # Variable-length batches: a different rank is slowest each step. Imbalance, never
        # communication or a straggler; length-bucketed batches (the lever) recover it.
        out = self.path("d")
        diagnose(GPT + ["--variable-length", "--replicas", "1,4", "--no-ablations",
                        "--apply-levers", "--out", out])
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual(d["verdict"]["binding"], "imbalance", d["verdict"]["explanation"])
        self.assertEqual(d["verdict"]["straggler_ranks"], [])
        # The model reads the rank that drew the longest examples over the run as the draw, not
        # a slow device, and predicts the lever's run and its gain for the lengths drawn too.
        self.assertEqual(d["model"]["stragglers"], [])
        self.assertGreater(d["model"]["length_buckets"]["positions"], 0)
        lever = {p["lever"]: p for p in d["lever_predictions"]}["balance_lengths"]
        drawn = lever["expected_gain_as_drawn_samples_per_s"]
        self.assertLessEqual(drawn["low"], drawn["value"])
        self.assertLessEqual(drawn["value"], drawn["high"])
        checks = {c["run"]: c for c in d["model_checks"]}
        self.assertIn("as_drawn", checks["levers-n4"])
        self.assertLess(abs(checks["levers-n4"]["as_drawn"]["error"]), 0.5)
        # Fitted on one replica, the 4-replica baseline it never saw is checked as drawn too:
        # its lengths are its input, not its timing.
        held = json.loads(run(["predict", out, "--fit-on", "1", "--replicas", "4", "--json"],
                              timeout=60).stdout)
        self.assertEqual(held["model"]["fitted_replicas"], [1])
        checks = {c["run"]: c for c in held["model_checks"]}
        self.assertIn("as_drawn", checks["baseline-n4"], checks["baseline-n4"])
        self.assertLess(abs(checks["baseline-n4"]["as_drawn"]["error"]), 0.5)
        # Both runs emulate one device: the 4-replica run paces to the cost per unit of work
        # that the 1-replica run calibrated (DIR/device.json), so the efficiency is the
        # imbalance's and not two calibrations apart.
        devices = [read_json(os.path.join(out, "runs", name, "run.json"))["emulation"]["device"]
                   for name in ("baseline-n1", "baseline-n4")]
        self.assertEqual(devices[0]["calibration"], "own")
        self.assertEqual(devices[1]["calibration"], "shared")
        self.assertTrue(devices[1]["calibrated_by"].endswith("baseline-n1"), devices[1])
        self.assertEqual(devices[0]["cost_per_work_s"], devices[1]["cost_per_work_s"])
        # Length-bucketed batches (the lever, re-measured at 1 and 4) recover it.
        after = d["after"]
        self.assertEqual([a["lever"] for a in after["levers_applied"]], ["balance_lengths"])
        self.assertNotEqual(after["verdict"]["binding"], "imbalance",
                            after["verdict"]["explanation"])
        self.assertGreater(after["points"][-1]["efficiency"], d["points"][-1]["efficiency"])

    def test_input(self):
        out = self.path("d")
        diagnose(MLP + ["--replicas", "1,2", "--inject-input-delay", "60",
                        "--ablate-at", "largest", "--apply-levers", "--out", out])
        d = read_json(os.path.join(out, "diagnosis.json"))
        # The loader's delay is the same at every replica count: it holds every device back
        # (the throughput constraint) but loses nothing to scaling, and is never read as
        # communication or a straggler.
        self.assertEqual(d["verdict"]["throughput_constraint"], "input",
                         d["verdict"]["explanation"])
        self.assertIn(d["verdict"]["binding"], ("none", "input"), d["verdict"]["explanation"])
        self.assertEqual(d["verdict"]["straggler_ranks"], [])
        self.assertFalse(os.path.exists(os.path.join(out, "runs", "baseline-n2-r2")))  # none named
        self.check_attribution(d)
        self.check_levers_measured(d, os.path.join(out, "report.html"))
        self.check_run_configs(out, d)

    def check_run_configs(self, out, d):
        """Each run was launched with its variant's change, as train read it (run.json)."""
        def config(name):
            return read_json(os.path.join(out, "runs", name, "run.json"))["config"]
        base = config("baseline-n2")
        self.assertTrue(base["reducer"]["reduce"])
        self.assertFalse(config("no_reduce-n2")["reducer"]["reduce"])
        self.assertTrue(config("synthetic_input-n2")["synthetic_input"])
        self.assertEqual(config("double_batch-n2")["batch"], 2 * base["batch"])
        after = config("levers-n2")
        for lever in d["after"]["levers_applied"]:
            name = lever["lever"]
            if name == "loader_workers_prefetch":
                self.assertEqual(after["loader_workers"], max(2, 2 * base["loader_workers"]))
                self.assertEqual(after["prefetch"], max(8, 2 * base["prefetch"]))
            elif name == "bigger_micro_batch":
                self.assertEqual(after["batch"], 2 * base["batch"])
            elif name == "low_precision_reduction":
                self.assertEqual(after["reducer"]["dtype"], "bf16")
            elif name == "overlap_bucketing":
                self.assertTrue(after["reducer"]["overlap"])
                self.assertLessEqual(after["reducer"]["bucket_mb"], base["reducer"]["bucket_mb"])

    def check_levers_measured(self, d, html_path):
        """On real --apply-levers output, every applied lever's row in the HTML levers table
        shows the gain measured after the levers, not '-'."""
        applied = d["after"]["levers_applied"]
        self.assertTrue(applied, "no lever was applied")
        for lever in applied:
            self.assertTrue(lever["change"], lever)
        with open(html_path, encoding="utf-8") as f:
            html = f.read()
        rows = {}
        if 'id="levers"' in html:
            table = html[html.index('id="levers"'):]
            table = table[:table.index("</table>")]
            for row in table.split("<tr>")[2:]:
                cells = [c.split("</td>")[0] for c in row.split("<td>")[1:]]
                rows[cells[0]] = cells
        # An applied lever the model then ruled out (its own run did not contradict it) is
        # listed with its reason instead of in the table.
        dropped = {x["lever"]: x for x in d["verdict"]["levers_dropped"]}
        for name, x in dropped.items():
            self.assertIn("step-time model predicts", x["reason"])
            self.assertIn(f"<b>{name}</b>", html[html.index('id="levers-dropped"'):])
            self.assertNotIn(name, rows)
        for lever in applied:
            name = lever["lever"]
            if name not in rows:
                continue  # applied, then ruled out by the model (levers_dropped)
            self.assertRegex(rows[name][5], r"^[+-]\d+\.\d at N=\d+", (name, rows[name]))
        self.assertTrue(all(lever["lever"] in rows or lever["lever"] in dropped
                            for lever in applied), (applied, list(rows), list(dropped)))
        # Each recommended lever's expected gain is the step-time model's re-simulation with the
        # lever applied (lever_predictions, with its band), and each lever that ran is measured.
        predicted = {p["lever"]: p for p in d["lever_predictions"]}
        for lever in d["verdict"]["levers"]:
            if lever["lever"] not in predicted:
                continue  # a lever the model cannot express (length balancing)
            gain = predicted[lever["lever"]]["expected_gain_samples_per_s"]
            self.assertAlmostEqual(lever["expected_gain_samples_per_s"], gain["value"], places=6)
            self.assertLessEqual(gain["low"], gain["value"])
            self.assertLessEqual(gain["value"], gain["high"])
            self.assertIn("step-time model", lever["basis"])
        # The report draws the model's curve, its band and the levers' what-if curve.
        self.assertIn("<h2>Step-time model</h2>", html)
        self.assertIn('id="chart-model"', html)
        self.assertEqual(len(d["lever_curve"]), len(d["predictions"]))
        for lever in applied:
            if lever["lever"] in predicted:
                self.assertIsNotNone(predicted[lever["lever"]]["measured_gain_samples_per_s"],
                                     predicted[lever["lever"]])
        # The re-measured curve has its own verdict, priced from the levered configuration and
        # shown before the first one; its efficiency is read against both one-device rates.
        after = d["after"]
        self.assertIsNotNone(after["verdict"])
        self.assertTrue(after["verdict"]["decision"]["priced"], after["verdict"]["decision"])
        stay = [o for o in after["verdict"]["options"] if o["kind"] == "stay"]
        self.assertEqual(len(stay), 1)
        self.assertIn("with the free levers applied", stay[0]["label"])
        self.assertGreater(after["original_x1"], 0)
        for e, p in zip(after["efficiency"], after["points"]):
            self.assertEqual(e["replicas"], p["replicas"])
            self.assertAlmostEqual(e["against_original_x1"],
                                   p["samples_per_s"] / (p["replicas"] * after["original_x1"]))
        self.assertLess(html.index('id="after-verdict"'), html.index('id="verdict"'))

    def test_communication(self):
        out = self.path("d")
        diagnose(["--model", "mlp", "--hidden", "1024,1024", "--batch", "4", "--steps", "10",
                  "--warmup-steps", "3", "--emulate-device-speed", "0.2",
                  "--emulate-link", "0.02,50", "--replicas", "1,4", "--ablate-at", "largest",
                  "--out", out])
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual(d["verdict"]["binding"], "communication", d["verdict"]["explanation"])
        self.check_attribution(d)

    def test_healthy_convnet(self):
        # Paced to 5 % of a core: pacing leaves room for other load on a shared 2-core machine.
        # A micro-batch of 64 keeps scheduler jitter small against the step's compute. A busy
        # host can still make one rank's run slower than the other's (a real, transient
        # straggler), so the measurement is repeated, up to three times, before it fails.
        seen = []
        for attempt in range(3):
            out = self.path(f"d{attempt}")
            diagnose(CNN + ["--emulate-device-speed", "0.05", "--steps", "20", "--batch", "64",
                            "--replicas", "1,2", "--no-ablations", "--out", out])
            d = read_json(os.path.join(out, "diagnosis.json"))
            binding, efficiency = d["verdict"]["binding"], d["points"][-1]["efficiency"]
            seen.append((binding, round(efficiency, 3), d["verdict"]["explanation"]))
            if binding in ("none", "compute") and efficiency > 0.75:
                return
        self.fail(f"a healthy convnet was not diagnosed as near-linear: {seen}")


class Robustness(TempDirTest):
    def test_failed_run_is_reported_and_the_sweep_goes_on(self):
        out = self.path("d")
        proc = diagnose(MLP + ["--replicas", "1,2", "--inject-crash", "1:2", "--no-ablations",
                               "--out", out], check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("baseline-n2", proc.stderr)
        self.assertIn("FAILED", proc.stderr)
        self.assertIn("left out of the 1-replica runs", proc.stderr)
        # The 1-replica run (the crash names rank 1) finished and was diagnosed.
        self.assertTrue(os.path.exists(os.path.join(out, "runs", "baseline-n1", "run.json")))
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual([p["replicas"] for p in d["points"]], [1])
        self.assertTrue(any("baseline-n2" in w for w in d["warnings"]))

    def test_changed_workload_is_refused(self):
        out = self.path("d")
        diagnose(MLP + ["--replicas", "1", "--no-ablations", "--out", out])
        proc = diagnose(MLP + ["--replicas", "1", "--batch", "16", "--no-ablations", "--out", out],
                        check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--fresh", proc.stderr)

    def test_launcher_template(self):
        # A launcher of our own: any template works the same way ({n} substituted, program
        # appended); here `mpirun` named explicitly with quotes in the template.
        out = self.path("d")
        launcher = ("mpirun -np {n} --oversubscribe --bind-to none "
                    "--mca btl 'self,vader' --mca mpi_yield_when_idle 1")
        diagnose(MLP + ["--replicas", "1,2", "--no-ablations", "--launcher", launcher,
                        "--out", out])
        self.assertTrue(os.path.exists(os.path.join(out, "runs", "baseline-n2", "run.json")))

    def test_repeats_are_run_and_stored(self):
        # --repeats 2: a second baseline at every N, after the first pass, in its own folder.
        # (No reduced-precision check here: it would add its own three runs.)
        out = self.path("d")
        proc = diagnose(MLP + ["--replicas", "1,2", "--no-ablations", "--repeats", "2",
                               "--wire-check-steps", "0", "--out", out])
        order = [line.split()[2] for line in proc.stderr.splitlines()
                 if line.startswith("[run ") and ": running" in line]
        self.assertEqual(order, ["baseline-n1", "baseline-n2", "baseline-n1-r2",
                                 "baseline-n2-r2"])
        for name in order:
            self.assertTrue(os.path.exists(os.path.join(out, "runs", name, "run.json")), name)
        sweep = read_json(os.path.join(out, "sweep.json"))
        self.assertEqual({r["name"] for r in sweep["runs"] if r["state"] == "finished"},
                         set(order))
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual([p["replicas"] for p in d["points"]], [1, 2])
        # The repeats are read: each point lists its repeat's throughput, inside its interval.
        for p in d["points"]:
            self.assertEqual(len(p["repeat_samples_per_s"]), 1, p["replicas"])
            x = p["repeat_samples_per_s"][0]
            self.assertLessEqual(p["throughput"]["low"], x)
            self.assertGreaterEqual(p["throughput"]["high"], x)

    def test_bad_launcher_fails_each_run_with_a_message(self):
        out = self.path("d")
        proc = diagnose(MLP + ["--replicas", "1", "--no-ablations", "--launcher",
                               "no-such-launcher -n {n}", "--out", out], check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("no-such-launcher", proc.stderr)


class Resume(TempDirTest):
    def test_interrupt_and_resume(self):
        out = self.path("d")
        args = [STEPSCOPE, "diagnose"] + MLP + ["--replicas", "1,2", "--ablate-at", "largest",
                                                 "--noise-scale-steps", "0", "--out", out]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
        first = os.path.join(out, "runs", "baseline-n1", "run.json")

        def first_recorded():
            try:
                runs = read_json(os.path.join(out, "sweep.json"))["runs"]
            except (OSError, ValueError):
                return False
            return any(r["name"] == "baseline-n1" and r["state"] == "finished" for r in runs)

        deadline = time.monotonic() + 300
        while not first_recorded() and time.monotonic() < deadline:
            if proc.poll() is not None:
                self.fail("diagnose ended before its first run finished:\n" + proc.stderr.read())
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertIn("interrupted", stderr)
        partial = read_json(os.path.join(out, "diagnosis.json"))
        self.assertTrue(any("partial" in w for w in partial["warnings"]))
        self.assertTrue(os.path.exists(first))
        sweep = read_json(os.path.join(out, "sweep.json"))
        finished = {r["name"] for r in sweep["runs"] if r["state"] == "finished"}
        self.assertIn("baseline-n1", finished)

        again = diagnose(args[2:])
        self.assertIn("baseline-n1 (1 replica): already finished, skipped", again.stderr)
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual([p["replicas"] for p in d["points"]], [1, 2])
        self.assertFalse(any("partial" in w for w in d["warnings"]))
        check_waterfall(self, d)


SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts")


class EmulatedHosts(TempDirTest):
    """2 namespaces over a tc-shaped link: per-step exposed communication grows when the link is
    slowed. Skipped where network namespaces cannot be created."""

    def setUp(self):
        super().setUp()
        skip_without_namespaces(self)

    def exposed_comm_ms(self, rate, burst_kb=64):
        state = self.path(f"hosts-{rate}")
        script = os.path.join(SCRIPTS, "emulated-hosts.sh")
        made = subprocess.run([script, "create", "2", "--rate", str(rate), "--burst",
                               str(burst_kb), "--dir", state],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(made.returncode, 0, made.stderr)
        try:
            # The link's bucket, in bytes as the kernel keeps it (its clock rounds a few off).
            shown = subprocess.run(["ip", "netns", "exec", "stepscope-h0", "tc", "-j", "qdisc",
                                    "show", "dev", "veth0"], capture_output=True, text=True)
            burst = json.loads(shown.stdout)[0]["options"]["burst"]
            self.assertAlmostEqual(burst / (1024 * burst_kb), 1, delta=0.01, msg=shown.stdout)
            template = made.stdout.strip().splitlines()[-1]
            out = self.path(f"run-{rate}")
            argv = template.replace("{n}", "2").split() + [
                STEPSCOPE, "train", "--model", "mlp", "--steps", "8", "--warmup-steps", "2",
                "--allreduce", "ring", "--no-eval", "--quiet", "--out", out]
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            run = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env,
                                 stdin=subprocess.DEVNULL)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        finally:
            subprocess.run([script, "destroy", "--dir", state], check=True, timeout=60)
        self.assertFalse(os.path.exists(state))
        steps = [r for r in read_jsonl(os.path.join(out, "rank-0.steps.jsonl")) if not r["warmup"]]
        self.assertTrue(steps)
        return 1e3 * sum(r["exposed_comm"] for r in steps) / len(steps)

    def test_slower_link_exposes_more_communication(self):
        fast = self.exposed_comm_ms(1000)
        slow = self.exposed_comm_ms(50, burst_kb=8)
        # ~1 MiB of fp32 gradient: at 50 Mbit/s the ring moves it in ~170 ms, at 1000 in ~9 ms.
        self.assertGreater(slow, 3 * fast, f"exposed comm {fast:.1f} ms -> {slow:.1f} ms")
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        self.assertNotIn("stepscope-h", listed)


if __name__ == "__main__":
    unittest.main()
