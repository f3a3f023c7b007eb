// xstage backends/cuda layer (CUDA): owned device memory (RAII, move-only) with whole-vector uploads and
// downloads, and the seed of fresh random device inputs. Shared by the attention and moe runners and
// GPU tests. Throws xs::Error (exit 3) on a CUDA failure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace xs::runtime {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);  // cudaMalloc; 0 bytes holds nullptr
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Synchronous copies (cudaMemcpy), checked.
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);

// A device buffer holding exactly the bytes of `host`.
template <class T>
DeviceBuffer upload(const std::vector<T>& host) {
  static_assert(std::is_trivially_copyable_v<T>);
  DeviceBuffer b(host.size() * sizeof(T));
  copy_to_device(b.get(), host.data(), b.bytes());
  return b;
}

// The whole buffer as bytes.size() / sizeof(T) elements.
template <class T>
std::vector<T> download(const DeviceBuffer& b) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> host(b.bytes() / sizeof(T));
  copy_to_host(host.data(), b.get(), host.size() * sizeof(T));
  return host;
}

std::uint64_t fresh_seed();  // from std::random_device; tests print it so a failure can be replayed

}  // namespace xs::runtime
