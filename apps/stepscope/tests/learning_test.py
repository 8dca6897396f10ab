"""Learning tests: each model reaches its stated quality on real data within minutes on 2 cores.

Bounds: mlp >= 85 % and cnn >= 88 % test accuracy on Fashion-MNIST; gpt held-out loss below
4.6 bits per byte on the fortunes corpus after 300 steps (a uniform byte model is 8.0).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import TempDirTest, read_json, run  # noqa: E402


def train(test, args, np=2):
    out = test.path("run")
    run(["train", "--quiet", "--out", out] + args, np=np, timeout=900)
    return read_json(os.path.join(out, "run.json"))


class Learning(TempDirTest):
    def test_mlp_reaches_85_percent(self):
        info = train(self, ["--model", "mlp", "--hidden", "256,256", "--epochs", "3",
                            "--batch", "32", "--lr", "0.02"])
        self.assertGreaterEqual(info["eval"]["accuracy"], 0.85, info["eval"])

    def test_cnn_reaches_88_percent(self):
        info = train(self, ["--model", "cnn", "--channels", "16", "--epochs", "2",
                            "--batch", "32", "--lr", "0.02"])
        self.assertGreaterEqual(info["eval"]["accuracy"], 0.88, info["eval"])

    def test_gpt_bits_per_byte_fall(self):
        info = train(self, ["--model", "gpt", "--layers", "2", "--width", "128", "--heads", "4",
                            "--context", "64", "--steps", "300", "--batch", "8",
                            "--eval-limit", "2000"])
        self.assertLess(info["eval"]["bits_per_byte"], 4.6, info["eval"])


class ReducedPrecision(TempDirTest):
    """bf16/fp16 reduction converges and lands within a point and a half of fp32."""

    def test_bf16_and_fp16_track_fp32(self):
        acc = {}
        for dtype in ("fp32", "bf16", "fp16"):
            info = train(self, ["--model", "mlp", "--hidden", "256,256", "--epochs", "1",
                                "--batch", "32", "--reduce-dtype", dtype])
            acc[dtype] = info["eval"]["accuracy"]
            self.assertEqual(info["config"]["reducer"]["dtype"], dtype)
        for dtype in ("bf16", "fp16"):
            self.assertGreaterEqual(acc[dtype], 0.82, acc)
            self.assertLess(abs(acc[dtype] - acc["fp32"]), 0.015, acc)


if __name__ == "__main__":
    unittest.main()
