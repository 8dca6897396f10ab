"""torch.multiprocessing.spawn refused by name in a process of PyTorch's launcher under
diagnose, and left alone everywhere else."""
import contextlib
import io
import types
import unittest

from stepscope_torch.errors import HelperError
from stepscope_torch.own_processes import refuse_under_launcher


def _module():
    """A stand-in for torch.multiprocessing: its spawners record their calls."""
    calls = []
    return types.SimpleNamespace(spawn=lambda *a, **k: calls.append(("spawn", a)),
                                 start_processes=lambda *a, **k: calls.append(("start", a)),
                                 calls=calls)


class OwnProcesses(unittest.TestCase):
    def test_left_alone_outside_diagnose_or_outside_the_launcher(self):
        for env in ({}, {"STEPSCOPE_RUN_DIR": "/r"}, {"TORCHELASTIC_RUN_ID": "none"}):
            module = _module()
            self.assertFalse(refuse_under_launcher(env, module))
            module.spawn(1)
            module.start_processes(2)
            self.assertEqual(module.calls, [("spawn", (1,)), ("start", (2,))])

    def test_refused_with_a_line_naming_the_rank_and_what_to_do(self):
        module = _module()
        env = {"STEPSCOPE_RUN_DIR": "/r", "TORCHELASTIC_RUN_ID": "none", "RANK": "1"}
        self.assertTrue(refuse_under_launcher(env, module))
        refusal = module.spawn
        self.assertTrue(refuse_under_launcher(env, module))  # once: not wrapped twice
        self.assertIs(module.spawn, refusal)
        for spawner, name in ((module.spawn, "spawn"), (module.start_processes,
                                                         "start_processes")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(HelperError) as e:
                spawner(print, nprocs=2)
            self.assertIn(f"torch.multiprocessing.{name}) in a process PyTorch's launcher "
                          "started", str(e.exception))
            self.assertRegex(err.getvalue(), r"^stepscope: rank 1 \(host [^)]*\): the script "
                                             r"starts its own processes .*--launcher python3.*"
                                             r"--world-size \{n\}")
        self.assertEqual(module.calls, [])


if __name__ == "__main__":
    unittest.main()
