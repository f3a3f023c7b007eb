"""The plot scripts on what a new user gives them (tests layer): a missing file, a file that is not JSON, a
result of the wrong kind and a missing matplotlib each end with one "<script>: error:" line and a documented
exit code (2, or 77 for matplotlib), never a traceback. Runs with or without matplotlib installed: the inputs
are judged before matplotlib is imported, and a stand-in package that fails to import plays the missing one."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
DATA = os.path.join(ROOT, "tests", "data")
CALIBRATION = os.path.join(DATA, "gate", "baseline.json")  # a calibration result: remote-store points, a model
GATE_CONFIG = os.path.join(DATA, "gate", "gate.json")      # JSON, but no result file


def run(script, *args, env=None):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, script), *args], capture_output=True, text=True,
                          env=env)


class PlotInputs(unittest.TestCase):
    def assert_refused(self, proc, code, *needles):
        self.assertEqual(proc.returncode, code, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn(": error: ", proc.stderr)
        for n in needles:
            self.assertIn(n, proc.stderr)

    def test_missing_file(self):
        for script in ("plot_calibration.py", "plot_fa_a2a.py", "plot_megamoe.py"):
            with self.subTest(script=script):
                self.assert_refused(run(script, "/no/such/file.json"), 2, "cannot read /no/such/file.json")

    def test_not_json_and_not_a_result(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write("not json at all")
            f.flush()
            self.assert_refused(run("plot_calibration.py", f.name), 2, "is not JSON")
        self.assert_refused(run("plot_calibration.py", GATE_CONFIG), 2, "not an xstage result file",
                            "xstage-calibrate")

    def test_wrong_kind_of_result(self):
        self.assert_refused(run("plot_fa_a2a.py", CALIBRATION), 2, "has no fa_a2a points", "xstage-bench fa_a2a")
        self.assert_refused(run("plot_megamoe.py", CALIBRATION), 2, "no measured megamoe point")

    def test_outputs_never_overwrite_an_input_or_write_through_a_link(self):
        # From the hostile review of 2026-12-07: a PNG replaced the calibration it plotted (default output of an input
        # named *.png, or --out onto it) and a symlinked --out wrote through to its target.
        with open(CALIBRATION, "rb") as f:
            original = f.read()
        with tempfile.TemporaryDirectory() as d:
            cal_png = os.path.join(d, "c.png")
            victim = os.path.join(d, "victim.json")
            for path in (cal_png, victim):
                with open(path, "wb") as f:
                    f.write(original)
            os.symlink(victim, os.path.join(d, "lnk.png"))
            os.mkdir(os.path.join(d, "dir.png"))
            cases = [((cal_png,), "is the input"),
                     ((victim, "--out", victim.replace(".json", ".png")), None),
                     ((victim, "--out", os.path.join(d, "lnk.png")), "symbolic link"),
                     ((victim, "--out", os.path.join(d, "dir.png")), "not a regular file"),
                     ((victim, "--out", os.path.join(d, "x.json")), "ending in .png"),
                     ((victim, "--out", os.path.join(d, "no", "x.png")), "does not exist")]
            for args, needle in cases:
                if needle is None:
                    continue
                with self.subTest(args=args):
                    self.assert_refused(run("plot_calibration.py", *args), 2, needle)
            for path in (cal_png, victim):
                with open(path, "rb") as f:
                    self.assertEqual(f.read(), original, path)
            self.assertEqual(sorted(os.listdir(d)), ["c.png", "dir.png", "lnk.png", "victim.json"])

    def test_missing_matplotlib_says_how_to_install_it(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "matplotlib"))
            with open(os.path.join(d, "matplotlib", "__init__.py"), "w") as f:
                f.write('raise ImportError("stand-in: matplotlib is not installed")\n')
            env = dict(os.environ, PYTHONPATH=d)
            self.assert_refused(run("plot_calibration.py", CALIBRATION, "--out", os.path.join(d, "x.png"), env=env),
                                77, "matplotlib is not installed for", "-m pip install matplotlib")


if __name__ == "__main__":
    unittest.main()
