"""The options stepscope_torch.run adds to PyTorch's launcher: a free master port and a short
monitor interval, each only where neither the launcher's options nor its PET_ environment name
one, and never taken from the script's own arguments."""
import os
import unittest
from unittest import mock

from stepscope_torch.run import MONITOR_INTERVAL_S, with_defaults


def option(argv, name):
    """The value of launcher option `name` in argv (the words before the script), or None."""
    for i, word in enumerate(argv):
        if word == "t.py":
            return None
        if word == name:
            return argv[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


class WithDefaults(unittest.TestCase):
    def setUp(self):
        clean = {k: v for k, v in os.environ.items() if not k.startswith("PET_")}
        patcher = mock.patch.dict(os.environ, clean, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_a_bare_command_gets_a_free_port_and_the_short_interval(self):
        argv = with_defaults(["--nproc_per_node", "2", "t.py", "--lr", "0.1"])
        self.assertEqual(option(argv, "--master_addr"), "127.0.0.1")
        self.assertGreater(int(option(argv, "--master_port")), 0)
        self.assertEqual(option(argv, "--monitor_interval"), str(MONITOR_INTERVAL_S))
        self.assertEqual(argv[-5:], ["--nproc_per_node", "2", "t.py", "--lr", "0.1"])

    def test_the_launchers_own_choices_are_kept(self):
        for given in (["--master_port", "1234"], ["--master_port=1234"],
                      ["--rdzv_endpoint", "host:29400"], ["--standalone"]):
            argv = with_defaults(given + ["t.py"])
            self.assertEqual(argv.count("--master_addr"), 0, given)
            self.assertEqual(option(argv, "--monitor_interval"), str(MONITOR_INTERVAL_S))
        for given in (["--monitor_interval", "2"], ["--monitor_interval=2"]):
            argv = with_defaults(given + ["t.py"])
            self.assertEqual(option(argv, "--monitor_interval"), "2", argv)
            self.assertEqual(argv.count("--monitor_interval") + argv.count("--monitor_interval=2"),
                             1, argv)

    def test_the_launchers_environment_is_kept(self):
        with mock.patch.dict(os.environ, {"PET_MONITOR_INTERVAL": "3", "PET_MASTER_PORT": "9"}):
            self.assertEqual(with_defaults(["t.py"]), ["t.py"])

    def test_the_scripts_own_arguments_are_not_the_launchers(self):
        argv = with_defaults(["t.py", "--monitor_interval", "7", "--master_port", "1", "--standalone"])
        self.assertEqual(option(argv, "--monitor_interval"), str(MONITOR_INTERVAL_S))
        self.assertIsNotNone(option(argv, "--master_port"))
        self.assertEqual(argv[-6:], ["t.py", "--monitor_interval", "7", "--master_port", "1",
                                     "--standalone"])


if __name__ == "__main__":
    unittest.main()
