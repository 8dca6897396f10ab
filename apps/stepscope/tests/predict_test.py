"""End-to-end tests of `stepscope predict`: the model fitted on a small real sweep predicts a
held-out replica count, what-ifs move the prediction the way they must, and bad input gets a
clear error with exit code 2 (1 when the directory cannot be fitted)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import STEPSCOPE, run

# Communication-bound: a 1024x1024 mlp paced to a fifth of a core over an emulated 0.02 GB/s,
# 50 us link (the reduction is most of the step at N = 4).
WORKLOAD = ["--model", "mlp", "--hidden", "1024,1024", "--batch", "4", "--steps", "10",
            "--warmup-steps", "3", "--emulate-device-speed", "0.2", "--emulate-link", "0.02,50"]


def stepscope(command, args, check=True, timeout=60):
    proc = subprocess.run([STEPSCOPE, command] + list(args), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{command} {' '.join(args)} exited {proc.returncode}\n"
                             f"{proc.stderr}")
    return proc


def predict(args, check=True):
    return stepscope("predict", args, check)


def diagnose(args, check=True):
    # A short dedicated noise-scale run (the default is 1000 steps).
    if "--noise-scale-steps" not in args:
        args = list(args) + ["--noise-scale-steps", "200"]
    return stepscope("diagnose", args, check, timeout=400)


class SweepTest(unittest.TestCase):
    """A class whose tests share one sweep of its workload (WORKLOAD unless the class names
    another) at 1, 2 and 4 replicas in cls.dir."""
    workload = WORKLOAD

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="stepscope-predict-")
        cls.dir = os.path.join(cls.tmp, "sweep")
        diagnose(cls.workload + ["--replicas", "1,2,4", "--no-ablations", "--out", cls.dir])

    def decide(self, args):
        proc = diagnose(self.workload + ["--replicas", "1,2,4", "--no-ablations", "--out",
                                         self.dir] + args)
        with open(os.path.join(self.dir, "diagnosis.json")) as f:
            return json.load(f), proc.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


class Predict(SweepTest):
    def json_of(self, args):
        return json.loads(predict([self.dir, "--json"] + args).stdout)

    def test_held_out_replica_count(self):
        d = self.json_of(["--fit-on", "1,2", "--replicas", "4"])
        self.assertEqual(d["model"]["fitted_replicas"], [1, 2])
        checks = {c["run"]: c for c in d["model_checks"]}
        self.assertIn("baseline-n4", checks, d["model_checks"])
        # Communication is most of the step at N = 4: a model without it (or without the growth
        # of the ring's bandwidth term from 2 to 4 replicas) misses by far more than this.
        self.assertLess(abs(checks["baseline-n4"]["error"]), 0.25, checks["baseline-n4"])
        p = d["predictions"][0]
        self.assertEqual(p["replicas"], 4)
        self.assertGreater(p["components"]["exposed_comm_s"], p["components"]["compute_s"], p)
        # Each component with its band; the model's other constants with unit and how.
        for name, band in p["component_bands"].items():
            self.assertAlmostEqual(band["value"], p["components"][name], msg=name)
            self.assertLessEqual(band["low"], band["value"], name)
            self.assertGreaterEqual(band["high"], band["value"], name)
        m = d["model"]
        self.assertEqual(sorted(m["compute_ratio"]["by_replicas"]), ["1", "2"])
        for part in (m["memory"], m["compute_ratio"]):
            self.assertTrue(part["unit"] and part["how"], part)
        self.assertTrue(m["readiness_how"])

    def test_a_new_replica_count_is_checked_against_the_earlier_prediction(self):
        # The sweep without its 4-replica run: its diagnosis predicts N = 4 from 1 and 2.
        d2 = os.path.join(self.tmp, "resumed")
        shutil.copytree(self.dir, d2)
        shutil.rmtree(os.path.join(d2, "runs", "baseline-n4"))
        os.remove(os.path.join(d2, "diagnosis.json"))
        diagnose(self.workload + ["--replicas", "1,2", "--no-ablations", "--out", d2])
        with open(os.path.join(d2, "diagnosis.json")) as f:
            before = json.load(f)
        self.assertEqual(before["model"]["fitted_replicas"], [1, 2])
        predicted = {p["replicas"]: p["samples_per_s"] for p in before["predictions"]}[4]
        self.assertFalse(any(c.get("predicted_before") for c in before["model_checks"]))
        # Resumed with N = 4: the new point is checked against what was predicted before it ran.
        diagnose(self.workload + ["--replicas", "1,2,4", "--no-ablations", "--out", d2])
        with open(os.path.join(d2, "diagnosis.json")) as f:
            after = json.load(f)
        earlier = [c for c in after["model_checks"] if c.get("predicted_before")]
        self.assertEqual([c["replicas"] for c in earlier], [4], after["model_checks"])
        c = earlier[0]
        self.assertEqual(c["run"], "baseline-n4")
        self.assertEqual(c["predicted_from"], [1, 2])
        self.assertEqual(c["predicted_samples_per_s"], predicted)
        measured = {p["replicas"]: p["samples_per_s"] for p in after["points"]}[4]
        self.assertAlmostEqual(c["measured_samples_per_s"], measured)
        self.assertAlmostEqual(c["error"], predicted["value"] / measured - 1)
        self.assertLess(abs(c["error"]), 0.25, c)
        # Resumed once more with nothing new: the earlier check is carried, not lost or doubled.
        diagnose(self.workload + ["--replicas", "1,2,4", "--no-ablations", "--out", d2])
        with open(os.path.join(d2, "diagnosis.json")) as f:
            again = json.load(f)
        self.assertEqual([x for x in again["model_checks"] if x.get("predicted_before")], earlier)

    def test_diagnosis_carries_the_model(self):
        with open(os.path.join(self.dir, "diagnosis.json")) as f:
            d = json.load(f)
        self.assertNotIn("model_error", d)
        self.assertEqual(d["model"]["fitted_replicas"], [1, 2, 4])
        # Out to 16 times the largest N measured, doubling.
        self.assertEqual([p["replicas"] for p in d["predictions"]],
                         [1, 2, 4, 8, 16, 32, 64])
        measured = {p["replicas"]: p["samples_per_s"] for p in d["points"]}
        at4 = d["predictions"][2]["samples_per_s"]["value"]
        self.assertLess(abs(at4 / measured[4] - 1), 0.25, (at4, measured[4]))
        self.assertIsInstance(d["model_checks"], list)
        # --predict-to: out to the count asked (the sweep resumed: nothing runs again).
        again = os.path.join(self.tmp, "predict-to")
        shutil.copytree(self.dir, again)
        diagnose(self.workload + ["--replicas", "1,2,4", "--no-ablations", "--out", again,
                                  "--predict-to", "100"])
        with open(os.path.join(again, "diagnosis.json")) as f:
            far = json.load(f)
        self.assertEqual([p["replicas"] for p in far["predictions"]],
                         [1, 2, 4, 8, 16, 32, 64, 100])
        with open(os.path.join(again, "report.html")) as f:
            self.assertIn("100", f.read())

    def test_what_ifs_move_the_prediction(self):
        plain = self.json_of(["--replicas", "4"])
        base, base_model = plain["predictions"][0], plain["model"]
        fast = self.json_of(["--replicas", "4", "--link", "100,1"])["predictions"][0]
        self.assertGreater(fast["samples_per_s"]["value"], 1.5 * base["samples_per_s"]["value"])
        self.assertLess(fast["components"]["exposed_comm_s"],
                        0.1 * base["components"]["exposed_comm_s"])
        # The measured (emulated 0.02 GB/s) link at twice its rate: the fitted cost with half
        # the time per byte, its latency kept, so exposed communication shrinks but not to 0.
        twice = self.json_of(["--replicas", "4", "--measured-link", "0.02", "--link", "0.04"])
        exposed = twice["predictions"][0]["components"]["exposed_comm_s"]
        self.assertLess(exposed, 0.75 * base["components"]["exposed_comm_s"])
        self.assertGreater(exposed, 0.3 * base["components"]["exposed_comm_s"])
        # Said to be measured on a link a quarter of the emulated one, the fit delivers more
        # than that link could: the prediction says the link did not set the reductions' time.
        caveat = "GB/s link they were measured on"
        slow = self.json_of(["--replicas", "4", "--measured-link", "0.005", "--link", "0.01"])
        self.assertTrue(any(caveat in n for n in slow["model"]["notes"]), slow["model"]["notes"])
        self.assertFalse(slow["model"]["measured_link"]["link_binds"], slow["model"])
        self.assertGreater(slow["model"]["measured_link"]["delivered_gbps"], 0.005)
        roomy = self.json_of(["--replicas", "4", "--measured-link", "0.04", "--link", "0.08"])
        self.assertFalse(any(caveat in n for n in roomy["model"]["notes"]), roomy["model"]["notes"])
        # A link that bound, scaled to twice its rate: the transport is assumed to keep up.
        faster = "keeps up with the faster link"
        self.assertTrue(any(faster in n for n in roomy["model"]["notes"]), roomy["model"]["notes"])
        self.assertFalse(any(faster in n for n in slow["model"]["notes"]), slow["model"]["notes"])
        self.assertTrue(roomy["model"]["measured_link"]["link_binds"], roomy["model"])
        self.assertEqual(roomy["model"]["measured_link"]["nominal_gbps"], 0.04)
        self.assertNotIn("measured_link", base_model)
        quicker = self.json_of(["--replicas", "4", "--compute-scale", "2"])["predictions"][0]
        self.assertAlmostEqual(quicker["components"]["compute_s"],
                               base["components"]["compute_s"] / 2, places=9)
        one = self.json_of(["--replicas", "1"])["predictions"][0]
        self.assertAlmostEqual(one["efficiency"]["value"], 1.0, places=9)
        # Two hosts of 2: inside a host the measured (emulated 0.02 GB/s) all-reduce, between
        # them a link 100 times slower than that makes the step slower than on one host.
        hosts = self.json_of(["--replicas", "4", "--devices-per-host", "2", "--inter-link",
                              "0.0002,50"])["predictions"][0]
        self.assertGreater(hosts["components"]["exposed_comm_s"],
                           2 * base["components"]["exposed_comm_s"])
        same = self.json_of(["--replicas", "2", "--devices-per-host", "2", "--inter-link",
                             "0.0002,50"])["predictions"][0]
        at2 = self.json_of(["--replicas", "2"])["predictions"][0]
        self.assertAlmostEqual(same["step_s"]["value"], at2["step_s"]["value"], places=12)

    def test_doubling_range_and_table(self):
        d = self.json_of(["--replicas", "1..4096"])
        ns = [p["replicas"] for p in d["predictions"]]
        self.assertEqual(ns, [2 ** k for k in range(13)])
        eff = [p["efficiency"]["value"] for p in d["predictions"]]
        self.assertTrue(all(a >= b - 1e-9 for a, b in zip(eff, eff[1:])), eff)
        for p in d["predictions"]:
            e = p["samples_per_s"]
            self.assertLessEqual(e["low"], e["value"])
            self.assertLessEqual(e["value"], e["high"])
        text = predict([self.dir, "--replicas", "1,4"]).stdout
        self.assertIn("samples/s [90% band]", text)
        # Each fitted constant with its band (or that it was assumed, where the fit put it below
        # 0), and how many reductions (the runs' buckets and latency probes) it was fitted on.
        self.assertRegex(text, r"all-reduce fp32: latency [\d.]+ us \[[\d.]+ to [\d.]+\] per "
                               r"step( \(assumed\))?, .* GB/s \[[\d.-]+ to [\d.-]+\]; "
                               r"from \d+ reductions")

    def test_bad_input(self):
        cases = [
            ([self.tmp + "/nothing"], "no runs/"),
            ([self.dir, "--replicas", "0"], "replica count"),
            ([self.dir, "--replicas", "4x"], "replica count"),
            ([self.dir, "--replicas", "8..2"], "ends below its start"),
            ([self.dir, "--link", "0"], "--link"),
            ([self.dir, "--link", "1,2,3"], "--link"),
            ([self.dir, "--measured-link", "0.02"], "give --link too"),
            ([self.dir, "--measured-link", "0", "--link", "1"], "--measured-link"),
            ([self.dir, "--reduce-dtype", "int8"], "int8"),
            ([self.dir, "--overlap", "--no-overlap"], "choose one"),
            ([self.dir, "--fit-on", "1,x"], "replica count"),
            ([self.dir, "--inter-link", "10"], "--devices-per-host"),
            ([self.dir, "--devices-per-host", "2", "--inter-link", "0,5"], "--inter-link"),
            ([self.dir, "--replicas", "8", "--devices-per-host", "4"], "--inter-link"),
        ]
        for args, needle in cases:
            proc = predict(args, check=False)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(needle, proc.stderr, args)
        for args in (["--batch", "0"], ["--compute-scale", "2x"], ["--bucket-mb", "1e"]):
            proc = predict([self.dir] + args, check=False)
            self.assertNotEqual(proc.returncode, 0, args)
            self.assertIn(args[0], proc.stderr, args)

    def test_a_directory_without_baselines_is_not_fitted(self):
        other = os.path.join(self.tmp, "renamed")
        shutil.copytree(self.dir, other)
        for name in os.listdir(os.path.join(other, "runs")):
            os.rename(os.path.join(other, "runs", name), os.path.join(other, "runs", "x" + name))
        proc = predict([other], check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("no baseline", proc.stderr)
        # A run.json with a field missing names the file and the field.
        run_json = os.path.join(other, "runs", "xbaseline-n1", "run.json")
        with open(run_json) as f:
            j = json.load(f)
        del j["model"]["gradient_bytes"]
        with open(run_json, "w") as f:
            json.dump(j, f)
        proc = predict([other], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("run.json", proc.stderr)
        self.assertIn("model.gradient_bytes", proc.stderr)


# The example of docs/model.md's "A spec", with one bucket reduced after backward so that the
# step is hand-computed: 100 MB on 4 hosts of 8 at 100 GB/s, 2 us inside and 10 GB/s, 20 us
# between.
SPEC = {
    "gradient_bytes": 100000000, "micro_batch": 32, "compute_s": 0.12, "optimizer_s": 0.004,
    "devices_per_host": 8, "intra_host": {"gbps": 100, "latency_us": 2},
    "inter_host": {"gbps": 10, "latency_us": 20}, "bucket_mb": 1000, "overlap": False,
}


class HeldOutOverlapAndLatency(unittest.TestCase):
    """Fitted on 1, 2 and 4 replicas, the model predicts the held-out 8 closer than the same
    model without overlap (--no-overlap) or without its fitted latency (its own bandwidth, no
    latency): four buckets of a five-layer mlp, about half the reduction hidden behind backward,
    over an emulated 1 GB/s link with 1 ms per ring step. Measured here: the model +0.3 to +5.9 %
    off, without overlap -13.5 to -18 %, without latency +65 to +80 %."""
    WORKLOAD = ["--model", "mlp", "--hidden", "512,512,512,512", "--batch", "64", "--steps",
                "12", "--warmup-steps", "3", "--emulate-device-speed", "0.1", "--emulate-link",
                "1,1000", "--bucket-mb", "0.25"]

    def errors(self, d):
        """The three models' errors at 8 replicas against the measured run."""
        with open(os.path.join(d, "runs", "baseline-n8", "run.json")) as f:
            measured = json.load(f)["samples_per_s"]

        def predicted(extra):
            out = json.loads(predict([d, "--fit-on", "1,2,4", "--replicas", "8", "--json"] +
                                     extra).stdout)
            return out, out["predictions"][0]["samples_per_s"]["value"] / measured - 1

        fitted, full = predicted([])
        seconds_per_byte = fitted["model"]["collectives"]["fp32"]["seconds_per_byte"]["value"]
        _, no_overlap = predicted(["--no-overlap"])
        _, no_latency = predicted(["--link", f"{1e-9 / seconds_per_byte:.6f},0"])
        return full, no_overlap, no_latency

    def test_overlap_and_latency_are_needed(self):
        tmp = tempfile.mkdtemp(prefix="stepscope-heldout-")
        self.addCleanup(shutil.rmtree, tmp, True)
        for attempt in range(2):  # a host that disturbed the sweep: measured once more
            d = os.path.join(tmp, f"sweep-{attempt}")
            diagnose(self.WORKLOAD + ["--replicas", "1,2,4,8", "--no-ablations", "--out", d])
            full, no_overlap, no_latency = self.errors(d)
            if abs(full) < min(abs(no_overlap), abs(no_latency)):
                break
        self.assertLess(abs(full), 0.25, (full, no_overlap, no_latency))
        self.assertLess(abs(full), abs(no_overlap), (full, no_overlap, no_latency))
        self.assertLess(abs(full), abs(no_latency), (full, no_overlap, no_latency))


class PredictSpec(unittest.TestCase):
    """`predict --spec`: capacity planning from a description, no runs."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-spec-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, spec, name="plan.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(spec if isinstance(spec, str) else json.dumps(spec))
        return path

    def test_hand_computed_step_and_what_ifs(self):
        path = self.write(SPEC)
        d = json.loads(predict(["--spec", path, "--replicas", "1,8,32", "--json"]).stdout)
        self.assertEqual(d["spec"], path)
        self.assertEqual(d["model"]["hosts"]["devices_per_host"], 8)
        self.assertEqual(d["model_checks"], [])
        at = {p["replicas"]: p for p in d["predictions"]}
        comm = 14 * 2e-6 + 14 / 8 * 1e8 / 100e9 + 6 * 20e-6 + 6 / 4 * 12.5e6 / 10e9
        self.assertAlmostEqual(at[32]["step_s"]["value"], 0.124 + comm, places=9)
        self.assertAlmostEqual(at[1]["step_s"]["value"], 0.124, places=12)
        self.assertAlmostEqual(at[8]["components"]["exposed_comm_s"],
                               14 * 2e-6 + 14 / 8 * 1e8 / 100e9, places=12)
        # A faster inter-host link, given on the command line, replaces the spec's.
        fast = json.loads(predict(["--spec", path, "--replicas", "32", "--inter-link", "100,20",
                                   "--json"]).stdout)["predictions"][0]
        self.assertLess(fast["step_s"]["value"], at[32]["step_s"]["value"])
        text = predict(["--spec", path, "--replicas", "8..4096"]).stdout
        self.assertIn("model described by " + path, text)
        self.assertIn("8 devices per host, hierarchical all-reduce", text)
        self.assertIn("4096", text)

    def test_device_memory_turns_the_batch_into_accumulation(self):
        spec = dict(SPEC, device_memory_gb=16, activation_bytes_per_sample=1 << 30)
        d = json.loads(predict(["--spec", self.write(spec), "--replicas", "8",
                                "--json"]).stdout)
        p = d["predictions"][0]
        self.assertEqual((p["batch"], p["accum"]), (8, 4))  # 15 fit; 8 divides the 32
        self.assertIn("does not fit", p["memory_note"])

    def test_bad_spec_names_the_file_and_the_field(self):
        cases = [
            ({k: v for k, v in SPEC.items() if k != "compute_s"}, "'compute_s'"),
            (dict(SPEC, gradient_bytes=-1), "'gradient_bytes'"),
            (dict(SPEC, intra_host={"gbps": -5}), "'gbps'"),
            (dict(SPEC, gpus=8), "unknown field 'gpus'"),
            ("{not json", "not valid JSON"),
        ]
        for spec, needle in cases:
            path = self.write(spec)
            proc = predict(["--spec", path], check=False)
            self.assertEqual(proc.returncode, 2, (spec, proc.stderr))
            self.assertIn(path + ": ", proc.stderr, spec)
            self.assertIn(needle, proc.stderr, spec)
        path = self.write(SPEC)
        for args, needle in [
            (["--spec", path, "--replicas", "0"], "replica count"),
            (["--spec", os.path.join(self.tmp, "absent.json")], "absent.json"),
            (["--spec", path, self.tmp], "one of them"),
            ([], "one of them"),
            (["--spec", path, "--fit-on", "1"], "--fit-on"),
        ]:
            proc = predict(args, check=False)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(needle, proc.stderr, args)


if __name__ == "__main__":
    unittest.main()


class Decision(SweepTest):
    """The priced decision on the same communication-bound sweep: the options priced on the
    model, the rule picking by currency, deadline, budget and upgrade prices. Each call after the
    first resumes the sweep (no run is measured again) and only prices anew."""

    def test_options_are_priced_and_the_choice_is_one_of_them(self):
        d, out = self.decide(["--device-cost", "2"])
        v = d["verdict"]
        self.assertTrue(v["decision"]["priced"], v["decision"])
        labels = [o["label"] for o in v["options"]]
        self.assertIn(v["decision"]["option"], labels)
        kinds = {o["kind"] for o in v["options"]}
        for kind in ("stay", "more_devices", "fewer_devices", "accumulation"):
            self.assertIn(kind, kinds)
        self.assertEqual(sorted({o["replicas"] for o in v["options"]
                                 if o["kind"] == "more_devices"}), [8, 16, 32])
        for o in v["options"]:
            self.assertAlmostEqual(o["goodput"],
                                   o["samples_per_s"]["value"] * o["statistical_efficiency"],
                                   delta=1e-6 * o["goodput"] + 1e-9)
            self.assertAlmostEqual(o["price_per_hour"], 2 * o["replicas"], places=9)
        self.assertIn("Options, priced", out)
        with open(os.path.join(self.dir, "report.html")) as f:
            self.assertIn('id="options"', f.read())

    def test_noise_scale_is_measured_over_training_by_its_own_run(self):
        d, out = self.decide(["--device-cost", "2"])
        ns = d["noise_scale"]
        self.assertTrue(ns["known"], ns)
        self.assertEqual(ns["method"], "over_training", ns)
        self.assertIn("noise_scale-n2", ns["reason"])
        self.assertEqual(ns["progress"]["first_step"], 0, ns)
        self.assertEqual(ns["progress"]["last_step"], 199, ns)
        self.assertEqual(ns["local_batch"], 4)
        self.assertEqual(ns["global_batch"], 8)
        self.assertLessEqual(ns["b_noise_low"], ns["b_noise"])
        self.assertLessEqual(ns["b_noise"], ns["b_noise_high"])
        with open(os.path.join(self.dir, "runs", "noise_scale-n2", "run.json")) as f:
            run = json.load(f)
        # The trainer's own estimate over training of the same run agrees with the analysis's.
        self.assertAlmostEqual(run["gradient_noise"]["b_noise_over_training"], ns["b_noise"],
                               delta=1e-6 * ns["b_noise"])
        self.assertFalse(run["emulation"]["emulated"], run["emulation"])
        ttq = d["verdict"]["time_to_quality"]
        self.assertEqual(ttq["b_noise"], ns["b_noise"])
        self.assertIn("averaged over steps 0 to 199", ttq["noise_scale_how"])

    def test_cost_does_not_buy_devices_for_a_communication_bound_job(self):
        d, _ = self.decide(["--device-cost", "2"])
        v = d["verdict"]
        self.assertNotEqual(v["decision"]["action"], "buy_devices", v["decision"]["reason"])
        # One replica has no reduction over the slow link: its samples cost a small fraction of
        # any count above it, far beyond the tie.
        self.assertEqual(v["decision"]["action"], "reduce_devices", v["decision"]["reason"])
        self.assertLess(v["decision"]["replicas"], 4)
        self.assertGreater(v["decision"]["margin"], 0.1)
        chosen = [o for o in v["options"] if o["label"] == v["decision"]["option"]][0]
        for o in v["options"]:
            if o["kind"] == "more_devices":
                self.assertGreater(o["cost_per_million"], chosen["cost_per_million"], o)

    def test_time_with_a_free_fast_link_upgrades_the_interconnect(self):
        d, _ = self.decide(["--currency", "time", "--device-cost", "2",
                            "--link-upgrade", "1000,1:0"])
        dec = d["verdict"]["decision"]
        self.assertEqual(dec["action"], "upgrade_interconnect", dec["reason"])
        self.assertEqual(dec["link"], "1000 GB/s, 1 us")
        self.assertEqual(d["verdict"]["currency"], "time")
        # The upgrade the verdict talks about has its curve beside the model's, point for point,
        # above the measured configuration's once communication matters.
        curves = [c for c in d["whatif_curves"] if c["kind"] == "faster_link"]
        self.assertEqual(len(curves), 1, d["whatif_curves"])
        self.assertTrue(curves[0]["label"].startswith("1000 GB/s, 1 us link"), curves[0]["label"])
        self.assertEqual([p["replicas"] for p in curves[0]["points"]],
                         [p["replicas"] for p in d["predictions"]])
        at4 = {p["replicas"]: p["samples_per_s"]["value"] for p in d["predictions"]}[4]
        self.assertGreater(curves[0]["points"][2]["samples_per_s"]["value"], at4)
        with open(os.path.join(self.dir, "report.html"), encoding="utf-8") as f:
            self.assertIn("On 1000 GB/s, 1 us link", f.read())
        # Priced far above what it saves, the same link is not bought on cost.
        d, _ = self.decide(["--device-cost", "2", "--link-upgrade", "1000,1:500"])
        self.assertNotEqual(d["verdict"]["decision"]["action"], "upgrade_interconnect",
                            d["verdict"]["decision"]["reason"])

    def test_free_faster_devices_are_faster_at_every_count_they_are_priced(self):
        # Devices 100 times faster at no extra price: at today's count and every larger one they
        # take less time than the same count on today's devices (the same reductions, almost no
        # compute). On time the decision is the fastest option (within the 10 % tie); for this
        # communication-bound job that can be fewer devices, where no upgrade is priced.
        d, _ = self.decide(["--currency", "time", "--device-cost", "2",
                            "--device-upgrade", "100:0"])
        v = d["verdict"]
        faster = [o for o in v["options"] if o["kind"] == "faster_devices"]
        self.assertEqual(sorted(o["replicas"] for o in faster), [4, 8, 16, 32])
        for o in faster:
            self.assertEqual(o["device_speed"], 100)
            same = [p for p in v["options"] if p["replicas"] == o["replicas"] and
                    p["kind"] in ("stay", "more_devices", "all_levers") and
                    p["levers"] == o["levers"]]
            for p in same:
                self.assertLess(o["hours_per_million"], p["hours_per_million"], (o, p))
        fastest = min(o["hours_per_million"] for o in v["options"])
        chosen = [o for o in v["options"] if o["label"] == v["decision"]["option"]][0]
        self.assertLessEqual(chosen["hours_per_million"], 1.1 * fastest, v["decision"]["reason"])

    def test_a_deadline_nothing_meets_is_said(self):
        d, _ = self.decide(["--device-cost", "2", "--samples-to-target", "1e12",
                            "--deadline", "0.001"])
        v = d["verdict"]
        self.assertIn("no option meets", v["decision"]["reason"])
        self.assertTrue(all(not o["meets_deadline"] for o in v["options"]))
        self.assertTrue(all(o["time_to_target_hours"] > 0.001 for o in v["options"]))
        self.assertEqual(v["time_to_quality"]["samples_to_target"], 1e12)

    def test_bad_decision_input_is_refused_before_any_run(self):
        fresh = os.path.join(self.tmp, "never")
        for args, words in [(["--deadline", "5"], "--samples-to-target"),
                            (["--budget", "5", "--currency", "time"], "--samples-to-target"),
                            (["--link-upgrade", "25", "--device-cost", "1"], "no price"),
                            (["--device-upgrade", "2:1"], "--device-cost"),
                            (["--device-cost", "-1"], "--device-cost"),
                            (["--currency", "money"], "--currency")]:
            proc = diagnose(WORKLOAD + ["--replicas", "1,2", "--out", fresh] + args, check=False)
            self.assertEqual(proc.returncode, 2, (args, proc.stderr))
            self.assertIn(words, proc.stderr, args)
            self.assertFalse(os.path.exists(os.path.join(fresh, "runs")), args)

    def test_a_train_run_that_reached_its_target_is_the_target(self):
        # Fashion-MNIST's mlp starts near ln(10) = 2.3; a smoothed loss of 2.0 comes within
        # tens of steps. An unreachable target runs every step and says it was not reached.
        run = os.path.join(self.tmp, "target")
        stepscope("train", ["--model", "mlp", "--hidden", "64", "--batch", "32", "--steps", "300",
                            "--target-loss", "2.0", "--no-eval", "--quiet", "--out", run])
        with open(os.path.join(run, "run.json")) as f:
            r = json.load(f)
        t = r["target"]
        self.assertTrue(t["reached"], t)
        self.assertLess(t["steps_to_target"], 300)
        self.assertEqual(r["steps"], t["steps_to_target"])
        self.assertEqual(t["samples_to_target"], 32 * t["steps_to_target"])
        self.assertLessEqual(t["smoothed_loss"], 2.0)
        d, _ = self.decide(["--device-cost", "2", "--target-run", run])
        q = d["verdict"]["time_to_quality"]
        self.assertEqual(q["samples_to_target"], t["samples_to_target"])
        self.assertEqual(q["samples_to_target_batch"], 32)
        self.assertTrue(all(o["time_to_target_hours"] > 0 for o in d["verdict"]["options"]))

        # The start-up each job pays is measured by the sweep's runs and priced into every
        # option's time to the target, named.
        self.assertGreater(q["fixed_hours"], 0, q)
        self.assertIn("start-up", q["fixed_how"])

        never = os.path.join(self.tmp, "never-reached")
        stepscope("train", ["--model", "mlp", "--hidden", "64", "--batch", "32", "--steps", "15",
                            "--target-loss", "0.0001", "--no-eval", "--quiet", "--out", never])
        with open(os.path.join(never, "run.json")) as f:
            r = json.load(f)
        self.assertFalse(r["target"]["reached"])
        self.assertEqual(r["steps"], 15)
        proc = diagnose(WORKLOAD + ["--replicas", "1,2,4", "--no-ablations", "--out", self.dir,
                                    "--target-run", never], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("target.reached", proc.stderr)
        proc = diagnose(WORKLOAD + ["--replicas", "1,2", "--target-loss", "1",
                                    "--out", os.path.join(self.tmp, "x")], check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--target-run", proc.stderr)

    def test_a_held_out_accuracy_target(self):
        # Evaluated every 10 steps on 500 held-out images: the mlp passes 60 % within tens of
        # steps. The evaluations stay out of the steps (the steps tile the rest of the run) and
        # their time is the job's fixed cost in the decision.
        run = os.path.join(self.tmp, "accuracy")
        stepscope("train", ["--model", "mlp", "--hidden", "64", "--batch", "32", "--steps", "400",
                            "--target-accuracy", "0.6", "--eval-every", "10", "--eval-limit",
                            "500", "--quiet", "--out", run])
        with open(os.path.join(run, "run.json")) as f:
            r = json.load(f)
        t = r["target"]
        self.assertTrue(t["reached"], t)
        self.assertEqual(t["accuracy"], 0.6)
        self.assertEqual(t["steps_to_target"] % 10, 0)
        self.assertEqual(r["steps"], t["steps_to_target"])
        self.assertEqual(t["samples_to_target"], 32 * t["steps_to_target"])
        self.assertGreaterEqual(r["eval"]["accuracy"], 0.6)
        self.assertEqual(r["evaluations"], t["steps_to_target"] // 10)
        self.assertGreater(r["evaluation_s"], 0)
        self.assertGreater(r["startup_s"], 0)
        self.assertLess(r["startup_s"] + r["evaluation_s"], r["wall_time_s"])
        d, _ = self.decide(["--device-cost", "2", "--target-run", run])
        q = d["verdict"]["time_to_quality"]
        self.assertEqual(q["samples_to_target"], t["samples_to_target"])
        self.assertIn("held-out evaluation", q["fixed_how"])
        self.assertGreaterEqual(q["fixed_hours"] * 3600, r["evaluation_s"])
        for args, words in [(["--model", "gpt", "--target-accuracy", "0.5"], "--target-loss"),
                            (["--target-accuracy", "1.5"], "(0, 1]"),
                            (["--target-accuracy", "0.5", "--target-loss", "1"], "one target"),
                            (["--target-accuracy", "0.5", "--no-eval"], "--no-eval")]:
            proc = stepscope("train", args + ["--steps", "2", "--quiet"], check=False)
            self.assertNotEqual(proc.returncode, 0, args)
            self.assertIn(words, proc.stderr, args)

    def test_a_multi_replica_target_run_gives_the_noise_scale_to_the_target(self):
        # Two replicas trained to a held-out target with norms every step: run.json has the
        # noise scale averaged over that training, and the decision prices with it.
        target = os.path.join(self.tmp, "noise-target")
        run(["train", "--model", "mlp", "--hidden", "64", "--batch", "16", "--steps", "400",
             "--target-accuracy", "0.6", "--eval-every", "5", "--eval-limit", "500",
             "--grad-norm-every", "1", "--quiet", "--out", target], np=2)
        with open(os.path.join(target, "run.json")) as f:
            r = json.load(f)
        noise = r["gradient_noise"]
        self.assertTrue(r["target"]["reached"], r["target"])
        self.assertGreater(noise["b_noise_over_training"], 0, noise)
        self.assertLessEqual(noise["over_training_least"], noise["b_noise_over_training"])
        self.assertGreaterEqual(noise["over_training_most"], noise["b_noise_over_training"])
        d, _ = self.decide(["--device-cost", "2", "--target-run", target])
        q = d["verdict"]["time_to_quality"]
        self.assertAlmostEqual(q["b_noise"], noise["b_noise_over_training"], places=6)
        self.assertIn("averaged over the training of the target run", q["noise_scale_how"])
        self.assertEqual(q["samples_to_target_batch"], 32)

    def test_the_reduced_precision_lever_is_checked_not_assumed(self):
        # Communication binds, so bf16 on the wire is recommended: three unpaced 2-replica runs
        # check its numerical cost, and the lever stays only within the seed-to-seed spread.
        d, out = self.decide(["--device-cost", "2"])
        v = d["verdict"]
        w = v["wire_check"]
        self.assertIsNotNone(w, v["levers"])
        self.assertEqual(w["dtype"], "bf16")
        self.assertEqual((w["replicas"], w["steps"]), (2, 200))
        self.assertAlmostEqual(w["difference"], abs(w["loss_reduced"] - w["loss_fp32"]))
        self.assertAlmostEqual(w["spread"], abs(w["loss_fp32_reseeded"] - w["loss_fp32"]))
        self.assertEqual(w["kept"], w["difference"] <= w["spread"])
        # Kept by the check, it is recommended, or ruled out by the step-time model after it.
        levers = [l["lever"] for l in v["levers"] + v["levers_dropped"]]
        self.assertEqual("low_precision_reduction" in levers, w["kept"], w["sentence"])
        self.assertIn(w["sentence"], v["evidence"])
        self.assertIn(w["sentence"], out)
        configs = {}
        for name in ("wire_fp32-n2", "wire_reduced-n2", "wire_fp32_seed2-n2"):
            with open(os.path.join(self.dir, "runs", name, "run.json")) as f:
                configs[name] = json.load(f)
        self.assertEqual(configs["wire_reduced-n2"]["config"]["reducer"]["dtype"], "bf16")
        # The reduced gradient's relative error, measured inside the reduced-wire run against
        # the same gradients reduced in fp32: bf16 keeps 8 significant bits, so a few tenths
        # of a percent, not zero and not whole percents.
        error = configs["wire_reduced-n2"]["wire_error"]
        self.assertIsNotNone(error)
        self.assertEqual(error["steps"], 50)  # norms sampled every 4th of 200 steps
        self.assertEqual(w["error_steps"], 50)
        self.assertAlmostEqual(w["relative_error"], error["relative"])
        self.assertGreater(w["relative_error"], 1e-4, w)
        self.assertLess(w["relative_error"], 1e-2, w)
        self.assertGreaterEqual(w["relative_error_max"], w["relative_error"])
        self.assertIn("reduced in fp32 by", w["sentence"])
        self.assertIsNone(configs["wire_fp32-n2"]["wire_error"])
        self.assertEqual(configs["wire_fp32-n2"]["config"]["reducer"]["dtype"], "fp32")
        self.assertEqual(configs["wire_fp32_seed2-n2"]["config"]["seed"],
                         configs["wire_fp32-n2"]["config"]["seed"] + 1)
        for c in configs.values():
            self.assertFalse(c["emulation"]["emulated"])  # numerics, not timing
            self.assertEqual(c["steps"], 200)
        # The step-time model never fits or checks these unpaced runs.
        self.assertFalse(any(c["run"].startswith(("wire_", "noise_scale"))
                             for c in d.get("model_checks", [])))


class ComputeBoundDecision(SweepTest):
    """The decision on a compute-bound sweep that scales near-linearly (a small convnet paced to
    a twentieth of a core: about 35 ms of compute per step against a few milliseconds of
    exposed communication at 4 replicas, the 4 ranks sharing 2 cores): more devices buy time,
    and whether they are worth it depends on the currency, the deadline and what faster devices
    cost."""
    workload = ["--model", "cnn", "--channels", "8", "--batch", "16", "--steps", "10",
                "--warmup-steps", "3", "--emulate-device-speed", "0.05"]

    def chosen(self, v):
        return [o for o in v["options"] if o["label"] == v["decision"]["option"]][0]

    def test_time_buys_devices(self):
        d, _ = self.decide(["--currency", "time", "--device-cost", "2"])
        v = d["verdict"]
        self.assertGreater(d["points"][-1]["efficiency"], 0.7, d["points"])
        self.assertEqual(v["decision"]["action"], "buy_devices", v["decision"]["reason"])
        self.assertGreater(v["decision"]["replicas"], 4)
        self.assertEqual(v["buy_more_devices"], "yes")

    def test_cost_without_a_deadline_does_not_buy_but_a_deadline_does(self):
        d, _ = self.decide(["--device-cost", "2", "--samples-to-target", "1e7"])
        v = d["verdict"]
        # A bigger global batch costs samples (the noise scale is measured), so on cost alone
        # more devices are not worth it.
        self.assertNotEqual(v["decision"]["action"], "buy_devices", v["decision"]["reason"])
        cheapest = min(o["cost_to_target"] for o in v["options"])
        self.assertLessEqual(self.chosen(v)["cost_to_target"], 1.1 * cheapest)
        # A deadline that only more devices meet: the least cost among the options that meet it,
        # however inefficient their scaling, and the reason says why.
        today = min(o["time_to_target_hours"] for o in v["options"] if o["replicas"] <= 4)
        more = min(o["time_to_target_hours"] for o in v["options"]
                   if o["kind"] == "more_devices")
        self.assertLess(more, today)
        deadline = (more + today) / 2
        d, _ = self.decide(["--device-cost", "2", "--samples-to-target", "1e7",
                            "--deadline", f"{deadline:.6f}"])
        v = d["verdict"]
        self.assertEqual(v["decision"]["action"], "buy_devices", v["decision"]["reason"])
        meeting = [o for o in v["options"] if o["meets_deadline"]]
        self.assertTrue(meeting)
        self.assertTrue(all(o["replicas"] > 4 for o in meeting), meeting)
        self.assertTrue(self.chosen(v)["meets_deadline"])
        self.assertLessEqual(self.chosen(v)["cost_to_target"],
                             1.1 * min(o["cost_to_target"] for o in meeting))
        self.assertIn("deadline", v["decision"]["reason"])

    def test_cheap_faster_devices_are_bought_on_cost(self):
        # Four times faster devices for a quarter more per device-hour: compute is most of the
        # step, so the same work costs far less on them.
        d, _ = self.decide(["--device-cost", "2", "--device-upgrade", "4:0.5"])
        v = d["verdict"]
        self.assertEqual(v["decision"]["action"], "upgrade_devices", v["decision"]["reason"])
        self.assertEqual(v["decision"]["device_speed"], 4)
        # Priced at eight times the device, they are not.
        d, _ = self.decide(["--device-cost", "2", "--device-upgrade", "4:16"])
        self.assertNotEqual(d["verdict"]["decision"]["action"], "upgrade_devices",
                            d["verdict"]["decision"]["reason"])


    def test_a_budget_more_devices_would_overspend_stays(self):
        # In time, within a budget that today's 4 replicas just meet: more devices overspend it,
        # fewer are slower, and no free lever is more than the tie (10 %) faster, so the measured
        # configuration stays.
        args = ["--currency", "time", "--device-cost", "2", "--samples-to-target", "1e7"]
        d, _ = self.decide(args)
        v = d["verdict"]
        stay = [o for o in v["options"] if o["kind"] == "stay"][0]
        budget = 1.02 * stay["cost_to_target"]
        more = [o for o in v["options"] if o["kind"] == "more_devices"]
        self.assertGreater(min(o["cost_to_target"] for o in more), budget, v["options"])
        within = [o for o in v["options"] if o["cost_to_target"] <= budget]
        faster = [o["label"] for o in within
                  if o["time_to_target_hours"] < stay["time_to_target_hours"] / 1.1]
        self.assertEqual(faster, [], "the workload has a lever worth pulling: not a stay case")
        d, _ = self.decide(args + ["--budget", f"{budget:.6f}"])
        v = d["verdict"]
        self.assertEqual(v["decision"]["action"], "stay", v["decision"]["reason"])
        self.assertEqual(v["decision"]["replicas"], 4)
        self.assertIn("budget", v["decision"]["reason"])
        self.assertEqual(v["buy_more_devices"], "no", v["explanation"])

class InputBoundDecision(SweepTest):
    """The decision on an input-bound sweep (a small mlp whose loader takes 40 ms per batch with
    one worker): the free levers at the measured count (more loader workers, a bigger batch per
    loader period) are the fastest way to the target without more devices, so a deadline that
    only they and more devices meet makes pulling them the decision."""
    workload = ["--model", "mlp", "--hidden", "64,64", "--batch", "32", "--steps", "10",
                "--warmup-steps", "3", "--inject-input-delay", "40"]

    def test_a_deadline_only_the_levers_meet_pulls_them(self):
        args = ["--device-cost", "2", "--samples-to-target", "1e7"]
        d, _ = self.decide(args)
        v = d["verdict"]
        self.assertEqual(v["throughput_constraint"], "input", v["explanation"])
        levers = [o for o in v["options"] if o["kind"] in ("lever", "all_levers")]
        # Without the levers, only more devices are faster (and cost more: each one's bigger
        # global batch needs more samples).
        others = [o for o in v["options"]
                  if o["kind"] not in ("lever", "all_levers") and o["replicas"] <= 4]
        fastest = min(levers, key=lambda o: o["time_to_target_hours"])
        # The loader lever's option is priced from the model's re-simulation with it: it must
        # beat staying as measured by far (the loader is most of the step).
        stay = [o for o in v["options"] if o["kind"] == "stay"][0]
        self.assertLess(fastest["time_to_target_hours"], 0.8 * stay["time_to_target_hours"])
        # Each recommended lever's goodput gain is its own option's goodput over staying; a lever
        # the model rules out is dropped with its reason, neither listed nor priced.
        self.assertTrue(v["levers"], v["explanation"])
        for lever in v["levers"]:
            own = [o for o in v["options"] if o["kind"] == "lever" and o["levers"] == [lever["lever"]]]
            self.assertEqual(len(own), 1, (lever, v["options"]))
            self.assertAlmostEqual(lever["expected_gain_goodput"], own[0]["goodput"] - stay["goodput"],
                                   places=6)
        for dropped in v["levers_dropped"]:
            self.assertIn("step-time model predicts", dropped["reason"])
            self.assertFalse(any(o["kind"] == "lever" and o["levers"] == [dropped["lever"]]
                                 for o in v["options"]), dropped)
            self.assertNotIn(dropped["lever"], [x["lever"] for x in v["levers"]])
        next_best = min(o["time_to_target_hours"] for o in others)
        self.assertLess(fastest["time_to_target_hours"], next_best, v["options"])
        self.assertGreater(min(o["cost_to_target"] for o in v["options"]
                               if o["kind"] == "more_devices"), fastest["cost_to_target"])
        deadline = (fastest["time_to_target_hours"] + next_best) / 2
        d, _ = self.decide(args + ["--deadline", f"{deadline:.6f}"])
        v = d["verdict"]
        self.assertEqual(v["decision"]["action"], "pull_levers", v["decision"]["reason"])
        self.assertEqual(v["buy_more_devices"], "not yet")
        chosen = [o for o in v["options"] if o["label"] == v["decision"]["option"]][0]
        self.assertIn(chosen["kind"], ("lever", "all_levers"))
        self.assertTrue(chosen["meets_deadline"])
        self.assertEqual(chosen["replicas"], 4)
        self.assertIn("deadline", v["decision"]["reason"])
