"""The training loss as the helper sees it: the value the model's backward starts from.

A script calls `loss.backward()`, and PyTorch tells no one what the loss was. `install` wraps
`torch.Tensor.backward` once in a process, so that while a backward runs the tensor it runs from
is known (`running_loss`), and `GradScaler.scale`, whose scaled loss is what a mixed-precision
script calls backward on: the scaled tensor remembers the loss it scaled, and the loss is that.
The wrapped functions do what they did; the state (the roots of the backward calls running) is
kept on the wrapped `backward` itself, one per process, as there is one autograd per process.

Not seen: a backward started by `torch.autograd.backward(...)` or `torch.autograd.grad(...)`
directly, and a backward from a tensor of more than one element (`backward(gradient)`).
"""
import functools

import torch

ROOTS = "_stepscope_roots"  # on the wrapped torch.Tensor.backward: the running calls' tensors
SCALED_FROM = "_stepscope_loss"  # on GradScaler.scale's result: the loss it scaled


def remembering_scale(scale):
    """GradScaler.scale, its tensor result carrying the loss it scaled."""

    @functools.wraps(scale)
    def scale_remembered(self, outputs):
        scaled = scale(self, outputs)
        if scaled is not outputs and isinstance(outputs, torch.Tensor) and \
                isinstance(scaled, torch.Tensor):
            setattr(scaled, SCALED_FROM, outputs)
        return scaled

    setattr(scale_remembered, SCALED_FROM, True)
    return scale_remembered


def install():
    """Wraps torch.Tensor.backward and GradScaler.scale, once in a process."""
    backward = torch.Tensor.backward
    if getattr(backward, ROOTS, None) is None:
        roots = []

        @functools.wraps(backward)
        def backward_from(self, *args, **kwargs):
            roots.append(self)
            try:
                return backward(self, *args, **kwargs)
            finally:
                roots.pop()

        setattr(backward_from, ROOTS, roots)
        torch.Tensor.backward = backward_from
    scaler = getattr(getattr(torch.cuda, "amp", None), "GradScaler", None)
    if scaler is not None and not getattr(scaler.scale, SCALED_FROM, False):
        scaler.scale = remembering_scale(scaler.scale)


def running_loss():
    """The loss the running backward started from (detached: no graph kept), unscaled where
    GradScaler scaled it; None outside a backward `install` sees, or from a tensor of more than
    one element."""
    roots = getattr(torch.Tensor.backward, ROOTS, None)
    if not roots:
        return None
    root = roots[-1]
    root = getattr(root, SCALED_FROM, root)
    if root.numel() != 1:
        return None
    return root.detach()
