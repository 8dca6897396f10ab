"""The helper over real DistributedDataParallel jobs of three processes (gloo): the reduced
gradients, and so the trained parameters, are DDP's own bit for bit.

- Over all three ranks. With more than one process the timed hook averages the bucket itself
  (DDP copies it in undivided once any hook is registered); three is the smallest world in which
  a division by the world size and DDP's multiplication by its reciprocal round differently.
- Over groups of their own ({0, 1} and {2}), and with a bucket cap, so that DDP is rebuilt: the
  hook reduces over DDP's group and averages over its size, and the rebuilt DDP keeps the group.
"""
import atexit
import socket
import tempfile
import unittest

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from stepscope_torch.ddp_test import _job, _train
from stepscope_torch.session import _Session
from stepscope_torch.settings import read_settings

WORLD = 3


def _rank(rank, port, results, subgroups):
    """One process: the plain job, then the same job wrapped; puts (rank, the indices of the
    parameters that differ)."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD)
    torch.set_num_threads(1)
    group, env = None, {}
    if subgroups:
        groups = [dist.new_group([0, 1]), dist.new_group([2])]  # every rank makes every group
        group, env = groups[rank // 2], {"STEPSCOPE_BUCKET_MB": "0.01"}
    model, optimizer, loader = _job(rank=rank, group=group)
    _train(model, optimizer, loader)
    with tempfile.TemporaryDirectory() as tmp:
        settings = read_settings(dict(env, STEPSCOPE_RUN_DIR=tmp, STEPSCOPE_WARMUP_STEPS="0"))
        session = _Session(settings, *_job(rank=rank, group=group))
        atexit.unregister(session.finish)
        _train(session.model, session.optimizer, session.loader)
        session.recorder.close()
    differ = [i for i, (p, q) in enumerate(zip(model.parameters(), session.model.parameters()))
              if not torch.equal(p, q)]
    results.put((rank, differ))
    dist.destroy_process_group()


def _run(subgroups):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.get_context("spawn").SimpleQueue()
    mp.start_processes(_rank, args=(port, results, subgroups), nprocs=WORLD,
                       start_method="spawn")
    return dict(results.get() for _ in range(WORLD))


class ThreeRanks(unittest.TestCase):
    def test_training_is_ddps_own_bit_for_bit(self):
        self.assertEqual(_run(subgroups=False), {r: [] for r in range(WORLD)},
                         "parameters (by index) the helper changed, per rank")

    def test_over_groups_of_its_own_and_rebuilt(self):
        self.assertEqual(_run(subgroups=True), {r: [] for r in range(WORLD)},
                         "parameters (by index) the helper changed, per rank")


if __name__ == "__main__":
    unittest.main()
