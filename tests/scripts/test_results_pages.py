"""scripts/results_pages.py: the committed pages equal what the canonical files give; a stale page fails the check;
the score sections render the tallies beside the constant predictors or say "not yet scored"; plots are optional and never change
the pages; a file missing from its MANIFEST is refused."""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "results_pages.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import results_pages  # noqa: E402


def run(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env)


class CommittedPages(unittest.TestCase):
    def test_committed_pages_match_the_result_files(self):
        r = run("--check")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_stale_page_fails_the_check_and_names_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in results_pages.PAGES:
                shutil.copy(os.path.join(ROOT, "docs", "results", name), tmp)
            path = os.path.join(tmp, "fa_a2a.md")
            with open(path, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("0.959", text)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace("0.959", "0.999", 1))
            r = run("--check", "--pages-dir", tmp)
            self.assertEqual(r.returncode, 1)
            self.assertIn("fa_a2a.md differs", r.stderr)
            self.assertIn("-| no clusters", r.stderr)

    def test_without_matplotlib_plots_are_skipped_and_pages_unchanged(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocker = os.path.join(tmp, "block", "matplotlib")
            os.makedirs(blocker)
            with open(os.path.join(blocker, "__init__.py"), "w") as f:
                f.write("raise ImportError('matplotlib blocked by the test')\n")
            pages = os.path.join(tmp, "pages")
            env = dict(os.environ, PYTHONPATH=os.path.join(tmp, "block"))
            r = run("--plots", "--pages-dir", pages, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("plots skipped: matplotlib is not installed", r.stderr)
            for name in results_pages.PAGES:
                with open(os.path.join(pages, name), "rb") as a, \
                        open(os.path.join(ROOT, "docs", "results", name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)


class ReadmeBlock(unittest.TestCase):
    """The README's headline tables sit between two markers and are checked like the pages."""

    def root_with_readme(self, tmp, readme_text):
        os.symlink(os.path.join(ROOT, "results"), os.path.join(tmp, "results"))
        shutil.copytree(os.path.join(ROOT, "docs", "results"), os.path.join(tmp, "docs", "results"))
        with open(os.path.join(tmp, "README.md"), "w", encoding="utf-8") as f:
            f.write(readme_text)

    def readme(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            return f.read()

    def test_an_edited_number_in_the_readme_block_fails_the_check(self):
        text = self.readme()
        block = text[text.index(results_pages.BEGIN):text.index(results_pages.END)]
        self.assertIn("of 114 host configurations", block)
        with tempfile.TemporaryDirectory() as tmp:
            self.root_with_readme(tmp, text.replace("of 114 host configurations", "of 115 host configurations", 1))
            r = run("--root", tmp, "--check")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("README.md differs", r.stderr)

    def test_prose_outside_the_block_is_free(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.root_with_readme(tmp, self.readme().replace("# xstage", "# xstage (edited prose)", 1))
            r = run("--root", tmp, "--check")
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_readme_without_the_markers_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.root_with_readme(tmp, self.readme().replace(results_pages.END, ""))
            r = run("--root", tmp, "--check")
            self.assertEqual(r.returncode, 2)
            self.assertIn("needs exactly one results block", r.stderr)


class ScoreSection(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.inputs = results_pages.Inputs(self.tmp)
        self.rel = "results/h200/fa_a2a/prediction-score.json"
        self.moe = "results/h200/megamoe/advisor-score.json"

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, rel, obj):
        os.makedirs(os.path.dirname(os.path.join(self.tmp, rel)), exist_ok=True)
        with open(os.path.join(self.tmp, rel), "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))

    def test_absent_file_says_not_yet_scored(self):
        self.assertIn("Not yet scored", "\n".join(results_pages.fa_score_section(self.inputs, self.rel, "t")))
        self.assertIn("Not yet scored", "\n".join(results_pages.moe_score_section(self.inputs, self.moe)))

    def test_fa_tallies_render_beside_the_constant_predictors(self):
        t = {"model": {"agrees": 7, "disagrees": 2, "not_decided": 1}, "zero": {"agrees": 5, "disagrees": 5},
             "model_points_scored": 9, "model_point_median_abs_relative_error": -0.125}
        self.write(self.rel, {"tally": t, "by_calibration": {"results/c.json": t},
                              "rule": {"id": "r1", "written_utc": "2026-12-05T09:25:00Z"},
                              "predictors": {"model": "m", "zero": "E_res = 0"}})
        lines = results_pages.fa_score_section(self.inputs, self.rel, "t")
        self.assertIn("| all points | 7 / 2 / 1 | 5 / 5 / 0 |", lines)
        self.assertIn("- rule `r1`, written 2026-12-05T09:25:00Z", lines)
        self.assertTrue(any("12.5%" in x for x in lines))

    def test_fa_tallies_have_three_outcomes_and_say_the_agreements_on_a_wide_measurement(self):
        t = {"model": {"agrees": 5, "disagrees": 2, "not_decided": 3, "agrees_on_a_wide_measurement": 4},
             "zero": {"agrees": 0, "disagrees": 6, "not_decided": 0, "agrees_on_a_wide_measurement": 0}}
        self.write(self.rel, {"tally": t, "rule": {"id": "r6", "written_utc": "2026-12-07T01:10:00Z"},
                              "predictors": {"model": "m", "zero": "E_res = 0"}})
        lines = results_pages.fa_score_section(self.inputs, self.rel, "t")
        self.assertIn("| all points | 5 / 2 / 3 (4 of the agreements on a wide measurement) | 0 / 6 / 0 |", lines)
        self.assertTrue(any("agrees / disagrees / not decided" in x for x in lines))
        self.assertFalse(any("not decisive" in x for x in lines))

    def test_a_tally_with_the_fourth_outcome_is_refused(self):
        t = {"model": {"agrees": 1, "disagrees": 2, "not_decided": 3, "measurement_not_decisive": 4}}
        self.write(self.rel, {"tally": t, "rule": {"id": "r4", "written_utc": "2026-12-05T21:50:00Z"},
                              "predictors": {"model": "m"}})
        with self.assertRaises(ValueError):
            results_pages.fa_score_section(self.inputs, self.rel, "t")

    def test_moe_policies_render_one_row_each(self):
        self.write(self.moe, {"policies": [
            {"policy": "advisor", "choice": {"agrees": 3, "disagrees": 1, "not_decided": 0},
             "regret": {"mean": 1.01, "worst": 1.5, "common": {"n": 3, "mean": 1.02}},
             "distinct_choices": ["interleaved"],
             "speedup": {"spearman": 0.5, "spearman_own_d": 0.25, "pairs_own_d": 4, "abs_error_median": 0.2,
                         "abs_error_p90": 0.4}},
            {"policy": "always expert-wave", "choice": {"agrees": 0, "disagrees": 4}, "regret": {"mean": 1.2,
             "worst": 1.6}, "speedup": "none"}], "statements": ["s1"]})
        lines = results_pages.moe_score_section(self.inputs, self.moe)
        self.assertIn("| advisor | 3 / 1 / 0 | 1.0100 | 1.5000 | 1.0200 (3) | 0.50; own D 0.25 (4 pairs) | 20.0%, 40.0% "
                      "| interleaved |", lines)
        self.assertIn("| always expert-wave | 0 / 4 / 0 | 1.2000 | 1.6000 | – | – | – |  |", lines)
        self.assertIn("- s1", lines)

    def test_unreadable_file_is_refused(self):
        self.write(self.rel, "{not json")
        with self.assertRaises(results_pages.InputError):
            results_pages.fa_score_section(self.inputs, self.rel, "t")


class Manifest(unittest.TestCase):
    def test_a_file_not_named_in_the_manifest_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "results", "h200", "megamoe"))
            with open(os.path.join(tmp, "results", "h200", "megamoe", "MANIFEST"), "w") as f:
                f.write("nothing named here\n")
            inputs = results_pages.Inputs(tmp)
            inputs.app = "megamoe"
            with self.assertRaises(results_pages.InputError) as e:
                inputs.json("results/h200/megamoe/megamoe-dsv4_flash-bn128.json")
            self.assertIn("not named in results/h200/megamoe/MANIFEST", str(e.exception))

    def test_missing_input_exits_2_with_the_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = run("--root", tmp, "--check")
            self.assertEqual(r.returncode, 2)
            self.assertIn("MANIFEST is missing", r.stderr)


class MoeVsTorchBar(unittest.TestCase):
    """Issue 29's speed bar and the b_n tally are computed from the vs-bn files; a configuration that failed or is
    missing at b_n 256 is a miss, not a silent drop (the adversarial review of 2026-12-07 night)."""

    @staticmethod
    def point(shape, rows, ratio, status="ok", reason=""):
        return {"status": status, "reason": reason, "config": {"shape": shape, "m_per_expert": [rows]},
                "ratios": {"whole_kernel_over_torch_l1_l2": {"kernel_serial": ratio, "kernel_interleaved": ratio,
                                                              "kernel_expert_wave_w1": ratio}}}

    def files(self, at_256):
        calls = results_pages.MOE_VS_TORCH_CALLS
        base = [self.point("hy3", 1, 0.8), self.point("dsv4_flash", 2, 0.8)]
        return {(c, bn): {"points": base if bn == 128 else at_256} for c in calls for bn in (128, 256)}

    def test_every_configuration_above_the_bar_is_met(self):
        rows = results_pages.moe_vs_torch_rows(self.files([self.point("hy3", 1, 0.96), self.point("dsv4_flash", 2, 0.97)]))
        self.assertTrue(results_pages.every_config_meets(rows))

    def test_a_failed_or_missing_configuration_is_a_miss(self):
        failed = [self.point("hy3", 1, 0.96), self.point("dsv4_flash", 2, None, status="failed", reason="OOM")]
        self.assertFalse(results_pages.every_config_meets(results_pages.moe_vs_torch_rows(self.files(failed))))
        self.assertFalse(results_pages.every_config_meets(results_pages.moe_vs_torch_rows(self.files([]))))

    def test_a_width_the_shape_cannot_tile_is_not_a_miss(self):
        pts = [self.point("hy3", 1, 0.96), self.point("dit_moe", 3, None, status="failed",
                                                          reason="h = 1408 must be a positive multiple of the tile width")]
        self.assertTrue(results_pages.every_config_meets(results_pages.moe_vs_torch_rows(self.files(pts))))

    def test_the_tally_counts_slower_schedules(self):
        faster, compared, slower = results_pages.block_n_tally(
            self.files([self.point("hy3", 1, 0.9), self.point("dsv4_flash", 2, 0.7)]))
        self.assertEqual((faster, compared), (2 * 4, 2 * 2 * 4))
        self.assertTrue(any(s.startswith("dsv4_flash") for s in slower))


if __name__ == "__main__":
    unittest.main()
