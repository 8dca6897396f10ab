"""Helpers for stepscope's end-to-end tests: run the binary (under mpirun when N > 1)."""
import json
import os
import subprocess
import tempfile
import unittest
from array import array

STEPSCOPE = os.environ.get("STEPSCOPE", "stepscope")
MPIRUN_LOCAL = os.environ.get("MPIRUN_LOCAL", "scripts/mpirun-local.sh")


def run(args, np=1, timeout=600, check=True):
    """Runs `stepscope ARGS` on np ranks; returns the CompletedProcess."""
    cmd = ([MPIRUN_LOCAL, str(np)] if np > 1 else []) + [STEPSCOPE] + list(args)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def read_floats(path):
    a = array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    return a


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def skip_without_namespaces(test):
    """Skips `test` where network namespaces cannot be made (not root, no CAP_SYS_ADMIN)."""
    probe = subprocess.run(["ip", "netns", "add", "stepscope-hprobe"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        test.skipTest("cannot create network namespaces here (needs root and "
                      f"CAP_SYS_ADMIN): {probe.stderr.strip()}")
    subprocess.run(["ip", "netns", "del", "stepscope-hprobe"], check=True)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="stepscope-test-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)
