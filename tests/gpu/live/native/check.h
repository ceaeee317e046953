// The error check of NVIDIA's CUDA samples (helper_cuda.h's checkCudaErrors), as programs built
// on them print a failed call: "CUDA error at FILE:LINE code=N(cudaErrorName) "call"".
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define checkCudaErrors(call) check((call), #call, __FILE__, __LINE__)

inline void check(cudaError_t result, const char* what, const char* file, int line) {
  if (result == cudaSuccess) return;
  std::fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\" \n", file, line, int(result),
               cudaGetErrorName(result), what);
  std::exit(EXIT_FAILURE);
}
