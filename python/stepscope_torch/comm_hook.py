"""DDP communication hooks that time every bucket's reduction (ready, start, end, bytes) and
implement the no-reduction ablation and the reduced-precision lever.

A hook is called by DDP when a bucket's gradients are all written: that moment is the rank's
arrival at the collective (`ready`). The reduction is launched at once (`start`), and its future's
callback, run by the backend when the reduction completes, stamps `end`.

The stamps are host times on CPU. On a CUDA device they are CUDA events (clock.py) and the
marks go to the step's StepMarks (marks.py) instead of the recorder: NCCL's future is completed
as soon as the reduction is queued, and its callback runs with current streams made to wait for
the reduction's kernels, so an event recorded there is reached when the reduction has ended on
the device, while a host time taken there would only say when it was queued.
"""
import functools

import torch
import torch.distributed as dist

from .recorder import now

WIRE_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def wire_dtype_for(requested, backend):
    """The precision the hook reduces in, and a note when it differs from the request (gloo has
    no bf16 all-reduce: fp16 stands in, the same bytes on the wire)."""
    if requested == "bf16" and backend == "gloo":
        return "fp16", "bf16 requested, but gloo cannot all-reduce bf16: reducing in fp16 instead"
    return requested, None


class TimedHook:
    """The hook's state: which recorder, which precision, whether to reduce at all. Registered
    as `model.register_comm_hook(TimedHook(...), timed_hook)`.

    `world` is the size of the DDP model's process group, `group` that group (None: the default
    one): the hook reduces over DDP's own group and averages over its size, as DDP does.
    `stamp` takes the marks (`now` on the host; a CUDA-event clock's `stamp`), `collectives`
    receives them (the recorder itself, or the step's StepMarks when stamps are resolved at the
    step's end); `all_reduce` launches the reduction (`dist.all_reduce` over `group`; the tests
    pass their own). The norms always go to the recorder.

    `divide`: how this step averages, as DDP's default would (which, once any hook is
    registered, copies into the bucket without averaging). It multiplies a gradient it copies
    in by the reciprocal of the world size, and divides one that already is the bucket's view
    (`gradient_as_bucket_view`, a gradient kept from the last step); at 3, 5, 6... ranks the
    two round differently. The session sets it at backward's start.

    `script`: a ScriptHook (script_hook.py), the script's own hook, registered after `wrap`;
    it then reduces each bucket in the helper's place (averaging as it does), between the
    bucket's `start` and `end`, unless the ablation asks for no reduction.

    `accum`: the micro-batches the helper accumulates into one step (accumulation.py); their
    summed gradient is averaged over them too. The fp32 reduction over several ranks folds 1/K
    into its average over the ranks (no pass of its own); every other path first makes the
    bucket the micro-batches' mean and goes on as for one. The local norm is the mean's."""

    divide = False
    script = None
    accum = 1
    # STEPSCOPE_MEASURE_WIRE_ERROR: on a sampled step, a reduced-precision bucket is also
    # reduced in fp32 (launched after the timed reduction, outside its record), for the
    # recorder to compare when backward ends (StepRecorder.compare_wire)
    measure_error = False

    def __init__(self, recorder, world, reduce=True, wire="fp32", stamp=now, collectives=None,
                 all_reduce=None, group=None):
        self.recorder = recorder
        self.world = world
        self.reduce = reduce
        self.wire = wire
        self.stamp = stamp
        self.collectives = collectives if collectives is not None else recorder
        # PyTorch's own function, not the wrapper that watches the script's calls
        # (script_collectives.py): the hook's calls are asynchronous, never marked
        self.all_reduce = all_reduce or functools.partial(
            getattr(dist.all_reduce, "__wrapped__", dist.all_reduce), group=group)

    def __call__(self, bucket):
        stamp = self.stamp
        ready = stamp()
        buffer = bucket.buffer()
        rec = self.recorder
        sampling = rec.sampling_norms
        fold = 1  # micro-batches whose average the reduction's own average takes in
        if self.accum > 1:
            if self.reduce and self.script is None and self.wire == "fp32" and self.world > 1:
                fold = self.accum
            else:
                buffer.mul_(1.0 / self.accum)
        if sampling:
            # The local gradient before the reduction overwrites it; kept as a tensor (no
            # synchronisation here), summed when the step's record is written.
            sq = torch.dot(buffer, buffer)
            rec.local_sq.append(sq if fold == 1 else sq / (fold * fold))
        if not self.reduce:
            # The ablation: every replica keeps its own gradient; nothing is on the wire.
            c = self.collectives.add_collective(0, ready)
            c.end = c.start
            fut = torch.futures.Future()
            fut.set_result(buffer)
            return fut
        if self.script is not None:
            return self._through_script(bucket, buffer, ready, sampling)
        if self.wire == "fp32":
            wire = buffer
            if self.world == 1:
                pass  # averaging over 1 is a pass over the bucket that changes nothing
            elif self.divide:
                wire.div_(self.world * fold)
            else:
                wire.mul_(1.0 / (self.world * fold))  # also half the cost of a division
        else:
            wire = buffer.to(WIRE_DTYPES[self.wire]).div_(self.world)
        if sampling:
            rec.reduced.append(buffer)  # holds the reduced gradient once the future completes
        exact = buffer.mul(1.0 / self.world) if (
            self.measure_error and sampling and wire is not buffer) else None
        c = self.collectives.add_collective(wire.numel() * wire.element_size(), ready)
        c.start = stamp()
        fut = self.all_reduce(wire, async_op=True).get_future()
        if exact is not None:
            rec.wire_exact.append((buffer, exact, self.all_reduce(exact, async_op=True)))
        if wire is buffer:
            def done(f):
                c.end = stamp()
                return f.value()[0]  # raises the reduction's error, if any
        else:
            def done(f):
                c.end = stamp()  # before the copy back, which is not the reduction
                buffer.copy_(f.value()[0])
                return buffer
        return fut.then(done)

    def _through_script(self, bucket, buffer, ready, sampling):
        """The script's hook reduces the bucket; its work (compression included) is timed as
        the reduction, from the call to the completion of the future it returns."""
        rec = self.recorder
        stamp = self.stamp
        c = self.collectives.add_collective(self.script.wire_bytes(buffer), ready)
        c.start = stamp()
        fut = self.script(bucket)

        def done(f):
            c.end = stamp()
            value = f.value()  # what DDP copies into the gradients, handed on unchanged
            if sampling:
                rec.reduced.append(value[0] if isinstance(value, (list, tuple)) else value)
            return value

        return fut.then(done)


def timed_hook(state, bucket):
    """The communication hook DDP calls for every bucket; `state` is a TimedHook."""
    return state(bucket)
