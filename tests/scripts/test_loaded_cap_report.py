#!/usr/bin/env python3
"""Tests for scripts/loaded_cap_report.py on the committed H100 loaded calibration (results/h100/interference-3a97dd2):
which points' storers reached the burst cap, the unloaded time after the stores and the loaded-tile estimate, on
points whose answers are known from the file (and a hand-made point), and the refusal of an unreadable file.
Run: python3 -m unittest -v test_loaded_cap_report (from tests/scripts; CTest scripts.loaded_cap_report)."""
import copy
import importlib.util
import io
import json
import os
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
spec = importlib.util.spec_from_file_location("loaded_cap_report", os.path.join(ROOT, "scripts", "loaded_cap_report.py"))
lcr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lcr)
HOST = os.path.join(ROOT, "results", "h100", "interference-3a97dd2", "calibration-loaded-host.json")


def find(rows, k, b, g_s):
    return next(r for r in rows if r["K"] == k and r["B_bytes"] == b and abs(r["G_s"] - g_s) < 1e-12)


class CommittedH100Host(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(HOST) as f:
            cls.rows = [r for r in lcr.point_rows(json.load(f)) if r["mainloop"] == "wgmma" and r["working_set"] == "l2"
                        and r["address_mode"] == "fresh"]

    def test_the_2kib_point_beyond_r_ran_most_tiles_after_the_cap(self):
        row = find(self.rows, 132, 2048, 2.5e-6)
        self.assertLess(row["slowdown"], 1.0)  # what the median reports
        for rep in row["repetitions"]:
            self.assertTrue(rep["at_cap"])
            self.assertGreater(rep["unloaded_s"], 0.4e-3)
            self.assertGreater(rep["mean_loaded_tile_s_estimate"], 50 * row["baseline_tile_s"])

    def test_the_64kib_point_beyond_r_never_reached_the_cap(self):
        row = find(self.rows, 132, 65536, 80e-6)
        for rep in row["repetitions"]:
            self.assertFalse(rep["at_cap"])
            self.assertLess(rep["bursts_per_cta"], 0.5 * row["cap"])
            self.assertEqual(rep["unloaded_s"], 0.0)
            self.assertIsNotNone(rep["mean_loaded_tile_s_estimate"])

    def test_a_short_paced_point_gets_no_estimate(self):
        row = find(self.rows, 132, 8192, 80e-6)
        self.assertTrue(all(rep["mean_loaded_tile_s_estimate"] is None and not rep["at_cap"] for rep in row["repetitions"]))


class HandMade(unittest.TestCase):
    def test_the_estimate_divides_the_store_span_by_the_loaded_tiles(self):
        with open(HOST) as f:
            doc = json.load(f)
        p = copy.deepcopy(doc["points"][0])
        k, b = p["spec"]["K"], p["spec"]["B_bytes"]
        p["spec"]["num_bursts"], p["spec"]["loaded"]["tiles_per_cta"] = 10, 100
        p["loaded"]["baseline_tile_time_s"]["median"] = 1e-6
        p["loaded"]["bytes_issued"]["samples"] = [10 * k * b, 9 * k * b]
        p["loaded"]["store_span_s"]["samples"] = [2e-3, 3e-3]
        p["loaded"]["mainloop_span_s"]["samples"] = [2.04e-3, 3e-3]  # 40 tiles of 1 us after the stores
        reps = next(lcr.point_rows({"points": [p]}))["repetitions"]
        self.assertEqual([r["at_cap"] for r in reps], [True, False])
        self.assertAlmostEqual(reps[0]["mean_loaded_tile_s_estimate"], 2e-3 / 60)
        self.assertAlmostEqual(reps[1]["mean_loaded_tile_s_estimate"], 3e-3 / 100)

    def test_an_unreadable_file_exits_2_and_the_table_names_every_point(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(lcr.main([os.path.join(HERE, "no-such-file.json")]), 2)
        self.assertIn("cannot read", err.getvalue())
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(lcr.main([HOST]), 0)
        self.assertEqual(len(out.getvalue().splitlines()), 2 + 34)


if __name__ == "__main__":
    unittest.main()
