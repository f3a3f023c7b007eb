#!/usr/bin/env python3
"""Tests for scripts/fa_attach_baseline.py's file editing with a fake measurement (no torch, no GPU):
ratios and shared measurements per shape, other points untouched, exit codes 0/2/3/77 and the file left
byte-for-byte unchanged on every refusal. Run: python3 tests/scripts/test_fa_attach_baseline.py
(tests/cli/fa_attach_baseline_test.cpp runs it under CTest)."""
import importlib.util
import json
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "fa_attach_baseline.py")
spec = importlib.util.spec_from_file_location("fa_attach_baseline", SCRIPT)
fab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fab)


def fa_point(m, heads, t_fa, status="ok", device=None, heads_major=None):
    axes = {"M": m, "heads": heads, "head_dim": 128, "P": 8, "target": "host"}
    if device is not None:
        axes["device"] = device
    p = {"id": "fa_a2a.host", "suite": "fa_a2a", "axes": axes, "status": status, "extra": {}}
    if status == "ok":
        p["variants"] = {"fa": {"median": t_fa}}
        if heads_major is not None:
            p["variants"]["fa_heads_major"] = {"median": heads_major}
    else:
        p["reason"] = "unavailable: one GPU"
    return p


def result(points):
    return {"schema": "xstage.result", "points": points}


class FakeMeasure:
    def __init__(self, times):
        self.times = times  # (M, heads, d, device) -> seconds
        self.calls = []

    def __call__(self, m, heads, head_dim, device):
        self.calls.append((m, heads, head_dim, device))
        return {"backend": "cudnn", "layout": "bshd", "median_s": self.times[(m, heads, head_dim, device)]}


class AttachTest(unittest.TestCase):
    def test_ratio_is_cudnn_time_over_fa_time_and_shapes_share_one_measurement(self):
        doc = result([fa_point(8192, 8, 100e-6, heads_major=110e-6), fa_point(8192, 8, 80e-6),
                      fa_point(32768, 8, 1000e-6, device=1), fa_point(8192, 8, 0, status="skipped"),
                      {"id": "megamoe.host", "suite": "megamoe", "status": "ok", "axes": {}, "extra": {}}])
        fake = FakeMeasure({(8192, 8, 128, 0): 101e-6, (32768, 8, 128, 1): 890e-6})
        self.assertEqual(fab.attach(doc, fake), 3)
        self.assertEqual(sorted(fake.calls), [(8192, 8, 128, 0), (32768, 8, 128, 1)])
        p0, p1, p2, skipped, moe = doc["points"]
        self.assertAlmostEqual(p0["extra"]["vs_cudnn"]["fa_over_cudnn_speed"], 1.01)
        self.assertAlmostEqual(p0["extra"]["vs_cudnn"]["fa_heads_major_over_cudnn_speed"], 101 / 110)
        self.assertAlmostEqual(p1["extra"]["vs_cudnn"]["fa_over_cudnn_speed"], 101 / 80)
        self.assertNotIn("fa_heads_major_over_cudnn_speed", p1["extra"]["vs_cudnn"])
        self.assertAlmostEqual(p2["extra"]["vs_cudnn"]["fa_over_cudnn_speed"], 0.89)
        self.assertEqual(p0["extra"]["baseline_sdpa_cudnn"]["backend"], "cudnn")
        self.assertEqual(skipped["extra"], {})
        self.assertEqual(moe["extra"], {})

    def test_cycles_ratio_takes_each_sides_own_clock_and_is_absent_without_one(self):
        with_clock = fa_point(8192, 8, 100e-6)
        with_clock["extra"]["measured"] = {"sender_side": {"clock_normalized": {"clock_fa_hz": {"median": 1.5e9}}}}
        doc = result([with_clock, fa_point(16384, 8, 400e-6)])

        def measure(m, heads, head_dim, device):
            base = {"backend": "cudnn", "layout": "bhsd", "median_s": 90e-6 if m == 8192 else 380e-6}
            base["cycles_per_launch"] = base["median_s"] * 1.8e9  # cuDNN ran at 1.8 GHz
            return base

        fab.attach(doc, measure)
        p0, p1 = doc["points"]
        # speed 0.9 / 1.0 = 0.9, but per cycle 90e-6 x 1.8e9 / (100e-6 x 1.5e9) = 1.08
        self.assertAlmostEqual(p0["extra"]["vs_cudnn"]["fa_over_cudnn_speed"], 0.9)
        self.assertAlmostEqual(p0["extra"]["vs_cudnn"]["fa_over_cudnn_cycles"], 1.08)
        self.assertNotIn("fa_over_cudnn_cycles", p1["extra"]["vs_cudnn"])  # no FA-only clock measured
        self.assertNotIn("fa_over_cudnn_cycles_probed", p0["extra"]["vs_cudnn"])  # no probe of FA-only

    def test_probed_cycles_ratio_uses_the_benchs_probe_of_fa_only(self):
        probed = fa_point(8192, 8, 100e-6)
        probed["extra"]["measured"] = {"sender_side": {"clock_normalized": {"clock_fa_hz": {"median": 1.5e9}}},
                                       "clock_probe_fa_hz": {"median": 1.6e9, "p10": 1.5e9, "p90": 1.7e9, "n": 5}}
        doc = result([probed])

        def measure(m, heads, head_dim, device):
            return {"backend": "cudnn", "layout": "bhsd", "median_s": 90e-6, "cycles_per_launch": 90e-6 * 1.8e9}

        fab.attach(doc, measure)
        ratios = doc["points"][0]["extra"]["vs_cudnn"]
        # in-launch clock: 90 x 1.8 / (100 x 1.5) = 1.08; both probed: 90 x 1.8 / (100 x 1.6) = 1.0125
        self.assertAlmostEqual(ratios["fa_over_cudnn_cycles"], 1.08)
        self.assertAlmostEqual(ratios["fa_over_cudnn_cycles_probed"], 1.0125)

    def test_clock_summary_ignores_failed_probes(self):
        self.assertIsNone(fab.clock_summary([None, None]))
        s = fab.clock_summary([1.9e9, None, 1.7e9, 1.8e9])
        self.assertEqual(s["n"], 3)
        self.assertAlmostEqual(s["median"], 1.8e9)

    def test_a_point_without_the_fa_variant_is_refused_before_any_measurement(self):
        bad = fa_point(8192, 8, 100e-6)
        del bad["variants"]["fa"]
        doc = result([fa_point(8192, 8, 100e-6), bad])
        before = json.dumps(doc)
        fake = FakeMeasure({})
        with self.assertRaises(ValueError):
            fab.attach(doc, fake)
        self.assertEqual(fake.calls, [])
        self.assertEqual(json.dumps(doc), before)


class MainTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "bench-fa_a2a.json")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, doc):
        with open(self.path, "w") as f:
            json.dump(doc, f)
        with open(self.path, "rb") as f:
            return f.read()

    def read_bytes(self):
        with open(self.path, "rb") as f:
            return f.read()

    def test_writes_the_baseline_into_the_file(self):
        self.write(result([fa_point(8192, 8, 100e-6)]))
        rc = fab.main([self.path], measure=FakeMeasure({(8192, 8, 128, 0): 95e-6}))
        self.assertEqual(rc, 0)
        with open(self.path) as f:
            doc = json.load(f)
        self.assertAlmostEqual(doc["points"][0]["extra"]["vs_cudnn"]["fa_over_cudnn_speed"], 0.95)
        self.assertEqual(doc["schema"], "xstage.result")
        self.assertEqual([n for n in os.listdir(self.dir.name)], ["bench-fa_a2a.json"], "no temporary left")

    def test_refusals_leave_the_file_unchanged(self):
        def unavailable(*_):
            raise fab.Unavailable("no CUDA device 0 visible to torch")

        def failing(*_):
            raise fab.BackendFailed("cuDNN SDPA bhsd M=8192: not supported")

        before = self.write(result([fa_point(8192, 8, 100e-6)]))
        self.assertEqual(fab.main([self.path], measure=unavailable), 77)
        self.assertEqual(self.read_bytes(), before)
        self.assertEqual(fab.main([self.path], measure=failing), 3)
        self.assertEqual(self.read_bytes(), before)
        self.assertEqual(fab.main([self.path, "--iters", "0"], measure=unavailable), 2)
        self.assertEqual(self.read_bytes(), before)

    def test_bad_files_are_usage_errors_and_nothing_to_attach_is_success(self):
        before = self.write({"schema": "xstage.result"})
        self.assertEqual(fab.main([self.path], measure=FakeMeasure({})), 2)
        self.assertEqual(self.read_bytes(), before)
        self.assertEqual(fab.main([os.path.join(self.dir.name, "missing.json")], measure=FakeMeasure({})), 2)
        before = self.write(result([fa_point(8192, 8, 0, status="skipped")]))
        self.assertEqual(fab.main([self.path], measure=FakeMeasure({})), 0)
        self.assertEqual(self.read_bytes(), before)

    def test_without_torch_or_gpu_the_real_measurement_exits_77(self):
        try:
            import torch  # noqa: F401
            if torch.cuda.is_available():
                self.skipTest("torch with a GPU here: the real measurement would run")
        except ImportError:
            pass
        before = self.write(result([fa_point(8192, 8, 100e-6)]))
        self.assertEqual(fab.main([self.path, "--iters", "1", "--warmup", "0"]), 77)
        self.assertEqual(self.read_bytes(), before)


if __name__ == "__main__":
    unittest.main()
