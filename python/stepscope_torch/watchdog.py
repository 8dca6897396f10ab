"""The stall watchdog: a rank that has waited in a gradient all-reduce, or in a blocking
collective of the script's own (`dist.barrier()`, a loss averaged to log it:
script_collectives.py), for STEPSCOPE_STALL_TIMEOUT seconds (diagnose --stall-timeout, default
120) ends the run, naming the rank it waits for.

A collective completes once every rank has called it, so in a healthy job none stays in flight
for long: one that does waits for a rank that is stuck (a deadlocked loader, a hung device) or
busy alone (validating on rank 0 while the others train on). Without the watchdog such a run
waits for gloo's own timeout, 30 minutes, and then fails without saying which rank held it.

Each rank's watchdog thread writes, once a second, where its rank is to
RUN_DIR/rank-R.progress.json (step, phase, how long it has been idle: no step, phase, batch or
forward call since). The rank whose reduction stalls reads the others' files and names the
ranks it waits for: those not waiting in a reduction (with their step and phase), and those
whose file stopped being written (a process frozen with the interpreter's lock held, or gone).
While one of them is still working (an evaluation through the model on rank 0 alone) it waits
on, saying so once; when none is, it prints one line, `stepscope: rank R (host H): ...`, the
line diagnose reports as the run's cause, writes the records it holds, and exits; PyTorch's
launcher then ends the other ranks.

On a CUDA device the reductions' ends are events resolved at the step's end: a reduction in
flight cannot be seen from the host, and NCCL's own timeout (init_process_group's `timeout`)
applies instead.

A process alone (one rank: no reduction, no other rank to notice it) is watched for one stall
only: a batch asked of its loader after the first step that has not come within the timeout (a
deadlocked loader worker). It ends the run the same way, naming where the script waits; it
writes no progress file (no other rank would read it).
"""
import json
import os
import socket
import sys
import threading
import time
import traceback

from .errors import cause_line
from .recorder import now
from .stack_dump import stand_down_if_replaced, where_in_script, where_is

STALL_EXIT_CODE = 3


def _phase(rec, t):
    """Where the rank's training thread is, in words, and since when (a time of `now()`), from
    what the recorder holds of the step in progress."""
    script = rec.script_collective
    if script is not None:
        return f"in the script's own {script[0]}", script[1], True
    waiting = [c for c in list(rec.collectives) if c.end is None]
    if waiting:
        c = min(waiting, key=lambda c: c.start)
        return f"in the gradient all-reduce of bucket {c.index}", c.start, True
    if rec.drawing is not None:
        return "waiting for a batch from its loader", rec.drawing, False
    if rec.backward_open:
        return "in its backward pass", rec.backward_start, False
    marks = [m for m in (rec.backward_end, rec.last_draw and rec.last_draw[0] + rec.last_draw[1],
                         rec.step_start) if m is not None]
    since = max(marks) if marks else t
    if rec.micro_batches > rec.backwards:
        return "after its forward pass (computing the loss, or its own code)", since, False
    return "outside the loader, forward and backward (its optimizer or its own code)", since, False


def _main_thread_frames():
    """The main thread's frames (file, line, function), innermost first, as a stack dump gives
    them."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    if frame is None:
        return []
    return [(f.filename, f.lineno, f.name) for f in reversed(traceback.extract_stack(frame))]


class Watchdog:
    """One rank's watchdog over `recorder` (its collectives in flight; the CPU path's).

    `alone`: the only process of the job (above). `exit`, `clock` (now()), `wall` (time.time),
    `say`, `ask` (where a rank is in its script: stack_dump.where_is), `stack` (the main
    thread's frames) and `stand_down` (stack_dump.stand_down_if_replaced: called every tick
    until it says the process is not to be asked, so that a SIGUSR2 handler the script installs
    after `wrap` is never signalled) are for the tests."""

    def __init__(self, recorder, run_dir, rank, timeout, exit=os._exit, clock=now,
                 wall=time.time, say=None, before_exit=None, ask=where_is, alone=False,
                 stack=None, stand_down=stand_down_if_replaced):
        self.recorder = recorder
        self.run_dir = run_dir
        self.rank = rank
        self.timeout = timeout
        self.interval = min(1.0, timeout / 10)
        self.host = socket.gethostname()
        self._exit = exit
        self._clock = clock
        self._wall = wall
        self._say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self._before_exit = before_exit
        self._ask = ask
        self.alone = alone
        self._stack = stack or _main_thread_frames
        self._stand_down = stand_down  # None once the process file says it is not to be asked
        self._stop = threading.Event()
        self._thread = None
        self.path = self.progress_path(rank)
        self._seen = None  # what the rank did, as of the last change seen
        self._active_at = clock()  # when it last changed
        self._held = False  # a stall held for a rank still working, said once

    def progress_path(self, rank):
        return os.path.join(self.run_dir, f"rank-{rank}.progress.json")

    def start(self):
        self._thread = threading.Thread(target=self._loop, name="stepscope-watchdog", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        try:
            os.remove(self.path)
        except OSError:
            pass

    def _loop(self):
        while not self._stop.wait(self.interval):
            try:
                self.tick()
            except Exception as e:  # the watchdog never takes the job down by its own error
                self._say(f"stepscope_torch: rank {self.rank}: the stall watchdog stopped: {e}")
                return

    def tick(self):
        """Writes this rank's progress; ends the run when its reduction has stalled and the
        ranks it waits for are idle too."""
        if self._stand_down is not None and self._stand_down():
            self._stand_down = None
        rec = self.recorder
        t = self._clock()
        if self.alone:  # no other rank reads its progress: only the loader is watched
            if rec.drawing is not None and rec.step >= 1 and t - rec.drawing >= self.timeout:
                at = where_in_script(self._stack())
                self._end(rec.step, "for a batch from its loader", t - rec.drawing,
                          "the job's only process, no other would notice"
                          + (f" (the script waits at {at})" if at else ""),
                          "a batch legitimately takes that long")
            return
        where, since, waiting = _phase(rec, t)
        # Activity: a step, a phase, a forward call of the model (with gradients: the step's
        # micro-batches; without: an evaluation through it) or a batch drawn since the last
        # change seen.
        evaluations = rec.forwards_without_grad
        if not waiting and self._seen is not None and evaluations != self._seen[3]:
            where = "evaluating (calling the model's forward without gradients)"
        seen = (rec.step, where, rec.micro_batches, evaluations, rec.draws)
        if seen != self._seen:
            self._seen, self._active_at = seen, t
        state = {"rank": self.rank, "host": self.host, "step": rec.step, "where": where,
                 "for_s": max(0.0, t - since), "idle_s": max(0.0, t - self._active_at),
                 "waiting": waiting, "written": self._wall()}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, self.path)
        if waiting and t - since >= self.timeout:
            words, working = self.culprits()
            if not working:
                # Ending: the ranks it waits for are asked where they are in the script.
                self._end(rec.step, where, t - since, self.culprits(ask=True)[0])
            elif not self._held:
                self._held = True
                self._say(f"stepscope_torch: rank {self.rank}: waited {t - since:.0f} s at step "
                          f"{rec.step} {where}, but {words}: waiting on (the run is ended once "
                          f"they are idle for {self.timeout:g} s)")

    def _others(self):
        """The other ranks' progress, by rank (their files; a file being replaced is skipped)."""
        others = {}
        for name in os.listdir(self.run_dir):
            if not (name.startswith("rank-") and name.endswith(".progress.json")):
                continue
            try:
                with open(os.path.join(self.run_dir, name)) as f:
                    state = json.load(f)
            except (OSError, ValueError):
                continue
            if state.get("rank") != self.rank:
                others[state["rank"]] = state
        return others

    def culprits(self, ask=False):
        """The ranks this one waits for, in words, and whether any of them is still working
        (active within the timeout: a rank validating alone through the model, say). With `ask`,
        each idle or silent one on this host is asked where it is in the script (its stack)."""
        stale_after = max(5.0, 5 * self.interval)
        words = []
        working = False
        others = self._others()

        def at(rank):
            where = self._ask(self.run_dir, rank) if ask else ""
            return f", at {where}" if where else ""

        for rank in sorted(others):
            s = others[rank]
            silent = self._wall() - s["written"]
            if silent > stale_after:
                words.append(f"rank {rank} (host {s['host']}) has said nothing for {silent:.0f} s "
                              f"(last at step {s['step']}, {s['where']}): its process is frozen "
                              f"or gone{at(rank)}")
            elif not s["waiting"]:
                idle = s.get("idle_s", s["for_s"])
                # Its activity is seen at its next tick and read here up to a tick later.
                if idle < self.timeout - 2 * self.interval:
                    working = True
                    words.append(f"rank {rank} (host {s['host']}) is still working at step "
                                 f"{s['step']}, {s['where']} (its last activity {idle:.0f} s "
                                 "ago)")
                else:
                    words.append(f"rank {rank} (host {s['host']}) is at step {s['step']}, "
                                 f"{s['where']}, idle for the last {idle:.0f} s{at(rank)}")
        if words:
            return "; ".join(words), working
        if others:
            ranks = sorted(others)
            where = ", ".join(f"rank {r} at step {others[r]['step']} {others[r]['where']}"
                              for r in ranks[:4])
            if len(ranks) > 4:
                where += f", and {len(ranks) - 4} more"
            return (f"every other rank waits in a collective too ({where}): the ranks' "
                    "collectives do not match (one rank called a collective the others did not, "
                    "or in another order)"), False
        return "no other rank has reported its progress (none reached wrap, or their run " \
               "folder is not this one)", False

    def _end(self, step, where, waited, culprits,
             legitimately="a rank legitimately works alone that long, such as saving a "
                          "checkpoint on rank 0 while the others train on"):
        self._say(cause_line(
            self.rank, f"waited {waited:.0f} s at step {step} {where}; {culprits}. The run is "
            f"ended (stall timeout {self.timeout:g} s, diagnose --stall-timeout: raise it where "
            f"{legitimately})"))
        if self._before_exit is not None:
            self._before_exit()
        sys.stdout.flush()
        sys.stderr.flush()
        self._exit(STALL_EXIT_CODE)
