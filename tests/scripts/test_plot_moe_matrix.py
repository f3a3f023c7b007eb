"""Smoke test of scripts/plot_moe_matrix.py (tests layer): runs only where some python3 has matplotlib
(the default one may not: /usr/bin/python3 is tried too); otherwise checks the documented exit 77."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "plot_moe_matrix.py")
COMMITTED = os.path.join(ROOT, "results", "h200", "megamoe", "megamoe-dsv4_flash-bn128.json")
sys.path.insert(0, HERE)
import moe_fixture  # noqa: E402
FIGURES = ("fig8-speedup", "fig10-trs", "fig9-timeline", "table2-stall", "dsweep")


def has_matplotlib(python):
    if not os.path.exists(python):
        return False
    return subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0


PLOTTING_PYTHON = next((p for p in (sys.executable, "/usr/bin/python3") if has_matplotlib(p)), None)


class PlotSmoke(unittest.TestCase):
    @unittest.skipIf(PLOTTING_PYTHON is None, "no python3 with matplotlib here")
    def test_writes_every_figure_from_real_and_sweep_points(self):
        with tempfile.TemporaryDirectory() as d:
            fixture_dir = os.path.join(d, "fx")
            os.mkdir(fixture_dir)
            sweep = [p for p in moe_fixture.write_fixture(fixture_dir) if p.endswith("dsweep.json")]
            proc = subprocess.run([PLOTTING_PYTHON, SCRIPT, COMMITTED, *sweep, "--out-dir", d],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            for name in FIGURES:
                with open(os.path.join(d, f"megamoe-matrix-{name}.png"), "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)

    @unittest.skipIf(PLOTTING_PYTHON is None, "no python3 with matplotlib here")
    def test_missing_out_dir_exit_2(self):
        proc = subprocess.run([PLOTTING_PYTHON, SCRIPT, COMMITTED, "--out-dir", "/nonexistent/dir"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--out-dir", proc.stderr)

    @unittest.skipIf(PLOTTING_PYTHON == sys.executable, "this python3 has matplotlib")
    def test_without_matplotlib_exit_77(self):
        with tempfile.TemporaryDirectory() as d:
            proc = subprocess.run([sys.executable, SCRIPT, COMMITTED, "--out-dir", d], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 77)
        self.assertIn("matplotlib is not installed", proc.stderr)


if __name__ == "__main__":
    unittest.main()
