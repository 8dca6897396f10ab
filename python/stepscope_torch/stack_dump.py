"""Where a process of the job is, on request: its Python stacks written when diagnose asks.

A rank stuck before `wrap` (in `init_process_group`, DDP's constructor, a loader that never
yields) is beyond the stall watchdog, which starts at `wrap`: diagnose ends such a run at
`--start-timeout` or `--run-timeout`. So that its message can say where each rank was, every
process that imports the helper under diagnose (STEPSCOPE_RUN_DIR set) leaves in the run's
folder

- `process-HOST-PID.json`: `pid`, `host`, `rank` (RANK from the launcher; null when the launcher
  sets none), `main_thread` (the main thread's id, as the dump names it) and `stacks` (the file
  below's name);
- `process-HOST-PID.stacks.txt`: empty until diagnose sends the process SIGUSR2; then Python's
  fault handler writes there every thread's stack (`faulthandler.register`, which writes from
  the signal handler itself, so a process stuck inside a C call answers too).

Both are removed when the process exits normally. A script that installs its own SIGUSR2
handler replaces this one: diagnose then says the process did not answer. Elsewhere (without
STEPSCOPE_RUN_DIR) nothing is armed.
"""
import atexit
import faulthandler
import json
import os
import signal
import socket
import threading

SIGNAL = signal.SIGUSR2


def _file_stem(host, pid):
    return f"process-{host}-{pid}"


def arm(env=None, pid=None):
    """Arms the dump for this process when `env` says it runs under diagnose. Returns the path of
    its process file, or None when nothing was armed (not under diagnose, or the folder cannot be
    written: the run goes on without it)."""
    env = os.environ if env is None else env
    run_dir = env.get("STEPSCOPE_RUN_DIR")
    if not run_dir:
        return None
    pid = os.getpid() if pid is None else pid
    host = socket.gethostname()
    stem = os.path.join(run_dir, _file_stem(host, pid))
    rank = env.get("RANK")
    try:
        stacks = open(stem + ".stacks.txt", "w")
        info = {"pid": pid, "host": host, "rank": int(rank) if rank and rank.isdigit() else None,
                "main_thread": f"0x{threading.main_thread().ident:016x}",
                "stacks": os.path.basename(stem + ".stacks.txt")}
        with open(stem + ".json.tmp", "w") as f:
            json.dump(info, f)
        os.replace(stem + ".json.tmp", stem + ".json")
    except OSError:
        return None
    faulthandler.register(SIGNAL, file=stacks, all_threads=True, chain=False)
    atexit.register(_disarm, stacks, stem, pid)
    return stem + ".json"


def disarm(env=None):
    """For a process that imported the helper but is not one of the script's (diagnose's
    launcher, `python -m stepscope_torch.run`): its files go, and SIGUSR2 is left as it was."""
    env = os.environ if env is None else env
    run_dir = env.get("STEPSCOPE_RUN_DIR")
    if run_dir:
        faulthandler.unregister(SIGNAL)
        _remove(os.path.join(run_dir, _file_stem(socket.gethostname(), os.getpid())))


def _disarm(stacks, stem, pid):
    """At a normal exit: the files go (a process gone has nothing to tell). Only in the process
    that armed them (a forked child inherits the exit handler, not the files)."""
    if os.getpid() != pid:
        return
    faulthandler.unregister(SIGNAL)
    stacks.close()
    _remove(stem)


def _remove(stem):
    for path in (stem + ".json", stem + ".stacks.txt"):
        try:
            os.remove(path)
        except OSError:
            pass
