"""The loader as the helper sees it: the examples a batch holds, and the DataLoader rebuilt
with other workers for the loader lever, whatever kind of dataset and batching it has."""
import dataclasses
import io
import os
import tempfile
import unittest
from collections import UserDict
from contextlib import redirect_stderr

import torch
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, SequentialSampler

from stepscope_torch.loader import TimedLoader, batch_samples, rebuild
from stepscope_torch.recorder import StepRecorder


@dataclasses.dataclass
class _Batch:
    ids: torch.Tensor
    labels: torch.Tensor


class _Encoding(UserDict):
    """A mapping that is not a dict, as HuggingFace's BatchEncoding is."""


class _Stream(IterableDataset):
    """0..n-1, split between the loader's workers by their id, as a dataset that shards does."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        first, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(torch.tensor([float(i)]) for i in range(first, self.n, step))


def _values(loader):
    return sorted(float(v) for batch in loader for v in batch.flatten())


class BatchSamples(unittest.TestCase):
    def test_the_examples_of_a_batch_of_any_usual_shape(self):
        x = torch.zeros(8, 3)
        self.assertEqual(batch_samples(x), 8)
        self.assertEqual(batch_samples((x, torch.zeros(8))), 8)
        self.assertEqual(batch_samples({"input_ids": x}), 8)
        self.assertEqual(batch_samples(_Encoding(input_ids=torch.zeros(5, 7))), 5)
        self.assertEqual(batch_samples(_Batch(torch.zeros(6, 2), torch.zeros(6))), 6)
        self.assertEqual(batch_samples([{"ids": torch.zeros(4, 2)}]), 4)
        self.assertEqual(batch_samples((["a", "b", "c"], torch.zeros(3))), 3)  # texts first
        self.assertEqual(batch_samples(torch.tensor(1.0)), 1)
        self.assertIsNone(batch_samples(object()))
        self.assertIsNone(batch_samples({}))

    def test_a_batch_that_does_not_tell_counts_one_and_says_so_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            rec = StepRecorder(os.path.join(tmp, "r.jsonl"), 0, 1, 0, 0)
            notes = []
            loader = TimedLoader([object(), object()], rec, False, None, notes)
            err = io.StringIO()
            with redirect_stderr(err):
                batches = list(loader)
            rec.close()
        self.assertEqual((len(batches), rec.samples, len(notes)), (2, 2, 1))
        self.assertIn("object objects", notes[0])
        self.assertEqual(err.getvalue().count("each batch counts as one example"), 1)


class Rebuild(unittest.TestCase):
    def test_an_iterable_dataset_is_rebuilt_without_a_sampler(self):
        # DataLoader refuses a sampler with an IterableDataset: the lever failed every run.
        loader = DataLoader(_Stream(10), batch_size=2)
        for workers in (0, 2):
            rebuilt = rebuild(loader, workers, None)
            self.assertEqual(rebuilt.num_workers, workers)
            self.assertEqual(_values(rebuilt), _values(loader))
            self.assertEqual(rebuilt.batch_size, 2)

    def test_batching_as_the_script_set_it(self):
        data = list(range(6))
        own = DataLoader(data, batch_sampler=BatchSampler(SequentialSampler(data), 4, False))
        rebuilt = rebuild(own, 1, None)
        self.assertIs(rebuilt.batch_sampler, own.batch_sampler)
        self.assertEqual([b.tolist() for b in rebuilt], [[0, 1, 2, 3], [4, 5]])
        unbatched = DataLoader(data, batch_size=None)  # automatic batching off
        rebuilt = rebuild(unbatched, 0, None)
        self.assertIsNone(rebuilt.batch_size)
        self.assertEqual([int(b) for b in rebuilt], data)

    def test_pinning_and_the_multiprocessing_context_are_kept(self):
        loader = DataLoader(list(range(4)), batch_size=2, num_workers=1,
                            multiprocessing_context="spawn", persistent_workers=True)
        rebuilt = rebuild(loader, 2, 4)
        self.assertIs(rebuilt.multiprocessing_context, loader.multiprocessing_context)
        self.assertEqual((rebuilt.prefetch_factor, rebuilt.persistent_workers), (4, True))
        self.assertEqual(rebuild(loader, 0, None).multiprocessing_context, None)


if __name__ == "__main__":
    unittest.main()
