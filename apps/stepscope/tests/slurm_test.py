"""`stepscope diagnose` through Slurm, for real: a one-node cluster from Debian's packages (munge,
slurmctld, slurmd; scripts/slurm-local.sh writes its slurm.conf, oversubscribed on this host),
every run of the sweep started by `srun` with the PMIx plugin that Debian's OpenMPI speaks, then
the cluster torn down. Needs root and the packages scripts/setup.sh installs; skipped without
them, a failure under CI=true."""
import os
import re
import shutil
import subprocess
import unittest

from harness import STEPSCOPE, TempDirTest, read_json

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts")
# The launcher line docs/diagnose.md gives for Slurm.
SRUN = "srun -n {n} --mpi=pmix --export=ALL,OMPI_MCA_mpi_yield_when_idle=1"


class Slurm(TempDirTest):
    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("a local Slurm cluster needs root")
        missing = [t for t in ("munged", "slurmctld", "slurmd", "srun") if not shutil.which(t)]
        if missing:
            self.skipTest(f"{', '.join(missing)} not installed (scripts/setup.sh installs them)")
        self.state = self.path("slurm")
        self.script = os.path.join(SCRIPTS, "slurm-local.sh")
        started = subprocess.run([self.script, "start", "--dir", self.state],
                                 capture_output=True, text=True, timeout=120)
        if started.returncode != 0:
            self.stop()
            self.fail(started.stdout + started.stderr)
        self.conf = started.stdout.strip().splitlines()[-1].split("=", 1)[1]

    def stop(self):
        subprocess.run([self.script, "stop", "--dir", self.state], check=True, timeout=120)

    def tearDown(self):
        # Before the temporary folder (which holds the cluster's state) goes.
        if hasattr(self, "script"):
            self.stop()
            self.assertFalse(os.path.exists(self.state))
        super().tearDown()

    def test_diagnose_through_srun(self):
        out = self.path("d")
        env = dict(os.environ, SLURM_CONF=self.conf)
        proc = subprocess.run(
            [STEPSCOPE, "diagnose", "--model", "mlp", "--hidden", "32", "--batch", "16",
             "--steps", "10", "--warmup-steps", "3", "--replicas", "1,2,4", "--ablate-at", "4",
             "--wire-check-steps", "0", "--noise-scale-steps", "0", "--launcher", SRUN,
             "--out", out],
            capture_output=True, text=True, timeout=400, env=env, stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        d = read_json(os.path.join(out, "diagnosis.json"))
        self.assertEqual([p["replicas"] for p in d["points"]], [1, 2, 4])
        self.assertEqual(d["failed_runs"], [])
        runs = [r["name"] for r in read_json(os.path.join(out, "sweep.json"))["runs"]]
        for name in ["baseline-n1", "baseline-n2", "baseline-n4", "no_reduce-n4",
                     "synthetic_input-n4", "double_batch-n4"]:
            self.assertIn(name, runs)
        for name in runs:
            self.assertTrue(os.path.exists(os.path.join(out, "runs", name, "run.json")), name)
        # Every run was a Slurm job: the controller allocated one per run, with its task count.
        with open(os.path.join(self.state, "slurmctld.log")) as log:
            jobs = re.findall(r"sched: _slurm_rpc_allocate_resources JobId=(\d+)", log.read())
        self.assertGreaterEqual(len(set(jobs)), len(runs), "jobs seen by slurmctld: " + str(jobs))


if __name__ == "__main__":
    unittest.main()
