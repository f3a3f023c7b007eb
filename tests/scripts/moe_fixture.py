#!/usr/bin/env python3
"""Synthetic megamoe result files with answers known by hand, for the matrix report's tests (tests layer).

Usage: python3 tests/scripts/moe_fixture.py OUTDIR   (writes matrix-a.json, matrix-b.json, dsweep.json)

What is in them (host K_SM 66 unless said; s = paired wave/interleaved speedup):
- host66: 84 slots; missing hy3 fp8 balanced T16384; failed mimo_v2_5 bf16 balanced T16384; unverified
  qwen3_5 bf16 skewed T2048; wrong (3 wrong elements) glm_5_2 fp8 skewed T2048 -> 80 ok points.
  s: dit_moe 1.0 (advisor 'either', model wave stall 0), except dit_moe fp8 skewed T16384 s = 1.04 (outside
  the 2% tie band: 'either' disagrees, slowdown 4%); dsv4_pro fp8 balanced T16384 s = 1/1.05, p10..p90
  0.94..0.96 (regression; advisor 'interleaved' wrong by 5%; local control 0.95); mimo_v2_5 fp8 balanced T2048
  s = 0.99, p10..p90 0.97..1.01 (within noise; wave_rate_bound_ok true: not flagged by precedence);
  dsv4_flash bf16 skewed T6976 s = 1.6 (advisor D 4, ran at 3); every other point 1.2, p10/p90 s -+ 0.01.
  dsv4_pro bf16 balanced T2048 has no prediction.made (not judged). Advisor bracket [1.1, 1.3] ('interleaved'),
  [0.98, 1.02] ('either'). A failed first attempt of dsv4_flash bf16 skewed T6976 precedes its ok run.
  eq. 14: false for qwen3_5; floor 2 us; interleaved T_RS 2.1 us, except qwen3_5 4 us (but qwen3_5 fp8
  balanced T6976 2.1 us) and hy3 3 us. Throttled: dsv4_flash fp8 balanced T2048 (clocks 1.8 / 1.7 GHz).
- local66: 84 slots, s = 1.05 (dsv4_pro fp8 balanced T16384: 0.95); interleaved T_RS 2.1 us, wave 2.0 us.
- host132 (T 6976): 28 slots, s = 1.3, prediction made after_run, bracket [1.0, 1.1]; no extra.clocks.
- Table 2 (skewed T6976 host66): measured wave wait per CTA M = dit 0.3, qwen 2, hy3 3, mimo 4, glm 5,
  flash 6, pro 7 us; predicted wave 1.2 M (dit 0; fp8: hy3 0.75 M, pro 1.5 M); interleaved measured 0.5 us,
  predicted 0.5 + 0.1 M us.
- D sweeps: dsv4_flash bf16 skewed T6976 host66, D 1..64, best 10.0 ms at D 4, D_knee 2.0625; dsv4_flash
  fp8 skewed T6976 host K_SM 132, D 1, 4, 16 (+ the matrix point at D 5), D_knee 4.125. One b_n 256 extra.
"""
import copy
import json
import os
import sys

SHAPES = {"dit_moe": (1408, 5632, 16, 2), "qwen3_5": (4096, 1024, 512, 10), "hy3": (4096, 1536, 192, 8),
          "mimo_v2_5": (4096, 2048, 256, 8), "glm_5_2": (6144, 2048, 256, 8), "dsv4_flash": (4096, 2048, 256, 6),
          "dsv4_pro": (7168, 3072, 384, 6)}
WAVE_WAIT_US = {"dit_moe": 0.3, "qwen3_5": 2, "hy3": 3, "mimo_v2_5": 4, "glm_5_2": 5, "dsv4_flash": 6, "dsv4_pro": 7}
REGRESSION = ("host", 66, "dsv4_pro", "fp8", "balanced", 16384)
WITHIN_NOISE = ("host", 66, "mimo_v2_5", "fp8", "balanced", 2048)
MAXIMUM = ("host", 66, "dsv4_flash", "bf16", "skewed", 6976)
EITHER_WRONG = ("host", 66, "dit_moe", "fp8", "skewed", 16384)
NO_MADE = ("host", 66, "dsv4_pro", "bf16", "balanced", 2048)
MISSING = ("host", 66, "hy3", "fp8", "balanced", 16384)
FAILED = ("host", 66, "mimo_v2_5", "bf16", "balanced", 16384)
UNVERIFIED = ("host", 66, "qwen3_5", "bf16", "skewed", 2048)
WRONG = ("host", 66, "glm_5_2", "fp8", "skewed", 2048)
THROTTLED = ("host", 66, "dsv4_flash", "fp8", "balanced", 2048)
EQ14_VIOLATED_REACHED = ("host", 66, "qwen3_5", "fp8", "balanced", 6976)
US = 1e-6


def summary(median, spread=0.0):
    return {"median": median, "p10": median - spread, "p90": median + spread, "min": median - spread,
            "max": median + spread, "samples": [median - spread, median, median + spread]}


def tiles(trs_s, wait_pred_s, wait_meas_s, clock_hz):
    return {"l2_store_span_median_s": trs_s, "l2_store_span_p90_s": trs_s * 1.3, "l1_mainloop_median_s": 25 * US,
            "l2_mainloop_median_s": 20 * US, "eq15_predicted_stall_per_cta_s": wait_pred_s,
            "eq15_measured_wait_per_cta_s": wait_meas_s, "l2_spin_median_s": 0.0, "l2_spin_p90_s": 1 * US,
            "l2_spin_per_cta_s": 50 * US, "staging_wait_median_s": 0.05 * US, "sm_clock_hz": clock_hz,
            "timeline_cta0": [{"start_s": i * 30 * US, "mainloop_s": 25 * US, "store_span_s": trs_s if i % 2 else 0,
                               "staging_wait_s": 0.05 * US, "spin_s": 0.0, "first_wait_s": 0.04 * US,
                               "l2": float(i % 2)} for i in range(6)]}


def point(slot, s, d_axis=0, t_int_s=0.01):
    target, k_sm, shape, prec, routing, tokens = slot
    h, inter, experts, top_k = SHAPES[shape]
    run_d = d_axis or (3 if k_sm == 66 else 5)
    m_us = WAVE_WAIT_US[shape]
    pred_wave_us = 0.0 if shape == "dit_moe" else 1.2 * m_us
    if slot[:4] == ("host", 66, "hy3", "fp8") and routing == "skewed" and tokens == 6976:
        pred_wave_us = 0.75 * m_us
    if slot[:4] == ("host", 66, "dsv4_pro", "fp8") and routing == "skewed" and tokens == 6976:
        pred_wave_us = 1.5 * m_us
    host = target == "host"
    trs_int = 2.1 * US
    if host and shape == "qwen3_5" and slot != EQ14_VIOLATED_REACHED:
        trs_int = 4 * US
    elif host and shape == "hy3":
        trs_int = 3 * US
    p = {"id": "megamoe." + target, "suite": "megamoe", "status": "ok", "reason": "",
         "axes": {"D": d_axis, "K_SM": k_sm, "P": 8, "T": tokens, "block_n": 128, "experts": experts,
                  "experts_per_wave": 0, "gain": 1.0, "hidden": h, "instrument": True, "intermediate": inter,
                  "launches_per_graph": 3, "precision": prec, "repetitions": 10, "routing": routing,
                  "routing_seed": 1, "shape": shape, "target": target, "top_k": top_k, "verify": True,
                  "zipf_alpha": 0.5 if routing == "skewed" else 0.0},
         "variants": {"expert_wave": summary(t_int_s * s, 1e-5), "interleaved": summary(t_int_s, 1e-5)},
         "extra": {"D": run_d, "received_pairs": 1000,
                   "speedup_interleaved_vs_wave": {"median": s, "p10": s - 0.01, "p90": s + 0.01},
                   "variants": {"expert_wave": {"D": 0, "tiles": tiles(3 * US if host else 2 * US, pred_wave_us * US,
                                                                       m_us * US, 1.8e9)},
                                "interleaved": {"D": run_d, "tiles": tiles(trs_int, (0.5 + 0.1 * m_us) * US,
                                                                           0.5 * US, 1.8e9)}},
                   "clocks": {"sm_clock_hz": {"expert_wave": 1.8e9, "interleaved": 1.8e9}, "throttled": False,
                              "reason": "", "attempts": 1, "nvml_before": None, "nvml_after": None}},
         "verification": {"checked": True, "passed": True, "detail": "",
                          "values": {"variants": {v: {"verified": True, "wrong_elements": 0, "unwritten_slots": 0,
                                                      "unexpected_slots": 0} for v in ("expert_wave", "interleaved")}}},
         "prediction": None, "paired": {}}
    if host:
        either = shape == "dit_moe" and k_sm == 66
        p["prediction"] = {
            "made": "before_run" if k_sm == 66 else "after_run", "eq14_rate_bound_ok": shape != "qwen3_5",
            "tiss0_s": 2 * US, "D_knee": 2.0625 if k_sm == 66 else 4.125, "wave_stall_per_l2_tile_s":
            0.0 if shape == "dit_moe" else 1 * US, "eq10_capacity": "not decided",
            "advisor": {"schedule": "either" if either else "interleaved", "D": run_d, "reason": "fixture",
                        "predicted_speedup_low": 0.98 if either else (1.1 if k_sm == 66 else 1.0),
                        "predicted_speedup_high": 1.02 if either else (1.3 if k_sm == 66 else 1.1)}}
    return p


def matrix_points():
    host66, local66, host132 = [], [], []
    for shape in SHAPES:
        for prec in ("bf16", "fp8"):
            for routing in ("balanced", "skewed"):
                for tokens in (2048, 6976, 16384):
                    slot = ("host", 66, shape, prec, routing, tokens)
                    s = {REGRESSION: 1 / 1.05, WITHIN_NOISE: 0.99, MAXIMUM: 1.6, EITHER_WRONG: 1.04}.get(
                        slot, 1.0 if shape == "dit_moe" else 1.2)
                    if slot != MISSING:
                        host66.append(special(point(slot, s), slot))
                    local = ("local", 66) + slot[2:]
                    lp = point(local, 0.95 if slot == REGRESSION else 1.05)
                    local66.append(lp)
                    if tokens == 6976:
                        host132.append(point(("host", 132) + slot[2:], 1.3))
                        host132[-1]["extra"].pop("clocks")
    return host66, local66, host132


def special(p, slot):
    sp = p["extra"]["speedup_interleaved_vs_wave"]
    if slot == REGRESSION:
        sp.update(p10=0.94, p90=0.96)
    elif slot == WITHIN_NOISE:
        sp.update(p10=0.97, p90=1.01)
        p["prediction"]["wave_rate_bound_ok"] = True
    elif slot == MAXIMUM:
        p["prediction"]["advisor"]["D"] = 4
    elif slot == NO_MADE:
        del p["prediction"]["made"]
    elif slot == FAILED:
        p.update(status="failed", reason="CUDA error: launch timed out")
    elif slot == UNVERIFIED:
        p["verification"] = {"checked": False, "passed": False, "detail": "", "values": {}}
    elif slot == WRONG:
        p["verification"]["passed"] = False
        p["verification"]["detail"] = "interleaved: 3 wrong elements"
        p["verification"]["values"]["variants"]["interleaved"].update(verified=False, wrong_elements=3)
    elif slot == THROTTLED:
        p["extra"]["clocks"].update(sm_clock_hz={"expert_wave": 1.8e9, "interleaved": 1.7e9}, throttled=True,
                                    reason="power cap", attempts=3)
    return p


SWEEP_BF16_MS = {1: 12.0, 2: 10.5, 3: 10.15, 4: 10.0, 6: 10.05, 8: 10.1, 12: 10.2, 16: 10.3, 32: 10.8, 64: 11.5}
SWEEP_FP8_MS = {1: 9.0, 4: 8.0, 16: 8.1}


def sweep_points():
    out = []
    for slot, times in ((MAXIMUM, SWEEP_BF16_MS), (("host", 132, "dsv4_flash", "fp8", "skewed", 6976), SWEEP_FP8_MS)):
        for d, t_ms in times.items():
            p = point(slot, 1.2, d_axis=d, t_int_s=t_ms * 1e-3)
            if slot[1] == 132:
                p["extra"].pop("clocks")
            out.append(p)
    return out


def doc(points):
    return {"schema": {"name": "xstage.result", "version": "1.0"}, "config": {}, "extra": {}, "meta": {},
            "model": None, "validation": None, "points": points}


def write_fixture(out_dir):
    host66, local66, host132 = matrix_points()
    first_attempt = copy.deepcopy(next(p for p in host66 if (p["axes"]["shape"], p["axes"]["precision"],
                                                             p["axes"]["routing"], p["axes"]["T"]) ==
                                       MAXIMUM[2:]))
    first_attempt.update(status="failed", reason="first attempt: throttled")
    wide = point(("host", 66, "dsv4_flash", "bf16", "skewed", 6976), 1.25)
    wide["axes"]["block_n"] = 256
    files = {"matrix-a.json": [first_attempt] + host66 + host132, "matrix-b.json": local66 + [wide],
             "dsweep.json": sweep_points()}
    paths = []
    for name, pts in files.items():
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            json.dump(doc(pts), f)
        paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: moe_fixture.py OUTDIR", file=sys.stderr)
        sys.exit(2)
    os.makedirs(sys.argv[1], exist_ok=True)
    print("\n".join(write_fixture(sys.argv[1])))
