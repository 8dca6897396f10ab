"""Iterations the script ends without the optimizer's update: AMP's `GradScaler` does not call
the optimizer's `step()` when the gradients hold an infinity (on an accelerator, in the first
steps while the scale settles and again at every overflow), and many scripts skip the update
of a step whose loss is not finite. Such an iteration is still a step of the job, with its
batch, forward, backward and reduction; the helper, whose step ends at the optimizer's
`step()`, would otherwise count it into the next step (two backward passes in one record, read
as accumulation, and a step twice as long).

The sign that the update was skipped: the script drops the gradients (the optimizer's or the
model's `zero_grad`) after a backward pass of a batch drawn since the last update, with no
update in between. A script that accumulates by itself draws several batches before its update
too, but keeps the gradients until it; a GAN whose wrapped model also runs backward for the
other model's loss does so after its own update, before drawing the next batch. The step then
ends at that `zero_grad`, or, where the script drew its next batch first (`zero_grad` at the
top of the loop), where that draw began: the batch is the next step's.

What it cannot see: gradients dropped another way (setting `.grad = None` by hand), and a GAN
whose other model's backward runs through the wrapped model before the wrapped model's own
step (its iteration is read as a skipped step and a step) (docs/torch.md, Limits).
"""


class SkippedUpdates:
    """Where the script is since the last update, from the loader's draws (the recorder's
    `draws`, and `step_draws`: those of the steps written) and the model's backward passes."""

    def __init__(self, recorder):
        self._recorder = recorder
        self._backward_draws = None  # batches drawn at the latest backward of a drawn batch

    def on_backward_start(self):
        rec = self._recorder
        if rec.draws > rec.step_draws:
            self._backward_draws = rec.draws

    def at_zero_grad(self):
        """None while the gradients may still be updated; else how the skipped step ends:
        "now", or "at_last_draw" where a batch was drawn after its backward."""
        rec = self._recorder
        if self._backward_draws is None or self._backward_draws <= rec.step_draws:
            return None
        return "at_last_draw" if rec.draws > self._backward_draws else "now"
