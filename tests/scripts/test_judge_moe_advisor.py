"""scripts/judge_moe_advisor.py end to end on the committed H200 MegaMoE host points and their calibration,
with the built xstage-predict (XS_PREDICT; the test skips itself without it): the README's published judgement
(results/h200/megamoe/judge-advisor.json: the advisor recommends interleaved at all 6 points, the measured
faster one at all 6, and its fluid brackets) is what the script and the advisor still give; a missing
xstage-predict and a calibration whose target matches no point are refused with exit 2.
Run: XS_PREDICT=build-host/bin/xstage-predict python3 -m unittest -v test_judge_moe_advisor (from tests/scripts)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "judge_moe_advisor.py")
MEGAMOE = os.path.join(ROOT, "results", "h200", "megamoe")
RESULTS = [os.path.join(MEGAMOE, f"megamoe-dsv4_flash-bn{b}.json") for b in (128, 256)]
CALIBRATION = os.path.join(MEGAMOE, "calibration-moe-pattern.json")
PREDICT = os.environ.get("XS_PREDICT", "")


def run(args):
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)


@unittest.skipUnless(PREDICT and os.path.exists(PREDICT), "XS_PREDICT (the built xstage-predict) not given")
class JudgeMoeAdvisor(unittest.TestCase):
    def test_the_published_judgement_still_holds(self):
        with open(os.path.join(MEGAMOE, "judge-advisor.json")) as f:
            published = json.load(f)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "judge.json")
            r = run(RESULTS + ["--model", CALIBRATION, "--tflops-bf16", "608", "--tflops-fp8", "1020",
                               "--predict", PREDICT, "--out", out])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                judged = json.load(f)
        self.assertEqual(judged["points"], published["points"])
        self.assertEqual(judged["agree_fraction"], published["agree_fraction"])
        self.assertTrue(judged["slowdown_bar_ok"])
        key = lambda row: (row["file"], row["precision"], row["K_SM"], row["block_n"])
        now = {key(row): row for row in judged["rows"]}
        for row in published["rows"]:
            self.assertIn(key(row), now)
            got = now[key(row)]
            self.assertEqual(got["recommended"], row["recommended"], key(row))
            self.assertEqual(got["measured_faster"], row["measured_faster"], key(row))
            self.assertAlmostEqual(got["predicted_speedup_min"], row["predicted_speedup_min"], places=3)
            self.assertAlmostEqual(got["predicted_speedup_max"], row["predicted_speedup_max"], places=3)
            self.assertAlmostEqual(got["speedup_error"], row["speedup_error"], places=3)

    def test_a_missing_predict_binary_is_refused(self):
        r = run(RESULTS + ["--model", CALIBRATION, "--tflops-bf16", "608", "--predict", "/nonexistent/xstage-predict"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("xstage-predict not found", r.stderr)

    def test_a_calibration_of_another_target_judges_nothing(self):
        with open(CALIBRATION) as f:
            cal = json.load(f)
        cal.setdefault("config", {})["target"] = "peer:1"
        with tempfile.TemporaryDirectory() as tmp:
            other = os.path.join(tmp, "cal-peer.json")
            with open(other, "w") as f:
                json.dump(cal, f)
            r = run(RESULTS + ["--model", other, "--tflops-bf16", "608", "--predict", PREDICT])
        self.assertEqual(r.returncode, 2)
        self.assertIn("no measured point on the calibration's target", r.stderr)


if __name__ == "__main__":
    unittest.main()
