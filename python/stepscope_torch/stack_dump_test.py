"""A process that imports the helper under diagnose writes its stacks when sent SIGUSR2, and
leaves nothing behind when it exits normally; outside diagnose nothing is armed."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from stepscope_torch.stack_dump import arm

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A process that arms the dump and then waits in a function of its own until its stdin closes
# (it prints its process file's path from inside that function, so the dump asked for after the
# line is read finds it there).
_STUCK = textwrap.dedent("""
    import sys
    from stepscope_torch.stack_dump import arm
    def waiting_for_a_peer(path):
        print(path, flush=True)
        sys.stdin.read()
    waiting_for_a_peer(arm())
""")


def _read(path):
    with open(path) as f:
        return f.read()


def _wait_for(predicate, seconds=20):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


class StackDump(unittest.TestCase):
    def test_nothing_armed_outside_diagnose(self):
        self.assertIsNone(arm({}))

    def test_an_unwritable_folder_arms_nothing(self):
        self.assertIsNone(arm({"STEPSCOPE_RUN_DIR": "/nonexistent/stepscope-run"}))

    def test_stacks_on_request_and_nothing_left_at_exit(self):
        with tempfile.TemporaryDirectory() as run_dir:
            env = dict(os.environ, STEPSCOPE_RUN_DIR=run_dir, RANK="3",
                       PYTHONPATH=_HERE, PYTHONDONTWRITEBYTECODE="1")
            p = subprocess.Popen([sys.executable, "-c", _STUCK], env=env, text=True,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            try:
                path = p.stdout.readline().strip()
                self.assertTrue(os.path.basename(path).startswith("process-"), path)
                with open(path) as f:
                    info = json.load(f)
                self.assertEqual(info["pid"], p.pid)
                self.assertEqual(info["rank"], 3)
                self.assertRegex(info["main_thread"], r"^0x[0-9a-f]{16}$")
                stacks = os.path.join(run_dir, info["stacks"])
                self.assertEqual(os.path.getsize(stacks), 0)
                os.kill(p.pid, signal.SIGUSR2)
                self.assertTrue(_wait_for(lambda: "waiting_for_a_peer" in _read(stacks)))
                text = _read(stacks)
                # The main thread, by the id the process file gives, and where it waits.
                self.assertIn(f"thread {info['main_thread']} (most recent call first):", text)
                self.assertRegex(text, r'File "<string>", line \d+ in waiting_for_a_peer')
                self.assertIsNone(p.poll())  # the dump does not end the process
            finally:
                p.stdin.close()
                p.wait(timeout=20)
                p.stdout.close()
            self.assertEqual(p.returncode, 0)
            self.assertEqual(os.listdir(run_dir), [])


if __name__ == "__main__":
    unittest.main()
