"""`wrap` and `wrap_step`: one rank's recording session over the user's model, optimizer (or
step function) and loader."""
import atexit
import dataclasses
import functools
import os
import socket
import sys
import time
import types
from collections.abc import Mapping

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .accumulation import Accumulation
from .clock import clock_for, model_device
from .comm_hook import TimedHook, timed_hook, wire_dtype_for
from .errors import HelperError, cause_line
from .latency_probe import probe_latency
from .loader import TimedLoader, rebuild
from .loss_capture import install as install_loss_capture, running_loss
from .marks import StepMarks
from .pickling import make_picklable
from .recorder import StepRecorder, now
from .reseed import reseed, reseed_loader
from .run_info import write_run_json
from .script_collectives import watch as watch_script_collectives
from .script_hook import ScriptHook, registered_hook
from .settings import read_settings
from .skipped_update import SkippedUpdates
from .stack_dump import stand_down_if_replaced
from .watchdog import Watchdog

# Data-parallel wrappers the helper does not measure: it refuses them rather than misread them.
UNSUPPORTED = ("FullyShardedDataParallel", "DataParallel", "ZeroRedundancyOptimizer",
               "PipelineParallel", "Pipe", "DistributedDataParallelCPU")

_ENGINE = torch.autograd.Variable._execution_engine


def _check_supported(model, optimizer, loader):
    if loader is None:
        raise HelperError(
            "stepscope_torch: the loader given to wrap is None; the helper times the wait for "
            "each batch and counts its examples from the loader, so give it the DataLoader, or "
            "for batches made by a function a generator over it, and take the batches from what "
            "wrap returns (docs/torch.md, A loader of any kind)")
    for obj, what in ((model, "model"), (optimizer, "optimizer")):
        name = type(obj).__name__
        if name in UNSUPPORTED:
            raise HelperError(
                f"stepscope_torch: the {what} is a {name}, which the helper does not measure "
                f"(only DistributedDataParallel, one process per device: docs/torch.md, Limits)")


def _world():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), dist.get_backend()
    return int(os.environ.get("RANK", "0")), 1, "none"


def _reduction_group(model, world):
    """The group a DDP model averages its gradients over, and its size (DDP's own
    `process_group`: the default one unless the script gave another)."""
    group = getattr(model, "process_group", None)
    if group is None or not dist.is_initialized():
        return None, world
    return group, dist.get_world_size(group)


def _rebuild_ddp(model, bucket_mb):
    """The same DistributedDataParallel over the same module with another bucket cap."""
    return DistributedDataParallel(
        model.module, device_ids=model.device_ids, output_device=model.output_device,
        dim=model.dim, broadcast_buffers=model.broadcast_buffers,
        process_group=model.process_group, bucket_cap_mb=bucket_mb,
        find_unused_parameters=model.find_unused_parameters,
        gradient_as_bucket_view=model.gradient_as_bucket_view,
        static_graph=model.static_graph)


def _averaging_probe(model, hook):
    """A call for backward's start that tells the timed hook how DDP's default would average
    this step's gradients, or None where it always multiplies. With `gradient_as_bucket_view`
    a gradient that already is its bucket's view (kept from the last step) is divided in place;
    any other (the first step, a script that sets gradients to None, one a `no_sync` backward
    made afresh) is multiplied by the reciprocal while copied in. One parameter's gradient
    tells: DDP made the view a view of the bucket; autograd makes a gradient of its own."""
    if hook is None or not getattr(model, "gradient_as_bucket_view", False):
        return None
    probe = next((p for p in model.parameters() if p.requires_grad), None)
    if probe is None:
        return None

    def note():
        grad = probe.grad
        hook.divide = grad is not None and grad._base is not None

    return note


def _grad_tensors(out):
    """The tensors in a forward's output (nested in lists, tuples, mappings and dataclasses)
    that need a gradient: backward reaches at least one of those the loss was computed from."""
    if isinstance(out, torch.Tensor):
        return [out] if out.requires_grad else []
    if isinstance(out, Mapping):
        out = list(out.values())
    elif dataclasses.is_dataclass(out) and not isinstance(out, type):
        out = [getattr(out, f.name) for f in dataclasses.fields(out)]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _grad_tensors(o)]
    return []


def _on_backward_start(output, mark):
    """Calls `mark(grad)` once, when backward reaches the first of the output's tensors: the
    first thing the model's backward computes. Hooks on every tensor that needs a gradient, as
    the loss may come from any of them (a model that returns indices and logits, or a dict
    whose first entry the loss does not use)."""
    tensors = _grad_tensors(output)
    if len(tensors) == 1:
        tensors[0].register_hook(mark)
        return
    pending = [True]

    def once(grad):
        if pending[0]:
            pending[0] = False
            mark(grad)

    for t in tensors:
        t.register_hook(once)


def _inner_step(optimizer):
    """What the timed step calls to update: the optimizer's class's `step`, or the step an LR
    scheduler made before `wrap` left on the instance (PyTorch's schedulers count the
    optimizer's steps by replacing `optimizer.step` with a counting wrapper), so that the
    scheduler keeps counting."""
    shadow = vars(optimizer).get("step")
    if shadow is None:
        return type(optimizer).step
    return lambda self_, *args, **kwargs: shadow(*args, **kwargs)


# The model's attribute that holds its session, for a later `wrap` of it (`_Session.again`).
SESSION_ATTR = "_stepscope_session"

# What a rank's failed reduction says when another rank is gone (gloo over TCP).
PEER_LOST = ("Connection closed by peer", "Connection reset by peer", "Broken pipe")


class _Session:
    """`clock` is for the tests; `wrap` lets the model's device choose it (clock.clock_for)."""

    def __init__(self, settings, model, optimizer, loader, clock=None, step=None):
        self.settings = settings
        self.t_enter = time.time()
        if settings.accum > 1 and step is not None:
            raise HelperError(
                f"stepscope_torch: STEPSCOPE_ACCUM={settings.accum} holds the optimizer's step, "
                "which a step function wrapped by wrap_step keeps inside; give the command an "
                "{accum} placeholder where the script takes its accumulation, or wrap the "
                "optimizer (docs/torch.md)")
        registered = registered_hook(model)  # None for a model that is not a DDP
        if registered:
            raise HelperError(
                f"stepscope_torch: the DDP model already has a communication hook "
                f"({registered}), which DDP does not hand back, so the helper cannot time it; "
                "register it after stepscope_torch.wrap, on the model wrap returns "
                "(docs/torch.md, Your own communication hook)")
        self.rank, self.world, backend = _world()
        stand_down_if_replaced()  # a SIGUSR2 handler of the script's own is never signalled
        # The gradients are averaged over DDP's group: the hook's average, the norms'
        # replicas and the bus bandwidth's ring all count its ranks.
        group, reduce_world = _reduction_group(model, self.world)
        os.makedirs(settings.run_dir, exist_ok=True)
        self.recorder = StepRecorder(os.path.join(settings.run_dir, f"rank-{self.rank}.steps.jsonl"),
                                     self.rank, reduce_world, settings.warmup_steps,
                                     settings.grad_norm_every)
        self.notes = []
        self.ddp = isinstance(model, DistributedDataParallel)
        if not self.ddp and self.world > 1:
            raise HelperError(
                f"stepscope_torch: the model is a {type(model).__name__}, not a "
                "DistributedDataParallel, in a job of several processes; wrap the DDP model "
                "(docs/torch.md)")
        if self.ddp and settings.bucket_mb is not None:
            # The script may wrap its own again (`again`): it knows this session too.
            original = make_picklable(model, attrs=(SESSION_ATTR,))
            setattr(original, SESSION_ATTR, self)
            model = _rebuild_ddp(model, settings.bucket_mb)
        self.bucket_mb = settings.bucket_mb if settings.bucket_mb is not None else (
            getattr(model, "bucket_bytes_cap", 25 * (1 << 20)) / (1 << 20) if self.ddp else 25.0)
        wire, note = wire_dtype_for(settings.reduce_dtype, backend)
        if note:
            self.notes.append(note)
            print(f"stepscope_torch: {note}", file=sys.stderr)
        self.wire = wire
        self.reduce = settings.variant != "no_reduce"
        # The clock, chosen once: CUDA events when the parameters are on a CUDA device, their
        # marks held by the step's StepMarks until its end; on the host the marks are taken
        # with `now()` and go straight to the recorder.
        self.clock = clock if clock is not None else clock_for(model)
        self.marks = StepMarks(self.clock) if self.clock.deferred else None
        self.timed_hook = None
        self.script_hook = None
        self.accumulation = Accumulation(settings.accum)
        if self.ddp:
            if self.marks is None:
                hook = TimedHook(self.recorder, reduce_world, reduce=self.reduce, wire=wire,
                                 group=group)
            else:
                hook = TimedHook(self.recorder, reduce_world, reduce=self.reduce, wire=wire,
                                 stamp=self.clock.stamp, collectives=self.marks, group=group)
            try:
                model.register_comm_hook(hook, timed_hook)
            except RuntimeError as e:
                raise HelperError(
                    "stepscope_torch: cannot time the reduction: the DDP model already has a "
                    f"communication hook ({e}); register yours after stepscope_torch.wrap "
                    "(docs/torch.md, Your own communication hook)") from e
            hook.accum = settings.accum
            hook.measure_error = settings.measure_wire_error
            self.timed_hook = hook
            # The script's own hook, registered on the returned model, runs inside this one.
            model.register_comm_hook = self._adopt_script_hook
            model._register_builtin_comm_hook = self._refuse_builtin_hook
        self.backend = backend
        self.model = model
        # The reduction's latency, probed over DDP's group before the first step (its wire
        # precision only: the model fits each precision on its own reductions).
        self.latency_probe = None
        if self.ddp and reduce_world > 1 and self.reduce and wire == "fp32" and \
                settings.latency_probes > 0:
            self.latency_probe = probe_latency(group, reduce_world, model_device(model),
                                               settings.latency_probes)
        # Pickled or copied, the model is the script's own, without what the helper adds to it
        # (pickling.py): its forward hooks (their handles' ids, added as they are registered)
        # and instance attributes.
        self._hook_ids = set()
        make_picklable(model, attrs=("zero_grad", "register_comm_hook",
                                     "_register_builtin_comm_hook", SESSION_ATTR),
                       hook_ids=self._hook_ids)
        # An iteration the script ends without the optimizer's update is a step of its own
        # (skipped_update.py); a step function's step ends when it returns, and under
        # STEPSCOPE_ACCUM the helper holds the zero_grad calls it would watch.
        self.skips = None
        if self.accumulation.active:
            self._install_accumulation(model)
        elif step is None:
            self.skips = SkippedUpdates(self.recorder)
            self._watch_zero_grad(model)
        # The reduced gradient's norm is taken when backward ends, before what the script does
        # to the gradients in place before its update (clipping them, GradScaler unscaling
        # them: with `gradient_as_bucket_view` those are the reduced buckets), so that it is
        # the same gradient as the local norm the hook took.
        self._dots = []  # the CUDA path's norm products, queued at backward's end
        self._install_model_hooks(model)
        self.optimizer = None
        self.step = None
        if step is None:
            self.optimizer_kind = type(optimizer).__name__.lower()
            self.optimizer = self._wrap_optimizer(optimizer) if self.marks is None \
                else self._wrap_optimizer_events(optimizer)
        else:
            self.optimizer_kind = "step_function"
            self.step = self._wrap_step(step)
        self.loader = self._timed_loader(loader, first=True)
        params = [p for p in model.parameters() if p.requires_grad]
        self.parameters = sum(p.numel() for p in params)
        self.gradient_bytes = sum(p.numel() * p.element_size() for p in params)
        # The gradients in the order DDP expects them ready (the reverse of the parameters' own
        # order, as its reducer first buckets them): the slices a bucket size groups.
        self.ready_slice_bytes = [p.numel() * p.element_size() for p in reversed(params)]
        self.t_startup_end = None
        self.failed = False
        # The script's own blocking collectives (a barrier, a loss averaged to log it:
        # script_collectives.py) are timed for the records' script_comm; a reduction, or one of
        # them, in flight for the stall timeout ends the run, naming the rank it waits for
        # (watchdog.py; the host clock's path: on a CUDA device NCCL's timeout applies). With
        # or without the helper's reductions.
        self.watchdog = None
        if self.ddp and self.world > 1 and self.marks is None:
            watch_script_collectives(self.recorder)
        # Alone (one process), its loader is watched: no other rank would notice it hang.
        alone = self.world == 1
        if (self.recorder.script_watched or alone) and settings.stall_timeout > 0:
            self.watchdog = Watchdog(self.recorder, settings.run_dir, self.rank,
                                     settings.stall_timeout, before_exit=self.recorder.close,
                                     alone=alone)
            self.watchdog.start()
        setattr(self.model, SESSION_ATTR, self)
        self._install_exit()

    def _timed_loader(self, loader, first):
        """The loader the script gets: rebuilt for a workers lever, reseeded under
        STEPSCOPE_SEED (the global generators only at the first `wrap`), timed."""
        settings = self.settings
        self.loader_workers = getattr(loader, "num_workers", 0)
        if settings.loader_workers is not None or settings.prefetch is not None:
            if not hasattr(loader, "collate_fn"):
                raise HelperError("stepscope_torch: STEPSCOPE_LOADER_WORKERS needs a "
                                  "torch.utils.data.DataLoader to rebuild; the loader is a "
                                  f"{type(loader).__name__}")
            workers = settings.loader_workers if settings.loader_workers is not None \
                else loader.num_workers
            loader = rebuild(loader, workers, settings.prefetch)
            self.loader_workers = workers
        if settings.seed is not None and first:
            reached = reseed(loader, settings.seed)
            self.notes.append(f"STEPSCOPE_SEED={settings.seed} reseeded {', '.join(reached)} "
                              "at wrap (the model's initial weights are the script's)")
        elif settings.seed is not None:
            reseed_loader(loader, settings.seed)
        return TimedLoader(loader, self.recorder, settings.variant == "synthetic_input",
                           settings.steps, self.notes)

    def again(self, optimizer, loader, step=None):
        """A later `wrap` (or `wrap_step`) of the model this session wraps, as a script that
        makes its loader each epoch calls it: the same session, its steps and their limit going
        on, over the new loader. Another optimizer or step function is refused: the helper
        measures one training loop."""
        if (self.step is None) != (step is None):
            raise HelperError(
                "stepscope_torch: the model was wrapped by "
                f"{'wrap_step' if self.step is not None else 'wrap'} already; call the same one "
                "again (with the same optimizer or step function and a new loader)")
        if step is None and optimizer is not self.optimizer:
            raise HelperError(
                "stepscope_torch: wrap was called again with another optimizer; the helper times "
                "one training loop: pass the optimizer of the first wrap (docs/torch.md, Limits)")
        if step is not None and step is not self.step and \
                step is not getattr(self.step, "__wrapped__", None):
            raise HelperError(
                "stepscope_torch: wrap_step was called again with another step function; the "
                "helper times one training loop: pass the function of the first wrap_step "
                "(docs/torch.md, Limits)")
        self.loader = self._timed_loader(loader, first=False)
        return self.model, self.optimizer if step is None else self.step, self.loader

    def _adopt_script_hook(self, state, hook):
        """The returned model's `register_comm_hook`: the script's hook, checked as DDP checks
        it, reduces every bucket inside the timed hook (script_hook.py)."""
        if self.script_hook is not None:
            raise RuntimeError("register_comm_hook can only be called once (DDP's rule: the "
                               f"model already reduces through {self.script_hook.name})")
        script = ScriptHook(state, hook)
        if self.settings.reduce_dtype != "fp32":
            raise HelperError(
                f"stepscope_torch: STEPSCOPE_REDUCE_DTYPE={self.settings.reduce_dtype} asks the "
                "helper for that precision on the wire, but the script reduces through its own "
                f"hook ({script.name}), whose precision the helper does not change; unset "
                "STEPSCOPE_REDUCE_DTYPE")
        check = getattr(DistributedDataParallel, "_check_comm_hook", None)
        if check is not None:
            check(self.model, hook)
        self.script_hook = script
        self.timed_hook.script = script
        if self.reduce:
            self.wire = script.wire
        else:
            self.notes.append(f"the script's communication hook {script.name} did not run: "
                              "the ablation of no reduction replaces it")

    def _refuse_builtin_hook(self, comm_hook_type):
        """The returned model's `_register_builtin_comm_hook`: DDP's C++ hooks cannot run
        inside the timed one; PyTorch's Python ones do the same and can."""
        raise HelperError(
            f"stepscope_torch: DDP's built-in hook {comm_hook_type} cannot run inside the "
            "helper's timed hook; register PyTorch's Python hook that does the same instead, "
            "after wrap (model.register_comm_hook(None, default_hooks.allreduce_hook) or "
            "default_hooks.fp16_compress_hook, from torch.distributed.algorithms."
            "ddp_comm_hooks; docs/torch.md, Your own communication hook)")

    # The model: forward timed by module hooks; backward's start by hooks on the outputs'
    # gradients (the first reached); backward's end (after DDP has waited for every bucket and
    # copied it back) by an autograd-engine callback queued from a callback, so that it runs
    # after DDP's own. On the host the marks are `now()` and go straight to the recorder. On
    # the CUDA path they are the same marks at the same places, taken as CUDA events (clock.py)
    # and held by self.marks; the step's end resolves them (the step's one synchronisation) and
    # replays them onto the recorder, which then writes the record as on the host. The hooks on
    # the outputs' gradients and the engine's callbacks run on autograd's device thread, each
    # event on that thread's current stream of the device.
    def _install_model_hooks(self, model):
        rec = self.recorder
        marks = self.marks
        if marks is None:
            take = now
            held = rec

            def forward(t0, t1):
                rec.add_forward(t1 - t0, t0)

            backward_start, backward_end_at = rec.mark_backward_start, rec.mark_backward_end
            take_norms = rec.sample_global_norm
        else:
            take = self.clock.stamp
            held = marks
            forward = marks.forward
            backward_start, backward_end_at = marks.backward_start, marks.backward_end

            def take_norms():
                dots = rec.queue_global_norm()  # none unless this backward reduced a sample
                if dots:
                    self._dots = dots

        state = {"t0": None}

        # A forward without gradients (an evaluation inside the loop) is not the step's compute:
        # it is left to the step's overhead.
        def pre(module, inputs):
            rec.begin_if_needed()
            if torch.is_grad_enabled():
                state["t0"] = take()
            else:
                state["t0"] = None
                rec.forwards_without_grad += 1  # a sign of life for the stall watchdog

        def post(module, inputs, output):
            if torch.is_grad_enabled():
                forward(state["t0"], take())
                _on_backward_start(output, on_output_grad)

        note_averaging = _averaging_probe(model, self.timed_hook)

        counting = self.accumulation.on_backward if self.accumulation.active else None
        if self.skips is not None:
            counting = self.skips.on_backward_start

        def on_output_grad(grad):
            if not held.backward_open:  # the first output this backward reached
                if counting is not None:
                    counting()
                loss = running_loss()
                if loss is not None:
                    rec.losses.append(loss)
            backward_start(take())
            if note_averaging is not None:
                note_averaging()
            _ENGINE.queue_callback(lambda: _ENGINE.queue_callback(backward_end))
            return None

        def backward_end():
            backward_end_at(take())
            take_norms()
            rec.compare_wire()

        self._hook_ids.add(model.register_forward_pre_hook(pre).id)
        self._hook_ids.add(model.register_forward_hook(post).id)
        install_loss_capture()

    def _install_accumulation(self, model):
        """STEPSCOPE_ACCUM (accumulation.py): DDP's reduction left to the step's last
        micro-batch, and the model's zero_grad held within a step (the optimizer's is held by
        its wrapper)."""
        acc = self.accumulation
        if self.ddp:
            self._hook_ids.add(model.register_forward_pre_hook(
                lambda module, inputs: acc.before_forward(module)).id)
        zero_grad = model.zero_grad

        def held_zero_grad(*args, **kwargs):
            if not acc.holds_zero_grad():
                zero_grad(*args, **kwargs)

        model.zero_grad = held_zero_grad

    def _subclass(self, optimizer, step):
        """The optimizer as an instance of a subclass of its own class with `step` timed, so
        that optimizer.step stays a bound method (LR schedulers wrap it); under STEPSCOPE_ACCUM
        its `step` and `zero_grad` are held within a step."""
        base = type(optimizer)
        methods = {"step": step}
        acc = self.accumulation
        if acc.active:
            average = None if self.ddp else acc.average  # DDP's hook averages

            def held_step(self_, *args, **kwargs):
                if acc.hold(args or kwargs.get("closure")):
                    return None
                if average is not None:
                    average(self_)
                return step(self_, *args, **kwargs)

            def zero_grad(self_, *args, **kwargs):
                if not acc.holds_zero_grad():
                    base.zero_grad(self_, *args, **kwargs)

            methods = {"step": held_step, "zero_grad": zero_grad}
        elif self.skips is not None:
            session = self

            def watched_zero_grad(self_, *args, **kwargs):
                session._end_skipped_update()
                return base.zero_grad(self_, *args, **kwargs)

            methods["zero_grad"] = watched_zero_grad
        make_picklable(optimizer, methods)  # pickled or copied, the script's own (pickling.py)
        if "step" in vars(optimizer):
            # An LR scheduler made before wrap replaced the instance's step with its counter,
            # which hides the class's: the timed step takes its place and calls it (_inner_step),
            # marked as counted, as the scheduler's own is, so that no scheduler counts twice.
            timed = methods["step"]

            def counted(self_, *args, **kwargs):
                return timed(self_, *args, **kwargs)

            counted._with_counter = True
            optimizer.step = types.MethodType(counted, optimizer)
        return optimizer

    def _wrap_optimizer(self, optimizer):
        session = self
        inner = _inner_step(optimizer)
        rec = self.recorder

        def step(self_, *args, **kwargs):
            if rec.backward_open:
                rec.mark_backward_end(now())  # no engine callback ran (should not happen)
                rec.sample_global_norm()
                rec.compare_wire()
            if session.t_startup_end is None:
                session.t_startup_end = time.time()
            t0 = now()
            out = inner(self_, *args, **kwargs)
            t1 = now()
            rec.end_step(t1 - t0, t1)
            return out

        return self._subclass(optimizer, step)

    def _wrap_optimizer_events(self, optimizer):
        session = self
        inner = _inner_step(optimizer)
        rec = self.recorder
        marks = self.marks
        clock = self.clock
        stamp = clock.stamp

        def step(self_, *args, **kwargs):
            if marks.backward_open:
                marks.backward_end(stamp())  # no engine callback ran (should not happen)
                session._dots = rec.queue_global_norm() or session._dots
            if session.t_startup_end is None:
                session.t_startup_end = time.time()
            t0 = stamp()
            out = inner(self_, *args, **kwargs)
            t1 = stamp()
            session._replay_marks()
            end = clock.seconds(t1)
            rec.end_step(end - clock.seconds(t0), end)
            return out

        return self._subclass(optimizer, step)

    def _replay_marks(self):
        """The CUDA path's step end, its last event just taken: the step's one wait, its marks
        replayed onto the recorder as host seconds, and the norm's products queued at backward's
        end read."""
        self.clock.resolve()  # waits for the step's last event
        self.marks.replay(self.recorder)
        self.recorder.set_global_norm(self._dots)
        self._dots = []

    def _watch_zero_grad(self, model):
        """The model's zero_grad ends a step whose update the script skipped
        (skipped_update.py); the optimizer's does so from its wrapper (_subclass). (The module
        inside a DDP model is left as it is: its zero_grad is not watched.)"""
        zero_grad = model.zero_grad

        def watched(*args, **kwargs):
            self._end_skipped_update()
            return zero_grad(*args, **kwargs)

        model.zero_grad = watched

    def _end_skipped_update(self):
        """At a zero_grad: ends the step if its update was skipped (skipped_update.py), with no
        optimizer time, at the draw of the next step's batch where that came first."""
        how = self.skips.at_zero_grad()
        if how is None:
            return
        rec = self.recorder
        end = self._marks_settled_now()
        carry = how == "at_last_draw"
        if carry:
            # Where the next batch's draw began; on a device that ran behind the host (its
            # backward still computing while the host drew the batch), at its backward's end.
            end = max(rec.last_draw[0], rec.backward_end if rec.backward_end is not None else 0.0)
        rec.end_step(0.0, end, update_skipped=True, carry_last_draw=carry)

    def _marks_settled_now(self):
        """Now, in host seconds, with the step's marks settled: a backward still open closed here
        (no engine callback ran: should not happen), and on the CUDA path the marks resolved
        (the step's one wait) and replayed onto the recorder."""
        if self.marks is None:
            end = now()
            if self.recorder.backward_open:
                self.recorder.mark_backward_end(end)
            return end
        t1 = self.clock.stamp()
        if self.marks.backward_open:
            self.marks.backward_end(t1)
        self._replay_marks()
        return self.clock.seconds(t1)

    def _wrap_step(self, step):
        """wrap_step's step function: a step ends when it returns. What it does after backward
        (the update, zero_grad, the script's own bookkeeping) is the record's `optimizer`."""
        session = self
        rec = self.recorder

        @functools.wraps(step)
        def timed(*args, **kwargs):
            rec.begin_if_needed()
            out = step(*args, **kwargs)
            if session.t_startup_end is None:
                session.t_startup_end = time.time()
            end = session._marks_settled_now()
            if rec.micro_batches == 0:
                raise HelperError(
                    "stepscope_torch: the step function wrap_step returned ran no forward of the "
                    "model it returned; the function must call that model (rebind the name it "
                    "uses: model, train_step, loader = stepscope_torch.wrap_step(model, "
                    "train_step, loader)), as the helper may have rebuilt it (docs/torch.md)")
            after = rec.backward_end if rec.backward_end is not None else end
            rec.end_step(end - after, end)
            return out

        return timed

    def _install_exit(self):
        previous = sys.excepthook

        def excepthook(kind, value, tb):
            if self._ended_by_step_limit(value):
                # A script that takes its batches with next() and counts its own steps stops at
                # the StopIteration of the loader the step limit ended: the run is over, and its
                # records are complete. Its exit is 0 (a process ended by an exception exits 1).
                print(f"stepscope_torch: rank {self.rank}: the step limit (STEPSCOPE_STEPS="
                      f"{self.settings.steps}) ended the loader, and the script stopped at its "
                      "StopIteration: the run is complete", file=sys.stderr)
                self.finish()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(0)
            self.failed = True
            self._say_failure(value)
            previous(kind, value, tb)

        sys.excepthook = excepthook
        atexit.register(self.finish)

    def _say_failure(self, error):
        """The line diagnose reports as the run's cause (`stepscope: rank R (host H): ...`) for
        an exception that stops the script. A rank whose reduction failed because another rank
        is gone says so in a line of its own: the cause is that other rank (its exception, or
        the signal PyTorch's launcher reports)."""
        if isinstance(error, KeyboardInterrupt):
            return
        text = str(error).strip().splitlines()
        first = text[0] if text else ""
        where = f"rank {self.rank} (host {socket.gethostname()})"
        if any(lost in str(error) for lost in PEER_LOST):
            print(f"stepscope_torch: {where}: a reduction failed at step {self.recorder.step}: "
                  f"another rank is gone ({first})", file=sys.stderr, flush=True)
            return
        print(cause_line(self.rank, f"the script stopped at step {self.recorder.step} with "
                                    f"{type(error).__name__}{': ' + first if first else ''}"),
              file=sys.stderr, flush=True)

    def _ended_by_step_limit(self, error):
        """The uncaught `error` is the loader's end at the step limit: a StopIteration (or what
        a generator makes of one) once the limit is reached."""
        if not self.loader.done:
            return False
        return isinstance(error, StopIteration) or (
            isinstance(error, RuntimeError) and isinstance(error.__cause__, StopIteration))

    def finish(self):
        if self.watchdog is not None:
            self.watchdog.stop()
        rec = self.recorder
        rec.close()
        if self.failed:
            return
        if rec.steps_written == 0:
            called = ("wrapped step function was never called (is the returned function the one "
                      "the script calls?)" if self.step is not None else
                      "wrapped optimizer's step() was never called (is the returned optimizer "
                      "the one the script steps?)")
            print(f"stepscope_torch: rank {self.rank} finished without completing a step: the "
                  f"{called}; no run.json written", file=sys.stderr)
            return
        if rec.draws == 0:
            print(f"stepscope_torch: rank {self.rank} finished {rec.steps_written} steps without "
                  "taking a batch from the loader wrap returned, so no example was counted and no "
                  "input timed; take the batches from the returned loader (docs/torch.md); no "
                  "run.json written", file=sys.stderr)
            return
        skipped, in_warmup = rec.skipped_updates
        if skipped:
            self._note(f"{skipped} of {rec.steps_written} steps ({in_warmup} of them in the "
                       "warm-up) ended without the optimizer's update (update_skipped: AMP's "
                       "GradScaler skips a step whose gradients hold an infinity, as a script may "
                       "one whose loss is not finite): they took their time and count in "
                       "samples/s, but trained nothing (docs/torch.md, Skipped updates)")
        if rec.steps_without_backward:
            self._note(f"in {rec.steps_without_backward} of {rec.steps_written} steps the helper "
                       "saw the model's forward but not its backward: the forward's output held "
                       "no tensor that needs a gradient in a tensor, tuple, list, mapping or "
                       "dataclass, or the loss was not computed from it; those steps' backward "
                       "is counted as overhead (docs/torch.md, What the helper records)")
        unseen, not_finite = rec.steps_without_loss
        if unseen:
            self._note(f"the loss of {unseen} of {rec.steps_written} steps was not seen (their "
                       "backward was not started by a one-element tensor's backward(): "
                       "torch.autograd.backward or .grad, or a backward(gradient)); their "
                       "records have no loss, and the reduced-precision lever's numerical check "
                       "cannot use the run (docs/torch.md, What the helper records)")
        if not_finite:
            self._note(f"the loss of {not_finite} of {rec.steps_written} steps was not finite; "
                       "their records have no loss")
        if self.rank == 0:
            write_run_json(self)

    def _note(self, note):
        """A note for run.json (which diagnose prints under the run), said in the log too."""
        self.notes.append(note)
        print(f"stepscope_torch: rank {self.rank}: {note}", file=sys.stderr)


def wrap(model, optimizer, loader):
    """Returns (model, optimizer, loader) to use instead of the script's own: the same objects,
    timed, with the ablation or lever diagnose asks for. Untouched without STEPSCOPE_RUN_DIR."""
    settings = read_settings()
    if not settings.active:
        return model, optimizer, loader
    _check_supported(model, optimizer, loader)
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise HelperError(
            f"stepscope_torch: wrap's second argument is a {type(optimizer).__name__}, not a "
            "torch.optim.Optimizer; for a step function that updates the model itself use "
            "stepscope_torch.wrap_step(model, train_step, loader) (docs/torch.md)")
    again = getattr(model, SESSION_ATTR, None)
    if again is not None:
        return again.again(optimizer, loader)
    s = _Session(settings, model, optimizer, loader)
    return s.model, s.optimizer, s.loader


def wrap_step(model, step, loader):
    """`wrap` for a script whose optimizer is out of reach (inside a step function, or a
    library's update): `step` is one training step, the forward, backward and update of the
    batch it is given; a step ends when it returns. Returns (model, step, loader) to use instead
    of the script's own. Untouched without STEPSCOPE_RUN_DIR."""
    settings = read_settings()
    if not settings.active:
        return model, step, loader
    _check_supported(model, None, loader)
    if not callable(step):
        raise HelperError(
            f"stepscope_torch: wrap_step's second argument is a {type(step).__name__}, not the "
            "function that makes one training step; for the optimizer use "
            "stepscope_torch.wrap(model, optimizer, loader) (docs/torch.md)")
    again = getattr(model, SESSION_ATTR, None)
    if again is not None:
        return again.again(None, loader, step=step)
    s = _Session(settings, model, None, loader, step=step)
    return s.model, s.step, s.loader
