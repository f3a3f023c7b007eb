#!/usr/bin/env python3
"""Tests for scripts/moe_vs_grouped_mm.py without torch or a GPU (scripts/moe_pairing.py): the C descriptor's
layout against src/xs/moe/run/moe_c_api.h, the routing layout built from rows per expert, the configurations read from a
bench result, the round order, the ratios (>= 1: the kernel at least as fast) and the verification rule (an
all-zero output fails), and the usage refusals (exit 2 before torch is imported).
Run: python3 -m unittest -v test_moe_vs_grouped_mm (from tests/scripts; CTest scripts.moe_vs_grouped_mm)."""
import ctypes
import importlib.util
import io
import os
import re
import sys
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import moe_pairing as mp  # noqa: E402

spec = importlib.util.spec_from_file_location("moe_vs_grouped_mm", os.path.join(ROOT, "scripts", "moe_vs_grouped_mm.py"))
mvg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mvg)


class Descriptor(unittest.TestCase):
    def test_fields_follow_the_header_in_order(self):
        header = open(os.path.join(ROOT, "src", "xs", "moe", "run", "moe_c_api.h")).read()
        body = header[header.index("typedef struct XsMoeDesc {"):header.index("} XsMoeDesc;")]
        names = []
        for line in body.splitlines()[1:]:
            code = line.split("/*")[0].strip()
            if not code:
                continue
            for part in re.sub(r"\[.*?\]", "", code.rstrip(";")).split(","):
                names.append(re.findall(r"[A-Za-z_]\w*", part)[-1])
        self.assertEqual(names, [f[0] for f in mp.XsMoeDesc._fields_])
        version = re.search(r"#define XS_MOE_C_API_VERSION (\d+)", header).group(1)
        self.assertEqual(int(version), mp.C_API_VERSION)
        self.assertEqual(int(re.search(r"#define XS_MOE_MAX_RANKS (\d+)", header).group(1)), mp.MAX_RANKS)
        self.assertEqual(ctypes.sizeof(mp.XsMoeDesc) % 8, 0)


class Layout(unittest.TestCase):
    def test_blocks_padding_and_distinct_destinations(self):
        lay = mp.routing_layout([130, 0, 5], tokens_per_rank=64, num_ranks=4, top_k=2, seed=3)
        self.assertEqual(lay["expert_first_block"], [0, 2, 2, 3])
        self.assertEqual(lay["row_block_expert"], [0, 0, 2])
        self.assertEqual(len(lay["pool_arrival"]), 3 * 128)
        valid = [i for i, a in enumerate(lay["pool_arrival"]) if a >= 0]
        self.assertEqual(len(valid), 135)
        self.assertEqual(sorted(lay["pool_arrival"][i] for i in valid), list(range(135)))
        dests = {(lay["pool_dst_rank"][i], lay["pool_dst_slot"][i]) for i in valid}
        self.assertEqual(len(dests), 135)
        self.assertTrue(all(0 <= r < 4 and 0 <= s < 128 for r, s in dests))
        self.assertTrue(all(lay["pool_dst_rank"][i] == -1 for i in range(384) if i not in set(valid)))
        self.assertEqual(mp.routing_layout([130, 0, 5], 64, 4, 2, 3), lay)  # seeded

    def test_refuses_more_rows_than_slots(self):
        with self.assertRaises(ValueError):
            mp.routing_layout([600], tokens_per_rank=64, num_ranks=4, top_k=2, seed=1)
        with self.assertRaises(ValueError):
            mp.routing_layout([0, 0], 64, 4, 2, 1)


class Configs(unittest.TestCase):
    def test_reads_ok_local_points_once(self):
        point = lambda target, status="ok": {  # noqa: E731
            "suite": "megamoe", "status": status,
            "axes": {"shape": "dsv4_flash", "hidden": 4096, "intermediate": 2048, "precision": "bf16", "T": 6976,
                     "P": 8, "top_k": 6, "K_SM": 132, "block_n": 128, "target": target},
            "extra": {"pairs_per_local_expert": [10, 20], "D": 5, "expert_wave_baseline": {"experts_per_wave": 4}}}
        doc = {"points": [point("host"), point("local"), point("local"), point("local", "failed")]}
        cfgs = mp.configs_from_result(doc, ("local",))
        self.assertEqual(len(cfgs), 1)
        self.assertEqual(cfgs[0]["m_per_expert"], [10, 20])
        self.assertEqual(cfgs[0]["D"], 5)
        self.assertEqual(cfgs[0]["best_experts_per_wave"], 4)


class Protocol(unittest.TestCase):
    def test_each_contender_leads_equally_often(self):
        names = [c.name for c in mp.contenders([1, 2], 3)]
        firsts = {}
        for r in range(2 * len(names)):
            order = mp.round_order(names, r)
            self.assertEqual(sorted(order), sorted(names))
            firsts[order[0]] = firsts.get(order[0], 0) + 1
        self.assertEqual(set(firsts.values()), {2})

    def test_contenders_cover_schedules_phases_and_torch(self):
        cs = {c.name: c for c in mp.contenders([1, 4], 7)}
        self.assertEqual(cs["kernel_interleaved"].lead_rows, 7)
        self.assertEqual(cs["kernel_expert_wave_w4"].experts_per_wave, 4)
        self.assertEqual(cs["kernel_phase_l1"].phases, "linear1")
        self.assertEqual({n for n, c in cs.items() if c.kind == "torch"}, {"torch_l1", "torch_l2", "torch_l1_l2"})


class Ratios(unittest.TestCase):
    def test_ratios_are_torch_over_kernel_and_paired_by_round(self):
        seconds = {"kernel_interleaved": [2.0, 2.0, 2.0], "kernel_expert_wave_w1": [3.0, 3.0, 3.0],
                   "kernel_expert_wave_w2": [2.5, 2.5, 2.5], "kernel_phase_l1": [1.0, 1.0, 1.0],
                   "kernel_phase_l2": [0.5, 0.5, 0.5], "torch_l1": [0.8, 0.8, 0.8], "torch_l2": [0.5, 0.5, 0.5],
                   "torch_l1_l2": [1.3, 1.4, 1.2]}
        r = mp.ratios(seconds, mp.phase_flops(100, 4096, 2048))
        self.assertAlmostEqual(r["whole_kernel_over_torch_l1_l2"]["kernel_interleaved"], 1.3 / 2.0)
        self.assertAlmostEqual(r["whole_kernel_over_torch_l1_l2_paired"]["kernel_interleaved"]["median"], 0.65)
        self.assertNotIn("kernel_phase_l1", r["whole_kernel_over_torch_l1_l2"])
        self.assertAlmostEqual(r["l1_phase_tflops_ratio"], 0.8)  # kernel's L1 slower: below 1
        self.assertAlmostEqual(r["l2_phase_tflops_ratio"], 1.0)
        self.assertAlmostEqual(r["l1_phase_tflops_kernel"] / r["l1_phase_tflops_torch"], 0.8)
        self.assertEqual(r["best_expert_wave"], "kernel_expert_wave_w2")


class Gate(unittest.TestCase):
    def test_zero_output_and_gain_error_fail_rounding_passes(self):
        rms = 0.006
        ok, _ = mp.gate_passes({"compared": 1000, "wrong": 0, "unwritten": 0, "relative_difference": 4e-7}, "bf16", rms)
        self.assertTrue(ok)
        ok, why = mp.gate_passes({"compared": 1000, "wrong": 980, "unwritten": 0, "relative_difference": 1.0},
                                 "bf16", rms)
        self.assertFalse(ok)
        self.assertIn("relative difference", why)
        ok, _ = mp.gate_passes({"compared": 1000, "wrong": 0, "unwritten": 0, "relative_difference": 5e-5}, "bf16", rms)
        self.assertFalse(ok)  # a 1% gain error
        ok, _ = mp.gate_passes({"compared": 1000, "wrong": 0, "unwritten": 0, "relative_difference": 5e-5}, "fp8", rms)
        self.assertTrue(ok)
        self.assertEqual(mp.tolerance("bf16", 1.0), (2e-2, 1.6e-2))


class Usage(unittest.TestCase):
    def refused(self, argv):
        err = io.StringIO()
        with redirect_stderr(err):
            code = mvg.main(argv)
        return code, err.getvalue()

    def test_bad_usage_exits_2_before_torch(self):
        code, err = self.refused(["--lib", "x.so", "--out", "o.json"])
        self.assertEqual(code, 2)
        self.assertIn("--from-result", err)
        code, err = self.refused(["--lib", "x.so", "--out", "o.json", "--m-per-expert", "1,2", "--hidden", "256",
                                  "--intermediate", "128", "--experts-per-wave", "0"])
        self.assertEqual(code, 2)
        code, err = self.refused(["--lib", "x.so", "--out", "o.json", "--from-result", "/nonexistent.json"])
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
