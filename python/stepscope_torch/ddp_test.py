"""The helper over a real DistributedDataParallel model (one process, gloo): it leaves training
as the script wrote it, and the variables diagnose sets reach DDP and the DataLoader."""
import atexit
import contextlib
import copy
import dataclasses
import io
import json
import os
import socket
import sys
import tempfile
import unittest
import warnings
from collections import UserDict
from unittest import mock

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

import stepscope_torch
from stepscope_torch import loss_capture
from stepscope_torch.ports import free_port
from stepscope_torch.session import SESSION_ATTR, HelperError, _Session
from stepscope_torch.settings import read_settings

STEPS = 6


def setUpModule():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0,
                            world_size=1)


def tearDownModule():
    dist.destroy_process_group()


def _job(width=64, rank=0, **ddp):
    """A fresh DDP model (`ddp`: DistributedDataParallel's own arguments), its optimizer and
    loader, the same from the same seed; the data is each rank's own (rank 0's drawn after the
    model from the same seed)."""
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(16, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
        nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 3)), **ddp)
    if rank:
        torch.manual_seed(rank)
    data = TensorDataset(torch.randn(8 * STEPS, 16), torch.randint(0, 3, (8 * STEPS,)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, optimizer, DataLoader(data, batch_size=8)


def _train(model, optimizer, loader):
    """The script's loop; returns the batches it saw."""
    loss_fn = nn.CrossEntropyLoss()
    seen = []
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        seen.append(x.clone())
    return seen


def _train_accumulating(model, optimizer, loader, k=2):
    """The script's loop accumulating k micro-batches a step by itself, as scripts do: the
    loss divided by k, the first k-1 backward passes under DDP's `no_sync`."""
    loss_fn = nn.CrossEntropyLoss()
    batches = iter(loader)
    for x, y in batches:
        optimizer.zero_grad()
        for i in range(k):
            if i:
                x, y = next(batches)
            if i < k - 1 and isinstance(model, DistributedDataParallel):
                with model.no_sync():
                    (loss_fn(model(x), y) / k).backward()
            else:
                (loss_fn(model(x), y) / k).backward()
        optimizer.step()


@dataclasses.dataclass
class _Output:
    """A model's output as a dataclass."""
    indices: torch.Tensor
    unused: torch.Tensor
    logits: torch.Tensor


class _Encoding(UserDict):
    """A mapping that is not a dict (as HuggingFace's BatchEncoding)."""


class _Wrapped:
    """A session over a fresh job (or `job`: the model, optimizer and loader) in a temporary
    run directory, with `env` added."""

    def __init__(self, test, width=64, job=None, **env):
        tmp = tempfile.TemporaryDirectory()
        test.addCleanup(tmp.cleanup)
        test.addCleanup(setattr, sys, "excepthook", sys.excepthook)
        settings = read_settings(dict(env, STEPSCOPE_RUN_DIR=tmp.name,
                                      STEPSCOPE_WARMUP_STEPS="0"))
        self.session = _Session(settings, *(job or _job(width)))
        atexit.unregister(self.session.finish)
        self.path = os.path.join(tmp.name, "rank-0.steps.jsonl")

    def train(self):
        s = self.session
        return _train(s.model, s.optimizer, s.loader)

    def records(self):
        self.session.recorder.close()
        with open(self.path) as f:
            return [json.loads(line) for line in f]

    def run_json(self):
        """The run ended as at the script's exit (its notes said on stderr, kept quiet here):
        its run.json."""
        with contextlib.redirect_stderr(io.StringIO()):
            self.session.finish()
        with open(os.path.join(os.path.dirname(self.path), "run.json")) as f:
            return json.load(f)


class WrappedEachEpoch(unittest.TestCase):
    """A script that makes its loader each epoch and wraps the model, the optimizer and that
    loader each time: one session, its steps counted on under one step limit."""

    def environment(self, **env):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
        patch = mock.patch.dict(os.environ, dict(env, STEPSCOPE_RUN_DIR=tmp.name,
                                                 STEPSCOPE_WARMUP_STEPS="0"))
        patch.start()
        self.addCleanup(patch.stop)
        return tmp.name

    def adopt(self, model):
        """The session of a wrapped `model`, ended by the test instead of at exit."""
        session = getattr(model, SESSION_ATTR)
        atexit.unregister(session.finish)
        self.addCleanup(session.recorder.close)
        return session

    def epochs(self, model, optimizer, dataset, limit, wrap=True):
        """Three epochs, a loader made (and wrapped) at each; at most `limit` steps."""
        wrapped, seen = None, []
        for _ in range(3):
            loader = DataLoader(dataset, batch_size=8)
            m, o = model, optimizer
            if wrap:
                m, o, loader = stepscope_torch.wrap(model, optimizer, loader)
                if wrapped is None:
                    wrapped = m
                    self.adopt(m)
            for x, y in loader:
                if len(seen) == limit:
                    break
                o.zero_grad()
                nn.functional.cross_entropy(m(x), y).backward()
                o.step()
                seen.append(x.clone())
        return wrapped, seen

    def test_the_steps_go_on_under_one_limit_and_train_as_without_the_helper(self):
        run_dir = self.environment(STEPSCOPE_STEPS=str(2 * STEPS + 2))
        model, optimizer, loader = _job()
        wrapped, seen = self.epochs(model, optimizer, loader.dataset, limit=None)
        self.assertIs(wrapped, model)
        self.assertEqual(len(seen), 2 * STEPS + 2)  # the helper's limit ended the third epoch
        getattr(model, SESSION_ATTR).recorder.close()
        with open(os.path.join(run_dir, "rank-0.steps.jsonl")) as f:
            records = [json.loads(line) for line in f]
        self.assertEqual([r["step"] for r in records], list(range(2 * STEPS + 2)))
        self.assertEqual([r["epoch"] for r in records], [0] * STEPS + [1] * STEPS + [2, 2])
        plain, _, plain_loader = _job()
        plain_optimizer = torch.optim.SGD(plain.parameters(), lr=0.05, momentum=0.9)
        self.epochs(plain, plain_optimizer, plain_loader.dataset, 2 * STEPS + 2, wrap=False)
        for p, q in zip(plain.parameters(), model.parameters()):
            self.assertTrue(torch.equal(p, q), "the helper changed a parameter")

    def test_another_optimizer_or_the_other_wrap_is_refused(self):
        self.environment()
        model, optimizer, loader = _job()
        m, o, _ = stepscope_torch.wrap(model, optimizer, loader)
        self.adopt(m)
        self.assertIs(stepscope_torch.wrap(m, o, loader)[1], o)
        other = torch.optim.SGD(model.parameters(), lr=0.1)
        with self.assertRaisesRegex(HelperError, "wrap was called again with another optimizer"):
            stepscope_torch.wrap(model, other, loader)
        with self.assertRaisesRegex(HelperError, "the model was wrapped by wrap already"):
            stepscope_torch.wrap_step(model, lambda x, y: None, loader)

    def test_under_a_bucket_lever_the_scripts_own_model_finds_the_rebuilt_one(self):
        self.environment(STEPSCOPE_BUCKET_MB="1")
        model, optimizer, loader = _job()
        m, _, _ = stepscope_torch.wrap(model, optimizer, loader)
        self.adopt(m)
        self.assertIsNot(m, model)  # DDP rebuilt with the lever's bucket cap
        self.assertIs(stepscope_torch.wrap(model, optimizer, loader)[0], m)
        self.assertIs(stepscope_torch.wrap(m, optimizer, loader)[0], m)
        for saved in (model, m):  # pickled, neither holds the session
            buffer = io.BytesIO()
            torch.save(saved, buffer)
            buffer.seek(0)
            self.assertFalse(hasattr(torch.load(buffer), SESSION_ATTR))


class UnderDdp(unittest.TestCase):
    def test_an_exception_that_stops_the_script_is_said_with_its_rank_and_step(self):
        # The line diagnose reports as the run's cause; a rank that lost its peer says so in a
        # line that is not one (the cause is the other rank).
        run = _Wrapped(self)
        run.train()
        host = socket.gethostname()
        said = []
        for error in (ValueError("bad batch\nmore"), RuntimeError(
                "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:1"),
                KeyboardInterrupt()):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                sys.excepthook(type(error), error, None)
            said.append(err.getvalue().splitlines()[0] if err.getvalue() else "")
        self.assertEqual(said[0], f"stepscope: rank 0 (host {host}): the script stopped at step "
                                  f"{STEPS} with ValueError: bad batch")
        self.assertTrue(said[1].startswith(
            f"stepscope_torch: rank 0 (host {host}): a reduction failed at step {STEPS}: another "
            "rank is gone ([./gloo"), said[1])
        self.assertFalse(said[2].startswith("stepscope"), said[2])
        self.assertTrue(run.session.failed)

    def test_training_is_unchanged_bit_for_bit(self):
        model, optimizer, loader = _job()
        plain_batches = _train(model, optimizer, loader)
        run = _Wrapped(self)
        wrapped_batches = run.train()
        self.assertEqual(len(wrapped_batches), len(plain_batches))
        for a, b in zip(plain_batches, wrapped_batches):
            self.assertTrue(torch.equal(a, b))
        for p, q in zip(model.parameters(), run.session.model.parameters()):
            self.assertTrue(torch.equal(p, q), "the helper changed a parameter")
        for state_p, state_q in zip(optimizer.state.values(),
                                    run.session.optimizer.state.values()):
            self.assertTrue(torch.equal(state_p["momentum_buffer"],
                                        state_q["momentum_buffer"]))
        records = run.records()
        self.assertEqual(len(records), STEPS)
        for r in records:
            self.assertEqual(len(r["collectives"]), 1)  # 38 KiB of gradients: one bucket
            self.assertEqual(r["collectives"][0]["bytes"], run.session.gradient_bytes)

    def test_a_bucket_cap_rebuilds_ddp_with_more_buckets(self):
        # 2.1 MB of gradients: one bucket in the first step; from the second, DDP's rebuilt
        # buckets: its first one capped at 1 MiB, then the cap. At 25 MB (DDP's default) the
        # rest is one bucket; at 0.25 MB each 1 MiB layer closes one.
        for cap, buckets in ((None, [1056780, 1085440]), ("0.25", [1056780, 1050624, 34816])):
            env = {"STEPSCOPE_BUCKET_MB": cap} if cap else {}
            run = _Wrapped(self, width=512, **env)
            self.assertEqual(run.session.bucket_mb, float(cap or 25))
            run.train()
            records = run.records()
            self.assertEqual([c["bytes"] for c in records[0]["collectives"]],
                             [run.session.gradient_bytes])
            for r in records[1:]:
                self.assertEqual([c["bytes"] for c in r["collectives"]], buckets)
            # The slices the model groups for another bucket size (src/model/simulate_test.cc
            # groups these into the same buckets): the gradients in DDP's order.
            self.assertEqual(run.session.ready_slice_bytes,
                             [12, 6144, 2048, 1048576, 2048, 1048576, 2048, 32768])

    def test_fp16_on_the_wire_halves_the_bytes(self):
        run = _Wrapped(self, STEPSCOPE_REDUCE_DTYPE="fp16")
        run.train()
        for r in run.records():
            self.assertEqual(sum(c["bytes"] for c in r["collectives"]),
                             run.session.gradient_bytes // 2)
        for p in run.session.model.parameters():
            self.assertEqual(p.dtype, torch.float32)  # the gradients come back as fp32
            self.assertTrue(torch.isfinite(p).all())

    def test_the_no_reduction_ablation_puts_nothing_on_the_wire(self):
        run = _Wrapped(self, STEPSCOPE_VARIANT="no_reduce")
        run.train()
        for r in run.records():
            self.assertEqual([c["bytes"] for c in r["collectives"]], [0])
            self.assertEqual(r["exposed_comm"], 0.0)

    def test_the_scripts_own_hook_reduces_inside_the_timed_one(self):
        # Registered on the model wrap returns: training is the plain job's with the same hook,
        # and each bucket is timed; PyTorch's fp16 compression puts half the bytes on the wire,
        # PowerSGD's low-rank factors are counted at the bucket's bytes (its unit of cost).
        def powersgd():
            return powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                               start_powerSGD_iter=2)

        for make_state, hook, wire, bytes_per_value in (
                (lambda: None, default_hooks.fp16_compress_hook, "fp16", 2),
                (powersgd, powerSGD_hook.powerSGD_hook, "fp32", 4)):
            model, optimizer, loader = _job()
            model.register_comm_hook(make_state(), hook)
            _train(model, optimizer, loader)
            run = _Wrapped(self)
            run.session.model.register_comm_hook(make_state(), hook)
            run.train()
            for p, q in zip(model.parameters(), run.session.model.parameters()):
                self.assertTrue(torch.equal(p, q), f"{hook.__name__}: the helper changed a "
                                "parameter")
            values = run.session.parameters
            for r in run.records():
                (c,) = r["collectives"]
                self.assertEqual(c["bytes"], values * bytes_per_value)
                self.assertLess(c["start"], c["end"])
            run.session.finish()
            with open(os.path.join(os.path.dirname(run.path), "run.json")) as f:
                reducer = json.load(f)["config"]["reducer"]
            self.assertEqual((reducer["comm_hook"], reducer["dtype"], reducer["comm_hook_bytes"]),
                             (hook.__name__, wire, "wire" if bytes_per_value == 2 else "bucket"))

    def test_the_scripts_own_hook_is_refused_where_it_cannot_be_timed(self):
        model, optimizer, loader = _job()
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
        with tempfile.TemporaryDirectory() as tmp:
            run_dir = os.path.join(tmp, "run")
            with self.assertRaisesRegex(HelperError, r"already has a communication hook "
                                        r"\(fp16_compress_hook\).*register it after"):
                _Session(read_settings({"STEPSCOPE_RUN_DIR": run_dir}), model, optimizer, loader)
            self.assertFalse(os.path.exists(run_dir))  # refused before anything is written
        # Twice, as DDP refuses; with a precision asked of the helper, which it cannot apply.
        run = _Wrapped(self)
        run.session.model.register_comm_hook(None, default_hooks.allreduce_hook)
        with self.assertRaisesRegex(RuntimeError, "only be called once.*allreduce_hook"):
            run.session.model.register_comm_hook(None, default_hooks.fp16_compress_hook)
        with self.assertRaisesRegex(HelperError, "built-in hook .*FP16_COMPRESS.*register "
                                    "PyTorch's Python hook"):
            run.session.model._register_builtin_comm_hook(dist.BuiltinCommHookType.FP16_COMPRESS)
        run = _Wrapped(self, STEPSCOPE_REDUCE_DTYPE="bf16")
        with self.assertRaisesRegex(HelperError, "STEPSCOPE_REDUCE_DTYPE=bf16.*own hook "
                                    r"\(fp16_compress_hook\)"):
            run.session.model.register_comm_hook(None, default_hooks.fp16_compress_hook)

    def test_no_reduction_replaces_the_scripts_own_hook(self):
        calls = []

        def counting_hook(state, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
            calls.append(1)
            return default_hooks.allreduce_hook(state, bucket)

        run = _Wrapped(self, STEPSCOPE_VARIANT="no_reduce")
        run.session.model.register_comm_hook(None, counting_hook)
        run.train()
        self.assertEqual(calls, [])
        for r in run.records():
            self.assertEqual([c["bytes"] for c in r["collectives"]], [0])
        self.assertIn("counting_hook did not run", " ".join(run.session.notes))

    def test_backward_is_marked_whichever_output_the_loss_comes_from(self):
        # The model returns a tensor without a gradient and one the loss does not use before
        # the logits: backward's start is still marked, from the logits' gradient; in a dict,
        # in a mapping that is not one, or in a dataclass.
        for kind in (dict, _Encoding, _Output):
            self._check_backward_marked(kind)

    def test_what_wrap_returns_pickles_and_copies_as_the_scripts_own(self):
        # torch.save of the whole model or optimizer (and copy.deepcopy) failed under the helper:
        # its hooks and its optimizer class are closures over the session. Saved, loaded and
        # copied, they are the script's own classes, with none of the helper's hooks or
        # attributes, and the same parameters and optimizer state; the wrapped objects go on
        # being timed.
        for env in ({}, {"STEPSCOPE_ACCUM": "2"}):
            run = _Wrapped(self, **env)
            s = run.session
            s.model.register_comm_hook(None, default_hooks.allreduce_hook)
            run.train()
            for obj, base in ((s.model, DistributedDataParallel), (s.optimizer, torch.optim.SGD),
                              (s.model.module, nn.Sequential)):
                buffer = io.BytesIO()
                torch.save(obj, buffer)
                buffer.seek(0)
                for copied in (torch.load(buffer), copy.deepcopy(obj)):
                    what = f"{base.__name__} {env}"
                    self.assertIs(type(copied), base, what)
                    if base is torch.optim.SGD:
                        for p, q in zip(obj.state.values(), copied.state.values()):
                            self.assertTrue(torch.equal(p["momentum_buffer"],
                                                        q["momentum_buffer"]), what)
                        continue
                    self.assertEqual((len(copied._forward_pre_hooks),
                                      len(copied._forward_hooks)), (0, 0), what)
                    self.assertNotIn("zero_grad", vars(copied), what)
                    for p, q in zip(obj.parameters(), copied.parameters()):
                        self.assertTrue(torch.equal(p, q), what)
            written = s.recorder.steps_written
            run.train()
            self.assertGreater(s.recorder.steps_written, written)

    def test_a_backward_the_helper_cannot_see_is_said_in_run_json(self):
        # The loss is computed from an object of the script's own, in which the helper finds
        # no tensor to hook: the steps are recorded, their backward is overhead, and run.json's
        # notes say so.
        class Opaque:
            def __init__(self, logits):
                self.logits = logits

        class Outputs(nn.Module):
            def __init__(self, body):
                super().__init__()
                self.body = body

            def forward(self, x):
                return Opaque(self.body(x))

        model, optimizer, loader = _job()
        with tempfile.TemporaryDirectory() as tmp:
            session = _Session(read_settings({"STEPSCOPE_RUN_DIR": tmp}),
                               DistributedDataParallel(Outputs(model.module)), optimizer, loader)
            atexit.unregister(session.finish)
            self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
            for x, y in session.loader:
                session.optimizer.zero_grad()
                nn.functional.cross_entropy(session.model(x).logits, y).backward()
                session.optimizer.step()
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                session.finish()
            with open(os.path.join(tmp, "run.json")) as f:
                notes = json.load(f)["notes"]
        self.assertEqual(session.recorder.steps_written, STEPS)
        self.assertTrue(any(f"in {STEPS} of {STEPS} steps" in n and "not its backward" in n
                            for n in notes), notes)
        self.assertIn("not its backward", err.getvalue())

    def _check_backward_marked(self, kind):
        class Outputs(nn.Module):
            def __init__(self, body):
                super().__init__()
                self.body = body

            def forward(self, x):
                logits = self.body(x)
                return kind(indices=logits.argmax(1), unused=logits * 2, logits=logits)

        def job():
            model, optimizer, loader = _job()
            return DistributedDataParallel(Outputs(model.module)), optimizer, loader

        def train(model, optimizer, loader):
            for x, y in loader:
                optimizer.zero_grad()
                out = model(x)
                logits = out.logits if kind is _Output else out["logits"]
                nn.functional.cross_entropy(logits, y).backward()
                optimizer.step()

        model, optimizer, loader = job()
        train(model, optimizer, loader)
        with tempfile.TemporaryDirectory() as tmp:
            session = _Session(read_settings({"STEPSCOPE_RUN_DIR": tmp,
                                              "STEPSCOPE_WARMUP_STEPS": "0"}), *job())
            atexit.unregister(session.finish)
            self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
            train(session.model, session.optimizer, session.loader)
            session.recorder.close()
            with open(os.path.join(tmp, "rank-0.steps.jsonl")) as f:
                records = [json.loads(line) for line in f]
        for p, q in zip(model.parameters(), session.model.parameters()):
            self.assertTrue(torch.equal(p, q))
        self.assertEqual(len(records), STEPS)
        for r in records:
            self.assertIsNotNone(r.get("backward_start"), f"{kind.__name__}: backward not marked")
            self.assertGreater(r["backward"], 0)
            (c,) = r["collectives"]
            self.assertLessEqual(r["backward_start"], c["ready"])

    def test_each_step_records_the_loss_its_backward_started_from(self):
        # The loss is the value the script called backward on: one a step, the mean of the
        # micro-batches' where the script accumulates (each divided by 2, as it wrote them).
        # A backward the helper does not see (torch.autograd.backward; a backward from a
        # tensor of several elements) and a loss that is not finite leave the step without
        # one, and run.json's notes say how many.
        loss_fn = nn.CrossEntropyLoss()

        def plain(model, optimizer, loader):
            losses = []
            for x, y in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses

        def accumulating(model, optimizer, loader):
            losses, batches = [], iter(loader)
            for x, y in batches:
                optimizer.zero_grad()
                parts = []
                for i in range(2):
                    if i:
                        x, y = next(batches)
                    loss = loss_fn(model(x), y) / 2
                    loss.backward()
                    parts.append(loss.item())
                optimizer.step()
                losses.append(sum(parts) / 2)
            return losses

        def unseen_and_not_finite(model, optimizer, loader):
            for i, (x, y) in enumerate(loader):
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                if i == 0:
                    torch.autograd.backward(loss)
                elif i == 1:
                    model(x).backward(torch.ones(8, 3))
                elif i == STEPS - 1:
                    (loss * float("inf")).backward()
                else:
                    loss.backward()
                optimizer.step()
            return [None, None] + [True] * (STEPS - 3) + [None]

        for loop in (plain, accumulating, unseen_and_not_finite):
            run = _Wrapped(self)
            s = run.session
            losses = loop(s.model, s.optimizer, s.loader)
            notes = run.run_json()["notes"]
            recorded = [r.get("loss") for r in run.records()]
            if loop is unseen_and_not_finite:
                self.assertEqual([x is not None for x in recorded],
                                 [x is not None for x in losses])
                self.assertTrue(all(x > 0 for x in recorded if x is not None), recorded)
                self.assertTrue(any(f"the loss of 2 of {STEPS} steps was not seen" in n
                                    for n in notes), notes)
                self.assertTrue(any(f"the loss of 1 of {STEPS} steps was not finite" in n
                                    for n in notes), notes)
            else:
                self.assertEqual(recorded, losses, loop.__name__)
                self.assertFalse(any("the loss of" in n for n in notes), notes)

    def test_a_loss_gradscaler_scaled_is_recorded_unscaled(self):
        # GradScaler's scaled loss (CUDA only in PyTorch 1.13: here a scale of the same form)
        # carries the loss it scaled; a backward from it records that loss. A disabled scaler
        # (as on the CPU) hands back the loss itself.
        loss_capture.install()
        self.assertTrue(getattr(torch.cuda.amp.GradScaler.scale, loss_capture.SCALED_FROM))
        scale = loss_capture.remembering_scale(lambda scaler, loss: loss * 1024.0)
        weight = torch.tensor(3.0, requires_grad=True)
        loss = weight * 0.5
        seen = []
        weight.register_hook(lambda grad: seen.append((loss_capture.running_loss(), grad)))
        scale(None, loss).backward()
        self.assertEqual(float(seen[0][0]), 1.5)
        self.assertEqual(float(seen[0][1]), 512.0)  # the gradient of the scaled loss
        self.assertIsNone(loss_capture.running_loss())  # outside a backward
        disabled = torch.cuda.amp.GradScaler(enabled=False)
        self.assertIs(disabled.scale(loss), loss)

    def test_a_seed_reseeds_the_shuffle_order_and_the_global_generator(self):
        # STEPSCOPE_SEED (the reduced-precision check's reference run): a DistributedSampler's
        # order and torch's global generator (dropout) are reseeded at wrap, the model's
        # initial weights are not; the same seed twice is the same run, and the notes say it.
        def run(env):
            model, optimizer, loader = _job()
            initial = [p.detach().clone() for p in model.parameters()]
            loader = DataLoader(loader.dataset, batch_size=8,
                                sampler=torch.utils.data.DistributedSampler(loader.dataset))
            wrapped = _Wrapped(self, job=(model, optimizer, loader), **env)
            drawn = torch.rand(1).item()
            batches = wrapped.train()
            notes = wrapped.run_json()["notes"]
            return initial, drawn, [v for b in batches for v in b[:, 0].tolist()], notes

        torch.manual_seed(123)
        initial, drawn, plain, notes = run({})
        self.assertFalse(any("STEPSCOPE_SEED" in n for n in notes), notes)
        reseeded = run({"STEPSCOPE_SEED": "7"})
        again = run({"STEPSCOPE_SEED": "7"})
        self.assertNotEqual(sorted(plain), plain, "the sampler shuffles")
        self.assertNotEqual(reseeded[2], plain)
        self.assertEqual(sorted(reseeded[2]), sorted(plain))  # the same examples, reordered
        self.assertEqual(reseeded[1:3], again[1:3])
        for p, q in zip(initial, reseeded[0]):
            self.assertTrue(torch.equal(p, q))
        self.assertTrue(any("STEPSCOPE_SEED=7 reseeded the global generators, the "
                            "DistributedSampler's seed at wrap" in n for n in reseeded[3]),
                        reseeded[3])

    def test_the_helpers_accumulation_is_the_scripts_own(self):
        # STEPSCOPE_ACCUM=2 on the plain loop trains as the loop that accumulates two
        # micro-batches itself, bit for bit: with DDP, and with a model without it (averaged by
        # the optimizer's wrapper); the zero_grad held within a step is the optimizer's or the
        # model's, called before the forward or after the step.
        def zero_after_step_on_the_model(model, optimizer, loader):
            loss_fn = nn.CrossEntropyLoss()
            for x, y in loader:
                loss_fn(model(x), y).backward()
                optimizer.step()
                model.zero_grad()

        for plain, loop in ((False, _train), (False, zero_after_step_on_the_model),
                            (True, _train)):
            def job():
                model, optimizer, loader = _job()
                if plain:
                    model = model.module
                    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
                return model, optimizer, loader

            model, optimizer, loader = job()
            _train_accumulating(model, optimizer, loader)
            with tempfile.TemporaryDirectory() as tmp:
                session = _Session(read_settings({"STEPSCOPE_RUN_DIR": tmp, "STEPSCOPE_ACCUM": "2",
                                                  "STEPSCOPE_WARMUP_STEPS": "0"}), *job())
                atexit.unregister(session.finish)
                self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
                loop(session.model, session.optimizer, session.loader)
                session.finish()
                with open(os.path.join(tmp, "rank-0.steps.jsonl")) as f:
                    records = [json.loads(line) for line in f]
                with open(os.path.join(tmp, "run.json")) as f:
                    config = json.load(f)["config"]
            what = f"{'plain' if plain else 'DDP'} {loop.__name__}"
            for p, q in zip(model.parameters(), session.model.parameters()):
                self.assertTrue(torch.equal(p, q), f"{what}: the helper's accumulation differs")
            self.assertEqual(len(records), STEPS // 2, what)
            for r in records:
                self.assertEqual((r["samples"], r["micro_batches"]), (16, 2), what)
                self.assertEqual(len(r["collectives"]), 0 if plain else 1, what)
            self.assertEqual((config["batch"], config["accum"]), (8, 2), what)

    def test_accumulation_is_read_from_the_script_and_not_applied_twice(self):
        # A script that accumulates by itself: run.json says so (micro-batch 8, 2 a step);
        # asked to accumulate on top, the helper stops it with a message, as it does a step
        # that takes a closure.
        for env, loop, error in (
                ({}, _train_accumulating, None),
                ({"STEPSCOPE_ACCUM": "2"}, _train_accumulating, "accumulates by itself.*"
                 r"\{accum\} placeholder"),
                ({"STEPSCOPE_ACCUM": "2"},
                 lambda m, o, loader: [o.step(lambda: 0.0) for _ in loader], "closure")):
            run = _Wrapped(self, **env)
            s = run.session
            if error:
                with self.assertRaisesRegex(HelperError, error):
                    loop(s.model, s.optimizer, s.loader)
                s.recorder.close()
                continue
            loop(s.model, s.optimizer, s.loader)
            s.finish()
            with open(os.path.join(os.path.dirname(run.path), "run.json")) as f:
                config = json.load(f)["config"]
            self.assertEqual((config["batch"], config["accum"]), (8, 2))

    def test_an_iteration_whose_update_the_script_skips_is_a_step_of_its_own(self):
        # As AMP's GradScaler does where the gradients hold an infinity (and scripts that skip
        # the update of a step whose loss is not finite): no optimizer step in iterations 0 and
        # 3. Each iteration is one record (the skipped ones with no optimizer time), one
        # micro-batch of 8 samples, whether the script drops the gradients at the top of its
        # loop (after drawing the next batch) or after the update, through the optimizer or the
        # model; run.json reads no accumulation from a first step that skipped. Skips in a row
        # (iterations 0 to 2: GradScaler's first steps, while its scale settles) likewise.
        for skip in ({0, 3}, {0, 1, 2}):
            self._check_skipped_updates(skip)

    def _check_skipped_updates(self, skip):
        def train(model, optimizer, loader, zero_first, zero):
            for i, (x, y) in enumerate(loader):
                if zero_first:
                    zero(model, optimizer)
                nn.functional.cross_entropy(model(x), y).backward()
                if i not in skip:
                    optimizer.step()
                if not zero_first:
                    zero(model, optimizer)

        model, optimizer, loader = _job()
        train(model, optimizer, loader, True, lambda m, o: o.zero_grad())
        for zero_first, zero, what in (
                (True, lambda m, o: o.zero_grad(), "optimizer's zero_grad first"),
                (False, lambda m, o: o.zero_grad(), "optimizer's zero_grad last"),
                (True, lambda m, o: m.zero_grad(), "model's zero_grad first"),
                (False, lambda m, o: m.zero_grad(), "model's zero_grad last")):
            what = f"{what}, skipping {sorted(skip)}"
            run = _Wrapped(self)
            s = run.session
            train(s.model, s.optimizer, s.loader, zero_first, zero)
            for p, q in zip(model.parameters(), s.model.parameters()):
                self.assertTrue(torch.equal(p, q), what)
            s.finish()
            records = run.records()
            self.assertEqual([r.get("update_skipped", False) for r in records],
                             [i in skip for i in range(STEPS)], what)
            self.assertEqual({(r["samples"], r["micro_batches"]) for r in records}, {(8, 1)},
                             what)
            for r in records:
                self.assertEqual(r["optimizer"] == 0.0, r.get("update_skipped", False), what)
                self.assertGreater(r["backward"], 0.0, what)
                self.assertEqual(len(r["collectives"]), 1, what)
            for a, b in zip(records, records[1:]):
                self.assertEqual(a["end"], b["start"], what)  # the steps still tile the run
            with open(os.path.join(os.path.dirname(run.path), "run.json")) as f:
                doc = json.load(f)
            self.assertEqual((doc["config"]["batch"], doc["config"]["accum"]), (8, 1), what)
            self.assertTrue(any(n.startswith(f"{len(skip)} of {STEPS} steps (0 of them in the warm-up) "
                                             "ended without the optimizer's update")
                                for n in doc["notes"]), doc["notes"])

    def test_a_backward_after_the_update_before_the_next_batch_is_no_skipped_step(self):
        # A GAN's generator step runs backward through the wrapped discriminator after the
        # discriminator's update, then drops those gradients at the next iteration: one step
        # an iteration, none skipped.
        run = _Wrapped(self)
        s = run.session
        for x, y in s.loader:
            s.optimizer.zero_grad()
            nn.functional.cross_entropy(s.model(x), y).backward()
            s.optimizer.step()
            (-nn.functional.cross_entropy(s.model(x), y)).backward()
        records = run.records()
        self.assertEqual(len(records), STEPS)
        self.assertFalse(any(r.get("update_skipped") for r in records))

    def test_a_step_function_trains_as_written_and_is_timed(self):
        # wrap_step: the script's own step function (zero_grad, forward, backward, step) over
        # the model it returns; the step ends when the function returns.
        model, optimizer, loader = _job()
        _train(model, optimizer, loader)
        job = {}

        def train_step(x, y):
            job["optimizer"].zero_grad()
            nn.functional.cross_entropy(job["model"](x), y).backward()
            job["optimizer"].step()

        wrapped_model, job["optimizer"], wrapped_loader = _job()
        with tempfile.TemporaryDirectory() as tmp:
            session = _Session(read_settings({"STEPSCOPE_RUN_DIR": tmp,
                                              "STEPSCOPE_WARMUP_STEPS": "0"}),
                               wrapped_model, None, wrapped_loader, step=train_step)
            atexit.unregister(session.finish)
            self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
            self.assertIsNone(session.optimizer)
            self.assertEqual(session.step.__name__, "train_step")
            job["model"] = session.model
            for x, y in session.loader:
                session.step(x, y)
            session.finish()
            with open(os.path.join(tmp, "rank-0.steps.jsonl")) as f:
                records = [json.loads(line) for line in f]
            with open(os.path.join(tmp, "run.json")) as f:
                config = json.load(f)["config"]
        for p, q in zip(model.parameters(), session.model.parameters()):
            self.assertTrue(torch.equal(p, q), "the helper changed a parameter")
        self.assertEqual(len(records), STEPS)
        for r in records:
            self.assertEqual((r["samples"], r["micro_batches"], len(r["collectives"])), (8, 1, 1))
            self.assertTrue(r["start"] <= r["backward_start"] <= r["collectives"][0]["ready"]
                            <= r["end"])
            for phase in ("forward", "backward", "optimizer"):
                self.assertGreater(r[phase], 0, phase)
        self.assertEqual((config["optimizer"]["kind"], config["batch"], config["accum"]),
                         ("step_function", 8, 1))

    def test_wrap_and_wrap_step_tell_an_optimizer_from_a_step_function(self):
        model, optimizer, loader = _job()
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"STEPSCOPE_RUN_DIR": tmp}):
            with self.assertRaisesRegex(HelperError, "wrap's second argument is a function, not "
                                        "a torch.optim.Optimizer.*wrap_step"):
                stepscope_torch.wrap(model, lambda x, y: None, loader)
            with self.assertRaisesRegex(HelperError, "wrap_step's second argument is a SGD, not "
                                        "the function.*stepscope_torch.wrap\\("):
                stepscope_torch.wrap_step(model, optimizer, loader)
            self.assertEqual(os.listdir(tmp), [])  # refused before anything is written

    def test_a_loader_is_needed_and_must_be_drawn_from(self):
        # No loader (None): refused at wrap, whichever wrap. A loader the script never draws
        # from: the steps are recorded, but no example was counted, so no run.json (a run
        # diagnose reports failed, with this line in its log) rather than one of 0 samples/s.
        model, optimizer, loader = _job()
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"STEPSCOPE_RUN_DIR": tmp}):
            with self.assertRaisesRegex(HelperError, "loader given to wrap is None.*a "
                                        "generator over it"):
                stepscope_torch.wrap(model, optimizer, None)
            with self.assertRaisesRegex(HelperError, "loader given to wrap is None"):
                stepscope_torch.wrap_step(model, lambda x, y: None, None)
            self.assertEqual(os.listdir(tmp), [])
        run = _Wrapped(self)
        s = run.session
        for x, y in loader:  # the script's own loader, not the one wrap returned
            s.optimizer.zero_grad()
            nn.functional.cross_entropy(s.model(x), y).backward()
            s.optimizer.step()
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            s.finish()
        self.assertIn(f"finished {STEPS} steps without taking a batch from the loader wrap "
                      "returned", err.getvalue())
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(run.path), "run.json")))

    def test_a_step_function_that_cannot_be_measured_is_refused(self):
        # One that runs another model than the one returned (the helper may have rebuilt it);
        # accumulation by the helper, which would have to hold the update inside the function.
        other, optimizer, loader = _job()

        def train_step(x, y):
            optimizer.zero_grad()
            nn.functional.cross_entropy(other(x), y).backward()
            optimizer.step()

        for env, error in (({}, "ran no forward of the model it returned"),
                           ({"STEPSCOPE_ACCUM": "2"}, "STEPSCOPE_ACCUM=2 holds the optimizer's "
                            r"step.*\{accum\} placeholder")):
            with tempfile.TemporaryDirectory() as tmp:
                self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
                with self.assertRaisesRegex(HelperError, error):
                    session = _Session(read_settings(dict(env, STEPSCOPE_RUN_DIR=tmp)), *_job()[:1],
                                       None, loader, step=train_step)
                    atexit.unregister(session.finish)
                    x, y = next(iter(loader))
                    try:
                        session.step(x, y)
                    finally:
                        session.recorder.close()

    def test_an_lr_scheduler_made_before_or_after_wrap_is_kept(self):
        # PyTorch's schedulers count the optimizer's steps by replacing optimizer.step on the
        # instance; one made before wrap hid the timed step (no step was recorded). Either way
        # the steps are timed, the learning rates and parameters are the plain job's, and the
        # scheduler warns of nothing.
        def train(model, optimizer, loader, scheduler):
            lrs = []
            for x, y in loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
                scheduler.step()
                lrs.append(optimizer.param_groups[0]["lr"])
            return lrs

        def scheduler_of(optimizer):
            return torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

        model, optimizer, loader = _job()
        plain_lrs = train(model, optimizer, loader, scheduler_of(optimizer))
        for before in (True, False):
            job = _job()
            early = scheduler_of(job[1]) if before else None
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                session = _Session(read_settings({"STEPSCOPE_RUN_DIR": tmp,
                                                  "STEPSCOPE_WARMUP_STEPS": "0"}), *job)
                atexit.unregister(session.finish)
                self.addCleanup(setattr, sys, "excepthook", sys.excepthook)
                scheduler = early or scheduler_of(session.optimizer)
                lrs = train(session.model, session.optimizer, session.loader, scheduler)
                session.recorder.close()
                with open(os.path.join(tmp, "rank-0.steps.jsonl")) as f:
                    records = f.readlines()
            what = "made before wrap" if before else "made after wrap"
            self.assertEqual(len(records), STEPS, what)
            self.assertEqual(lrs, plain_lrs, what)
            for p, q in zip(model.parameters(), session.model.parameters()):
                self.assertTrue(torch.equal(p, q), what)
            self.assertEqual([str(w.message) for w in seen if "step()" in str(w.message)], [],
                             what)

    def test_loader_workers_rebuild_the_loader_with_the_same_batches(self):
        _, _, loader = _job()
        expected = [x for x, _ in loader]
        run = _Wrapped(self, STEPSCOPE_LOADER_WORKERS="1", STEPSCOPE_PREFETCH="3")
        inner = run.session.loader._loader
        self.assertEqual((inner.num_workers, inner.prefetch_factor), (1, 3))
        self.assertEqual(run.session.loader_workers, 1)
        seen = run.train()
        self.assertEqual(len(seen), len(expected))
        for a, b in zip(expected, seen):
            self.assertTrue(torch.equal(a, b))

    def test_synthetic_input_replays_the_first_batch(self):
        run = _Wrapped(self, STEPSCOPE_VARIANT="synthetic_input")
        seen = run.train()
        self.assertEqual(len(seen), STEPS)
        for x in seen[1:]:
            self.assertTrue(torch.equal(x, seen[0]))
        records = run.records()
        self.assertEqual([r["samples"] for r in records], [8] * STEPS)

    def test_the_step_limit_ends_the_loader(self):
        run = _Wrapped(self, STEPSCOPE_STEPS="4")
        self.assertEqual(len(run.train()), 4)
        self.assertEqual(len(run.records()), 4)


if __name__ == "__main__":
    unittest.main()
