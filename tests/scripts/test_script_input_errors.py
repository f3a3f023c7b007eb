"""Malformed input to the post-processing scripts interference_table.py, loaded_cap_report.py and moe_gemm_rates.py
(a missing file, a file that is not JSON, JSON of the wrong schema, an output that cannot be written): each exits 2
with one line on stderr, `<script>: <problem> (<accepted form>)`, never a Python traceback, and writes nothing.
Run: python3 -m unittest -v test_script_input_errors (from tests/scripts; CTest scripts.script_input_errors)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HOST = os.path.join(ROOT, "results", "h100", "interference-3a97dd2", "calibration-loaded-host-refit-interference.json")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), *args], capture_output=True,
                          text=True)


class ScriptInputErrors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def file(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def refused(self, script, *args, needle=""):
        r = run(script, *args)
        with self.subTest(script=script, args=args):
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            name = script[:-3]
            self.assertTrue(lines[0].startswith(name + ".py: ") or lines[0].startswith(name + ": "), lines[0])
            self.assertIn("(", lines[0])  # the accepted form, in parentheses
            self.assertIn(needle, lines[0])
            self.assertEqual(r.stdout, "", "a refused script printed a partial table")
        return r

    def cases(self):
        """(name, text) of malformed inputs every script must refuse."""
        return [("not-json.json", "{not json"), ("list.json", "[]"), ("number.json", "3"),
                ("no-points.json", json.dumps({"points": 7})),
                ("bad-point.json", json.dumps({"points": [{"spec": {"suite": "loaded"}, "loaded": {"x": 1}}]})),
                ("point-not-object.json", json.dumps({"points": [3]}))]

    def test_sass_loop_ops(self):
        """scripts/device/sass_loop_ops.py (fa.sh part sass): a missing dump or build log, or a bogus flag, was exit 0
        with an empty report (hostile-CLI review of 2026-12-07)."""
        def refused(*args, needle):
            r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "device", "sass_loop_ops.py"), *args],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(r.stdout, "")
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertTrue(lines[0].startswith("sass_loop_ops: "), lines[0])
            self.assertIn("(usage: ", lines[0])
            self.assertIn(needle, lines[0])
        missing = os.path.join(self.tmp.name, "missing.sass")
        refused(missing, needle="missing.sass")
        refused("--bogus", needle="--bogus")
        sass = self.file("k.sass", "")
        refused(sass, "--ptxas", missing, needle="build log")
        refused(sass, "--ptx", sass, needle="--ptx")
        ok = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "device", "sass_loop_ops.py"), sass],
                            capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_interference_table(self):
        self.refused("interference_table.py", os.path.join(self.tmp.name, "missing.json"), needle="missing.json")
        for name, text in self.cases():
            self.refused("interference_table.py", self.file(name, text), needle=name)
        with open(HOST) as f:
            doc = json.load(f)
        for damage in ("parameters", "why", "status"):
            bad = json.loads(json.dumps(doc))
            del bad["extra"]["interference"][damage]
            self.refused("interference_table.py", self.file(f"no-{damage}.json", json.dumps(bad)), needle=damage)
        bad = json.loads(json.dumps(doc))
        bad["extra"]["interference"]["validation"]["held_out"]["by_regime"]["knee"] = {}
        self.refused("interference_table.py", self.file("no-regime-fields.json", json.dumps(bad)))
        bad["extra"]["interference"]["parameters"][0]["value"] = "fast"
        self.refused("interference_table.py", self.file("string-value.json", json.dumps(bad)))
        self.assertEqual(run("interference_table.py", HOST).returncode, 0)

    def test_loaded_cap_report(self):
        self.refused("loaded_cap_report.py", os.path.join(self.tmp.name, "missing.json"), needle="missing.json")
        for name, text in self.cases():
            self.refused("loaded_cap_report.py", self.file(name, text), needle=name)
        # A bad second file: nothing of the first one is printed either.
        self.refused("loaded_cap_report.py", HOST, self.file("list.json", "[]"), needle="list.json")

    def test_moe_gemm_rates(self):
        out = os.path.join(self.tmp.name, "out.json")
        self.refused("moe_gemm_rates.py", "select", os.path.join(self.tmp.name, "missing.json"), "--out", out,
                     needle="missing.json")
        self.refused("moe_gemm_rates.py", "rates", os.path.join(self.tmp.name, "missing.json"), "--out", out,
                     needle="missing.json")
        for name, text in self.cases() + [("rate-no-config.json", json.dumps({"points": [{"status": "ok"}]}))]:
            self.refused("moe_gemm_rates.py", "select", self.file(name, text), "--out", out, needle=name)
            self.refused("moe_gemm_rates.py", "rates", self.file(name, text), "--out", out, needle=name)
        paired = self.file("paired.json", json.dumps({"points": [{
            "status": "ok", "config": {"shape": "s", "precision": "bf16"}, "flops": {"l1": 1e12, "l2": 2e12},
            "contenders": {"torch_l1": {"median_s": 1e-3}, "torch_l2": {"median_s": 2e-3}}}]}))
        self.refused("moe_gemm_rates.py", "rates", paired, "--out", os.path.join(self.tmp.name, "no", "dir", "r.json"),
                     needle="r.json")
        self.assertFalse(os.path.exists(out))
        r = run("moe_gemm_rates.py", "rates", paired, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertEqual(json.load(f)["rates"][0]["l1_flops_per_s"], 1e15)


if __name__ == "__main__":
    unittest.main()
