"""stepscope's helper for a user's PyTorch DistributedDataParallel script.

Two lines in the script:

    import stepscope_torch
    model, optimizer, loader = stepscope_torch.wrap(model, optimizer, loader)

or, where the optimizer is out of reach inside the script's step function,

    model, train_step, loader = stepscope_torch.wrap_step(model, train_step, loader)

Under `stepscope diagnose --torch` (STEPSCOPE_RUN_DIR set) every rank writes its steps to
RUN_DIR/rank-R.steps.jsonl in stepscope's own record format, and rank 0 writes RUN_DIR/run.json
when the script ends normally. Without STEPSCOPE_RUN_DIR, `wrap` returns its arguments untouched.
docs/torch.md has the whole story: what is measured, the ablations and levers (environment
variables), and the limits.
"""
from .own_processes import refuse_under_launcher
from .settings import Settings, SettingsError, read_settings
from .session import HelperError, wrap, wrap_step
from .stack_dump import arm as _arm_stack_dump

refuse_under_launcher()  # torch.multiprocessing.spawn under diagnose's launcher (own_processes.py)
_arm_stack_dump()  # where this process is, when diagnose ends a stuck run (stack_dump.py)

__all__ = ["wrap", "wrap_step", "read_settings", "Settings", "SettingsError", "HelperError"]
