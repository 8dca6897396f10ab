"""The helper's settings: defaults, every variable read, malformed values named."""
import unittest

from stepscope_torch.settings import SettingsError, read_settings


class ReadSettings(unittest.TestCase):
    def test_without_a_run_dir_the_helper_is_inert(self):
        s = read_settings({})
        self.assertFalse(s.active)
        self.assertEqual((s.variant, s.reduce_dtype, s.warmup_steps, s.grad_norm_every),
                         ("baseline", "fp32", 5, 4))

    def test_every_variable(self):
        s = read_settings({"STEPSCOPE_RUN_DIR": "/r", "STEPSCOPE_VARIANT": "no_reduce",
                           "STEPSCOPE_BUCKET_MB": "1.5", "STEPSCOPE_REDUCE_DTYPE": "bf16",
                           "STEPSCOPE_LOADER_WORKERS": "0", "STEPSCOPE_PREFETCH": "3",
                           "STEPSCOPE_STEPS": "7", "STEPSCOPE_WARMUP_STEPS": "0",
                           "STEPSCOPE_GRAD_NORM_EVERY": "2", "STEPSCOPE_ACCUM": "4"})
        self.assertTrue(s.active)
        self.assertEqual((s.variant, s.bucket_mb, s.reduce_dtype, s.loader_workers, s.prefetch,
                          s.steps, s.warmup_steps, s.grad_norm_every, s.accum),
                         ("no_reduce", 1.5, "bf16", 0, 3, 7, 0, 2, 4))
        self.assertEqual(read_settings({}).accum, 1)
        self.assertEqual(read_settings({}).stall_timeout, 120.0)  # train's --stall-timeout
        self.assertEqual(read_settings({"STEPSCOPE_STALL_TIMEOUT": "7.5"}).stall_timeout, 7.5)
        self.assertEqual(read_settings({"STEPSCOPE_STALL_TIMEOUT": "0"}).stall_timeout, 0)
        self.assertEqual(read_settings({}).latency_probes, 16)  # train's --latency-probes
        self.assertEqual(read_settings({"STEPSCOPE_LATENCY_PROBES": "0"}).latency_probes, 0)

    def test_malformed_values_name_the_variable(self):
        for env, words in (({"STEPSCOPE_VARIANT": "fast"}, "STEPSCOPE_VARIANT='fast'"),
                           ({"STEPSCOPE_STEPS": "ten"}, "STEPSCOPE_STEPS='ten' is not a whole"),
                           ({"STEPSCOPE_STEPS": "0"}, "must be at least 1"),
                           ({"STEPSCOPE_BUCKET_MB": "0"}, "must be above 0"),
                           ({"STEPSCOPE_ACCUM": "0"}, "STEPSCOPE_ACCUM='0' must be at least 1"),
                           ({"STEPSCOPE_STALL_TIMEOUT": "-1"}, "must be at least 0"),
                           ({"STEPSCOPE_LATENCY_PROBES": "2.5"},
                            "STEPSCOPE_LATENCY_PROBES='2.5' is not a whole number"),
                           ({"STEPSCOPE_REDUCE_DTYPE": "int8"}, "fp32, bf16, fp16")):
            with self.assertRaises(SettingsError) as e:
                read_settings(env)
            self.assertIn(words, str(e.exception))


if __name__ == "__main__":
    unittest.main()
