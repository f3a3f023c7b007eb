"""Pure helpers of moe_vs_grouped_mm.py (no torch, no GPU; tests/scripts/test_moe_vs_grouped_mm.py checks them on
the CPU): the ctypes mirror of src/xs/moe/run/moe_c_api.h, the routing layout of one emulated rank built from rows per
local expert, the configurations read from an xstage-bench megamoe result, the round order, summaries, the
verification rule (src/xs/moe/reference/verification_gate.hpp's) and the ratios the result file stores."""
import ctypes
import math
import random
import statistics

C_API_VERSION = 1
MAX_RANKS = 16
SCHEDULES = {"expert_wave": 0, "interleaved": 1, "serial": 2}
PHASES = {"all": 0, "linear1": 1, "linear2": 2}
BLOCK_ROWS = 128


class XsMoeDesc(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("hidden", ctypes.c_int), ("intermediate", ctypes.c_int),
                ("num_experts", ctypes.c_int), ("top_k", ctypes.c_int), ("tokens_per_rank", ctypes.c_int),
                ("num_ranks", ctypes.c_int), ("num_row_blocks", ctypes.c_int), ("num_arrivals", ctypes.c_int),
                ("block_n", ctypes.c_int), ("precision", ctypes.c_int), ("schedule", ctypes.c_int),
                ("experts_per_wave", ctypes.c_int), ("lead_rows", ctypes.c_int), ("completion_coupled", ctypes.c_int),
                ("phases", ctypes.c_int), ("num_ctas", ctypes.c_int), ("cooperative", ctypes.c_int),
                ("arrival", ctypes.c_void_p), ("pool", ctypes.c_void_p), ("w1", ctypes.c_void_p),
                ("w2", ctypes.c_void_p), ("act", ctypes.c_void_p), ("arrival_scale", ctypes.c_void_p),
                ("pool_scale", ctypes.c_void_p), ("w1_scale", ctypes.c_void_p), ("w2_scale", ctypes.c_void_p),
                ("act_scale", ctypes.c_void_p), ("pool_arrival", ctypes.c_void_p), ("pool_dst_rank", ctypes.c_void_p),
                ("pool_dst_slot", ctypes.c_void_p), ("pool_weight", ctypes.c_void_p),
                ("row_block_expert", ctypes.c_void_p), ("expert_first_block", ctypes.c_void_p),
                ("dst", ctypes.c_void_p * MAX_RANKS), ("dst_bytes", ctypes.c_uint64 * MAX_RANKS),
                ("sync_words", ctypes.c_void_p), ("sync_bytes", ctypes.c_uint64)]


class Contender:
    """One timed graph: a kernel launch (schedule, width, D, phases) or a torch op ("torch_l1", "torch_l2",
    "torch_l1_l2")."""

    def __init__(self, name, kind, schedule="serial", experts_per_wave=1, lead_rows=1, phases="all"):
        self.name, self.kind, self.schedule = name, kind, schedule
        self.experts_per_wave, self.lead_rows, self.phases = experts_per_wave, lead_rows, phases


def contenders(widths, lead_rows):
    """The kernel at every schedule (expert-wave at each width), its two whole-phase launches, and torch."""
    out = [Contender(f"kernel_expert_wave_w{w}", "kernel", "expert_wave", experts_per_wave=w) for w in widths]
    out += [Contender("kernel_interleaved", "kernel", "interleaved", lead_rows=lead_rows),
            Contender("kernel_serial", "kernel", "serial"),
            Contender("kernel_phase_l1", "kernel", "serial", phases="linear1"),
            Contender("kernel_phase_l2", "kernel", "serial", phases="linear2"),
            Contender("torch_l1", "torch"), Contender("torch_l2", "torch"), Contender("torch_l1_l2", "torch")]
    return out


def routing_layout(m_per_expert, tokens_per_rank, num_ranks, top_k, seed):
    """One emulated rank's pool from its rows per local expert: expert e owns row blocks
    [expert_first_block[e], expert_first_block[e + 1]) of 128 rows, its m_e rows first, padding after
    (arrival -1, rank -1, slot 0, weight 0). Every valid row reads its own arrival row (a random permutation) and
    writes a distinct (rank, slot) of the P x T x top_k Combine slots; weights in [0.05, 1)."""
    total = sum(m_per_expert)
    slots = num_ranks * tokens_per_rank * top_k
    if any(m < 0 for m in m_per_expert) or total == 0:
        raise ValueError("m_per_expert: non-negative rows per expert with a positive sum")
    if total > slots:
        raise ValueError(f"{total} rows do not fit {slots} Combine slots (P x T x top_k)")
    rng = random.Random(seed)
    arrivals = list(range(total))
    rng.shuffle(arrivals)
    dst = rng.sample(range(slots), total)
    first, blocks = [0], []
    pool_arrival, dst_rank, dst_slot, weight = [], [], [], []
    k = 0
    for e, m in enumerate(m_per_expert):
        nb = (m + BLOCK_ROWS - 1) // BLOCK_ROWS
        blocks += [e] * nb
        first.append(first[-1] + nb)
        for i in range(nb * BLOCK_ROWS):
            if i < m:
                pool_arrival.append(arrivals[k])
                dst_rank.append(dst[k] // (tokens_per_rank * top_k))
                dst_slot.append(dst[k] % (tokens_per_rank * top_k))
                weight.append(0.05 + 0.95 * rng.random())
                k += 1
            else:
                pool_arrival.append(-1)
                dst_rank.append(-1)
                dst_slot.append(0)
                weight.append(0.0)
    return {"pool_arrival": pool_arrival, "pool_dst_rank": dst_rank, "pool_dst_slot": dst_slot, "pool_weight": weight,
            "row_block_expert": blocks, "expert_first_block": first, "num_row_blocks": len(blocks),
            "num_arrivals": total, "rows": total}


def configs_from_result(doc, targets=("local",)):
    """The configurations of an xstage-bench megamoe result's ok points (one per shape, precision, T, K_SM, b_n and
    rows per expert; the first point of each), with the point's D and the fastest expert-wave width."""
    seen, out = set(), []
    for p in doc.get("points", []):
        if p.get("status") != "ok" or p.get("suite") != "megamoe":
            continue
        ax, ex = p["axes"], p.get("extra", {})
        if targets and ax.get("target") not in targets:
            continue
        counts = [int(m) for m in ex.get("pairs_per_local_expert", [])]
        key = (ax["hidden"], ax["intermediate"], ax["precision"], ax["T"], ax["K_SM"], ax["block_n"], tuple(counts))
        if key in seen or not counts:
            continue
        seen.add(key)
        best = ex.get("expert_wave_baseline", {}).get("experts_per_wave") or 1
        out.append({"shape": ax.get("shape", ""), "hidden": ax["hidden"], "intermediate": ax["intermediate"],
                    "precision": ax["precision"], "T": ax["T"], "P": ax["P"], "top_k": ax["top_k"],
                    "K_SM": ax["K_SM"], "block_n": ax["block_n"], "D": ex.get("D", 1), "m_per_expert": counts,
                    "best_experts_per_wave": best, "source": f"{ax.get('shape', '')} {ax['precision']} T={ax['T']} "
                                                             f"K_SM={ax['K_SM']} target={ax.get('target')}"})
    return out


def round_order(names, round_index):
    """Every contender once per round, the start rotating by one per round (the bench's time_variants order)."""
    k = round_index % len(names)
    return list(names[k:]) + list(names[:k])


def quantile(sorted_values, q):
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(values):
    s = sorted(values)
    if not s:
        return None
    return {"median": quantile(s, 0.5), "p10": quantile(s, 0.1), "p90": quantile(s, 0.9), "n": len(s)}


def paired(num, den):
    """Same-round ratios num[i] / den[i] summarized (rounds are paired by index)."""
    return summary([a / b for a, b in zip(num, den) if b > 0])


def phase_flops(rows, hidden, intermediate):
    """Useful flops of the two GEMMs on `rows` received pairs: L1 2 M h 2I, L2 2 M I h."""
    return {"l1": 2.0 * rows * hidden * 2 * intermediate, "l2": 2.0 * rows * intermediate * hidden}


def ratios(seconds, flops):
    """What the result stores beside the times, all >= 1 when the kernel is at least as fast: torch L1+L2 over each
    whole-kernel contender (overall medians and same-round), and each whole phase's TFLOPS over torch's."""
    med = {k: statistics.median(v) for k, v in seconds.items() if v}
    out = {"whole_kernel_over_torch_l1_l2": {}, "whole_kernel_over_torch_l1_l2_paired": {}}
    base = seconds.get("torch_l1_l2")
    for name, s in seconds.items():
        if not name.startswith("kernel_") or name.startswith("kernel_phase") or not s or not base:
            continue
        out["whole_kernel_over_torch_l1_l2"][name] = med["torch_l1_l2"] / med[name]
        out["whole_kernel_over_torch_l1_l2_paired"][name] = paired(base, s)
    for ph in ("l1", "l2"):
        k, t = seconds.get(f"kernel_phase_{ph}"), seconds.get(f"torch_{ph}")
        if k and t:
            out[f"{ph}_phase_tflops_kernel"] = flops[ph] / med[f"kernel_phase_{ph}"] * 1e-12
            out[f"{ph}_phase_tflops_torch"] = flops[ph] / med[f"torch_{ph}"] * 1e-12
            out[f"{ph}_phase_tflops_ratio"] = med[f"torch_{ph}"] / med[f"kernel_phase_{ph}"]
            out[f"{ph}_phase_tflops_ratio_paired"] = paired(t, k)
    waves = {k: v for k, v in med.items() if k.startswith("kernel_expert_wave_w")}
    if waves:
        out["best_expert_wave"] = min(waves, key=waves.get)
    return out


def gate_passes(counts, precision, rms):
    """verification_gate.hpp's rule on counts {compared, wrong, unwritten, relative_difference}: the elementwise bound
    (abs scaled to the reference RMS) and the relative difference; returns (passed, reason)."""
    limit = {"bf16": 1e-5, "fp8": 1e-4}[precision]
    why = []
    if counts["compared"] == 0:
        why.append("no element compared")
    if counts["wrong"]:
        why.append(f"{counts['wrong']} elements outside the elementwise tolerance")
    if counts["unwritten"]:
        why.append(f"{counts['unwritten']} expected elements not written")
    if not counts["relative_difference"] <= limit:
        why.append(f"relative difference {counts['relative_difference']:.3e} above {limit:g}")
    if not (rms > 0 and math.isfinite(rms)):
        why.append("reference RMS not > 0")
    return not why, "; ".join(why)


def tolerance(precision, rms):
    """(abs_tol, rel_tol) of verification_gate.hpp's combine_tolerance."""
    return {"bf16": (2e-2 * rms, 1.6e-2), "fp8": (0.25 * rms, 6e-2)}[precision]
