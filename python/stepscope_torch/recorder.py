"""One rank's step records: the phases the wrappers time, assembled into stepscope's step-record
lines (docs/train-output.md, version 5) and appended to RUN_DIR/rank-R.steps.jsonl.

Times are time.perf_counter() seconds: CLOCK_MONOTONIC on Linux, one clock for every process of
a host, so the ranks of a one-host job are aligned without offsets.
"""
import json
import math
import threading
import time

RECORD_VERSION = 5
WRITE_EVERY = 64  # records held in memory before one write (and at close)


def now():
    return time.perf_counter()


class Collective:
    """One gradient bucket's reduction, written from the main thread (ready, start) and from the
    communication backend's thread (end)."""

    __slots__ = ("index", "bytes", "ready", "start", "end")

    def __init__(self, index, nbytes, ready):
        self.index = index
        self.bytes = nbytes
        self.ready = ready
        self.start = ready
        self.end = None


def _union_length(intervals):
    total = 0.0
    last_end = None
    for start, end in sorted(intervals):
        if last_end is None or start > last_end:
            total += end - start
            last_end = end
        elif end > last_end:
            total += end - last_end
            last_end = end
    return total


def _finite_or_unmeasured(sq):
    """A squared gradient norm, or -1 (not measured) where the gradient held an infinity or a
    NaN: a step AMP's GradScaler skips, a diverged one. JSON has no such numbers, and stepscope
    reads the record's norms as a sample of the gradient's noise."""
    return float(sq) if math.isfinite(sq) else -1.0


class WireError:
    """STEPSCOPE_MEASURE_WIRE_ERROR over a run: |G_wire - G_fp32|^2 and |G_fp32|^2 summed over
    the sampled steps, the largest relative error of one step, and how many steps."""

    def __init__(self):
        self.error_sq = self.exact_sq = self.worst = 0.0
        self.steps = 0

    def add(self, error_sq, exact_sq):
        if exact_sq > 0 and math.isfinite(error_sq) and math.isfinite(exact_sq):
            self.error_sq += error_sq
            self.exact_sq += exact_sq
            self.worst = max(self.worst, math.sqrt(error_sq / exact_sq))
            self.steps += 1

    def summary(self, dtype):
        """run.json's `wire_error` (docs/train-output.md), or None where nothing was measured."""
        if not self.steps:
            return None
        return {"dtype": dtype, "relative": math.sqrt(self.error_sq / self.exact_sq),
                "relative_max": self.worst, "steps": self.steps}


class StepRecorder:
    """Accumulates one step's phases; `end_step` writes its record."""

    def __init__(self, path, rank, world, warmup_steps, grad_norm_every):
        self.rank = rank
        self.world = world
        self.warmup_steps = warmup_steps
        self.grad_norm_every = grad_norm_every
        self._file = open(path, "w")
        self._pending = []
        self._lock = threading.Lock()
        self.step = 0
        self.epoch = 0
        self.steps_written = 0
        self.steps_without_backward = 0  # steps with a forward of the model and no backward seen
        self.skipped_updates = [0, 0]  # steps that ended without the update: all, in the warm-up
        self.steps_without_loss = [0, 0]  # steps whose loss was not seen, not finite
        self.wire_error = WireError()
        self.step_times = []  # (samples, seconds, warmup, micro-batches) of every step written
        self.buckets_per_step = 0
        self.draws = 0  # batches the loader gave
        self.step_draws = 0  # of them, the batches of the steps written
        self.last_draw = None  # (start, seconds, samples) of the latest
        self.drawing = None  # while the loader is asked for a batch: since when (watchdog.py)
        self.forwards_without_grad = 0  # the model's (an evaluation): signs of life (watchdog.py)
        # while the script is in a blocking collective of its own: (`dist.NAME`, since when)
        # (script_collectives.py, for watchdog.py)
        self.script_collective = None
        # True once those collectives are watched: each record then says how long the step was
        # blocked in them outside its phases (`script_comm`)
        self.script_watched = False
        self.script_counts = {}  # calls of each of them (by name) in the steps past the warm-up
        self._start = None
        self._reset()

    def _reset(self):
        self.input_wait = 0.0
        self.forward = 0.0
        self.samples = 0
        self.micro_batches = 0  # forward calls
        self.backwards = 0      # backward passes: the micro-batches, where backward was marked
        self.backward_start = None
        self.backward_end = None
        self.backward = 0.0
        self.exposed = 0.0
        self.collectives = []
        self.local_sq = []  # per bucket, before the reduction (tensors)
        self.reduced = []  # the buckets' buffers, reduced once their futures complete
        self.global_grad_sq = -1.0
        self.wire_exact = []  # (reduced bucket, its fp32 reduction, that reduction's work)
        self.wire_dots = []  # per bucket (|G_wire - G_fp32|^2, |G_fp32|^2), tensors
        self.losses = []  # the values the step's backward passes started from (tensors)
        self.script_calls = []  # (start, end, name) of the step's own blocking collectives
        # (start, end) of its input waits, forwards, backward passes, kept while script_calls
        # are watched (to leave out of script_comm)
        self.phases = []

    @property
    def step_start(self):
        """When the step in progress began (None before the first)."""
        return self._start

    def begin_if_needed(self):
        if self._start is None:
            self._start = now()

    @property
    def sampling_norms(self):
        """True on the steps whose gradient norms are measured (as train's --grad-norm-every)."""
        return self.world > 1 and self.grad_norm_every > 0 and \
            self.step % self.grad_norm_every == 0

    def add_input_wait(self, seconds, samples):
        """The loader gave a batch of `samples` after `seconds` of waiting, ending now."""
        self.begin_if_needed()
        self.input_wait += seconds
        self.samples += samples
        self.draws += 1
        start = now() - seconds
        self.last_draw = (start, seconds, samples)
        if self.script_watched:
            self.phases.append((start, start + seconds))

    def add_forward(self, seconds, start=None):
        """A forward of `seconds`; `start`, where given, places it (for `script_comm`)."""
        self.begin_if_needed()
        self.forward += seconds
        self.micro_batches += 1
        if start is not None and self.script_watched:
            self.phases.append((start, start + seconds))

    @property
    def backward_open(self):
        """A backward pass started and its end not marked yet."""
        return self.backward_start is not None and self.backward_end is None

    def mark_backward_start(self, t):
        """Backward reached the output of a forward. A second forward's output reached in the
        same backward pass (a model called twice for one loss) is not another micro-batch."""
        if not self.backward_open:
            self.backwards += 1
        self.backward_start = t
        self.backward_end = None
        self.collectives = []  # only the last micro-batch's backward reduces

    def add_collective(self, nbytes, ready):
        with self._lock:
            c = Collective(len(self.collectives), nbytes, ready)
            self.collectives.append(c)
        return c

    def mark_backward_end(self, t):
        """The backward call is over: gradients reduced and copied back by DDP. Backward
        computes until the last bucket's reduction is launched (the hook's own work on the
        bucket before it, averaging over the world size and sampling its norm, is the work DDP's
        default does while copying the gradients in: compute); from then the main thread waits
        for the reductions still in flight (exposed communication) until the last one ends; what
        follows (DDP copying the reduced buckets back into the gradients) is backward again."""
        if self.backward_start is None:
            return
        self.backward_end = t
        if self.script_watched:
            self.phases.append((self.backward_start, t))
        last_start = max((c.start for c in self.collectives), default=None)
        if last_start is None:
            self.backward += t - self.backward_start
            return
        last_end = max((c.end for c in self.collectives if c.end is not None), default=t)
        waited_until = min(t, max(last_start, last_end))
        self.backward += (last_start - self.backward_start) + (t - waited_until)
        self.exposed += waited_until - last_start

    def sample_global_norm(self):
        """The reduced gradient's squared norm, from the buckets the hook kept on a sampled
        step (one dot product per bucket); called before the optimizer changes them."""
        if self.reduced:
            self.global_grad_sq = _finite_or_unmeasured(
                sum(float(b.dot(b)) for b in self.reduced))
            self.reduced = []

    def compare_wire(self):
        """On a step whose buckets were also reduced in fp32 (the hook's `exact`), each reduced
        bucket's distance from its fp32 reduction: products queued as tensors, read when the
        record is written. Called when backward ends, after DDP has waited for every bucket."""
        for reduced, exact, work in self.wire_exact:
            work.wait()
            diff = reduced - exact
            self.wire_dots.append((diff.dot(diff), exact.dot(exact)))
        self.wire_exact = []

    def queue_global_norm(self):
        """`sample_global_norm` without waiting for the device (the CUDA path): the kept
        buckets' dot products, queued and returned as tensors for `set_global_norm` once the
        step's end has synchronised."""
        dots = [b.dot(b) for b in self.reduced]
        self.reduced = []
        return dots

    def set_global_norm(self, dots):
        """The squared norm from `queue_global_norm`'s products (none: not a sampled step)."""
        if dots:
            self.global_grad_sq = _finite_or_unmeasured(sum(float(x) for x in dots))

    def end_step(self, optimizer_seconds, end, update_skipped=False, carry_last_draw=False):
        """Writes the step's record; `end` is the end of the optimizer update. A step the script
        ended without the update (`update_skipped`: skipped_update.py) ends at `end`; with
        `carry_last_draw` the batch drawn last, at `end`, is the next step's."""
        self.begin_if_needed()
        carried = self.last_draw if carry_last_draw else None
        if carried is not None:
            self.input_wait -= carried[1]
            self.samples -= carried[2]
        start = self._start
        collectives = []
        for c in self.collectives:
            c_end = c.end if c.end is not None else end
            seconds = c_end - c.start
            busbw = 0.0
            if self.world > 1 and seconds > 0:
                busbw = c.bytes / seconds * 2 * (self.world - 1) / self.world / 1e9
            collectives.append({"index": c.index, "bytes": c.bytes, "ready": c.ready,
                                "start": c.start, "end": c_end, "busbw_gbps": busbw})
        compute = self.forward + self.backward + optimizer_seconds
        # A micro-batch is a backward pass (a model may run forward more than once for one);
        # where none was marked, a forward call.
        micro_batches = max(1, self.backwards or self.micro_batches)
        if self.micro_batches and not self.backwards:
            self.steps_without_backward += 1
        record = {
            "version": RECORD_VERSION, "rank": self.rank, "step": self.step,
            "epoch": self.epoch, "warmup": self.step < self.warmup_steps,
            "samples": self.samples, "micro_batches": micro_batches,
            "start": start, "end": end,
        }
        if self.backward_start is not None:
            record["backward_start"] = min(self.backward_start,
                                           min((c["ready"] for c in collectives), default=end))
        record.update({
            "input_wait": self.input_wait, "forward": self.forward, "backward": self.backward,
            "optimizer": optimizer_seconds, "compute": compute, "exposed_comm": self.exposed,
            "comm_busy": _union_length([(c["start"], c["end"]) for c in collectives]),
            "local_grad_sq": _finite_or_unmeasured(sum(float(x) for x in self.local_sq))
            if self.local_sq else -1.0,
            "global_grad_sq": self.global_grad_sq,
            "collectives": collectives,
        })
        if self.script_watched:
            record["script_comm"] = self._script_comm(start, end - optimizer_seconds, end)
            if not record["warmup"]:
                for _, _, name in self.script_calls:
                    self.script_counts[name] = self.script_counts.get(name, 0) + 1
        self._add_loss(record)
        if self.wire_dots:
            self.wire_error.add(sum(float(e) for e, _ in self.wire_dots),
                                sum(float(x) for _, x in self.wire_dots))
        if update_skipped:
            record["update_skipped"] = True
            self.skipped_updates[0] += 1
            self.skipped_updates[1] += int(record["warmup"])
        self._pending.append(json.dumps(record, separators=(",", ":")))
        if len(self._pending) >= WRITE_EVERY:
            self._flush()
        self.step_times.append((self.samples, end - start, record["warmup"], micro_batches))
        self.steps_written += 1
        self.buckets_per_step = len(collectives)
        self.step += 1
        self.step_draws = self.draws - (carried is not None)
        self._start = end
        self._reset()
        if carried is not None:
            self.input_wait, self.samples = carried[1], carried[2]

    def _script_comm(self, step_start, optimizer_start, end):
        """The step's time in its own blocking collectives outside its phases (a collective a
        model's forward or backward calls, SyncBatchNorm's, is that phase's compute), within
        the step (a barrier before the first step began is not the step's)."""
        phases = self.phases + [(optimizer_start, end)]
        outside = 0.0
        for start, stop, _ in self.script_calls:
            start, stop = max(start, step_start), min(stop, end)
            if stop <= start:
                continue
            inside = _union_length([(max(a, start), min(b, stop)) for a, b in phases
                                    if a < stop and b > start])
            outside += max(0.0, stop - start - inside)
        return min(outside, end - step_start)  # calls from two threads at once

    def _add_loss(self, record):
        """The step's loss: the mean of the values its backward passes started from (one per
        micro-batch; loss_capture.py). Left out where none was seen, or where it is not finite
        (JSON has no such number): both counted for run.json's notes."""
        if not self.losses:
            self.steps_without_loss[0] += 1
            return
        loss = sum(float(x) for x in self.losses) / len(self.losses)
        if math.isfinite(loss):
            record["loss"] = loss
        else:
            self.steps_without_loss[1] += 1

    def _flush(self):
        if self._pending:
            self._file.write("\n".join(self._pending) + "\n")
            self._file.flush()
            self._pending = []

    def close(self):
        if self._file.closed:
            return
        self._flush()
        self._file.close()
