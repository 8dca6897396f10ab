"""The stall watchdog: a rank that has waited in a gradient all-reduce for STEPSCOPE_STALL_TIMEOUT
seconds (diagnose --stall-timeout, default 120) ends the run, naming the rank it waits for.

A reduction completes once every rank has launched it, so in a healthy job none stays in flight
for long: one that does waits for a rank that is stuck (a deadlocked loader, a hung device) or
busy alone (validating on rank 0 while the others train on). Without the watchdog such a run
waits for gloo's own timeout, 30 minutes, and then fails without saying which rank held it.

Each rank's watchdog thread writes, once a second, where its rank is to
RUN_DIR/rank-R.progress.json (step, phase, how long ago its last mark). The rank whose reduction
stalls reads the others' files and names the ranks it waits for: those not waiting in a
reduction (with their step and phase), and those whose file stopped being written (a process
frozen with the interpreter's lock held, or gone). It prints one line, `stepscope: rank R (host
H): ...`, the line diagnose reports as the run's cause, writes the records it holds, and exits;
PyTorch's launcher then ends the other ranks.

On a CUDA device the reductions' ends are events resolved at the step's end: a reduction in
flight cannot be seen from the host, and NCCL's own timeout (init_process_group's `timeout`)
applies instead.
"""
import json
import os
import socket
import sys
import threading
import time

from .recorder import now

STALL_EXIT_CODE = 3


def _phase(rec, t):
    """Where the rank's training thread is, in words, and since when (a time of `now()`), from
    what the recorder holds of the step in progress."""
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


class Watchdog:
    """One rank's watchdog over `recorder` (its collectives in flight; the CPU path's).

    `exit`, `clock` (now()), `wall` (time.time) and `say` are for the tests."""

    def __init__(self, recorder, run_dir, rank, timeout, exit=os._exit, clock=now,
                 wall=time.time, say=None, before_exit=None):
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
        self._stop = threading.Event()
        self._thread = None
        self.path = self.progress_path(rank)

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
        """Writes this rank's progress; ends the run when its reduction has stalled."""
        rec = self.recorder
        t = self._clock()
        where, since, waiting = _phase(rec, t)
        state = {"rank": self.rank, "host": self.host, "step": rec.step, "where": where,
                 "for_s": max(0.0, t - since), "waiting": waiting, "written": self._wall()}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, self.path)
        if waiting and t - since >= self.timeout:
            self._end(rec.step, where, t - since)

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

    def culprits(self):
        """The ranks this one waits for, in words."""
        stale_after = max(5.0, 5 * self.interval)
        words = []
        others = self._others()
        for rank in sorted(others):
            s = others[rank]
            silent = self._wall() - s["written"]
            if silent > stale_after:
                words.append(f"rank {rank} (host {s['host']}) has said nothing for {silent:.0f} s "
                              f"(last at step {s['step']}, {s['where']}): its process is frozen "
                              "or gone")
            elif not s["waiting"]:
                words.append(f"rank {rank} (host {s['host']}) is at step {s['step']}, "
                             f"{s['where']}, for the last {s['for_s']:.0f} s")
        if words:
            return "; ".join(words)
        if others:
            return ("every other rank waits in a reduction too: the ranks' collectives do not "
                    "match (one rank called a collective the others did not, or in another "
                    "order)")
        return "no other rank has reported its progress (none reached wrap, or their run " \
               "folder is not this one)"

    def _end(self, step, where, waited):
        self._say(f"stepscope: rank {self.rank} (host {self.host}): waited {waited:.0f} s at step "
                  f"{step} {where}; {self.culprits()}. The run is ended (stall timeout "
                  f"{self.timeout:g} s, diagnose --stall-timeout: raise it where a rank "
                  "legitimately works alone that long, such as validating on rank 0 while the "
                  "others train)")
        if self._before_exit is not None:
            self._before_exit()
        sys.stdout.flush()
        sys.stderr.flush()
        self._exit(STALL_EXIT_CODE)
