// xstage attention layer (CUDA): device buffers, random problems and single-variant runs (fa_device.hpp).
#include "xs/attention/run/fa_device.hpp"

#include "xs/kernels/attention/random_fill.hpp"
#include "xs/kernels/attention/reference_attention.hpp"
#include "xs/common/error.hpp"
#include "xs/kernels/common/cuda_check.hpp"

namespace xs::attention {

namespace ka = xs::kernels::attention;

FaProblem::FaProblem(int heads, int len, int dim, std::uint64_t s, float q_stddev)
    : num_heads(heads), seq_len(len), head_dim(dim), seed(s), q(bytes()), k(bytes()), v(bytes()) {
  ka::launch_fill_random_bf16(q.get(), elements(), seed * 3 + 1, q_stddev, nullptr);
  ka::launch_fill_random_bf16(k.get(), elements(), seed * 3 + 2, 1.0f, nullptr);
  ka::launch_fill_random_bf16(v.get(), elements(), seed * 3 + 3, 1.0f, nullptr);
  XS_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<std::uint16_t> FaProblem::download(const DeviceBuffer& b) const {
  std::vector<std::uint16_t> h(b.bytes() / 2);
  XS_CUDA_CHECK(cudaMemcpy(h.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

void sync_checked(cudaStream_t stream, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  const std::string timeout = ka::flash_attention_timeout_message();
  throw Error(ExitCode::kDeviceFailure, "cuda", what,
              std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")" +
                  (timeout.empty() ? "" : "; " + timeout));
}

std::vector<float> run_gpu_reference(const FaProblem& p, int row_step, cudaStream_t stream) {
  ka::ReferenceAttentionArgs a;
  p.fill_inputs(a);
  a.row_step = row_step;
  const std::size_t count = static_cast<std::size_t>(p.num_heads) * a.num_rows_per_head() * p.head_dim;
  DeviceBuffer out(count * sizeof(float));
  a.out = static_cast<float*>(out.get());
  ka::launch_reference_attention(a, stream);
  sync_checked(stream, "reference attention");
  std::vector<float> h(count);
  XS_CUDA_CHECK(cudaMemcpy(h.data(), out.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

std::vector<std::uint16_t> run_fa_local(const FaProblem& p, const ka::FlashAttentionConfig& config,
                                        cudaStream_t stream) {
  DeviceBuffer out(p.bytes());
  XS_CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream));  // poison: bf16 0xFFFF (NaN)
  ka::FlashAttentionArgs a;
  p.fill_inputs(a);
  a.out = out.get();
  a.out_bytes = out.bytes();
  a.mode = ka::EpilogueMode::kLocal;
  ka::launch_flash_attention(config, a, stream);
  sync_checked(stream, "flash attention (local)");
  return p.download(out);
}

std::vector<std::vector<std::uint16_t>> run_fa_ulysses(const FaProblem& p, const ka::FlashAttentionConfig& config,
                                                       ka::EpilogueMode mode, const UlyssesSpec& spec,
                                                       cudaStream_t stream, std::vector<ka::TileRecord>* records) {
  ka::FlashAttentionArgs a;
  p.fill_inputs(a);
  a.mode = mode;
  a.num_ranks = spec.num_ranks;
  a.dst_num_heads = spec.dst_num_heads;
  a.dst_head_offset = spec.dst_head_offset;
  if (spec.num_ranks < 1 || spec.num_ranks > ka::kMaxRanks || p.seq_len % spec.num_ranks != 0)
    ka::validate_flash_attention(config, a);  // throws the input error with its message
  const std::uint64_t per_rank = a.ulysses().dst_bytes_per_rank();
  std::vector<DeviceBuffer> dst;
  for (int r = 0; r < spec.num_ranks; ++r) {
    dst.emplace_back(per_rank);
    XS_CUDA_CHECK(cudaMemsetAsync(dst.back().get(), 0xFF, per_rank, stream));
    a.dst[r] = dst.back().get();
    a.dst_bytes[r] = per_rank;
  }
  DeviceBuffer rec;
  if (records != nullptr) {
    rec = DeviceBuffer(ka::flash_attention_records_bytes(config, a));  // 2 per tile, more with a split tail
    XS_CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), stream));
    a.records = static_cast<ka::TileRecord*>(rec.get());
    a.records_bytes = rec.bytes();
  }
  ka::launch_flash_attention(config, a, stream);
  sync_checked(stream, "flash attention (ulysses)");
  std::vector<std::vector<std::uint16_t>> out;
  for (const DeviceBuffer& b : dst) out.push_back(p.download(b));
  if (records != nullptr) {
    records->resize(rec.bytes() / sizeof(ka::TileRecord));
    XS_CUDA_CHECK(cudaMemcpy(records->data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost));
  }
  return out;
}

}  // namespace xs::attention
