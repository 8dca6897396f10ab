"""The script's own blocking collectives marked on the recorder for their duration, over a
fake `torch.distributed` (the calls' blocking is the test's) and over the real one in a group
of one; asynchronous calls and nested ones left alone; a second session re-points the same
wrappers."""
import os
import tempfile
import threading
import types
import unittest

import torch
import torch.distributed as dist

from stepscope_torch import script_collectives
from stepscope_torch.ports import free_port
from stepscope_torch.recorder import StepRecorder


def fake_module():
    """A module with a blocking barrier (released by the test), an all_reduce taking async_op
    as its fourth parameter, and a broadcast_object_list that calls the barrier inside."""
    m = types.SimpleNamespace(release=threading.Event(), seen=[])

    def barrier(group=None, async_op=False, device_ids=None):
        m.seen.append(("barrier", m.rec.script_collective))
        if not async_op:
            m.release.wait(5)
        return "barrier done"

    def all_reduce(tensor, op=None, group=None, async_op=False):
        m.seen.append(("all_reduce", m.rec.script_collective))
        return "work" if async_op else None

    def broadcast_object_list(objects, src=0, group=None, device=None):
        m.seen.append(("broadcast_object_list", m.rec.script_collective))
        m.barrier()  # nested: the outer call is the one marked

    m.barrier, m.all_reduce, m.broadcast_object_list = barrier, all_reduce, broadcast_object_list
    return m


class ScriptCollectives(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def recorder(self, name="rank-0.steps.jsonl"):
        rec = StepRecorder(os.path.join(self.tmp.name, name), 0, 2, 0, 0)
        self.addCleanup(rec.close)
        return rec

    def test_a_blocking_call_is_marked_while_it_blocks(self):
        m = fake_module()
        m.rec = self.recorder()
        original = m.barrier
        self.assertEqual(script_collectives.watch(m.rec, m),
                         ["barrier", "all_reduce", "broadcast_object_list"])
        self.assertIs(m.barrier.__wrapped__, original)
        result = []
        caller = threading.Thread(target=lambda: result.append(m.barrier()))
        caller.start()
        while not m.seen:
            caller.join(0.01)
        name, since = m.rec.script_collective  # seen from another thread, as the watchdog does
        self.assertEqual(name, "dist.barrier")
        m.release.set()
        caller.join()
        self.assertEqual(result, ["barrier done"])  # the original's value, handed back
        self.assertIsNone(m.rec.script_collective)
        self.assertEqual(m.seen, [("barrier", ("dist.barrier", since))])
        # the call's span, for the step's script_comm
        self.assertTrue(m.rec.script_watched)
        [(start, end, name)] = m.rec.script_calls
        self.assertEqual(name, "dist.barrier")
        self.assertEqual(start, since)
        self.assertGreater(end, start)

    def test_asynchronous_and_nested_calls_are_not_marked_again(self):
        m = fake_module()
        m.rec = self.recorder()
        script_collectives.watch(m.rec, m)
        m.release.set()
        self.assertEqual(m.all_reduce(torch.zeros(1), None, None, True), "work")  # positional
        self.assertEqual(m.all_reduce(torch.zeros(1), async_op=True), "work")
        self.assertEqual(m.barrier(async_op=True), "barrier done")
        self.assertEqual([s for _, s in m.seen], [None, None, None])
        m.seen.clear()
        m.broadcast_object_list([1])
        self.assertEqual([(n, s and s[0]) for n, s in m.seen],
                         [("broadcast_object_list", "dist.broadcast_object_list"),
                          ("barrier", "dist.broadcast_object_list")])
        self.assertIsNone(m.rec.script_collective)

    def test_a_raising_call_is_unmarked_and_a_second_session_repoints_the_wrappers(self):
        m = fake_module()
        m.rec = self.recorder()
        script_collectives.watch(m.rec, m)
        wrapped = m.all_reduce
        with self.assertRaises(TypeError):
            m.all_reduce()  # the original's own error
        self.assertIsNone(m.rec.script_collective)
        m.rec = self.recorder("rank-0.again.jsonl")
        script_collectives.watch(m.rec, m)
        self.assertIs(m.all_reduce, wrapped)  # wrapped once
        m.all_reduce(torch.zeros(1))
        self.assertEqual(m.seen[-1][1][0], "dist.all_reduce")

    def test_over_the_real_torch_distributed(self):
        # Every blocking collective this PyTorch has is watched, with its signature's async_op
        # found; a real all_reduce in a group of one runs through the wrapper.
        names = [n for n in script_collectives.BLOCKING if hasattr(dist, n)]
        module = types.SimpleNamespace(**{n: getattr(dist, n) for n in names})
        rec = self.recorder()
        self.assertEqual(script_collectives.watch(rec, module), names)
        for n in ("barrier", "all_reduce", "broadcast", "all_gather"):
            self.assertIsNotNone(script_collectives._async_index(getattr(module, n).__wrapped__), n)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0,
                                world_size=1)
        try:
            t = torch.ones(3)
            module.all_reduce(t)
            self.assertTrue(torch.equal(t, torch.ones(3)))
            module.barrier()
        finally:
            dist.destroy_process_group()
        self.assertIsNone(rec.script_collective)


if __name__ == "__main__":
    unittest.main()
