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

from stepscope_torch.stack_dump import arm, thread_frames, where_in_script, where_is

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A process that arms the dump and then waits in a function of its own until its stdin closes
# (it prints its process file's path from inside that function, so the dump asked for after the
# line is read finds it there).
_STUCK = textwrap.dedent("""
    import sys
    from stepscope_torch.stack_dump import arm, thread_frames, where_in_script, where_is
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


# As Python 3.11's fault handler writes it: two threads, then the main thread asked again.
_DUMP = """Thread 0x00007f0762e116c0 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 327 in wait

Current thread 0x00007f0763c57b80 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 2036 in all_gather_object
  File "/job/train.py", line 60 in evaluate
  File "/job/train.py", line 90 in <module>
Current thread 0x00007f0763c57b80 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 3145 in barrier
  File "/job/train.py", line 64 in evaluate
  File "/job/train.py", line 90 in <module>
"""


class StackDumpText(unittest.TestCase):
    def test_the_last_dump_of_the_main_thread_read_as_the_scripts_line(self):
        frames = thread_frames(_DUMP, "0x00007f0763c57b80")
        self.assertEqual([f[1] for f in frames], [3145, 64, 90])
        self.assertEqual(where_in_script(frames),
                         "train.py line 64 in evaluate, inside barrier (distributed_c10d.py line "
                         "3145)")
        self.assertEqual(where_in_script(frames[1:]), "train.py line 64 in evaluate")
        self.assertEqual(where_in_script(thread_frames(_DUMP, "0x7f0762e116c0")),
                         "threading.py line 327 in wait")
        self.assertEqual(thread_frames(_DUMP, "0x1"), [])
        # The helper's loader between the script and PyTorch's is seen through.
        self.assertEqual(where_in_script([
            ("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", 628, "__next__"),
            ("/x/python/stepscope_torch/loader.py", 88, "__iter__"),
            ("/job/train.py", 60, "main")]),
            "train.py line 60 in main, inside __next__ (dataloader.py line 628)")
        self.assertEqual(where_in_script([]), "")


class StackDump(unittest.TestCase):
    def test_nothing_armed_outside_diagnose(self):
        self.assertIsNone(arm({}))

    def test_an_unwritable_folder_arms_nothing(self):
        self.assertIsNone(arm({"STEPSCOPE_RUN_DIR": "/nonexistent/stepscope-run"}))

    def test_a_handler_of_the_scripts_own_is_left_alone(self):
        # SIGUSR2 already the script's when it imports the helper: not armed, and said so.
        code = textwrap.dedent("""
            import json, signal
            signal.signal(signal.SIGUSR2, lambda *a: None)
            from stepscope_torch.stack_dump import arm
            with open(arm()) as f:
                print(json.load(f)["stacks"], signal.getsignal(signal.SIGUSR2).__name__)
        """)
        with tempfile.TemporaryDirectory() as run_dir:
            env = dict(os.environ, STEPSCOPE_RUN_DIR=run_dir, RANK="0",
                       PYTHONPATH=_HERE, PYTHONDONTWRITEBYTECODE="1")
            out = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                 capture_output=True, check=True).stdout
            self.assertEqual(out.split(), ["None", "<lambda>"])
            self.assertEqual(where_is(run_dir, 0), "")
            self.assertEqual(os.listdir(run_dir), [])  # removed at its exit

    def test_a_handler_the_script_installs_after_the_import_is_seen_and_kept(self):
        # SIGUSR2 made the script's between the import and wrap: the process file then says it
        # is not to be asked, and the exit leaves the script's handler where it is.
        code = textwrap.dedent("""
            import atexit, json, signal
            from stepscope_torch.stack_dump import _disarm, arm, stand_down_if_replaced
            import os, time
            def at_the_end():  # registered first, so run last: after the helper's exit handler
                os.kill(os.getpid(), signal.SIGUSR2)  # the default would end the process
                time.sleep(0.05)
                print("survived")
            atexit.register(at_the_end)
            path = arm()
            with open(path) as f:
                before = json.load(f)["stacks"]
            again = stand_down_if_replaced()  # nothing replaced yet
            signal.signal(signal.SIGUSR2, lambda *a: print("handled"))
            stood = stand_down_if_replaced()
            with open(path) as f:
                after = json.load(f)["stacks"]
            print(before is not None, again, stood, after, stand_down_if_replaced())
        """)
        with tempfile.TemporaryDirectory() as run_dir:
            env = dict(os.environ, STEPSCOPE_RUN_DIR=run_dir, RANK="0",
                       PYTHONPATH=_HERE, PYTHONDONTWRITEBYTECODE="1")
            out = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                 capture_output=True, check=True).stdout
            # the script's handler, still its own after the helper's exit handler ran
            self.assertEqual(out.split(),
                             ["True", "False", "True", "None", "True", "handled", "survived"])
            self.assertEqual(where_is(run_dir, 0), "")
            self.assertEqual(os.listdir(run_dir), [])

    def test_a_handler_the_script_installs_after_wrap_is_seen_by_the_watchdogs_next_tick(self):
        # The stall watchdog's tick (a second apart) stands the dump down too; until the script
        # installs its handler the process stays one to ask.
        code = textwrap.dedent("""
            import json, os, signal, tempfile
            from stepscope_torch.recorder import StepRecorder
            from stepscope_torch.stack_dump import arm
            from stepscope_torch.watchdog import Watchdog
            path = arm()
            rec = StepRecorder(os.path.join(os.environ["STEPSCOPE_RUN_DIR"], "steps.jsonl"),
                               0, 1, 0, 0)
            dog = Watchdog(rec, os.environ["STEPSCOPE_RUN_DIR"], 0, 10.0, alone=True)
            def stacks():
                with open(path) as f:
                    return json.load(f)["stacks"]
            dog.tick()
            before = stacks()
            signal.signal(signal.SIGUSR2, lambda *a: None)
            dog.tick()
            print(before is not None, stacks(), dog._stand_down)
            dog.stop()
            rec.close()
        """)
        with tempfile.TemporaryDirectory() as run_dir:
            env = dict(os.environ, STEPSCOPE_RUN_DIR=run_dir, RANK="0",
                       PYTHONPATH=_HERE, PYTHONDONTWRITEBYTECODE="1")
            out = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                                 capture_output=True, check=True).stdout
            self.assertEqual(out.split(), ["True", "None", "None"])
            self.assertEqual(where_is(run_dir, 0), "")

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
                # Asked by rank, as the stall watchdog asks the ranks it waits for.
                self.assertRegex(where_is(run_dir, 3), r"^<string> line \d+ in waiting_for_a_peer$")
                self.assertEqual(where_is(run_dir, 4), "")
            finally:
                p.stdin.close()
                p.wait(timeout=20)
                p.stdout.close()
            self.assertEqual(p.returncode, 0)
            self.assertEqual(os.listdir(run_dir), [])


if __name__ == "__main__":
    unittest.main()
