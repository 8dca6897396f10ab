"""RUN_DIR/run.json for a helper-recorded job: the fields stepscope reads back
(docs/train-output.md, run.json), from what rank 0 saw. Written last, when the script ends
normally: its presence marks a finished run."""
import json
import os
import platform
import time

import torch


def _steady_throughput(step_times, world):
    steady = [(s, t) for s, t, warm, _ in step_times if not warm] or \
        [(s, t) for s, t, _, _ in step_times]
    seconds = sum(t for _, t in steady) / len(steady)
    samples = sum(s for s, _ in steady) / len(steady) * world
    return samples, seconds


def write_run_json(session):
    rec = session.recorder
    settings = session.settings
    samples_per_step, step_mean = _steady_throughput(rec.step_times, session.world)
    # The micro-batch and the micro-batches per step (accumulation: the script's own, or the
    # helper's under STEPSCOPE_ACCUM), from the first step.
    samples, _, _, accum = rec.step_times[0] if rec.step_times else (1, 0, False, 1)
    batch = max(1, round(samples / accum))
    doc = {
        "schema": "stepscope.run/1",
        "source": "stepscope_torch",
        "config": {
            "model": {"kind": "pytorch", "description": type(session.model).__name__},
            "optimizer": {"kind": session.optimizer_kind},
            "batch": batch,
            "accum": accum,
            "steps": rec.steps_written,
            "warmup_steps": settings.warmup_steps,
            # stepscope's loaders have at least one worker; a DataLoader's 0 (loading in the
            # main process) is one loader, waited for synchronously. The raw value beside it.
            "loader_workers": max(1, session.loader_workers),
            "dataloader_num_workers": session.loader_workers,
            "synthetic_input": settings.variant == "synthetic_input",
            "variant": settings.variant,
            "reducer": {"bucket_mb": session.bucket_mb, "overlap": True,
                        "reduce": session.reduce,
                        "dtype": session.wire if session.reduce else "fp32",
                        "allreduce": session.backend,
                        # The script's own communication hook, by name; None: the helper's
                        # (what DDP's default does, timed). Its bytes: "wire" where they are
                        # what it sends, "bucket" where they are the bucket's (script_hook.py).
                        "comm_hook": session.script_hook.name if session.script_hook else None,
                        "comm_hook_bytes": session.script_hook.bytes_are
                        if session.script_hook else None},
        },
        "model": {"description": type(getattr(session.model, "module", session.model)).__name__,
                  "parameters": session.parameters,
                  "gradient_bytes": session.gradient_bytes,
                  "flops_per_sample": 0, "activation_bytes_per_sample": 0,
                  "ready_slices_bytes": session.ready_slice_bytes},
        "replicas": session.world,
        "clock": {"offset_s": 0.0, "max_error_s": 0.0, "how": session.clock.how},
        "allreduce": session.backend if session.reduce else "none",
        "buckets_per_step": rec.buckets_per_step,
        "latency_probe": session.latency_probe,
        "steps": rec.steps_written,
        "steady_steps": sum(1 for _, _, warm, _ in rec.step_times if not warm),
        "samples_per_step": samples_per_step,
        "samples_per_s": samples_per_step / step_mean if step_mean > 0 else 0.0,
        "step_time_mean_s": step_mean,
        "wall_time_s": time.time() - session.t_enter,
        "startup_s": (session.t_startup_end or time.time()) - session.t_enter,
        "evaluation_s": 0.0,
        "notes": session.notes,
        # The script's own blocking collectives, by name: their calls in the steady steps
        # (rank 0's; a collective is called by every rank); absent where not watched.
        **({"script_collectives": dict(sorted(rec.script_counts.items()))}
           if rec.script_watched else {}),
        "wire_error": session.recorder.wire_error.summary(session.wire),
        "emulation": {"emulated": False},
        "software": {"pytorch": torch.__version__, "python": platform.python_version()},
    }
    path = os.path.join(settings.run_dir, "run.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
