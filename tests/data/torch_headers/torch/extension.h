// Test-only stand-in for a torch install (none on this machine, ~2 GB with CUDA wheels): the few torch
// declarations the cuda-extension fixture uses, so its ported kernels compile with hipcc and nvcc.
#pragma once
#include <cstdint>
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
typedef hipStream_t shim_stream_t;
#else
#include <cuda_runtime.h>
typedef cudaStream_t shim_stream_t;
#endif
namespace torch {
struct Tensor {
  int64_t size(int) const { return 1; }
  template <typename T> T* data_ptr() const { return nullptr; }
};
inline Tensor empty_like(const Tensor& t) { return t; }
}  // namespace torch
namespace at { namespace cuda { inline shim_stream_t getCurrentCUDAStream() { return nullptr; } } }
#define TORCH_EXTENSION_NAME fixture_ext
#define PYBIND11_MODULE(name, m) struct Module { template <typename F> void def(const char*, F, const char*) {} }; \
  void pybind11_init_##name(Module& m)
