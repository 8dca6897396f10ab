"""What diagnose (or the user) asks of the helper, read once from the environment.

Every variable is optional; without STEPSCOPE_RUN_DIR the helper records nothing and changes
nothing. A malformed value is an error naming the variable and what it accepts.
"""
import os
from dataclasses import dataclass
from typing import Optional

VARIANTS = ("baseline", "no_reduce", "synthetic_input")
REDUCE_DTYPES = ("fp32", "bf16", "fp16")


class SettingsError(ValueError):
    """A STEPSCOPE_* variable with a value the helper cannot use."""


@dataclass(frozen=True)
class Settings:
    run_dir: Optional[str] = None      # STEPSCOPE_RUN_DIR: where the records go; None: inert
    variant: str = "baseline"          # STEPSCOPE_VARIANT: baseline, no_reduce, synthetic_input
    bucket_mb: Optional[float] = None  # STEPSCOPE_BUCKET_MB: DDP bucket cap (rebuilds DDP)
    reduce_dtype: str = "fp32"         # STEPSCOPE_REDUCE_DTYPE: fp32, bf16, fp16 on the wire
    loader_workers: Optional[int] = None  # STEPSCOPE_LOADER_WORKERS: DataLoader num_workers
    prefetch: Optional[int] = None     # STEPSCOPE_PREFETCH: DataLoader prefetch_factor
    steps: Optional[int] = None        # STEPSCOPE_STEPS: the loader ends after this many steps
    accum: int = 1                     # STEPSCOPE_ACCUM: the script's iterations per step
    warmup_steps: int = 5              # STEPSCOPE_WARMUP_STEPS: marked warm-up in the records
    grad_norm_every: int = 4           # STEPSCOPE_GRAD_NORM_EVERY: steps between norm samples
    seed: Optional[int] = None         # STEPSCOPE_SEED: the job's randomness reseeded (reseed.py)
    measure_wire_error: bool = False   # STEPSCOPE_MEASURE_WIRE_ERROR=1: a reduced wire against fp32
    stall_timeout: float = 120.0       # STEPSCOPE_STALL_TIMEOUT: seconds in a reduction; 0: off
    latency_probes: int = 16           # STEPSCOPE_LATENCY_PROBES: small all-reduces at wrap; 0: none

    @property
    def active(self):
        return self.run_dir is not None


def _number(env, name, kind, low):
    text = env.get(name)
    if text is None or text == "":
        return None
    try:
        value = kind(text)
    except ValueError:
        raise SettingsError(f"{name}={text!r} is not a {'whole ' if kind is int else ''}number; "
                            f"unset it or give e.g. {name}={low if kind is int else 4.0}")
    if value < low:
        raise SettingsError(f"{name}={text!r} must be at least {low}")
    return value


def _choice(env, name, choices, default):
    text = env.get(name) or default
    if text not in choices:
        raise SettingsError(f"{name}={text!r} is not one of {', '.join(choices)}")
    return text


def read_settings(env=None):
    """The settings in `env` (default: os.environ). Raises SettingsError."""
    env = os.environ if env is None else env
    warmup = _number(env, "STEPSCOPE_WARMUP_STEPS", int, 0)
    every = _number(env, "STEPSCOPE_GRAD_NORM_EVERY", int, 0)
    bucket = _number(env, "STEPSCOPE_BUCKET_MB", float, 0)
    stall = _number(env, "STEPSCOPE_STALL_TIMEOUT", float, 0)
    probes = _number(env, "STEPSCOPE_LATENCY_PROBES", int, 0)
    if bucket is not None and bucket <= 0:
        raise SettingsError(f"STEPSCOPE_BUCKET_MB={env['STEPSCOPE_BUCKET_MB']!r} must be above 0")
    return Settings(
        run_dir=env.get("STEPSCOPE_RUN_DIR") or None,
        variant=_choice(env, "STEPSCOPE_VARIANT", VARIANTS, "baseline"),
        bucket_mb=bucket,
        reduce_dtype=_choice(env, "STEPSCOPE_REDUCE_DTYPE", REDUCE_DTYPES, "fp32"),
        loader_workers=_number(env, "STEPSCOPE_LOADER_WORKERS", int, 0),
        prefetch=_number(env, "STEPSCOPE_PREFETCH", int, 1),
        steps=_number(env, "STEPSCOPE_STEPS", int, 1),
        accum=_number(env, "STEPSCOPE_ACCUM", int, 1) or 1,
        warmup_steps=5 if warmup is None else warmup,
        grad_norm_every=4 if every is None else every,
        seed=_number(env, "STEPSCOPE_SEED", int, 0),
        measure_wire_error=_choice(env, "STEPSCOPE_MEASURE_WIRE_ERROR", ("0", "1"), "0") == "1",
        stall_timeout=120.0 if stall is None else stall,
        latency_probes=16 if probes is None else probes,
    )
