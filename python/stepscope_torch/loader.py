"""The input pipeline as the helper sees it: every batch's wait timed, the synthetic-input
ablation (the first batch replayed from memory), the loader-worker lever (the DataLoader rebuilt
with other num_workers / prefetch_factor) and the step limit diagnose sets (STEPSCOPE_STEPS)."""
import dataclasses
import itertools
import sys
from collections.abc import Mapping

import torch
from torch.utils.data import DataLoader, IterableDataset

from .recorder import now


def batch_samples(batch):
    """Examples in a batch: the first dimension of its first tensor, looked for in order through
    tuples, lists, mappings (a dict, HuggingFace's BatchEncoding) and dataclasses; a list of
    things that are none of those (texts) is its length. None where nothing tells."""
    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() > 0 else 1
    if isinstance(batch, Mapping):
        values = batch.values()
    elif dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        values = [getattr(batch, f.name) for f in dataclasses.fields(batch)]
    elif isinstance(batch, (list, tuple)):
        values = batch
    else:
        return None
    for value in values:
        samples = batch_samples(value)
        if samples is not None:
            return samples
    return len(batch) if isinstance(batch, list) and batch else None


def rebuild(loader, workers, prefetch):
    """The same DataLoader (dataset, sampler or batch sampler, collate, batch size, pinning,
    worker start) with other workers. An IterableDataset gives each worker its own iterator:
    one that does not split its stream by `torch.utils.data.get_worker_info()` repeats it in
    every worker, as it would with those workers in the script."""
    kwargs = dict(num_workers=workers, collate_fn=loader.collate_fn,
                  pin_memory=loader.pin_memory, timeout=loader.timeout,
                  worker_init_fn=loader.worker_init_fn, generator=loader.generator,
                  pin_memory_device=loader.pin_memory_device)
    if workers > 0:
        kwargs["prefetch_factor"] = prefetch if prefetch else loader.prefetch_factor
        kwargs["persistent_workers"] = loader.persistent_workers
        kwargs["multiprocessing_context"] = loader.multiprocessing_context
    if isinstance(loader.dataset, IterableDataset):  # no sampler: the stream is its order
        return DataLoader(loader.dataset, batch_size=loader.batch_size,
                          drop_last=loader.drop_last, **kwargs)
    if loader.batch_size is None and loader.batch_sampler is not None:  # the script's own
        return DataLoader(loader.dataset, batch_sampler=loader.batch_sampler, **kwargs)
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=loader.sampler,
                      drop_last=loader.drop_last, **kwargs)


def _replays(loader, already):
    """How many more times the synthetic ablation replays the first batch in this pass: the rest
    of an epoch, or without end for a loader that has no length (an iterator: the step limit, or
    the script, ends it)."""
    try:
        return range(len(loader) - already)
    except TypeError:
        return itertools.count()


class TimedLoader:
    """Iterates like the wrapped loader; `len`, `dataset`, `sampler` and the rest pass through.
    A script that takes batches with next() from the loader it got (a generator, an iterator)
    may do so from this one too."""

    def __init__(self, loader, recorder, synthetic, steps, notes=None):
        self._loader = loader
        self._recorder = recorder
        self._synthetic = synthetic
        self._steps = steps
        self._notes = notes if notes is not None else []  # run.json's
        self._first = None
        self._next = None  # the pass next() takes batches from

    def _samples(self, batch):
        """batch_samples, or 1 where the batch does not tell, said once (run.json's notes and
        the log): samples/s are then batches/s, and a change of micro-batch is not seen."""
        samples = batch_samples(batch)
        if samples is not None:
            return samples
        note = (f"the loader's batches are {type(batch).__name__} objects, in which the helper "
                "finds no tensor and no list to count examples by: each batch counts as one "
                "example (samples/s are batches/s; docs/torch.md, What the helper records)")
        if note not in self._notes:
            self._notes.append(note)
            print(f"stepscope_torch: {note}", file=sys.stderr)
        return 1

    def __len__(self):
        return len(self._loader)

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def __next__(self):
        if self._next is None:
            self._next = iter(self)
        return next(self._next)

    @property
    def done(self):
        """The step limit (STEPSCOPE_STEPS) is reached: the loader gives no more batches."""
        return self._done()

    def _done(self):
        return self._steps is not None and self._recorder.step >= self._steps

    def __iter__(self):
        rec = self._recorder
        if self._done():
            return
        rec.begin_if_needed()
        if self._synthetic and self._first is not None:
            for _ in _replays(self._loader, 0):
                if self._done():
                    return
                t0 = now()
                rec.add_input_wait(now() - t0, self._samples(self._first))
                yield self._first
            return
        it = iter(self._loader)
        while True:
            if self._done():
                return
            t0 = rec.drawing = now()
            try:
                batch = next(it)
            except StopIteration:
                break
            finally:
                rec.drawing = None
            rec.add_input_wait(now() - t0, self._samples(batch))
            if self._synthetic:
                self._first = batch
                yield batch
                # Every later batch is this one, from memory.
                for _ in _replays(self._loader, 1):
                    if self._done():
                        return
                    t0 = now()
                    rec.add_input_wait(now() - t0, self._samples(batch))
                    yield batch
                return
            yield batch
        rec.epoch += 1
