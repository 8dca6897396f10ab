"""STEPSCOPE_SEED: the randomness of the script's training reseeded at `wrap`, for a run that
differs from the baseline only by chance (the reduced-precision check's reference: how far
training drifts from another seed, docs/torch.md).

At `wrap` the model is built and the loader made, so what the seed can still reach is reached:
PyTorch's, Python's and NumPy's global generators (dropout, augmentations, a RandomSampler or
loader without a generator of its own, the workers' seeds), the seed of a DistributedSampler
(its shuffle order), and the generator a sampler or the loader holds. The model's initial
weights, drawn before `wrap`, stay the script's: a script that takes a `--seed` flag gets the
whole run reseeded through the command's `{seed}` placeholder instead.
"""
import random
import sys

import torch


def _samplers(loader):
    """The loader's samplers, each once (its batch sampler usually holds its sampler)."""
    batch_sampler = getattr(loader, "batch_sampler", None)
    found = []
    for s in (getattr(loader, "sampler", None), batch_sampler,
              getattr(batch_sampler, "sampler", None)):
        if s is not None and all(s is not t for t in found):
            found.append(s)
    return found


def reseed(loader, seed):
    """Reseeds what the job draws from after `wrap`; returns what was reseeded, in words."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
    return ["the global generators"] + reseed_loader(loader, seed)


def reseed_loader(loader, seed):
    """Reseeds the loader's own randomness only (its sampler's seed, its generators): a loader
    a later `wrap` brings (a script that makes one each epoch), whose global generators run on
    from the first reseeding."""
    reached = []
    generators = [getattr(loader, "generator", None)]
    for s in _samplers(loader):
        if isinstance(getattr(s, "seed", None), int) and hasattr(s, "set_epoch"):
            s.seed = seed  # DistributedSampler: its order is drawn from seed + epoch
            reached.append(f"the {type(s).__name__}'s seed")
        generators.append(getattr(s, "generator", None))
    for i, g in enumerate(generators):
        if isinstance(g, torch.Generator) and all(g is not h for h in generators[:i]):
            g.manual_seed(seed)
            reached.append("a generator of the loader's")
    return reached
