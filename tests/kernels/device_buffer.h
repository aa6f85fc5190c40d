// A device allocation owned by one GPU test: freed however the test ends
// (an ASSERT returns early), filled at birth so that an element a kernel
// failed to write shows up, and optionally offset from the allocation's
// start so a test can hand kernels misaligned pointers.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <vector>

namespace stepscope::kernels::testing {

class DeviceBuffer {
 public:
  // `bytes` usable bytes at ptr(), after `pad` bytes; all set to `fill`.
  explicit DeviceBuffer(size_t bytes, int fill = 0, size_t pad = 0) : bytes_(bytes), pad_(pad) {
    // A little slack past the end: a zero-size buffer still has an address.
    EXPECT_EQ(cudaMalloc(&base_, pad + bytes + kSlack), cudaSuccess);
    EXPECT_EQ(cudaMemset(base_, fill, pad + bytes + kSlack), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(base_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* ptr() const { return static_cast<char*>(base_) + pad_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr());
  }
  size_t bytes() const { return bytes_; }

  // Copies n bytes (all of the buffer by default) from the host.
  void upload(const void* src, size_t n = std::numeric_limits<size_t>::max()) {
    if (n == std::numeric_limits<size_t>::max()) n = bytes_;
    if (n > 0) {
      ASSERT_EQ(cudaMemcpy(ptr(), src, n, cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  template <class T>
  void put(const T& value) {
    upload(&value, sizeof value);
  }
  // `count` values of T from `offset_bytes` on (all of the buffer by default).
  template <class T = unsigned char>
  std::vector<T> download(size_t count = std::numeric_limits<size_t>::max(), size_t offset_bytes = 0) const {
    if (count == std::numeric_limits<size_t>::max()) count = (bytes_ - offset_bytes) / sizeof(T);
    std::vector<T> h(count);
    if (count > 0) {
      EXPECT_EQ(cudaMemcpy(h.data(), static_cast<const char*>(ptr()) + offset_bytes, count * sizeof(T),
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    return h;
  }
  template <class T>
  T get() const {
    return download<T>(1).front();
  }

 private:
  static constexpr size_t kSlack = 16;
  void* base_ = nullptr;
  size_t bytes_;
  size_t pad_;
};

}  // namespace stepscope::kernels::testing
