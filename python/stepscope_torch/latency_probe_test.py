"""The latency probe over a real gloo group of one process: the payload, the probes kept after
the warm-up, each timed from its start to its end, and the least over the ranks."""
import itertools
import unittest

import torch
import torch.distributed as dist

from stepscope_torch.latency_probe import FLOATS, WARMUP, probe_latency
from stepscope_torch.ports import free_port


def setUpModule():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0,
                            world_size=1)


def tearDownModule():
    dist.destroy_process_group()


class Probe(unittest.TestCase):
    def test_each_kept_probe_is_timed_from_its_start_to_its_end(self):
        # A clock that moves 1 s between probes and (k + 1) ms across the k-th all-reduce.
        ticks = itertools.count()

        def now():
            i = next(ticks)
            return i // 2 + (i % 2) * (i // 2 + 1) * 1e-3

        probe = probe_latency(None, 1, torch.device("cpu"), 3, now=now)
        self.assertEqual(probe["bytes"], 4 * FLOATS)
        expected = [(k + 1) * 1e-3 for k in range(WARMUP, WARMUP + 3)]
        self.assertEqual(len(probe["seconds"]), 3)
        for got, want in zip(probe["seconds"], expected):
            self.assertAlmostEqual(got, want, places=9)
        self.assertIn("before the first step", probe["how"])

    def test_more_ranks_than_the_payloads_floats_send_one_float_each(self):
        # world is the group's size as the caller knows it; the payload follows it.
        probe = probe_latency(None, 1000, torch.device("cpu"), 1)
        self.assertEqual(probe["bytes"], 4 * 1000)
        self.assertGreaterEqual(probe["seconds"][0], 0)


if __name__ == "__main__":
    unittest.main()
