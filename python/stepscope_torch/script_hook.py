"""A communication hook of the script's own (PyTorch's fp16 compression, PowerSGD, one the
script wrote), run inside the helper's timed hook.

DDP takes one communication hook and does not hand it back, so the helper cannot time a hook
registered before `wrap`. The script registers its hook after `wrap`, on the model `wrap`
returns: that model's `register_comm_hook` hands the hook to the helper's timed hook, which
runs it for every bucket between the bucket's `ready` and `end` marks.

What the helper knows of such a hook is its name. Bytes on the wire: PyTorch's own hooks of
known precision (`allreduce_hook`, `fp16_compress_hook`, `bf16_compress_hook`) put the bucket's
values in that precision on the wire; any other hook (PowerSGD, the script's own) is counted
at the bucket's own bytes, a unit of its cost rather than what it sends.
"""
import functools

# PyTorch's hooks whose wire precision their name tells (torch.distributed.algorithms.
# ddp_comm_hooks.default_hooks, and the wrappers that compress another hook's input).
_TORCH_HOOKS = "torch.distributed.algorithms.ddp_comm_hooks"
_WIRE_OF_TORCH_HOOK = {
    "allreduce_hook": None,  # the bucket's own precision
    "fp16_compress_hook": "fp16",
    "bf16_compress_hook": "bf16",
    "fp16_compress_wrapper_hook": "fp16",
    "bf16_compress_wrapper_hook": "bf16",
}
_WIDTH = {"fp16": 2, "bf16": 2}


def _function(hook):
    while isinstance(hook, functools.partial):
        hook = hook.func
    return hook


def hook_name(hook):
    """The hook's name as DDP's own log gives it (a partial: its function's)."""
    hook = _function(hook)
    return getattr(hook, "__qualname__", None) or type(hook).__name__


def _torch_hook_wire(hook):
    """(known, wire): whether `hook` is one of PyTorch's hooks of known precision, and that
    precision (None: the bucket's own)."""
    hook = _function(hook)
    module = getattr(hook, "__module__", "") or ""
    name = getattr(hook, "__qualname__", "").split(".<locals>.")[-1]
    if module.startswith(_TORCH_HOOKS) and name in _WIRE_OF_TORCH_HOOK:
        return True, _WIRE_OF_TORCH_HOOK[name]
    return False, None


class ScriptHook:
    """The script's hook and its state, as DDP would call them, with what the records say of
    it: `name`, `wire` (the precision in run.json: fp16 or bf16 for PyTorch's compression
    hooks, else fp32, the unit the bytes are counted in), and `known` (False: the bytes are the
    bucket's, not what the hook sends)."""

    def __init__(self, state, hook):
        self.state = state
        self.hook = hook
        self.name = hook_name(hook)
        self.known, wire = _torch_hook_wire(hook)
        self.wire = wire or "fp32"
        self._width = _WIDTH.get(wire)

    @property
    def bytes_are(self):
        """What the records' bytes are, as run.json says it: "wire" (what the hook sends) or
        "bucket" (the bucket's own)."""
        return "wire" if self.known else "bucket"

    def wire_bytes(self, buffer):
        """The bytes the records count for a bucket whose values are `buffer`."""
        return buffer.numel() * (self._width or buffer.element_size())

    def __call__(self, bucket):
        return self.hook(self.state, bucket)


def registered_hook(model):
    """The name of a communication hook already registered on the DDP `model` (by the script,
    before `wrap`), or None. DDP's log says it (a prototype interface: None where absent)."""
    logging_data = getattr(model, "_get_ddp_logging_data", None)
    if logging_data is None:
        return None
    try:
        return logging_data().get("comm_hook") or None
    except (AttributeError, RuntimeError):
        return None
