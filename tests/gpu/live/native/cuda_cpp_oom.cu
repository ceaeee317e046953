// A CUDA C++ program asks cudaMalloc for more device memory than the GPU has.
#include <cstdio>
#include "check.h"

int main() {
  size_t free_bytes = 0, total = 0;
  checkCudaErrors(cudaMemGetInfo(&free_bytes, &total));
  std::printf("GPU memory: %zu MiB free of %zu MiB\n", free_bytes >> 20, total >> 20);
  const size_t bytes = total + total / 2;
  std::printf("allocating the frame buffers: %zu MiB\n", bytes >> 20);
  std::fflush(stdout);
  float* buffers = nullptr;
  checkCudaErrors(cudaMalloc(&buffers, bytes));
  checkCudaErrors(cudaFree(buffers));
  return 0;
}
