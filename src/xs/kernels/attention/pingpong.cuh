// xstage kernels layer (attention): the inter-warpgroup ping-pong of the Q-loop (MainloopSchedule
// kPingPong, kPingPongFull; config.hpp): the two consumer warpgroups take turns issuing their wgmmas, so
// one warpgroup's softmax runs while the other's GEMMs occupy the tensor cores. Device code only.
//
// Protocol (named barriers, PTX ISA "bar.sync / bar.arrive"; ids 3 and 4: 0 is __syncthreads, 1 and 2 the
// epilogue's per-warpgroup barriers, epilogue.cuh). Barrier 3 + c is consumer c's turn, 256 threads: the
// 128 threads of c wait on it (bar.sync), the other consumer's 128 count towards it without waiting
// (bar.arrive).
//   start()  consumer 1 arrives on consumer 0's barrier: consumer 0 has the first turn (only when the CTA
//            takes any turn at all).
//   take()   bar.sync on the own barrier: wait until the other warpgroup passed the turn.
//   pass()   bar.arrive on the other's barrier, right after this warpgroup's wgmmas were issued; consumer 1
//            skips its pass on the CTA's last turn, which no take would match. So both barriers end the
//            kernel with no arrival pending (consumer 0 taking once more after its loop instead makes
//            ptxas spill the d = 128 consumers: 200 bytes, CUDA 13.0).
// Both warpgroups run the same tiles with the same number of KV tiles, so each takes the same number T of
// turns. Consumer 0's T takes meet T arrivals (start + consumer 1's T - 1 passes); consumer 1's T takes
// meet consumer 0's T passes. At most one arrival is ever pending per barrier: consumer 1's k-th pass
// follows its k-th take, which needs consumer 0's k-th pass, which follows consumer 0's k-th take (which
// consumed consumer 1's (k-1)-th pass or the start); the same holds the other way round. So an arrival is
// never counted into the wrong barrier phase.
// Deadlock freedom with the mbarrier pipeline (mainloop.cuh): a warpgroup waits for its K/V/Q tiles before
// take(), so it never holds the turn while it waits on the producer. What its step j waits for (K_j, V_{j-1},
// a new tile's Q) needs only releases the other warpgroup makes in steps at or before the turn it already
// passed (K_{j-2} and V_{j-3} in step j-2, the previous tile's Q in that tile's last step), so the other
// warpgroup is never stuck on the turn before making them. A tile's S_0 and last PV (kPingPong) are issued
// outside the turn and wait only on the producer.
#pragma once
#include <cstdint>

#include "xs/kernels/common/ptx_hopper.cuh"

namespace xs::kernels::attention {

inline constexpr std::uint32_t kTurnBarrierBase = 3;  // consumer c's turn: named barrier 3 + c
inline constexpr std::uint32_t kTurnThreads = 256;    // both consumer warpgroups

struct IssueTurn {
  std::uint32_t consumer;  // 0 or 1

  // takes_turns: the CTA takes at least one turn (a tile with a loop step, or kPingPongFull).
  __device__ __forceinline__ void start(bool takes_turns) const {
    if (consumer == 1 && takes_turns) ptx::named_barrier_arrive(kTurnBarrierBase, kTurnThreads);
  }
  __device__ __forceinline__ void take() const { ptx::named_barrier_sync(kTurnBarrierBase + consumer, kTurnThreads); }
  // last_turn: this is the CTA's last turn (its last tile's last turn-taking issue).
  __device__ __forceinline__ void pass(bool last_turn) const {
    if (consumer == 0 || !last_turn) ptx::named_barrier_arrive(kTurnBarrierBase + (consumer ^ 1u), kTurnThreads);
  }
};

}  // namespace xs::kernels::attention
