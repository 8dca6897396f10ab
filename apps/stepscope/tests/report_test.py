"""End-to-end tests of `stepscope report` (tables, --json, --csv, --html, exit codes) and
`stepscope trace merge` (every rank as a process, matched flows)."""
import csv
import io
import json
import os
import shutil
import unittest

from harness import TempDirTest, read_json, run

FIXTURE = os.environ.get("REPORT_FIXTURE", "report_fixture")
TRACE_DATA = os.environ.get("STEPSCOPE_TRACE_DATA") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "data",
                 "traces"))

CSV_COLUMNS = ["phase", "replicas", "samples_per_s", "speedup", "efficiency",
               "marginal_device_value", "steps", "samples_per_step", "step_mean_s", "step_p50_s",
               "step_p90_s", "compute_s", "input_wait_s", "sync_wait_s", "transfer_s",
               "overhead_s", "exposed_comm_s", "comm_busy_s", "compute_spread_s",
               "arrival_skew_mean_s", "arrival_skew_p90_s", "straggler_ranks", "ablations_agree",
               "script_comm_s"]


def make_fixture(path, *flags):
    import subprocess
    subprocess.run([FIXTURE, path, *flags], check=True)
    return path


class Outputs(TempDirTest):
    def setUp(self):
        super().setUp()
        self.diag = make_fixture(self.path("diagnosis.json"), "--after")

    def test_json_round_trips(self):
        out = json.loads(run(["report", self.diag, "--json"]).stdout)
        self.assertEqual(out, read_json(self.diag))

    def test_csv_has_stable_columns_and_parses(self):
        text = run(["report", self.diag, "--csv"]).stdout
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(list(rows[0].keys()), CSV_COLUMNS)
        d = read_json(self.diag)
        self.assertEqual(len(rows), len(d["points"]) + len(d["after"]["points"]))
        for row, p in zip(rows, d["points"]):
            self.assertEqual(row["phase"], "before")
            self.assertEqual(int(row["replicas"]), p["replicas"])
            self.assertAlmostEqual(float(row["samples_per_s"]), p["samples_per_s"], places=4)
            self.assertAlmostEqual(float(row["compute_s"]), p["components"]["compute"], places=9)
        self.assertEqual(rows[0]["marginal_device_value"], "")
        self.assertEqual(rows[-1]["phase"], "after")

    def test_tables_plain_when_piped_coloured_when_asked(self):
        plain = run(["report", self.diag]).stdout
        self.assertNotIn("\x1b[", plain)
        self.assertIn("Scaling curve", plain)
        self.assertIn("binding constraint:", plain)
        self.assertIn("\x1b[", run(["report", self.diag, "--color", "always"]).stdout)

    def test_html_written(self):
        html = self.path("report.html")
        run(["report", self.diag, "--html", html])
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertIn('id="stepscope-data"', page)
        self.assertEqual(page.count("<script"), 5)


V1_DIAGNOSIS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                            "data", "diagnosis", "v1-after-emulated.json")


class Version1(TempDirTest):
    """A diagnosis.json of schema version 1 still reads: tables, HTML, and JSON as the current
    version (3: the decision an object)."""

    def test_report_reads_version_1(self):
        plain = run(["report", V1_DIAGNOSIS]).stdout
        self.assertIn("binding constraint:", plain)
        self.assertIn("pull_levers", plain)
        html = self.path("report.html")
        run(["report", V1_DIAGNOSIS, "--html", html])
        self.assertTrue(os.path.getsize(html) > 0)
        out = json.loads(run(["report", V1_DIAGNOSIS, "--json"]).stdout)
        self.assertEqual(out["schema_version"], 3)
        self.assertEqual(out["verdict"]["decision"]["action"], "pull_levers")
        self.assertFalse(out["verdict"]["decision"]["priced"])
        self.assertEqual(out["after"]["levers_applied"][0]["lever"], "loader_workers_prefetch")


class Errors(TempDirTest):
    def test_missing_file_exit_1_names_it(self):
        proc = run(["report", self.path("nowhere.json")], check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("nowhere.json", proc.stderr)

    def test_invalid_diagnosis_exit_1_names_field(self):
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            json.dump({"schema_version": 1}, f)
        proc = run(["report", bad], check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("bad.json", proc.stderr)

    def test_unwritable_html_exit_3(self):
        diag = make_fixture(self.path("diagnosis.json"))
        proc = run(["report", diag, "--html", self.path("no/such/dir/r.html")], check=False)
        self.assertEqual(proc.returncode, 3)
        self.assertIn("r.html", proc.stderr)

    def test_json_and_csv_exclusive(self):
        diag = make_fixture(self.path("diagnosis.json"))
        proc = run(["report", diag, "--json", "--csv"], check=False)
        self.assertNotEqual(proc.returncode, 0)


def check_merged(test, path, ranks):
    merged = read_json(path)
    events = merged["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    test.assertEqual(names, {r: f"rank {r}" for r in ranks})
    flows = {}
    for e in events:
        if e["ph"] in ("s", "f"):
            flows.setdefault(e["id"], []).append(e)
    test.assertGreater(len(flows), 0)
    for fid, pair in flows.items():
        test.assertEqual(sorted(e["ph"] for e in pair), ["f", "s"], f"flow {fid}")
        start = next(e for e in pair if e["ph"] == "s")
        end = next(e for e in pair if e["ph"] == "f")
        test.assertLessEqual(start["ts"], end["ts"])
    return merged


class TraceMerge(TempDirTest):
    def test_train_run_merges_all_ranks(self):
        out = self.path("run")
        run(["train", "--model", "mlp", "--hidden", "64,32", "--quiet", "--no-eval", "--steps", "8",
             "--batch", "16", "--bucket-mb", "0.01", "--out", out], np=2)
        merged_path = self.path("merged.json")
        proc = run(["trace", "merge", out, "-o", merged_path])
        self.assertIn("2 ranks", proc.stdout)
        merged = check_merged(self, merged_path, [0, 1])
        kinds = {e["name"] for e in merged["traceEvents"] if e["ph"] == "X"}
        self.assertTrue(any(k.startswith("all-reduce bucket") for k in kinds))

    def test_pytorch_legacy_traces(self):
        src = os.path.join(TRACE_DATA, "pytorch-legacy-cpu-gloo")
        self.assertTrue(os.path.isdir(src), src)
        d = self.path("torch")
        shutil.copytree(src, d)
        merged_path = self.path("merged.json")
        run(["trace", "merge", d, "-o", merged_path])
        check_merged(self, merged_path, [0, 1])

    def test_missing_run_dir_exit_1(self):
        proc = run(["trace", "merge", self.path("nothing"), "-o", self.path("m.json")],
                   check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("nothing", proc.stderr)


if __name__ == "__main__":
    unittest.main()
