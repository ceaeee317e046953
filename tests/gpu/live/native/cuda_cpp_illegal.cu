// A CUDA C++ kernel writes through a null pointer; the next synchronisation reports it.
#include <cstdio>
#include "check.h"

__global__ void scale(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * i;
}

int main() {
  const int n = 1 << 20;
  std::printf("launching scale<<<%d, 256>>>\n", n / 256);
  std::fflush(stdout);
  scale<<<n / 256, 256>>>(nullptr, n);
  checkCudaErrors(cudaGetLastError());
  checkCudaErrors(cudaDeviceSynchronize());
  return 0;
}
