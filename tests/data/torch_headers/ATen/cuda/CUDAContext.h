// Stand-in (hipcc side only, see torch/extension.h): the current stream, declared where real torch declares it.
#pragma once
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
typedef hipStream_t shim_stream_t;
#else
#include <cuda_runtime.h>
typedef cudaStream_t shim_stream_t;
#endif
namespace at { namespace cuda { inline shim_stream_t getCurrentCUDAStream() { return nullptr; } } }
