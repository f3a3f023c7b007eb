"""scripts/moe_matrix_report.py on the synthetic fixture (answers by hand, see moe_fixture.py) and on the
committed dsv4_flash result file (tests layer; standard library only, no GPU)."""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "moe_matrix_report.py")
COMMITTED = os.path.join(ROOT, "results", "h200", "megamoe", "megamoe-dsv4_flash-bn128.json")
sys.path.insert(0, HERE)
import moe_fixture  # noqa: E402


def run_report(paths, out_dir, *flags):
    out_json, out_md = os.path.join(out_dir, "summary.json"), os.path.join(out_dir, "tables.md")
    proc = subprocess.run([sys.executable, SCRIPT, *paths, "--out-json", out_json, "--out-md", out_md, *flags],
                          capture_output=True, text=True)
    return proc, out_json, out_md


class FixtureReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.paths = moe_fixture.write_fixture(cls.tmp.name)
        cls.proc, out_json, out_md = run_report(cls.paths, cls.tmp.name)
        if cls.proc.returncode != 0:
            raise AssertionError(cls.proc.stderr)
        with open(out_json) as f:
            cls.s = json.load(f)
        with open(out_md) as f:
            cls.md = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_completeness_lists_missing_failed_unverified_wrong(self):
        c = self.s["completeness"]
        self.assertEqual(c["expected"], 196)
        self.assertEqual(c["ok"], 192)
        self.assertFalse(c["complete"])
        self.assertEqual(c["wrong_rows"], 3)
        g = c["groups"]["host66"]
        self.assertEqual(g["missing"], ["host K66 hy3 fp8 balanced T16384"])
        self.assertEqual([e["config"] for e in g["failed"]], ["host K66 mimo_v2_5 bf16 balanced T16384"])
        self.assertEqual([e["config"] for e in g["unverified"]], ["host K66 qwen3_5 bf16 skewed T2048"])
        self.assertEqual([e["config"] for e in g["wrong"]], ["host K66 glm_5_2 fp8 skewed T2048"])
        self.assertEqual((c["groups"]["local66"]["ok"], c["groups"]["host132"]["ok"]), (84, 28))
        # 28 host132 made after the run, one host66 point without `made`.
        self.assertEqual(len(c["without_before_run_prediction"]), 28 + 1)
        self.assertEqual(c["superseded"], [{"src": "matrix-a.json#0", "by": c["superseded"][0]["by"]}])
        self.assertEqual(len(c["outside_matrix"]), 10 + 3 + 1)
        self.assertFalse(self.s["bars"]["complete_verified_predicted"])
        self.assertFalse(self.s["bars"]["zero_wrong_rows"])

    def test_speedup_statistics_by_hand(self):
        st = self.s["speedup"]["host66"]["all"]
        logs = math.log(1.04) + math.log(1 / 1.05) + math.log(0.99) + math.log(1.6) + 65 * math.log(1.2)
        self.assertEqual(st["n"], 80)
        self.assertAlmostEqual(st["geomean"], math.exp(logs / 80), places=12)
        self.assertAlmostEqual(st["median"], 1.2, places=12)
        self.assertEqual((st["max"]["value"], st["max"]["config"]), (1.6, "host K66 dsv4_flash bf16 skewed T6976"))
        self.assertAlmostEqual(st["min"]["value"], 1 / 1.05, places=12)
        fl = self.s["speedup"]["host66"]["flagged"]
        self.assertEqual(fl["n"], 67)  # not dit_moe (stall 0), not mimo fp8 bal 2048 (wave_rate_bound_ok true)
        self.assertEqual(fl["key_counts"], {"wave_rate_bound_ok": 1, "wave_stall_per_l2_tile_s": 79})
        self.assertAlmostEqual(fl["geomean"], math.exp((math.log(1 / 1.05) + math.log(1.6) + 65 * math.log(1.2)) / 67),
                               places=12)
        eq14 = self.s["speedup"]["host66"]["eq14_violated"]
        self.assertEqual(eq14["n"], 11)
        self.assertAlmostEqual(eq14["geomean"], 1.2, places=12)
        self.assertAlmostEqual(self.s["speedup"]["host132"]["all"]["geomean"], 1.3, places=12)
        self.assertEqual(self.s["speedup"]["local66"]["all"]["n"], 84)
        by = self.s["speedup"]["host66"]["by"]
        self.assertEqual(by["shape"]["qwen3_5"], {"n": 11, "geomean": by["shape"]["qwen3_5"]["geomean"]})
        self.assertAlmostEqual(by["shape"]["qwen3_5"]["geomean"], 1.2, places=12)
        self.assertAlmostEqual(by["shape"]["dit_moe"]["geomean"], 1.04 ** (1 / 12), places=12)
        self.assertEqual(sum(v["n"] for v in by["routing"].values()), 80)

    def test_regressions_beside_local_control(self):
        g = self.s["speedup"]["host66"]
        self.assertEqual([r["config"] for r in g["regressions"]], ["host K66 dsv4_pro fp8 balanced T16384"])
        self.assertAlmostEqual(g["regressions"][0]["local_control"]["median"], 0.95)
        self.assertEqual([r["config"] for r in g["below_one_within_noise"]], ["host K66 mimo_v2_5 fp8 balanced T2048"])
        self.assertEqual(g["noise_not_recorded"], [])

    def test_advisor_judged_before_run_only(self):
        a = self.s["advisor"]["before_run"]
        self.assertEqual(a["n"], 79)
        self.assertEqual(a["agree"], 76)
        self.assertEqual(sorted(a["disagreements"]), sorted([
            "host K66 dit_moe fp8 skewed T16384", "host K66 dsv4_pro fp8 balanced T16384",
            "host K66 mimo_v2_5 fp8 balanced T2048"]))
        self.assertAlmostEqual(a["worst"]["choice_slowdown"], 0.05, places=12)
        self.assertEqual(a["worst"]["config"], "host K66 dsv4_pro fp8 balanced T16384")
        self.assertFalse(a["bar_ok"])
        self.assertEqual(sorted(a["over_bar"]), ["host K66 dit_moe fp8 skewed T16384",
                                                 "host K66 dsv4_pro fp8 balanced T16384"])
        self.assertEqual(a["speedup_error_median"], 0.0)
        self.assertEqual(a["speedup_error_p90"], 0.0)
        self.assertAlmostEqual(a["speedup_error_max"], 0.3 / 1.6, places=12)
        self.assertEqual(a["D_differs"], ["host K66 dsv4_flash bf16 skewed T6976"])
        after = self.s["advisor"]["after_run"]
        self.assertEqual(after["n"], 28)
        self.assertAlmostEqual(after["speedup_error_median"], 0.2 / 1.3, places=12)
        self.assertEqual([e["config"] for e in self.s["advisor"]["not_recorded"]],
                         ["host K66 dsv4_pro bf16 balanced T2048"])
        self.assertFalse(self.s["bars"]["advisor_never_slower_than_bar"])

    def test_table2_error_and_ordering(self):
        t = self.s["table2"]
        self.assertTrue(all(r["measured"] for r in t["rows"]))
        self.assertEqual(t["n_rel_errors"], 24)
        self.assertAlmostEqual(t["median_rel_error"], 0.15, places=9)
        self.assertTrue(t["bar_ok"])
        self.assertTrue(t["ordering"]["bf16"]["preserved"])
        self.assertAlmostEqual(t["ordering"]["bf16"]["spearman"], 1.0, places=12)
        fp8 = t["ordering"]["fp8"]
        self.assertEqual((fp8["pairs"], fp8["concordant"], fp8["discordant"]), (21, 20, [["qwen3_5", "hy3"]]))
        self.assertAlmostEqual(fp8["spearman"], 1 - 6 * 2 / (7 * 48), places=12)
        self.assertFalse(t["ordering_preserved"])
        # The fixture's local control waits as much as host: no excess, so the error is the prediction itself.
        hy3_fp8 = next(r for r in t["rows"] if r["shape"] == "hy3" and r["precision"] == "fp8")
        self.assertAlmostEqual(hy3_fp8["expert_wave"]["excess_over_local_s"], 0.0, places=15)
        self.assertAlmostEqual(hy3_fp8["expert_wave"]["abs_error_vs_excess_s"], 2.25e-6, places=15)
        self.assertAlmostEqual(hy3_fp8["interleaved"]["abs_error_vs_excess_s"], 0.8e-6, places=15)
        self.assertAlmostEqual(t["max_abs_error_vs_excess_s"], 10.5e-6, places=15)
        ctrl = self.s["negative_control"]
        self.assertEqual(len(ctrl), 12)  # every dit_moe host66 point, the 1.04 one included
        self.assertEqual(sum(not c["within_tie_band"] for c in ctrl), 1)
        self.assertTrue(all(c["model_wave_stall_per_l2_tile_s"] == 0.0 and c["advisor"] == "either" for c in ctrl))

    def test_eq14_confusion(self):
        e = self.s["eq14"]
        self.assertEqual(e["before_run"]["n"], 79)
        self.assertEqual(e["before_run"]["confusion"], {"holds_reached": 57, "holds_not_reached": 11,
                                                        "violated_reached": 1, "violated_not_reached": 10})
        self.assertEqual(e["after_run"]["confusion"], {"holds_reached": 20, "holds_not_reached": 4,
                                                       "violated_reached": 0, "violated_not_reached": 4})
        self.assertAlmostEqual(e["local_schedule_trs_scatter"]["max"], 0.05, places=9)
        self.assertFalse(e["local_schedule_trs_scatter"]["tol_below_max"])

    def test_dsweep_stop_and_knee(self):
        sweeps = {s["config"]: s for s in self.s["dsweep"]["sweeps"]}
        self.assertEqual(len(sweeps), 2)
        bf16 = sweeps["host K66 dsv4_flash bf16 skewed T6976 b_n128"]
        self.assertEqual([r["D"] for r in bf16["rows"]], [1, 2, 3, 4, 6, 8, 12, 16, 32, 64])
        self.assertAlmostEqual(bf16["rows"][2]["time_median_s"], 10.15e-3)  # the --D 3 run, not the auto one
        self.assertEqual((bf16["best_D"], bf16["D_stop"], bf16["D_default"]), (4, 3, 3))
        self.assertAlmostEqual(bf16["largest_D_over_best"], 1.15)
        fp8 = sweeps["host K132 dsv4_flash fp8 skewed T6976 b_n128"]
        self.assertEqual([r["D"] for r in fp8["rows"]], [1, 4, 5, 16])
        self.assertEqual((fp8["D_stop"], fp8["D_default"]), (4, 5))

    def test_dsweep_explicit_D_run_beats_the_auto_one_in_any_file_order(self):
        with tempfile.TemporaryDirectory() as d:
            proc, out_json, _ = run_report(list(reversed(self.paths)), d)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out_json) as f:
                sweeps = {s["config"]: s for s in json.load(f)["dsweep"]["sweeps"]}
        row = sweeps["host K66 dsv4_flash bf16 skewed T6976 b_n128"]["rows"][2]
        self.assertEqual((row["D"], row["src"]), (3, "dsweep.json#2"))
        self.assertAlmostEqual(row["time_median_s"], 10.15e-3)

    def test_advised_d_fills_the_slot_with_the_run_at_the_advisors_D(self):
        # A later file re-runs EITHER_WRONG's configuration at the advisor's D = 5 (host and its local twin),
        # plus an interleaved-only D sweep point at the same D that must not fill a matrix slot.
        slot = moe_fixture.EITHER_WRONG
        host = moe_fixture.point(slot, 1.1, d_axis=5)
        host["prediction"]["advisor"].update(schedule="interleaved", D=5, predicted_speedup_low=1.05,
                                             predicted_speedup_high=1.15)
        local = moe_fixture.point(("local",) + slot[1:], 1.02, d_axis=5)
        sweep = moe_fixture.point(slot, 1.0, d_axis=5)
        sweep["axes"]["variants"] = ["interleaved"]
        sweep["extra"].pop("speedup_interleaved_vs_wave")
        label = "host K66 dit_moe fp8 skewed T16384"
        with tempfile.TemporaryDirectory() as d:
            extra = os.path.join(d, "advised.json")
            with open(extra, "w") as f:
                json.dump({"points": [host, local, sweep]}, f)
            for flags, want_src, want_speedup in ((("--advised-d",), "advised.json#0", 1.1),
                                                  ((), "matrix-a.json", 1.04)):
                proc, out_json, _ = run_report(self.paths + [extra], d, *flags)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                with open(out_json) as f:
                    rows = {r["config"]: r for r in json.load(f)["speedup"]["rows"]}
                self.assertTrue(rows[label]["src"].startswith(want_src), (flags, rows[label]["src"]))
                self.assertAlmostEqual(rows[label]["speedup"]["median"], want_speedup)
                local_row = rows["local K66 dit_moe fp8 skewed T16384"]
                self.assertAlmostEqual(local_row["speedup"]["median"], 1.02 if flags else 1.05)

    def test_expert_wave_recommendation_is_judged(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        from moe_matrix import analysis  # noqa: E402
        right = analysis.judge_advisor({"schedule": "expert_wave"}, 0.9, 0.02)
        wrong = analysis.judge_advisor({"schedule": "expert_wave"}, 1.1, 0.02)
        self.assertTrue(right["agree"])
        self.assertAlmostEqual(right["choice_slowdown"], -0.1)
        self.assertFalse(wrong["agree"])
        self.assertAlmostEqual(wrong["choice_slowdown"], 0.1)
        self.assertIsNone(analysis.judge_advisor({"schedule": "wave"}, 1.1, 0.02))

    def test_clocks(self):
        c = self.s["clocks"]
        self.assertEqual([r["config"] for r in c["throttled"]],
                         ["host K66 dsv4_flash fp8 balanced T2048 D0 b_n128"])
        self.assertEqual([r["config"] for r in c["schedule_clock_warnings"]],
                         ["host K66 dsv4_flash fp8 balanced T2048 D0 b_n128"])
        self.assertEqual(c["throttled_not_recorded"], 28 + 3)

    def test_markdown_traceable_and_not_invented(self):
        self.assertIn("| dsv4_flash | bf16 |", self.md)
        self.assertIn("`matrix-a.json#", self.md)
        self.assertIn("Matrix INCOMPLETE", self.md)
        self.assertIn("host K66 dsv4_pro fp8 balanced T16384", self.md)
        self.assertEqual(self.proc.stdout.strip().splitlines(), self.s["readme_lines"])

    def test_fail_on_bars_exit_1(self):
        with tempfile.TemporaryDirectory() as d:
            proc, _, _ = run_report(self.paths, d, "--fail-on-bars")
            self.assertEqual(proc.returncode, 1, proc.stderr)


class BadInput(unittest.TestCase):
    def test_not_json_exit_2_nothing_written(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{not json")
            proc, out_json, out_md = run_report([bad], d)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("bad.json: not JSON", proc.stderr)
            self.assertFalse(os.path.exists(out_json) or os.path.exists(out_md))

    def test_no_megamoe_point_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            other = os.path.join(d, "other.json")
            with open(other, "w") as f:
                json.dump({"schema": {"name": "xstage.result"}, "points": [{"suite": "fa_a2a", "axes": {}}]}, f)
            proc, out_json, _ = run_report([other], d)
            self.assertEqual(proc.returncode, 2)
            self.assertIn("no megamoe point", proc.stderr)
            self.assertFalse(os.path.exists(out_json))

    def test_bad_tolerance_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            proc, _, _ = run_report([COMMITTED], d, "--floor-tol", "-0.1")
            self.assertEqual(proc.returncode, 2)
            self.assertIn("--floor-tol", proc.stderr)


class CommittedFile(unittest.TestCase):
    def test_committed_dsv4_flash_file_reports_incomplete_matrix(self):
        with tempfile.TemporaryDirectory() as d:
            proc, out_json, out_md = run_report([COMMITTED], d)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out_json) as f:
                s = json.load(f)
            with open(out_md) as f:
                md = f.read()
        # Absent data print "not measured", never a number: a Table 2 row of a shape not run.
        qwen_row = next(line for line in md.splitlines() if line.startswith("| qwen3_5 | bf16 |"))
        self.assertEqual(qwen_row.count("not measured"), 16)
        self.assertIn("Advisor judged on before-run predictions: not measured.", s["readme_lines"])
        c = s["completeness"]
        self.assertFalse(c["complete"])
        self.assertEqual(c["expected"], 196)
        self.assertEqual(c["ok"], 6)  # dsv4_flash skewed T6976 bf16/fp8 on host66, local66, host132
        self.assertEqual(len(c["groups"]["host66"]["missing"]), 82)
        self.assertEqual(c["wrong_rows"], 0)
        self.assertEqual(c["outside_matrix"], [])  # local K_SM 132: an optional control slot, not required
        self.assertEqual(s["speedup"]["local132"]["all"]["n"], 2)


if __name__ == "__main__":
    unittest.main()
