#!/usr/bin/env python3
"""One MegaMoE configuration's GEMM phases and torch's grouped GEMMs, each launched once inside a
cudaProfilerStart/Stop window, for Nsight Compute (issue 29: where the kernel's mainloop loses to grouped_mm).

The problem is built exactly as scripts/moe_vs_grouped_mm.py builds it (same flags, same tensors): a serial kernel
launch fills pool and act outside the window, torch's GEMMs are checked against fp32 matmuls outside it, then the
window holds, in this order: kernel_phase_l1, kernel_phase_l2 (the kernel's whole GEMM phases, no Dispatch, no
waits), torch_l1, torch_l2. Nothing is timed here: timings come from moe_vs_grouped_mm.py; this only feeds a
profiler, e.g.
  ncu --clock-control none --profile-from-start off --section SpeedOfLight ... -o prof \\
    python3 scripts/moe_profile_point.py --lib build/lib/libxstage_moe.so --out launched.json --hidden 4096 ...
Writes OUT (JSON): the configuration and the launch order inside the window (the profiler's kernels in order).
Exit codes: those of moe_vs_grouped_mm.py (0, 2 bad usage, 3 CUDA failure, 4 verification failed, 77 no GPU).
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moe_pairing as mp  # noqa: E402
import moe_vs_grouped_mm as mv  # noqa: E402
from fa_attach_baseline import write_atomically  # noqa: E402


def main(argv):
    try:
        args, _, configs = mv.parse_args(argv)
    except mv.Failure as f:
        print(f"moe_profile_point: {f}", file=sys.stderr)
        return f.code
    if len(configs) != 1:
        print(f"moe_profile_point: one configuration per run ({len(configs)} given)", file=sys.stderr)
        return mv.EXIT_USAGE
    try:
        import torch
    except ImportError as e:
        print(f"moe_profile_point: skipped: torch not importable ({e})", file=sys.stderr)
        return mv.EXIT_NO_GPU
    if not torch.cuda.is_available():
        print("moe_profile_point: skipped: torch sees no CUDA device", file=sys.stderr)
        return mv.EXIT_NO_GPU
    try:
        lib = ctypes.CDLL(args.lib)
    except OSError as e:
        print(f"moe_profile_point: skipped: cannot load {args.lib} ({e})", file=sys.stderr)
        return mv.EXIT_NO_GPU
    lib.xs_moe_sync_bytes.restype = ctypes.c_uint64
    lib.xs_moe_sync_bytes.argtypes = [ctypes.c_int]
    lib.xs_moe_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    if lib.xs_moe_c_api_version() != mp.C_API_VERSION:
        print(f"moe_profile_point: {args.lib} has C API version {lib.xs_moe_c_api_version()}, this script "
              f"{mp.C_API_VERSION}", file=sys.stderr)
        return mv.EXIT_USAGE
    cfg = configs[0]
    try:
        p = mv.Problem(torch, lib, cfg, args.seed, not args.no_cooperative_launch)
        cs = {c.name: c for c in mp.contenders([1], cfg["D"])}
        p.launch(cs["kernel_serial"])  # pool and act filled, outside the window
        ops, _ = mv.torch_ops(torch, p)
        torch.cuda.synchronize()
        order = ["kernel_phase_l1", "kernel_phase_l2", "torch_l1", "torch_l2"]
        torch.cuda.profiler.start()
        for name in order:
            if name in ops:
                ops[name]()
            else:
                p.launch(cs[name])
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    except mv.Failure as f:
        print(f"moe_profile_point: {f}", file=sys.stderr)
        return f.code
    write_atomically(args.out, {"config": cfg, "window_order": order,
                                "flops": mp.phase_flops(sum(cfg["m_per_expert"]), cfg["hidden"], cfg["intermediate"])})
    return mv.EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
