#!/usr/bin/env python3
"""Tests for scripts/fa_vs_cudnn.py without torch or a GPU: the block order (each contender first equally often),
the summaries and ratios (overall and paired per block, >= 1 meaning FA at least as fast), the C descriptor's
layout against fa_c_api.h and the fields each contender sets (scripts/fa_contenders.py), the contenders the options
ask for, and the usage refusals (exit 2 before anything is loaded). Run:
python3 -m unittest -v test_fa_vs_cudnn (from tests/scripts; CTest scripts.fa_vs_cudnn)."""
import ctypes
import importlib.util
import io
import os
import re
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
spec = importlib.util.spec_from_file_location("fa_vs_cudnn", os.path.join(ROOT, "scripts", "fa_vs_cudnn.py"))
fvc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fvc)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import fa_contenders as fc  # noqa: E402


class BlockOrder(unittest.TestCase):
    def test_each_contender_leads_equally_often_and_all_run_every_block(self):
        names = ["cudnn", "fa_u_kv1", "fa_u_kv2", "fa_hm_kv2"]
        firsts = {}
        for b in range(8):
            order = fvc.block_order(names, b)
            self.assertEqual(sorted(order), sorted(names))
            firsts[order[0]] = firsts.get(order[0], 0) + 1
        self.assertEqual(firsts, {n: 2 for n in names})


class Summaries(unittest.TestCase):
    def test_median_over_all_samples_and_per_block(self):
        s = fvc.summarize_contender([[3.0, 1.0, 2.0], [10.0, 10.0, 10.0]])
        self.assertEqual(s["n"], 6)
        self.assertAlmostEqual(s["median_s"], 6.5)  # (3 + 10) / 2 of the pooled, sorted samples
        self.assertEqual(s["block_median_s"], [2.0, 10.0])

    def test_ratio_is_cudnn_time_over_fa_time_and_pairs_blocks_by_index(self):
        cudnn = {"median_s": 4.0, "block_median_s": [4.0, 4.4]}
        fa = {"median_s": 5.0, "block_median_s": [5.0, 4.0]}
        r = fvc.speed_ratios(cudnn, fa)
        self.assertAlmostEqual(r["over_cudnn_speed"], 0.8)  # FA slower: below 1
        self.assertEqual(r["paired_blocks"]["n"], 2)
        self.assertAlmostEqual(r["paired_blocks"]["min"], 0.8)
        self.assertAlmostEqual(r["paired_blocks"]["max"], 1.1)
        self.assertAlmostEqual(r["paired_blocks"]["median"], 0.95)


class Verification(unittest.TestCase):
    def test_the_bound_catches_a_dropped_kv_tile_and_passes_the_recorded_runs(self):
        # 8K, d 128, N(0,1) inputs: max |O| ~0.064, cuDNN 3.0e-4 from fp32; dropping the last 128 keys moves O by ~6e-3.
        self.assertFalse(fvc.fa_passes(0, 6e-3, 6e-3, 2.97e-4, 0.064, 1e-2))
        self.assertFalse(fvc.fa_passes(0, 1.5e-3, 1.5e-3, 1.37e-4, 0.025, 1e-2))  # 32K: ~1.5e-3
        self.assertTrue(fvc.fa_passes(0, 2.97e-4, 4.88e-4, 2.97e-4, 0.064, 1e-2))  # 687c80a's 8K point
        self.assertTrue(fvc.fa_passes(0, 9.47e-5, 1.22e-4, 9.47e-5, 0.02, 1e-2))   # its 64K point
        self.assertFalse(fvc.fa_passes(1, 2.97e-4, 4.88e-4, 2.97e-4, 0.064, 1e-2))  # one element unwritten
        self.assertFalse(fvc.fa_passes(0, 2.97e-4, float("nan"), 2.97e-4, 0.064, 1e-2))
        self.assertTrue(fvc.cudnn_passes(2.97e-4, 0.064, 1e-2))
        self.assertFalse(fvc.cudnn_passes(2e-3, 0.064, 1e-2))


class Descriptor(unittest.TestCase):
    def test_ctypes_fields_follow_the_c_header_in_order(self):
        with open(os.path.join(ROOT, "src", "xs", "attention", "run", "fa_c_api.h")) as f:
            header = f.read()
        body = header[header.index("typedef struct XsFaDesc {"):header.index("} XsFaDesc;")]
        c_fields = re.findall(r"^\s*(?:const\s+)?(\w+)\s*(\*?)\s*(\w+);", body, re.M)
        self.assertEqual([f[2] for f in c_fields], [f[0] for f in fvc.XsFaDesc._fields_])
        c_to_ctypes = {("int", ""): ctypes.c_int, ("void", "*"): ctypes.c_void_p, ("uint64_t", ""): ctypes.c_uint64}
        for (ctype, star, name), (pname, ptype) in zip(c_fields, fvc.XsFaDesc._fields_):
            self.assertIs(c_to_ctypes[(ctype, star)], ptype, name)
        self.assertEqual(ctypes.sizeof(fvc.XsFaDesc), 8 + 4 * 8 + 8 + 9 * 4 + 4 + 8 + 8 + 3 * 4 + 4)  # padded to 8
        version = re.search(r"#define XS_FA_C_API_VERSION (\d+)", header).group(1)
        self.assertEqual(int(version), fvc.C_API_VERSION)
        self.assertIn("#define XS_FA_OUT_HEADS_MAJOR %d" % fvc.OUT_HEADS_MAJOR, header)
        self.assertIn("#define XS_FA_OUT_ULYSSES %d" % fvc.OUT_ULYSSES, header)

    def test_every_descriptor_sets_every_field_and_the_split_tail_is_off_unless_asked(self):
        # A field left out would be 0: tail_kv_splits 0 is refused by the library, so it must be 1 by default.
        names = {f[0] for f in fvc.XsFaDesc._fields_}
        plain = fc.FaContender("fa_u_kv1", fvc.OUT_ULYSSES, 1)
        fields = fc.desc_fields(plain, 16, 32, 48, 64, 1 << 20, 8192, 8, 128, 8)
        self.assertEqual(set(fields), names)
        d = fvc.XsFaDesc(**fields)
        self.assertEqual((d.version, d.tail_kv_splits, d.tail_split_units, d.store_barrier, d.records_bytes),
                         (fvc.C_API_VERSION, 1, 0, 0, 0))
        self.assertIsNone(d.records)
        split = plain._replace(name="fa_u_kv1_ts4_units16", tail_kv_splits=4, tail_split_units=16)
        d = fvc.XsFaDesc(**fc.desc_fields(split, 16, 32, 48, 64, 1 << 20, 8192, 8, 128, 8))
        self.assertEqual((d.tail_kv_splits, d.tail_split_units, d.kv_cluster_size, d.out_layout),
                         (4, 16, 1, fvc.OUT_ULYSSES))


class Contenders(unittest.TestCase):
    def contenders(self, argv):
        args = fvc.arg_parser().parse_args(["--lib", "x.so", "--out", "o.json"] + argv)
        fc.parse_contender_options(args)
        return fc.fa_contenders(args)

    def test_defaults_are_the_two_fa_only_cluster_sizes_and_heads_major_kv2_without_a_split_tail(self):
        cs = self.contenders([])
        self.assertEqual([c.name for c in cs], ["fa_u_kv1", "fa_u_kv2", "fa_hm_kv2"])
        self.assertTrue(all(c.tail_kv_splits == 1 and c.tail_split_units == 0 for c in cs))

    def test_tail_splits_kv_adds_one_fa_only_contender_per_cluster_size_and_split_count(self):
        cs = self.contenders(["--kv-clusters", "2", "--heads-major-kv", "", "--tail-splits-kv", "1,2",
                              "--tail-splits", "2,4"])
        self.assertEqual([c.name for c in cs], ["fa_u_kv2", "fa_u_kv1_ts2", "fa_u_kv1_ts4", "fa_u_kv2_ts2",
                                                "fa_u_kv2_ts4"])
        ts = {c.name: c for c in cs}["fa_u_kv1_ts4"]
        self.assertEqual((ts.layout, ts.kv_cluster, ts.tail_kv_splits, ts.tail_split_units, ts.heads_per_band,
                          ts.records, ts.store_barrier), (fvc.OUT_ULYSSES, 1, 4, 0, 1, False, False))
        # The default split count is 2; a unit count other than 0 is in the name; duplicates run once.
        cs = self.contenders(["--kv-clusters", "1", "--heads-major-kv", "", "--tail-splits-kv", "2,2",
                              "--tail-split-units", "16"])
        self.assertEqual([c.name for c in cs], ["fa_u_kv1", "fa_u_kv2_ts2_units16"])
        self.assertEqual((cs[1].tail_kv_splits, cs[1].tail_split_units), (2, 16))

    def test_grid_kv_adds_fa_only_contenders_on_a_smaller_grid(self):
        cs = self.contenders(["--kv-clusters", "2", "--heads-major-kv", "", "--grid-kv", "1,2", "--grid", "128"])
        self.assertEqual([c.name for c in cs], ["fa_u_kv2", "fa_u_kv1_g128", "fa_u_kv2_g128"])
        g = {c.name: c for c in cs}["fa_u_kv2_g128"]
        self.assertEqual((g.num_ctas, g.kv_cluster, g.layout, g.tail_kv_splits), (128, 2, fvc.OUT_ULYSSES, 1))
        d = fvc.XsFaDesc(**fc.desc_fields(g, 16, 32, 48, 64, 1 << 20, 8192, 8, 128, 8))
        self.assertEqual(d.num_ctas, 128)
        self.assertEqual(fc.desc_fields(cs[0], 16, 32, 48, 64, 1 << 20, 8192, 8, 128, 8)["num_ctas"], 0)

    def test_the_other_kinds_keep_their_names_and_fields(self):
        cs = {c.name: c for c in self.contenders(["--auto-band-kv", "1", "--records-kv", "2",
                                                  "--store-barrier-kv", "1"])}
        self.assertEqual(list(cs), ["fa_u_kv1", "fa_u_kv2", "fa_u_kv1_auto", "fa_hm_kv2", "fa_u_kv2_rec",
                                    "fa_u_kv1_sb"])
        self.assertEqual(cs["fa_u_kv1_auto"].heads_per_band, 0)
        self.assertEqual(cs["fa_hm_kv2"].layout, fvc.OUT_HEADS_MAJOR)
        self.assertTrue(cs["fa_u_kv2_rec"].records and not cs["fa_u_kv2_rec"].store_barrier)
        self.assertTrue(cs["fa_u_kv1_sb"].store_barrier and not cs["fa_u_kv1_sb"].records)


class Usage(unittest.TestCase):
    def run_main(self, argv):
        err = io.StringIO()
        with redirect_stderr(err):
            code = fvc.main(argv)
        return code, err.getvalue()

    def test_refusals_exit_2_naming_the_option_and_write_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "o.json")
            lib = os.path.join(d, "libxstage_fa.so")
            open(lib, "w").close()
            for argv, needle in (
                    (["--lib", lib, "--out", out, "--M", "8k"], "--M"),
                    (["--lib", lib, "--out", out, "--M", "0"], "--M"),
                    (["--lib", lib, "--out", out, "--kv-clusters", "3"], "--kv-clusters"),
                    (["--lib", lib, "--out", out, "--auto-band-kv", "x"], "--auto-band-kv"),
                    (["--lib", lib, "--out", out, "--records-kv", "3"], "--records-kv"),
                    (["--lib", lib, "--out", out, "--tail-splits-kv", "3"], "--tail-splits-kv"),
                    (["--lib", lib, "--out", out, "--tail-splits-kv", "1", "--tail-splits", "0"], "--tail-splits"),
                    (["--lib", lib, "--out", out, "--tail-splits-kv", "1", "--tail-splits", "2,9"], "--tail-splits"),
                    (["--lib", lib, "--out", out, "--tail-splits", "two"], "--tail-splits"),
                    (["--lib", lib, "--out", out, "--tail-splits", ""], "--tail-splits"),
                    (["--lib", lib, "--out", out, "--tail-split-units", "-1"], "--tail-split-units"),
                    (["--lib", lib, "--out", out, "--grid-kv", "2"], "--grid"),
                    (["--lib", lib, "--out", out, "--grid", "128"], "--grid"),
                    (["--lib", lib, "--out", out, "--grid-kv", "2", "--grid", "127"], "--grid"),
                    (["--lib", lib, "--out", out, "--grid-kv", "3", "--grid", "128"], "--grid-kv"),
                    (["--lib", lib, "--out", out, "--blocks", "0"], "--blocks"),
                    (["--lib", lib, "--out", out, "--ranks", "0"], "--ranks"),
                    (["--lib", lib, "--out", out, "--M", "8192", "--ranks", "3"], "--ranks"),
                    (["--lib", lib, "--out", out, "--rtol", "2"], "--rtol"),
                    (["--lib", os.path.join(d, "missing.so"), "--out", out], "--lib"),
                    (["--out", out], "--lib")):
                code, msg = self.run_main(argv)
                self.assertEqual(code, 2, argv)
                self.assertIn(needle, msg, argv)
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
