"""The helper over real DistributedDataParallel jobs of three processes (gloo): the reduced
gradients, and so the trained parameters, are DDP's own bit for bit.

With more than one process the timed hook averages each bucket itself (DDP copies it in
unaveraged once any hook is registered), as DDP's default would: a gradient copied in is
multiplied by the reciprocal of the world size, one that already is the bucket's view
(`gradient_as_bucket_view`) is divided. Three is the smallest world in which the two round
differently.

- over all three ranks;
- with `gradient_as_bucket_view`, the script keeping its gradients between steps (the view is
  divided from the second step on) or setting them to None (always copied in), and each again
  accumulating two micro-batches, the first under `no_sync` (set to None, the gradient the
  reducing backward adds to is the script's own, not a view: copied in);
- over groups of their own ({0, 1} and {2}), with a bucket cap, so that DDP is rebuilt: the hook
  reduces over DDP's group and averages over its size, and the rebuilt DDP keeps the group;
- with a communication hook of the script's own (PyTorch's fp16 compression, PowerSGD),
  registered on the plain model and on the one `wrap` returns: it reduces inside the timed
  hook, and the gradient norms are still sampled;
- accumulating two micro-batches by the helper (STEPSCOPE_ACCUM=2) against the script that
  accumulates them itself (its loss halved, the first backward under `no_sync`), with and
  without gradients as the buckets' views: the hook folds the 1/2 into its average;
- through a step function (`wrap_step`), with and without gradients as the buckets' views: the
  norms are sampled when backward ends, before the function's update and zero_grad (which
  zeroes a view in place);
- clipping the gradients between backward and the update, with gradients as the buckets'
  views: the global norm sampled is the reduced gradient's before clipping (the norm
  `clip_grad_norm_` returns), as the local one is, not the clipped view's;
- reducing in fp16 with the wire error measured (STEPSCOPE_MEASURE_WIRE_ERROR=1) against the
  script reducing through PyTorch's fp16 compression hook: the same parameters (the fp32
  reduction beside it changes nothing), and a relative error of fp16's size.
"""
import atexit
import datetime
import json
import os
import tempfile
import unittest

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook

from stepscope_torch.ddp_test import _job, _train
from stepscope_torch.ddp_test import _train_accumulating as _train_accumulating_mean
from stepscope_torch.ports import free_port
from stepscope_torch.session import _Session
from stepscope_torch.settings import read_settings

WORLD = 3


def _zero_to_none(optimizer):
    zero = optimizer.zero_grad
    optimizer.zero_grad = lambda: zero(set_to_none=True)


def _train_accumulating(model, optimizer, loader):
    """Two micro-batches a step, the first under `no_sync`."""
    loss_fn = nn.CrossEntropyLoss()
    batches = iter(loader)
    for x, y in batches:
        optimizer.zero_grad()
        with model.no_sync():
            loss_fn(model(x), y).backward()
        x, y = next(batches)
        loss_fn(model(x), y).backward()
        optimizer.step()


def _train_clipping(model, optimizer, loader):
    """Clips every step's gradient to a norm of 1e-3 (in place: with gradients as the buckets'
    views, in the reduced buckets); returns the norms before clipping."""
    norms = []
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), 1e-3)))
        optimizer.step()
    return norms


def _misread_norms(path, every, norms):
    """The sampled steps of the records at `path` whose global norm is not `norms`' (the
    reduced gradient's, step by step)."""
    with open(path) as f:
        records = [json.loads(line) for line in f]
    return [("norm", i) for i, r in enumerate(records) if i % every == 0 and
            abs(r["global_grad_sq"] - norms[i] ** 2) > 1e-4 * norms[i] ** 2]


def _script_hook(case):
    """(state, hook) of the script's own communication hook for `case`, or None."""
    if case == "script_fp16":
        return None, default_hooks.fp16_compress_hook
    if case == "script_powersgd":
        return (powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                            start_powerSGD_iter=2), powerSGD_hook.powerSGD_hook)
    return None


def _unsampled_norms(path, every, world):
    """The steps of the records at `path` that should have sampled the norms but did not (a
    group of one reduces nothing: no norms)."""
    if world == 1:
        return []
    with open(path) as f:
        records = [json.loads(line) for line in f]
    return [i for i, r in enumerate(records) if i % every == 0 and
            not (r["local_grad_sq"] > 0 and r["global_grad_sq"] > 0)]


def _case(rank, case):
    """The plain job, then the same job wrapped, for `case` on this rank: (the indices of the
    parameters that differ, the steps whose norms were due but not sampled)."""
    ddp, env = {}, {}
    if case == "groups":
        groups = [dist.new_group([0, 1]), dist.new_group([2])]  # every rank makes every group
        ddp, env = {"process_group": groups[rank // 2]}, {"STEPSCOPE_BUCKET_MB": "0.01"}
    elif case.startswith("view"):
        ddp = {"gradient_as_bucket_view": True}
    if "helper_accumulating" in case:
        env = {"STEPSCOPE_ACCUM": "2"}
    if case == "wire_error":
        env = {"STEPSCOPE_REDUCE_DTYPE": "fp16", "STEPSCOPE_MEASURE_WIRE_ERROR": "1"}
    model, optimizer, loader = _job(rank=rank, **ddp)
    if case == "wire_error":  # the plain job reduces in fp16 as the helper does
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    with tempfile.TemporaryDirectory() as tmp:
        settings = read_settings(dict(env, STEPSCOPE_RUN_DIR=tmp, STEPSCOPE_WARMUP_STEPS="0"))
        if "step_function" in case:
            job = {}

            def train_step(x, y):
                job["optimizer"].zero_grad()
                nn.functional.cross_entropy(job["model"](x), y).backward()
                job["optimizer"].step()
                job["optimizer"].zero_grad()  # a view zeroed in place before the step returns

            wrapped_model, job["optimizer"], wrapped_loader = _job(rank=rank, **ddp)
            session = _Session(settings, wrapped_model, None, wrapped_loader, step=train_step)
            job["model"] = session.model
        else:
            session = _Session(settings, *_job(rank=rank, **ddp))
        atexit.unregister(session.finish)
        if _script_hook(case):
            model.register_comm_hook(*_script_hook(case))
            session.model.register_comm_hook(*_script_hook(case))
        if case.endswith("set_to_none"):
            _zero_to_none(optimizer)
            _zero_to_none(session.optimizer)
        if "step_function" in case:
            _train(model, optimizer, loader)
            for x, y in session.loader:
                session.step(x, y)
        elif "helper_accumulating" in case:
            _train_accumulating_mean(model, optimizer, loader)
            _train(session.model, session.optimizer, session.loader)
        elif "clipping" in case:
            _train_clipping(model, optimizer, loader)
            norms = _train_clipping(session.model, session.optimizer, session.loader)
        else:
            train = _train_accumulating if "accumulating" in case else _train
            train(model, optimizer, loader)
            train(session.model, session.optimizer, session.loader)
        if session.watchdog is not None:  # the next case's session runs in this process
            session.watchdog.stop()
        session.recorder.close()
        path = os.path.join(tmp, f"rank-{rank}.steps.jsonl")
        unsampled = _unsampled_norms(path, settings.grad_norm_every, session.recorder.world)
        if "clipping" in case:
            unsampled += _misread_norms(path, settings.grad_norm_every, norms)
        if case == "wire_error":
            # fp16 keeps 11 significant bits: a relative error of a few 1e-4, on the 2 sampled
            # steps of 6 (every 4th)
            w = session.recorder.wire_error
            relative = (w.error_sq / w.exact_sq) ** 0.5 if w.exact_sq > 0 else 0.0
            if not (w.steps == 2 and 0 < relative <= w.worst < 0.01):
                unsampled.append(f"wire error {relative} (worst {w.worst}) over {w.steps} steps")
    differ = [i for i, (p, q) in enumerate(zip(model.parameters(), session.model.parameters()))
              if not torch.equal(p, q)]
    return differ, unsampled


def _rank(rank, port, results, cases):
    """One process: every case in turn, in one process group (three interpreters importing
    torch cost seconds on a small host: once, not once a case); puts (case, rank, result) after
    each, the result the exception's text where the case raised."""
    # A rank lost ends the others' collectives in a minute, not the test's whole time limit.
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    torch.set_num_threads(1)
    for case in cases:
        try:
            result = _case(rank, case)
        except Exception as e:  # the other cases still run (the other ranks may time out)
            result = f"{type(e).__name__}: {e}"
        results.put((case, rank, result))  # written to the pipe before put returns
        dist.barrier()
    # Every rank done with the group (rank 0 holds its store), then out without the
    # interpreter's teardown: there PyTorch 1.13's gloo objects abort a process now and then
    # ("terminate called without an active exception", 2 runs in 12 of this test on a loaded
    # host, every rank's result already sent).
    os._exit(0)


def _run(cases):
    """{case: {rank: result}} of every case, run in one start of WORLD processes."""
    port = free_port()
    results = mp.get_context("spawn").SimpleQueue()
    mp.start_processes(_rank, args=(port, results, cases), nprocs=WORLD, start_method="spawn")
    out = {case: {} for case in cases}
    for _ in range(WORLD * len(cases)):
        case, rank, result = results.get()
        out[case][rank] = result
    return out


class ThreeRanks(unittest.TestCase):
    CASES = ("whole", "view", "view_set_to_none", "view_accumulating",
             "view_accumulating_set_to_none", "groups", "script_fp16", "script_powersgd",
             "step_function", "view_step_function", "view_clipping", "helper_accumulating",
             "view_helper_accumulating", "wire_error")

    @classmethod
    def setUpClass(cls):
        cls.results = _run(cls.CASES)

    def check(self, case):
        self.assertEqual(self.results[case], {r: ([], []) for r in range(WORLD)},
                         f"{case}: parameters (by index) the helper changed, and the steps "
                         "whose norms were not sampled, per rank (or the error that stopped it)")

    def test_training_is_ddps_own_bit_for_bit(self):
        self.check("whole")

    def test_with_gradients_as_the_buckets_views_kept_between_steps(self):
        self.check("view")

    def test_with_gradients_as_the_buckets_views_set_to_none(self):
        self.check("view_set_to_none")

    def test_with_gradients_as_views_accumulating(self):
        self.check("view_accumulating")

    def test_with_gradients_as_views_accumulating_set_to_none(self):
        self.check("view_accumulating_set_to_none")

    def test_over_groups_of_its_own_and_rebuilt(self):
        self.check("groups")

    def test_with_the_scripts_own_fp16_compression(self):
        self.check("script_fp16")

    def test_with_the_scripts_own_powersgd(self):
        self.check("script_powersgd")

    def test_through_a_step_function(self):
        self.check("step_function")

    def test_through_a_step_function_with_gradients_as_views(self):
        self.check("view_step_function")

    def test_clipping_with_gradients_as_views(self):
        self.check("view_clipping")

    def test_accumulating_by_the_helper(self):
        self.check("helper_accumulating")

    def test_with_gradients_as_views_accumulating_by_the_helper(self):
        self.check("view_helper_accumulating")

    def test_the_wire_error_against_the_same_buckets_reduced_in_fp32(self):
        self.check("wire_error")


if __name__ == "__main__":
    unittest.main()
