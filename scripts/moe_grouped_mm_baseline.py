#!/usr/bin/env python3
"""PyTorch grouped-GEMM baseline for the xstage MegaMoE bench (one emulated rank, routed experts only).

Given the rows each local expert received (m_e) and the shapes h, I, times the two grouped GEMMs of the
MoE layer on the rank's expert-sorted rows, M = sum(m_e):
  L1: [M, h] x W1_e^T -> [M, 2I]   (W1: [E, 2I, h], gate and up rows of every expert)
  L2: [M, I] x W2_e^T -> [M, h]    (W2: [E, h, I])
bf16 with torch.nn.functional.grouped_mm (fp32 accumulation inside cuBLAS/CUTLASS), and fp8 e4m3 with
torch._scaled_grouped_mm using ROWWISE scales (one fp32 scale per activation row and per weight output
column). The fp8 path is a speed anchor only: it is NOT the kernel's fp8 recipe (per-token per-128-K
activation scales, 128x128 weight blocks). Gather, SwiGLU and Combine are not timed.

Each phase: warm-up, then CUDA-event timed repetitions (median, p10, p90 of >= 20). FLOP counts use the
real rows: L1 = 2 M h (2I), L2 = 2 M I h; the total is L1 median + L2 median. With --align A > 1 each
expert's rows are padded to a multiple of A (as MegaMoE pads to 128-row blocks); padded rows are computed
but not counted as useful FLOPs. Before timing, a few rows of the first non-empty expert are checked
against a plain matmul, so a wrong operand convention fails loudly instead of timing the wrong GEMM.

Output: one JSON object on stdout (numbers in SI units). Exit codes: 0 ok, 2 bad input, 3 a precision
failed while running (its reason under "errors"; the other precision is still reported), 77 no usable
GPU / torch / grouped_mm here ({"status": "skipped", "reason": ...}).
Post-processing and baselines only: never needed to build or test xstage.
"""
import argparse
import json
import math
import statistics
import sys

SCHEMA = {"name": "xstage.moe_grouped_mm_baseline", "version": 1}
EXIT_BAD_INPUT, EXIT_DEVICE, EXIT_SKIP = 2, 3, 77
FP8_MAX = 448.0  # largest finite float8_e4m3fn


def emit(doc):
    print(json.dumps(doc, indent=2, allow_nan=False))


def skipped(reason):
    emit({"schema": SCHEMA, "status": "skipped", "reason": reason})
    return EXIT_SKIP


def parse_counts(args):
    """m_e from --m-per-expert '100,0,257' or --counts-json FILE (a list, or {"m_per_expert": [...]})."""
    if (args.m_per_expert is None) == (args.counts_json is None):
        raise ValueError("give exactly one of --m-per-expert and --counts-json")
    if args.m_per_expert is not None:
        items = [s.strip() for s in args.m_per_expert.split(",") if s.strip()]
        try:
            counts = [int(s) for s in items]
        except ValueError:
            raise ValueError(f"--m-per-expert: expected comma-separated integers, got {args.m_per_expert!r}")
    else:
        try:
            with open(args.counts_json) as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"--counts-json: cannot read {args.counts_json}: {e}")
        counts = doc.get("m_per_expert") if isinstance(doc, dict) else doc
        if not isinstance(counts, list) or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
            raise ValueError("--counts-json: expected a JSON list of integers or {\"m_per_expert\": [...]}")
    if not counts or any(c < 0 for c in counts) or sum(counts) == 0:
        raise ValueError("m_per_expert: expected one or more non-negative row counts with a positive sum")
    return counts


def validate(args):
    counts = parse_counts(args)
    if args.hidden <= 0 or args.intermediate <= 0 or args.hidden % 16 or args.intermediate % 16:
        raise ValueError("--hidden and --intermediate: expected positive multiples of 16")
    if args.iters < 20:
        raise ValueError(f"--iters: expected >= 20 timed repetitions (the median needs them), got {args.iters}")
    if args.warmup < 1:
        raise ValueError(f"--warmup: expected >= 1, got {args.warmup}")
    if args.align < 1:
        raise ValueError(f"--align: expected >= 1, got {args.align}")
    precisions = [p.strip() for p in args.precision.split(",") if p.strip()]
    if not precisions or any(p not in ("bf16", "fp8") for p in precisions):
        raise ValueError(f"--precision: expected a comma list of bf16, fp8; got {args.precision!r}")
    return counts, precisions


def time_op(torch, fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e-3)  # ms -> s
    q = statistics.quantiles(samples, n=10, method="inclusive")
    return {"median_s": statistics.median(samples), "p10_s": q[0], "p90_s": q[-1], "samples_s": samples}


def padded_layout(torch, counts, align, device):
    """Group end offsets (int32, on the device) with each group padded to `align` rows."""
    padded = [int(math.ceil(c / align) * align) for c in counts]
    ends, acc = [], 0
    for p in padded:
        acc += p
        ends.append(acc)
    return torch.tensor(ends, dtype=torch.int32, device=device), acc


def first_group(counts):
    """Index of the first expert with rows; its rows start at 0 (every group before it is empty)."""
    return next(i for i, c in enumerate(counts) if c > 0)


def check_first_group(out, a_rows, w_nk, name):
    """A few rows of the first non-empty group against a plain fp32 matmul (a_rows [r, K], w_nk [N, K]):
    catches a wrong operand convention before anything is timed."""
    want = a_rows.float() @ w_nk.float().t()
    got = out[:a_rows.shape[0]].float()
    err = float((got - want).norm() / want.norm().clamp(min=1e-30))
    if not err <= 2e-2:
        raise RuntimeError(f"{name}: grouped result differs from matmul (relative error {err:.3g})")


def run_bf16(torch, grouped_mm, counts, h, inter, align, args):
    dev = "cuda"
    offs, rows = padded_layout(torch, counts, align, dev)
    e = len(counts)
    g = torch.Generator(device=dev).manual_seed(args.seed)
    x = torch.randn(rows, h, device=dev, dtype=torch.bfloat16, generator=g)
    act = torch.randn(rows, inter, device=dev, dtype=torch.bfloat16, generator=g)
    w1 = torch.randn(e, 2 * inter, h, device=dev, dtype=torch.bfloat16, generator=g) / math.sqrt(h)  # [E, 2I, h]
    w2 = torch.randn(e, h, inter, device=dev, dtype=torch.bfloat16, generator=g) / math.sqrt(inter)  # [E, h, I]
    # out = a @ W_e^T per group: mat_b = W.transpose(-2, -1), a [E, K, N] view of the [E, N, K] weights.
    l1 = lambda: grouped_mm(x, w1.transpose(-2, -1), offs=offs)
    l2 = lambda: grouped_mm(act, w2.transpose(-2, -1), offs=offs)
    out1, out2 = l1(), l2()
    if tuple(out1.shape) != (rows, 2 * inter) or tuple(out2.shape) != (rows, h):
        raise RuntimeError(f"grouped_mm returned shapes {tuple(out1.shape)}, {tuple(out2.shape)}; expected "
                           f"({rows}, {2 * inter}), ({rows}, {h})")
    g0, r = first_group(counts), min(8, counts[first_group(counts)])
    check_first_group(out1, x[:r], w1[g0], "bf16 L1")
    check_first_group(out2, act[:r], w2[g0], "bf16 L2")
    return time_op(torch, l1, args.warmup, args.iters), time_op(torch, l2, args.warmup, args.iters)


def rowwise_fp8(torch, t):
    """t [..., rows, K] -> (fp8 e4m3 [..., rows, K], fp32 scale [..., rows]) with t ~ fp8 * scale."""
    amax = t.float().abs().amax(dim=-1).clamp(min=1e-12)
    scale = amax / FP8_MAX
    return (t.float() / scale.unsqueeze(-1)).to(torch.float8_e4m3fn), scale


def run_fp8(torch, counts, h, inter, align, args):
    dev = "cuda"
    offs, rows = padded_layout(torch, counts, align, dev)
    e = len(counts)
    g = torch.Generator(device=dev).manual_seed(args.seed + 1)
    x, sx = rowwise_fp8(torch, torch.randn(rows, h, device=dev, generator=g))
    act, sa = rowwise_fp8(torch, torch.randn(rows, inter, device=dev, generator=g))
    w1, s1 = rowwise_fp8(torch, torch.randn(e, 2 * inter, h, device=dev, generator=g))  # per (expert, out col)
    w2, s2 = rowwise_fp8(torch, torch.randn(e, h, inter, device=dev, generator=g))
    sgm = torch._scaled_grouped_mm
    l1 = lambda: sgm(x, w1.transpose(-2, -1), sx, s1, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=True)
    l2 = lambda: sgm(act, w2.transpose(-2, -1), sa, s2, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=True)
    out1, out2 = l1(), l2()
    if tuple(out1.shape) != (rows, 2 * inter) or tuple(out2.shape) != (rows, h):
        raise RuntimeError(f"_scaled_grouped_mm returned shapes {tuple(out1.shape)}, {tuple(out2.shape)}")
    g0, r = first_group(counts), min(8, counts[first_group(counts)])
    check_first_group(out1, x[:r].float() * sx[:r].unsqueeze(-1), w1[g0].float() * s1[g0].unsqueeze(-1), "fp8 L1")
    check_first_group(out2, act[:r].float() * sa[:r].unsqueeze(-1), w2[g0].float() * s2[g0].unsqueeze(-1), "fp8 L2")
    return time_op(torch, l1, args.warmup, args.iters), time_op(torch, l2, args.warmup, args.iters)


def tflops(flops, seconds):
    return flops / seconds / 1e12 if seconds > 0 else None  # JSON null, never inf


def phase_entry(phase, precision, op, timing, flops):
    return dict(phase=phase, precision=precision, op=op, use_fast_accum=precision == "fp8", flops=flops,
                tflops=tflops(flops, timing["median_s"]), **timing)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m-per-expert", help="comma-separated rows per local expert, e.g. 1163,0,877")
    ap.add_argument("--counts-json", help="JSON file: a list of rows per expert, or {\"m_per_expert\": [...]}")
    ap.add_argument("--hidden", type=int, required=True, help="h")
    ap.add_argument("--intermediate", type=int, required=True, help="I (per expert; L1 produces 2I columns)")
    ap.add_argument("--precision", default="bf16,fp8", help="comma list of bf16, fp8 (default both)")
    ap.add_argument("--iters", type=int, default=30, help="timed repetitions per phase, >= 20 (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed repetitions first (default 5)")
    ap.add_argument("--align", type=int, default=1,
                    help="pad each expert's rows to this multiple (default 1: forward grouped GEMMs need no padding)")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    try:
        counts, precisions = validate(args)
    except ValueError as e:
        print(f"moe_grouped_mm_baseline: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    try:
        import torch
    except ImportError as e:
        return skipped(f"torch is not importable here ({e}); install PyTorch >= 2.8 with CUDA")
    if not torch.cuda.is_available():
        return skipped(f"torch {torch.__version__} sees no CUDA device")
    grouped_mm = getattr(torch.nn.functional, "grouped_mm", None)
    grouped_mm_name = "torch.nn.functional.grouped_mm"
    if grouped_mm is None:
        return skipped(f"torch {torch.__version__} has no torch.nn.functional.grouped_mm (PyTorch 2.11 has it)")

    h, inter, m = args.hidden, args.intermediate, sum(counts)
    flops_l1, flops_l2 = 2.0 * m * h * 2 * inter, 2.0 * m * inter * h
    _, rows = padded_layout(torch, counts, args.align, "cpu")
    doc = {
        "schema": SCHEMA, "status": "ok",
        "meta": {"argv": sys.argv, "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
                 "device": torch.cuda.get_device_name(0),
                 "compute_capability": list(torch.cuda.get_device_capability(0))},
        "shape": {"hidden": h, "intermediate": inter, "num_experts": len(counts), "m_per_expert": counts,
                  "rows": m, "padded_rows": rows, "align_rows": args.align},
        "phases": [], "totals": [], "skipped": [],
    }
    runners = {"bf16": (grouped_mm_name, lambda: run_bf16(torch, grouped_mm, counts, h, inter, args.align, args)),
               "fp8": ("torch._scaled_grouped_mm (rowwise scales: a speed anchor, not the kernel's recipe)",
                       lambda: run_fp8(torch, counts, h, inter, args.align, args))}
    for p in precisions:
        op, run = runners[p]
        if p == "fp8" and not hasattr(torch, "_scaled_grouped_mm"):
            doc["skipped"].append({"precision": p, "reason": f"torch {torch.__version__} has no _scaled_grouped_mm"})
            continue
        try:
            t1, t2 = run()
        except torch.cuda.OutOfMemoryError as e:
            doc["skipped"].append({"precision": p, "reason": f"out of device memory: {e}"})
            continue
        except Exception as e:  # noqa: BLE001 (torch raises RuntimeError, TypeError, ValueError): report, go on
            doc["status"] = "error"
            doc.setdefault("errors", []).append({"precision": p, "reason": f"{type(e).__name__}: {e}"})
            continue
        doc["phases"].append(phase_entry("l1", p, op, t1, flops_l1))
        doc["phases"].append(phase_entry("l2", p, op, t2, flops_l2))
        total_s = t1["median_s"] + t2["median_s"]
        doc["totals"].append({"precision": p, "op": op, "median_s": total_s, "flops": flops_l1 + flops_l2,
                              "tflops": tflops(flops_l1 + flops_l2, total_s)})
    emit(doc)
    return EXIT_DEVICE if doc["status"] == "error" else 0


if __name__ == "__main__":
    sys.exit(main())
