"""Gradient accumulation applied by the helper (STEPSCOPE_ACCUM=K, which diagnose sets from
`--accum K`, or for a run whose change sets the accumulation, when the command has no `{accum}`
placeholder): K of the script's iterations make one optimizer step, as a script that accumulates
K micro-batches itself would.

The script's loop stays as written (zero_grad, forward, backward, step). The helper
- runs the first K-1 forwards of a step as DDP's `no_sync` does (`require_backward_grad_sync`
  off): their backward passes add into the gradients and reduce nothing; the K-th reduces the
  sum once;
- holds the optimizer's `step` and the `zero_grad` calls (the optimizer's and the model's) until
  the K-th iteration;
- averages the sum over the K micro-batches (the timed hook folds 1/K into its average over the
  ranks; without DDP the optimizer's wrapper scales the gradients), so the update is the one the
  mean loss over the K micro-batches gives: a script that divides its loss by K.

What it cannot see: a script that accumulates by itself (several backward passes for one
`step`) is refused, as K would multiply its own; a learning-rate scheduler stepped every
iteration advances K times per optimizer step; gradient clipping between backward and `step`
runs at every iteration on the running sum, not yet averaged (docs/torch.md, Limits).
"""
import torch

from .errors import HelperError


class Accumulation:
    """Where the script's iterations are within the current step of K."""

    def __init__(self, k):
        self.k = k
        self.held = 0       # the script's step() calls held into the current step
        self.backwards = 0  # backward passes since the script's last step() call

    @property
    def active(self):
        return self.k > 1

    def before_forward(self, model):
        """A DDP model reduces only in the backward of the step's last micro-batch."""
        model.require_backward_grad_sync = self.held == self.k - 1

    def on_backward(self):
        self.backwards += 1

    def hold(self, closure):
        """At the script's `optimizer.step()`: True to hold it (the gradients go on adding
        up), False at the K-th, which steps."""
        if closure:
            raise HelperError(
                f"stepscope_torch: STEPSCOPE_ACCUM={self.k} cannot hold an optimizer step that "
                "takes a closure (the closure runs forward and backward itself); give the script "
                "an {accum} placeholder instead (docs/torch.md)")
        if self.backwards > 1:
            raise HelperError(
                f"stepscope_torch: STEPSCOPE_ACCUM={self.k} asks the helper to accumulate, but "
                f"the script ran {self.backwards} backward passes for one optimizer step: it "
                "accumulates by itself; give the command an {accum} placeholder where the script "
                "takes its accumulation (docs/torch.md)")
        self.backwards = 0
        self.held += 1
        if self.held < self.k:
            return True
        self.held = 0
        return False

    def holds_zero_grad(self):
        """True inside a step: a zero_grad now would drop the micro-batches added so far."""
        return self.held > 0

    def average(self, optimizer):
        """The sum of K micro-batches' gradients made their mean, for a model without DDP's
        hook to do it."""
        grads = [p.grad for group in optimizer.param_groups for p in group["params"]
                 if p.grad is not None]
        dense = [g for g in grads if not g.is_sparse]
        if dense:
            torch._foreach_mul_(dense, 1.0 / self.k)
        for g in grads:
            if g.is_sparse:
                g.mul_(1.0 / self.k)
