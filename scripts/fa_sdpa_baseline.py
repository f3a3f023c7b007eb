#!/usr/bin/env python3
"""PyTorch SDPA baseline for the xstage FlashAttention forward: bf16, non-causal, d=128, [1, H, M, d].

Times the cuDNN backend (pinned with torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION)) and the
flash backend on the same shapes as xstage-fa-point and prints TFLOPS = 4 M^2 d H / t (median of CUDA-event
timed repetitions after warm-up), for a side-by-side ratio. Not needed to build or test xstage.
"""
import argparse
import statistics
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--M", default="8192,16384", help="comma-separated sequence lengths")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f"skipped: torch not importable ({e})")
        return 0
    if not torch.cuda.is_available():
        print("skipped: no CUDA device visible to torch")
        return 0
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}")
    backends = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)]
    for m in [int(x) for x in args.M.split(",")]:
        g = torch.Generator(device="cuda").manual_seed(1234 + m)
        shape = (1, args.heads, m, args.head_dim)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
        flops = 4.0 * m * m * args.head_dim * args.heads
        for name, backend in backends:
            try:
                with sdpa_kernel(backend):
                    for _ in range(args.warmup):
                        torch.nn.functional.scaled_dot_product_attention(q, k, v)
                    torch.cuda.synchronize()
                    times = []
                    for _ in range(args.iters):
                        start = torch.cuda.Event(enable_timing=True)
                        stop = torch.cuda.Event(enable_timing=True)
                        start.record()
                        torch.nn.functional.scaled_dot_product_attention(q, k, v)
                        stop.record()
                        stop.synchronize()
                        times.append(start.elapsed_time(stop) * 1e-3)
                t = statistics.median(times)
                print(f"sdpa.{name} M={m} H={args.heads} d={args.head_dim}: {t * 1e6:.1f} us, {flops / t * 1e-12:.1f} TFLOPS")
            except RuntimeError as e:  # backend not usable for this shape/build
                print(f"sdpa.{name} M={m}: unavailable ({str(e).splitlines()[0]})")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
