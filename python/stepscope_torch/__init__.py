"""stepscope's helper for a user's PyTorch DistributedDataParallel script.

Two lines in the script:

    import stepscope_torch
    model, optimizer, loader = stepscope_torch.wrap(model, optimizer, loader)

Under `stepscope diagnose --torch` (STEPSCOPE_RUN_DIR set) every rank writes its steps to
RUN_DIR/rank-R.steps.jsonl in stepscope's own record format, and rank 0 writes RUN_DIR/run.json
when the script ends normally. Without STEPSCOPE_RUN_DIR, `wrap` returns its arguments untouched.
docs/torch.md has the whole story: what is measured, the ablations and levers (environment
variables), and the limits.
"""
from .settings import Settings, SettingsError, read_settings
from .session import HelperError, wrap

__all__ = ["wrap", "read_settings", "Settings", "SettingsError", "HelperError"]
