// A CUDA C++ program launches its kernel with 2048 threads a block, past the 1024 a block may
// have on any NVIDIA GPU: the launch fails, reported by the next cudaGetLastError (CUDA 13.0
// reports it as cudaErrorInvalidValue, "invalid argument"; older runtimes as
// cudaErrorInvalidConfiguration, "invalid configuration argument"). config.invalid: the
// program's launch configuration is invalid for the device (as triton_smem's is); the remedy is
// a smaller block, not another GPU, toolkit or library.
#include <cstdio>
#include "check.h"

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main() {
  const int n = 1 << 22;
  float* x = nullptr;
  checkCudaErrors(cudaMalloc(&x, n * sizeof(float)));
  checkCudaErrors(cudaMemset(x, 0, n * sizeof(float)));
  const int threads = 2048;
  const int blocks = (n + threads - 1) / threads;
  std::printf("launching scale<<<%d, %d>>> over %d elements\n", blocks, threads, n);
  std::fflush(stdout);
  scale<<<blocks, threads>>>(x, 0.5f, n);
  checkCudaErrors(cudaGetLastError());
  checkCudaErrors(cudaDeviceSynchronize());
  checkCudaErrors(cudaFree(x));
  std::printf("done\n");
  return 0;
}
