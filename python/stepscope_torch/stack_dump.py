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

Both are removed when the process exits normally. SIGUSR2 is the script's where it already has
a handler when the helper is imported (a scheduler's pre-emption notice, say): then nothing is
armed, the process file says so (`stacks` null) and the process is never sent the signal. One
the script installs after the import is seen at `wrap` (`stand_down_if_replaced`), or after
`wrap` by the stall watchdog within its tick (a second at most; watchdog.py): the process file
then says so too, and the script's handler is left in place at exit. Without a watchdog (its
timeout 0, or a job whose collectives are not watched), one installed after `wrap` replaces the
dump unseen: diagnose then says the process did not answer (having run the script's handler).
Elsewhere (without STEPSCOPE_RUN_DIR) nothing is armed.
"""
import atexit
import faulthandler
import json
import os
import re
import signal
import socket
import threading
import time

SIGNAL = signal.SIGUSR2

# A thread's heading and a frame of the dump, and the parts of a path that are not the script's
# own (the interpreter's library, installed packages, the helper, whose wrappers stand between
# the script and what it called): as sweep/process_stacks.cc reads them.
_HEAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-f]+)")
_FRAME = re.compile(r'^  File "(.*)", line (\d+) in (.*)$')
_HELPER = "/stepscope_torch/"
_LIBRARY = ("/site-packages/", "/dist-packages/", "/lib/python3", _HELPER)


def _file_stem(host, pid):
    return f"process-{host}-{pid}"


def _write_info(stem, info):
    """The process file, replaced whole (diagnose never reads half of one)."""
    with open(stem + ".json.tmp", "w") as f:
        json.dump(info, f)
    os.replace(stem + ".json.tmp", stem + ".json")


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
    # The script's own handler (installed before the helper was imported) is left alone.
    armed = signal.getsignal(SIGNAL) in (signal.SIG_DFL, None)
    try:
        stacks = open(stem + ".stacks.txt", "w") if armed else None
        info = {"pid": pid, "host": host, "rank": int(rank) if rank and rank.isdigit() else None,
                "main_thread": f"0x{threading.main_thread().ident:016x}",
                "stacks": os.path.basename(stem + ".stacks.txt") if armed else None}
        _write_info(stem, info)
    except OSError:
        return None
    if armed:
        faulthandler.register(SIGNAL, file=stacks, all_threads=True, chain=False)
    atexit.register(_disarm, stacks, stem, pid)
    return stem + ".json"


def _replaced():
    """SIGUSR2 has a Python handler: the script's own (the fault handler's is not Python's, so
    while it is armed the signal module still reports the default)."""
    return signal.getsignal(SIGNAL) not in (signal.SIG_DFL, None)


def stand_down_if_replaced(env=None, pid=None):
    """At `wrap`, and at every tick of the stall watchdog after it: where the script has
    installed a SIGUSR2 handler of its own since the dump was armed, the process file says the
    process is not to be asked (`stacks` null, as when the handler came first), so that diagnose
    never runs the script's handler. Returns True when the process file says so (now or
    before): nothing more to watch."""
    env = os.environ if env is None else env
    run_dir = env.get("STEPSCOPE_RUN_DIR")
    if not run_dir or not _replaced():
        return False
    pid = os.getpid() if pid is None else pid
    stem = os.path.join(run_dir, _file_stem(socket.gethostname(), pid))
    try:
        with open(stem + ".json") as f:
            info = json.load(f)
        if info.get("stacks") is not None:
            info["stacks"] = None
            _write_info(stem, info)
    except (OSError, ValueError):
        return False
    return True


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
    if stacks is not None:
        if not _replaced():  # unregistering would put back the default over the script's own
            faulthandler.unregister(SIGNAL)
        stacks.close()
    _remove(stem)


def _remove(stem):
    for path in (stem + ".json", stem + ".stacks.txt"):
        try:
            os.remove(path)
        except OSError:
            pass


def thread_frames(dump, thread_id):
    """The frames (file, line, function) of the thread `thread_id` ("0x..." as the process file
    gives it) in a fault handler's dump, innermost first; of the last dump, where the file holds
    several (the process was asked more than once)."""
    wanted = int(thread_id, 16)
    frames, inside = [], False
    for line in dump.splitlines():
        head = _HEAD.match(line)
        if head:
            inside = int(head.group(1), 16) == wanted
            if inside:
                frames = []
        elif inside:
            m = _FRAME.match(line)
            if m:
                frames.append((m.group(1), int(m.group(2)), m.group(3)))
    return frames


def where_in_script(frames):
    """The innermost frame in the script's own files and the call it made, in words ("train.py
    line 60 in evaluate, inside all_gather_object (distributed_c10d.py line 2036)"); the
    innermost frame when none is the script's; "" without frames."""
    def words(f):
        return f"{os.path.basename(f[0])} line {f[1]} in {f[2]}"

    for i, f in enumerate(frames):
        if not (any(part in f[0] for part in _LIBRARY) or f[0].startswith("<frozen")):
            if i == 0:
                return words(f)
            j = i - 1  # the call the script's line made; the helper's wrappers are seen through
            while j > 0 and _HELPER in frames[j][0]:
                j -= 1
            path, line, function = frames[j]
            return f"{words(f)}, inside {function} ({os.path.basename(path)} line {line})"
    return words(frames[0]) if frames else ""


def where_is(run_dir, rank, wait_s=1.0):
    """Where rank `rank` of the run in `run_dir` is, asked through its stack dump: its line in
    the script, in words; "" when it cannot be asked (no process file for it on this host, gone,
    or no answer within `wait_s`)."""
    host = socket.gethostname()
    for name in sorted(os.listdir(run_dir)):
        if not (name.startswith(f"process-{host}-") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(run_dir, name)) as f:
                info = json.load(f)
        except (OSError, ValueError):
            continue
        if info.get("rank") != rank or info.get("host") != host or not info.get("stacks"):
            continue
        stacks = os.path.join(run_dir, info["stacks"])
        try:
            os.kill(info["pid"], SIGNAL)
        except OSError:
            return ""
        end, size = time.monotonic() + wait_s, -1
        while time.monotonic() < end:  # written at once from the handler: done once it stays
            time.sleep(0.05)
            now = os.path.getsize(stacks) if os.path.exists(stacks) else 0
            if now and now == size:
                break
            size = now
        try:
            with open(stacks) as f:
                return where_in_script(thread_frames(f.read(), info["main_thread"]))
        except OSError:
            return ""
    return ""
