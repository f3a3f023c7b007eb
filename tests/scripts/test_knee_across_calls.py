"""scripts/knee_across_calls.py: the bracket ends it computes are the ones PlatformModel::capacity_bracket gives (the
hand-made cases of tests/model/platform_model_test.cpp), its coverage counts a burst planted above the upper end as
a miss, and bad input is exit 2 with nothing written.
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


def cal(bursts, drain_start=2e6, floor=1e6, branch=3e5, r=(1e10, 0.9e10, 1.1e10), q_rows=()):
    """A calibration document with K = 16 evidence and isolated bursts (K, V, p10, max) given as (V, p10, max)."""
    return {"model": {"R_Bps": r[0], "R_ci95": [r[1], r[2]], "Q": list(q_rows),
                      "fit": {"Q": [{"K": 16, "floor_lower_bound_bytes": floor, "drain_start_V_bytes": drain_start,
                                     "branch_estimate_bytes": branch}]}},
            "points": [{"spec": {"suite": "isolated", "K": 16, "B_bytes": v / 16, "target": "host"},
                        "issue_time_max_s": {"p10": p10, "max": mx, "median": p10}} for v, p10, mx in bursts]}


class KneeAcrossCalls(unittest.TestCase):
    def test_bracket_ends_match_the_model_rule(self):
        # The cases of tests/model/platform_model_test.cpp (PlatformModelCapacityBracket), through the script.
        inp = k.bracket_inputs(cal([(2e6, 0.9e-4, 1.2e-4), (4e6, 3.0e-4, 3.5e-4)]))
        lo, up = k.bracket_ends(inp, 16, 2e6)
        self.assertAlmostEqual(lo, 4e6 - 1.1e10 * 3.5e-4)
        self.assertAlmostEqual(up, 2e6 - 0.9e10 * 0.9e-4)
        self.assertAlmostEqual(k.bracket_ends(inp, 16, 4e6)[1], 4e6 - 0.9e10 * 3.0e-4)  # the nearest, not the lowest
        self.assertEqual(k.bracket_ends(inp, 16, 5e6)[0], 0.0)  # past every burst: lower 0
        self.assertIsNone(k.bracket_ends(inp, 16, 1.5e6)[1])  # nothing drained at or below V
        self.assertIsNone(k.bracket_ends(inp, 16, 0.9e6))  # on the floor: the bursts set no end
        # Below the drain start: no upper end (a floor burst bounds Q from below only).
        late = k.bracket_inputs(cal([(2e6, 1e-6, 1.2e-6), (4e6, 3.0e-4, 3.5e-4)], drain_start=4e6))
        self.assertIsNone(k.bracket_ends(late, 16, 3e6)[1])
        # A negative c_hi bounds nothing; the branch above the floor or R without interval: none from the bursts.
        self.assertIsNone(k.bracket_ends(k.bracket_inputs(cal([(2e6, 3e-4, 4e-4)])), 16, 2e6)[1])
        self.assertIsNone(k.bracket_ends(k.bracket_inputs(cal([(2e6, 0.9e-4, 1.2e-4)], branch=2e6)), 16, 2e6))
        self.assertIsNone(k.bracket_ends(k.bracket_inputs(cal([(2e6, 0.9e-4, 1.2e-4)], r=(1e10, 1e10, 1e10))),
                                         16, 2e6)[1])

    def test_coverage_counts_a_burst_above_the_upper_end(self):
        inputs = {"a": k.bracket_inputs(cal([(2e6, 0.9e-4, 1.2e-4)])),
                  "b": k.bracket_inputs(cal([(2e6, 0.9e-4, 1.2e-4)]))}
        up = 2e6 - 0.9e10 * 0.9e-4
        rows = [{"file": "a", "device": "d", "K": 16, "address_mode": "fresh", "V_bytes": 2e6, "c_med_bytes": up - 1e4},
                {"file": "b", "device": "d", "K": 16, "address_mode": "fresh", "V_bytes": 2e6, "c_med_bytes": up + 1e5}]
        cov = k.coverage(rows, inputs, 0)
        self.assertEqual(cov["cases"], 2)
        self.assertEqual(cov["with_upper_end"], 2)
        self.assertEqual(cov["upper_holds"], 1)  # b's burst lies above a's upper end
        self.assertEqual([m["other"] for m in cov["misses"]], ["b"])

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
            for bad_k in ("0", "-132"):
                r = subprocess.run([sys.executable, script, CALS[0], "--K", bad_k], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, bad_k)
            # The same calibration twice (a path, a link, a copy) would cover itself: refused, nothing written.
            link = os.path.join(tmp, "link.json")
            os.symlink(CALS[0], link)
            for twice in ([CALS[0], CALS[0]], [CALS[0], link]):
                r = subprocess.run([sys.executable, script, *twice, "--json", out2], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("same file", r.stderr)
                self.assertFalse(os.path.exists(out2))
            self.assertEqual(os.stat(out).st_mode & 0o777, 0o644)


if __name__ == "__main__":
    unittest.main()
