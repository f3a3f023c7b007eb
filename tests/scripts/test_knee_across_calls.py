"""scripts/knee_across_calls.py on committed calibrations: the bracket ends it computes are the ones
PlatformModel::capacity_bracket gives (hand-made rows with known answers), its coverage counts fail on a burst planted
above the upper end, and bad input is exit 2 with nothing written.
Run: python3 -m unittest -v test_knee_across_calls (from tests/scripts; CTest scripts.knee_across_calls)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import knee_across_calls as k  # noqa: E402

CALS = [os.path.join(ROOT, "results", "h100", p, "calibration-host-fa.json")
        for p in ("predictions-3a97dd2", "predictions-6c3d35e", "predictions-fd62b85")]


def row(v, c_lo, c_hi, c_med, path="a", device="d"):
    return {"file": path, "device": device, "K": 16, "address_mode": "fresh", "V_bytes": v, "c_lo_bytes": c_lo,
            "c_hi_bytes": c_hi, "c_med_bytes": c_med}


class KneeAcrossCalls(unittest.TestCase):
    def test_bracket_ends_match_the_model_rule(self):
        rows = [row(2e6, 6.8e5, 1.19e6, 9e5), row(4e6, 1.5e5, 1.3e6, 7e5)]
        # Past the bound 1e6: lower over (1e6, max(2V, first V'' >= V)], upper = the nearest V'' <= V.
        self.assertEqual(k.bracket_ends(rows, 1e6, 2e6), (1.5e5, 1.19e6))
        self.assertEqual(k.bracket_ends(rows, 1e6, 3e6), (1.5e5, 1.19e6))
        self.assertEqual(k.bracket_ends(rows, 1e6, 4e6), (1.5e5, 1.3e6))
        self.assertEqual(k.bracket_ends(rows, 1e6, 5e6), (0.0, 1.3e6))  # past every burst: lower 0
        self.assertEqual(k.bracket_ends(rows, 1e6, 1.5e6)[1], None)  # nothing at or below V past the bound
        self.assertEqual(k.bracket_ends([row(2e6, -1.0, -5.0, 0.0)], 1e6, 2e6), (0.0, None))  # negative c_hi

    def test_coverage_counts_a_burst_above_the_upper_end(self):
        rows = [row(2e6, 6.8e5, 1.19e6, 9e5, "a"), row(2e6, 6.0e5, 1.25e6, 1.0e6, "b"),
                row(2e6, 6.0e5, 1.9e6, 1.5e6, "c")]
        cov = k.coverage(rows, {("a", 16): 1e6, ("b", 16): 1e6, ("c", 16): 1e6}, [2e6])
        self.assertEqual(cov["cases"], 6)
        # c's median 1.5e6 lies above a's and b's upper ends: 2 misses.
        self.assertEqual(cov["upper_holds"], 4)
        self.assertEqual(sorted(m["other"] for m in cov["misses"]), ["c", "c"])

    def test_committed_calibrations_and_bad_input(self):
        script = os.path.join(ROOT, "scripts", "knee_across_calls.py")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "k.json")
            r = subprocess.run([sys.executable, script, *CALS, "--json", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("NVIDIA H100", r.stdout)
            doc = json.load(open(out))
            self.assertGreater(doc["coverage"]["cases"], 0)
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                f.write("{not json")
            out2 = os.path.join(tmp, "k2.json")
            r = subprocess.run([sys.executable, script, CALS[0], bad, "--json", out2], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("bad.json", r.stderr)
            self.assertFalse(os.path.exists(out2))
            r = subprocess.run([sys.executable, script, CALS[0], "--K", "x"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
