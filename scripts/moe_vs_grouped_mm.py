#!/usr/bin/env python3
"""The MegaMoE kernel beside torch grouped_mm / _scaled_grouped_mm in one process, on the same device tensors,
timed the same way, with SM clocks recorded for both (issue 29).

Why: moe_grouped_mm_baseline.py ran torch in another process, on other inputs, with per-call events and no clocks.
Here, per configuration (rows per local expert, h, I, T, P, top-k, K_SM, b_n, precision; taken from an xstage-bench
megamoe result with --from-result, or given with --hidden/--intermediate/--m-per-expert...), one emulated rank's
problem is built in torch (moe_pairing.routing_layout: the same rows per expert, 128-row padded blocks), and:
  kernel_expert_wave_wN, kernel_interleaved, kernel_serial   the whole kernel (libxstage_moe.so, src/xs/moe/run/moe_c_api.h;
                                 Dispatch + L1 + SwiGLU + L2 + Combine into local destinations)
  kernel_phase_l1, kernel_phase_l2   one GEMM phase whole (KernelPhases: serial, no Dispatch, no waits)
  torch_l1, torch_l2, torch_l1_l2    grouped_mm (bf16) or _scaled_grouped_mm (fp8) on the kernel's own pool / act /
                                 w1 / w2 tensors (after a verified kernel launch), offs = the padded expert ends
Every contender is one CUDA graph of --launches back-to-back launches; rounds replay each once, the start rotating
(the bench's protocol), --warmup rounds dropped; after each replay two spin kernels probe the SM clock
(fa_attach_baseline.probe_sm_clock_hz). fp8: torch uses ROWWISE scales (each row's / column's first 128-K group
scale of the same e4m3 codes), the kernel per-token 1x128 and 128x128 blocks: the recipes differ (named in the file).
Verification before timing: every kernel contender on poisoned pool/act/destinations against a torch fp32 reference
of the kernel's math (verification_gate.hpp's rule); torch's GEMMs against fp32 matmuls. A failure exits 4.

Writes OUT (JSON, atomically after every configuration): meta, protocol, points[{config, verification, contenders
{name: {median_s, p10_s, p90_s, samples_s, sm_clock_hz}}, ratios}] (moe_pairing.ratios: >= 1 means the kernel is at
least as fast). Exit codes: 0, 2 bad usage, 3 CUDA failure, 4 verification failed, 77 no torch / GPU / library.
Usage: python3 scripts/moe_vs_grouped_mm.py --lib build/lib/libxstage_moe.so --from-result R.json --out OUT.json
       [--experts-per-wave 1,2,4,8] [--launches 3] [--warmup 2] [--rounds 10]
"""
import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moe_pairing as mp  # noqa: E402
from fa_attach_baseline import probe_sm_clock_hz, write_atomically  # noqa: E402
from plot_io import output_path  # noqa: E402

EXIT_OK, EXIT_USAGE, EXIT_DEVICE, EXIT_VERIFY, EXIT_NO_GPU = 0, 2, 3, 4, 77
E4M3_MAX = 448.0


class Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--from-result", help="xstage-bench megamoe result: pair its ok local points")
    ap.add_argument("--targets", default="local", help="targets of --from-result points to pair (default local)")
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--m-per-expert", help="rows per local expert, e.g. 1163,0,877")
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--T", type=int, default=6976)
    ap.add_argument("--P", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=6)
    ap.add_argument("--ksm", type=int, default=132)
    ap.add_argument("--block-n", type=int, default=None,
                    help="b_n (default 128; with --from-result, replaces every point's own b_n)")
    ap.add_argument("--D", type=int, default=0, help="interleaved D; 0: max(1, ceil(b_n K_SM / 2I)) (eq. 16)")
    ap.add_argument("--experts-per-wave", default="1,2,4,8")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--no-cooperative-launch", action="store_true")
    a = ap.parse_args(argv)
    try:
        widths = sorted({int(x) for x in a.experts_per_wave.split(",") if x.strip()})
    except ValueError:
        raise Failure(EXIT_USAGE, f"--experts-per-wave: '{a.experts_per_wave}' is not a list of integers, e.g. 1,2,4")
    if not widths or widths[0] < 1:
        raise Failure(EXIT_USAGE, "--experts-per-wave: widths >= 1, e.g. 1,2,4,8")
    if a.launches < 1 or a.warmup < 0 or a.rounds < 3:
        raise Failure(EXIT_USAGE, "--launches >= 1, --warmup >= 0, --rounds >= 3")
    if a.block_n is not None and a.block_n not in (128, 256):
        raise Failure(EXIT_USAGE, f"--block-n {a.block_n}: the kernel's tile widths are 128 and 256")
    # --out: never the --from-result input, a link or a folder (plot_io.output_path's rules; exit 2)
    output_path(os.path.basename(sys.argv[0]).removesuffix(".py"), a.out, [a.from_result] if a.from_result else [],
                suffix=".json")
    if (a.from_result is None) == (a.m_per_expert is None):
        raise Failure(EXIT_USAGE, "give --from-result or --m-per-expert (with --hidden and --intermediate)")
    if a.from_result:
        try:
            with open(a.from_result) as f:
                configs = mp.configs_from_result(json.load(f), tuple(a.targets.split(",")))
        except (OSError, json.JSONDecodeError, KeyError) as e:
            raise Failure(EXIT_USAGE, f"--from-result: cannot read {a.from_result}: {e}")
        if not configs:
            raise Failure(EXIT_USAGE, f"--from-result: no ok megamoe point with target in {a.targets}")
        if a.block_n is not None:
            for c in configs:
                if c["block_n"] != a.block_n:
                    c["source"] += f", b_n {c['block_n']} -> {a.block_n} (D by eq. 16 at the new b_n)"
                    c["block_n"], c["D"] = a.block_n, 0
    else:
        if not a.hidden or not a.intermediate or a.precision not in ("bf16", "fp8"):
            raise Failure(EXIT_USAGE, "--hidden, --intermediate and --precision bf16|fp8 are needed")
        try:
            counts = [int(x) for x in a.m_per_expert.split(",") if x.strip()]
        except ValueError:
            raise Failure(EXIT_USAGE, f"--m-per-expert: '{a.m_per_expert}' is not a list of integers")
        bn = a.block_n or 128
        if a.hidden % bn or (2 * a.intermediate) % bn or a.hidden < 1 or a.intermediate < 1:
            raise Failure(EXIT_USAGE, f"--hidden {a.hidden} / --intermediate {a.intermediate}: h and 2I must be positive "
                                      f"multiples of b_n = {bn}")
        if a.precision == "fp8" and bn != 128:
            raise Failure(EXIT_USAGE, "--precision fp8 runs at --block-n 128 only")
        configs = [{"shape": "", "hidden": a.hidden, "intermediate": a.intermediate, "precision": a.precision,
                    "T": a.T, "P": a.P, "top_k": a.top_k, "K_SM": a.ksm, "block_n": a.block_n or 128, "D": a.D,
                    "m_per_expert": counts, "best_experts_per_wave": 1, "source": "command line"}]
    for c in configs:
        if not c.get("D"):
            c["D"] = max(1, math.ceil(c["block_n"] * c["K_SM"] / (2.0 * c["intermediate"])))
    return a, widths, configs


# ---- device side ----

class Problem:
    """The tensors of one configuration, on the device, and the descriptor of each kernel contender."""

    def __init__(self, torch, lib, cfg, seed, cooperative):
        self.torch, self.lib, self.cfg = torch, lib, cfg
        self.cooperative = cooperative
        dev = torch.device("cuda")
        h, inter, e = cfg["hidden"], cfg["intermediate"], len(cfg["m_per_expert"])
        self.fp8 = cfg["precision"] == "fp8"
        lay = mp.routing_layout(cfg["m_per_expert"], cfg["T"], cfg["P"], cfg["top_k"], seed)
        self.layout = lay
        rows = lay["num_row_blocks"] * mp.BLOCK_ROWS
        self.rows = rows
        i32 = lambda v: torch.tensor(v, dtype=torch.int32, device=dev)  # noqa: E731
        self.pool_arrival, self.dst_rank, self.dst_slot = (i32(lay["pool_arrival"]), i32(lay["pool_dst_rank"]),
                                                           i32(lay["pool_dst_slot"]))
        self.weight = torch.tensor(lay["pool_weight"], dtype=torch.float32, device=dev)
        self.rbe = i32(lay["row_block_expert"] or [0])
        self.first = i32(lay["expert_first_block"])
        g = torch.Generator(device=dev).manual_seed(seed)
        uni = lambda shape, s: ((torch.rand(*shape, device=dev, generator=g) * 2 - 1) * s)  # noqa: E731
        arrival = uni((lay["num_arrivals"], h), 1.0).to(torch.bfloat16)
        w1 = uni((e, 2 * inter, h), 1.0 / math.sqrt(h)).to(torch.bfloat16)
        w2 = uni((e, h, inter), 1.0 / math.sqrt(inter)).to(torch.bfloat16)
        if self.fp8:
            self.arrival, self.arrival_scale = quantize_rows(torch, arrival.float(), 128)
            self.w1, self.w1_scale = quantize_blocks(torch, w1.float())
            self.w2, self.w2_scale = quantize_blocks(torch, w2.float())
            self.pool = torch.empty(rows, h, dtype=torch.float8_e4m3fn, device=dev)
            self.act = torch.empty(rows, inter, dtype=torch.float8_e4m3fn, device=dev)
            self.pool_scale = torch.empty(h // 128, rows, dtype=torch.float32, device=dev)
            self.act_scale = torch.empty(inter // 64, rows, dtype=torch.float32, device=dev)
        else:
            self.arrival, self.w1, self.w2 = arrival, w1, w2
            self.arrival_scale = self.w1_scale = self.w2_scale = self.pool_scale = self.act_scale = None
            self.pool = torch.empty(rows, h, dtype=torch.bfloat16, device=dev)
            self.act = torch.empty(rows, inter, dtype=torch.bfloat16, device=dev)
        self.slots = cfg["T"] * cfg["top_k"]
        self.dst = torch.empty(cfg["P"], self.slots, h, dtype=torch.bfloat16, device=dev)
        sync_bytes = lib.xs_moe_sync_bytes(lay["num_row_blocks"])
        self.sync = {ph: torch.zeros(sync_bytes // 4, dtype=torch.int32, device=dev) for ph in mp.PHASES}
        ends = [b * mp.BLOCK_ROWS for b in lay["expert_first_block"][1:]]
        self.offs = i32(ends)

    def desc(self, c):
        cfg, lay = self.cfg, self.layout
        d = mp.XsMoeDesc()
        d.version = mp.C_API_VERSION
        d.hidden, d.intermediate, d.num_experts = cfg["hidden"], cfg["intermediate"], len(cfg["m_per_expert"])
        d.top_k, d.tokens_per_rank, d.num_ranks = cfg["top_k"], cfg["T"], cfg["P"]
        d.num_row_blocks, d.num_arrivals = lay["num_row_blocks"], lay["num_arrivals"]
        d.block_n, d.precision = cfg["block_n"], 1 if self.fp8 else 0
        d.schedule, d.experts_per_wave, d.lead_rows = mp.SCHEDULES[c.schedule], c.experts_per_wave, c.lead_rows
        d.completion_coupled, d.phases, d.num_ctas = 0, mp.PHASES[c.phases], cfg["K_SM"]
        d.cooperative = 1 if self.cooperative else 0
        ptr = lambda t: None if t is None else t.data_ptr()  # noqa: E731
        d.arrival, d.pool, d.w1, d.w2, d.act = (ptr(self.arrival), ptr(self.pool), ptr(self.w1), ptr(self.w2),
                                                ptr(self.act))
        d.arrival_scale, d.pool_scale, d.w1_scale = ptr(self.arrival_scale), ptr(self.pool_scale), ptr(self.w1_scale)
        d.w2_scale, d.act_scale = ptr(self.w2_scale), ptr(self.act_scale)
        d.pool_arrival, d.pool_dst_rank, d.pool_dst_slot = (self.pool_arrival.data_ptr(), self.dst_rank.data_ptr(),
                                                            self.dst_slot.data_ptr())
        d.pool_weight, d.row_block_expert, d.expert_first_block = (self.weight.data_ptr(), self.rbe.data_ptr(),
                                                                    self.first.data_ptr())
        for r in range(cfg["P"]):
            d.dst[r] = self.dst[r].data_ptr()
            d.dst_bytes[r] = self.slots * cfg["hidden"] * 2
        d.sync_words, d.sync_bytes = self.sync[c.phases].data_ptr(), self.sync[c.phases].numel() * 4
        return d

    def launch(self, c):
        err = ctypes.create_string_buffer(2048)
        rc = self.lib.xs_moe_launch(ctypes.byref(self.desc(c)), ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream),
                                    err, len(err))
        if rc != 0:
            raise Failure(EXIT_USAGE if rc == 2 else EXIT_DEVICE, f"xs_moe_launch ({c.name}): {err.value.decode()}")

    def poison(self, what):
        for t in what:
            if t is not None:
                t.view(self.torch.uint8).fill_(0xFF)


def quantize_rows(torch, x, group):
    """The kernel's activation recipe: per row per `group` columns s = amax / 448 (1 if 0), codes e4m3(x / s)."""
    r, k = x.shape
    g = x.view(r, k // group, group)
    amax = g.abs().amax(dim=-1)
    s = torch.where(amax == 0, torch.ones_like(amax), amax / E4M3_MAX)
    return (g / s.unsqueeze(-1)).view(r, k).to(torch.float8_e4m3fn), s.contiguous()


def quantize_blocks(torch, w):
    """128 x 128 weight blocks: w [E][N][K] -> codes, scales [E][N/128][K/128]."""
    e, n, k = w.shape
    b = w.view(e, n // 128, 128, k // 128, 128)
    amax = b.abs().amax(dim=(2, 4))
    s = torch.where(amax == 0, torch.ones_like(amax), amax / E4M3_MAX)
    codes = (b / s[:, :, None, :, None]).view(e, n, k).to(torch.float8_e4m3fn)
    return codes, s.contiguous()


def dequant_blocks(torch, codes, s):
    e, n, k = codes.shape
    return (codes.float().view(e, n // 128, 128, k // 128, 128) * s[:, :, None, :, None]).view(e, n, k)


def reference(torch, p):
    """fp32 torch reference of the kernel's math (act rounded as the kernel: bf16, or e4m3 per 64 columns): the
    Combine rows [P][slots][h] (NaN where nothing is written)."""
    cfg, lay = p.cfg, p.layout
    h, inter = cfg["hidden"], cfg["intermediate"]
    if p.fp8:
        x_all = (p.arrival.float().view(-1, h // 128, 128) * p.arrival_scale.unsqueeze(-1)).view(-1, h)
        w1, w2 = dequant_blocks(torch, p.w1, p.w1_scale), dequant_blocks(torch, p.w2, p.w2_scale)
    else:
        x_all, w1, w2 = p.arrival.float(), p.w1.float(), p.w2.float()
    out = torch.full((cfg["P"], p.slots, h), float("nan"), dtype=torch.float32, device=p.dst.device)
    for e, m in enumerate(cfg["m_per_expert"]):
        if m == 0:
            continue
        r0 = lay["expert_first_block"][e] * mp.BLOCK_ROWS
        rows = slice(r0, r0 + m)
        x = x_all[p.pool_arrival[rows].long()]
        gu = x @ w1[e].t()
        a = torch.nn.functional.silu(gu[:, 0::2]) * gu[:, 1::2] * p.weight[rows].unsqueeze(-1)
        if p.fp8:
            q, s = quantize_rows(torch, a, 64)
            a = (q.float().view(m, inter // 64, 64) * s.unsqueeze(-1)).view(m, inter)
        else:
            a = a.to(torch.bfloat16).float()
        out[p.dst_rank[rows].long(), p.dst_slot[rows].long()] = a @ w2[e].t()
    return out


def check_kernel(torch, p, ref, rms):
    """verification_gate.hpp's rule on the kernel's destinations (bf16 bits, poisoned 0xFFFF) against ref."""
    got = p.dst.float()
    written = ~torch.isnan(ref)
    unwritten = int((p.dst.view(torch.int16) == -1)[written].sum())
    t, r = got[written], ref[written].to(torch.bfloat16).float()
    abs_tol, rel_tol = mp.tolerance(p.cfg["precision"], rms)
    d = (t - r).abs()
    wrong = int((~(d <= abs_tol + rel_tol * r.abs())).sum())
    finite = torch.isfinite(t)
    tt, rr = t[finite].double(), r[finite].double()
    norms = float((tt * tt).sum() + (rr * rr).sum())
    rel = 1.0 - 2.0 * float((tt * rr).sum()) / norms if norms > 0 else 0.0
    stray = int((p.dst.view(torch.int16) != -1)[~written].sum())
    counts = {"compared": int(written.sum()), "wrong": wrong, "unwritten": unwritten, "relative_difference": rel,
              "unexpected": stray}
    ok, why = mp.gate_passes(counts, p.cfg["precision"], rms)
    if stray:
        ok, why = False, (why + "; " if why else "") + f"{stray} elements written outside the expected slots"
    return ok, why, counts


def torch_ops(torch, p):
    """The torch contenders on the kernel's tensors (call after a verified kernel launch: pool and act hold its
    Dispatch and Linear-1 output). fp8: rowwise scales from the first 128-K group (a speed anchor)."""
    gmm = getattr(torch.nn.functional, "grouped_mm", None)
    if p.fp8:
        sgm = getattr(torch, "_scaled_grouped_mm", None)
        if sgm is None:
            raise Failure(EXIT_NO_GPU, f"torch {torch.__version__} has no _scaled_grouped_mm")
        sa1, sa2 = p.pool_scale[0].contiguous(), p.act_scale[0].contiguous()
        sb1 = p.w1_scale[:, :, 0].repeat_interleave(128, dim=1).contiguous()  # [E][2I]
        sb2 = p.w2_scale[:, :, 0].repeat_interleave(128, dim=1).contiguous()  # [E][h]
        l1 = lambda: sgm(p.pool, p.w1.transpose(-2, -1), sa1, sb1, offs=p.offs, out_dtype=torch.bfloat16,  # noqa: E731
                         use_fast_accum=True)
        l2 = lambda: sgm(p.act, p.w2.transpose(-2, -1), sa2, sb2, offs=p.offs, out_dtype=torch.bfloat16,  # noqa: E731
                         use_fast_accum=True)
        a1, b1 = (p.pool.float() * sa1.unsqueeze(-1)), p.w1.float() * sb1.unsqueeze(-1)
        a2, b2 = (p.act.float() * sa2.unsqueeze(-1)), p.w2.float() * sb2.unsqueeze(-1)
    else:
        if gmm is None:
            raise Failure(EXIT_NO_GPU, f"torch {torch.__version__} has no torch.nn.functional.grouped_mm")
        l1 = lambda: gmm(p.pool, p.w1.transpose(-2, -1), offs=p.offs)  # noqa: E731
        l2 = lambda: gmm(p.act, p.w2.transpose(-2, -1), offs=p.offs)  # noqa: E731
        a1, b1, a2, b2 = p.pool.float(), p.w1.float(), p.act.float(), p.w2.float()
    # Check every non-empty group's GEMM against fp32 matmul on the same operands.
    o1, o2 = l1(), l2()
    worst = 0.0
    for e, m in enumerate(p.cfg["m_per_expert"]):
        if m == 0:
            continue
        r0 = p.layout["expert_first_block"][e] * mp.BLOCK_ROWS
        for got, a, b in ((o1, a1, b1), (o2, a2, b2)):
            want = a[r0:r0 + m] @ b[e].t()
            worst = max(worst, float((got[r0:r0 + m].float() - want).norm() / want.norm().clamp(min=1e-30)))
    if not worst <= 2e-2:
        raise Failure(EXIT_VERIFY, f"torch grouped GEMM differs from fp32 matmul (relative error {worst:.3g})")
    return {"torch_l1": l1, "torch_l2": l2, "torch_l1_l2": lambda: (l1(), l2())}, worst


def run_config(torch, lib, cfg, widths, args):
    p = Problem(torch, lib, cfg, args.seed, not args.no_cooperative_launch)
    ref = reference(torch, p)
    written = ~torch.isnan(ref)
    rms = float(ref[written].pow(2).mean().sqrt())
    cs = mp.contenders(sorted({min(w, len(cfg["m_per_expert"])) for w in widths}), cfg["D"])
    verification = {"reference_rms": rms}
    serial = next(c for c in cs if c.name == "kernel_serial")
    for c in cs:
        if c.kind != "kernel":
            continue
        p.poison([p.pool, p.act, p.pool_scale, p.act_scale])
        if c.phases != "all":
            p.launch(serial)
            if c.phases == "linear1":
                p.poison([p.act, p.act_scale])
        p.poison([p.dst])
        p.launch(c)
        if c.phases == "linear1":
            p.launch(mp.Contender("l2", "kernel", "serial", phases="linear2"))
        torch.cuda.synchronize()
        ok, why, counts = check_kernel(torch, p, ref, rms)
        verification[c.name] = dict(counts, passed=ok, reason=why)
        if not ok:
            raise Failure(EXIT_VERIFY, f"{c.name}: {why}")
    p.launch(serial)  # pool and act of a verified launch for torch and the phase contenders
    ops, torch_err = torch_ops(torch, p)
    verification["torch_vs_fp32_matmul_relative_error"] = torch_err
    graphs = {}
    for c in cs:
        g = torch.cuda.CUDAGraph()
        fn = ops[c.name] if c.kind == "torch" else (lambda c=c: p.launch(c))
        with torch.cuda.graph(g, capture_error_mode="thread_local"):
            for _ in range(args.launches):
                fn()
        graphs[c.name] = g
    names = [c.name for c in cs]
    seconds = {n: [] for n in names}
    clocks = {n: [] for n in names}
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for rnd in range(args.warmup + args.rounds):
        for n in mp.round_order(names, rnd):
            start.record()
            graphs[n].replay()
            stop.record()
            hz = probe_sm_clock_hz(torch)  # behind the replay: the clock the replay ended at
            stop.synchronize()
            if rnd >= args.warmup:
                seconds[n].append(start.elapsed_time(stop) * 1e-3 / args.launches)
                clocks[n].append(hz)
    flops = mp.phase_flops(sum(cfg["m_per_expert"]), cfg["hidden"], cfg["intermediate"])
    contenders_out = {}
    for n in names:
        s = mp.summary(seconds[n])
        contenders_out[n] = {"median_s": s["median"], "p10_s": s["p10"], "p90_s": s["p90"], "samples_s": seconds[n],
                             "sm_clock_hz": mp.summary([x for x in clocks[n] if x])}
    return {"status": "ok", "config": cfg, "verification": verification, "contenders": contenders_out,
            "ratios": mp.ratios(seconds, flops), "flops": flops,
            "recipe": ("bf16: grouped_mm and the kernel on the same bf16 tensors" if not p.fp8 else
                       "fp8: the same e4m3 codes; torch _scaled_grouped_mm with ROWWISE scales (each row's and "
                       "column's first 128-K group scale), use_fast_accum; the kernel per-token 1x128 activation and "
                       "128x128 weight blocks with fp32 promotion per group")}


def meta(torch):
    m = {"device_name": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda_torch": torch.version.cuda,
         "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
         "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        m["git"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return m


def main(argv):
    try:
        args, widths, configs = parse_args(argv)
    except Failure as f:
        print(f"moe_vs_grouped_mm: {f}", file=sys.stderr)
        return f.code
    try:
        import torch
    except ImportError as e:
        print(f"moe_vs_grouped_mm: skipped: torch not importable ({e})", file=sys.stderr)
        return EXIT_NO_GPU
    if not torch.cuda.is_available():
        print("moe_vs_grouped_mm: skipped: torch sees no CUDA device", file=sys.stderr)
        return EXIT_NO_GPU
    try:
        lib = ctypes.CDLL(args.lib)
    except OSError as e:
        print(f"moe_vs_grouped_mm: skipped: cannot load {args.lib} ({e})", file=sys.stderr)
        return EXIT_NO_GPU
    lib.xs_moe_sync_bytes.restype = ctypes.c_uint64
    lib.xs_moe_sync_bytes.argtypes = [ctypes.c_int]
    lib.xs_moe_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    if lib.xs_moe_c_api_version() != mp.C_API_VERSION:
        print(f"moe_vs_grouped_mm: {args.lib} has C API version {lib.xs_moe_c_api_version()}, this script "
              f"{mp.C_API_VERSION}", file=sys.stderr)
        return EXIT_USAGE
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    doc = {"schema": {"name": "xstage.moe_vs_grouped_mm", "version": 1}, "meta": meta(torch),
           "protocol": {"launches_per_graph": args.launches, "warmup_rounds": args.warmup, "rounds": args.rounds,
                        "order": "every contender once per round, start rotating by one (xstage-bench's)",
                        "clock": "two spin kernels of known cycle counts behind every replay",
                        "cooperative_launch": not args.no_cooperative_launch},
           "points": []}
    code = EXIT_OK
    for cfg in configs:
        print(f"== {cfg['source']}: h {cfg['hidden']} I {cfg['intermediate']} {cfg['precision']} "
              f"rows {sum(cfg['m_per_expert'])}", flush=True)
        try:
            point = run_config(torch, lib, cfg, widths, args)
        except Failure as f:
            point = {"config": cfg, "status": "failed", "reason": str(f)}
            code = max(code, f.code)
        except torch.cuda.OutOfMemoryError as e:
            point = {"config": cfg, "status": "skipped", "reason": f"out of device memory: {e}"}
        except RuntimeError as e:  # torch refused an op (recorded, go on), or a CUDA error (the context may be gone)
            point = {"config": cfg, "status": "failed", "reason": f"{type(e).__name__}: {e}"}
            if "CUDA" in str(e) or "cuda" in str(e):
                doc["points"].append(point)
                write_atomically(args.out, doc)
                print(point["reason"], file=sys.stderr)
                return EXIT_DEVICE
            code = max(code, EXIT_DEVICE)
        doc["points"].append(point)
        write_atomically(args.out, doc)
        r = point.get("ratios", {})
        print(json.dumps({k: v for k, v in r.items() if not isinstance(v, dict)} or point.get("reason", ""))[:600],
              flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
