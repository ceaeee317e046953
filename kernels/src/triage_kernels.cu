// triage's own CUDA kernels. One text serves both builds: nvcc compiles this file ahead of time
// into the fatbin embedded in the triage binary, and the same text, embedded as a string, is
// what NVRTC compiles live for the device's exact architecture. So it includes no header and
// uses only built-in types; every entry point is extern "C" so its name is stable.
//
// Each kernel has a CPU reference in reference.cpp; the host side lives in verifiers/.

// A 32-bit mix of an index and a seed (the same function as the CPU reference's).
__device__ __forceinline__ unsigned triage_mix(unsigned long long i, unsigned seed) {
  unsigned x = (unsigned)(i * 2654435761ull) ^ (unsigned)(i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Smoke: out[i] = a[i] * mul + b[i] + i, with 32-bit wrap-around.
extern "C" __global__ void triage_smoke(const unsigned* a, const unsigned* b, unsigned* out,
                                        unsigned n, unsigned mul) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * mul + b[i] + i;
}

// Memory pattern test: write mix(i, seed) (or its complement), then count the words that do not
// read back as written.
extern "C" __global__ void triage_pattern_write(unsigned* buf, unsigned long long n, unsigned seed,
                                                int invert) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += stride) {
    unsigned v = triage_mix(i, seed);
    buf[i] = invert ? ~v : v;
  }
}

extern "C" __global__ void triage_pattern_check(const unsigned* buf, unsigned long long n,
                                                unsigned seed, int invert,
                                                unsigned long long* errors) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long local = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += stride) {
    unsigned v = triage_mix(i, seed);
    if (buf[i] != (invert ? ~v : v)) ++local;
  }
  if (local) atomicAdd(errors, local);
}

// Bandwidth probe: a grid-stride copy of 16-byte words.
struct triage_word4 {
  unsigned x, y, z, w;
};
extern "C" __global__ void triage_copy(const triage_word4* src, triage_word4* dst,
                                       unsigned long long n) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += stride)
    dst[i] = src[i];
}

// Top-k / top-p sampling from probabilities, one block per row (blockDim.x a power of two).
// Order: probability descending, then token index ascending (so ties order the same way on the
// CPU). Keep the first k; over those, renormalized, keep the shortest prefix whose mass reaches
// p; draw with the row's uniform u: the first token whose running mass exceeds u times the kept
// mass. Dynamic shared memory: pow2 floats then pow2 ints, pow2 >= vocab.
__device__ __forceinline__ bool triage_before(float pa, int ia, float pb, int ib) {
  return pa > pb || (pa == pb && ia < ib);
}

extern "C" __global__ void triage_topk_topp_sample(const float* probs, int vocab, int pow2, int k,
                                                   float p, const float* uniforms, int* tokens) {
  extern __shared__ float triage_shared[];
  float* prob = triage_shared;
  int* index = (int*)(triage_shared + pow2);
  const float* row = probs + (unsigned long long)blockIdx.x * vocab;
  for (int i = threadIdx.x; i < pow2; i += blockDim.x) {
    prob[i] = i < vocab ? row[i] : -1.0f;
    index[i] = i < vocab ? i : 0x7fffffff;
  }
  __syncthreads();
  // Bitonic sort into the order above.
  for (int size = 2; size <= pow2; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < pow2 / 2; t += blockDim.x) {
        int i = 2 * t - (t & (stride - 1));
        int j = i + stride;
        bool forward = (i & size) == 0;
        bool swap = forward ? triage_before(prob[j], index[j], prob[i], index[i])
                            : triage_before(prob[i], index[i], prob[j], index[j]);
        if (swap) {
          float fp = prob[i];
          prob[i] = prob[j];
          prob[j] = fp;
          int fi = index[i];
          index[i] = index[j];
          index[j] = fi;
        }
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    int kk = k < vocab ? k : vocab;
    if (kk < 1) kk = 1;
    float top_k_mass = 0.0f;
    for (int j = 0; j < kk; ++j) top_k_mass += prob[j];
    float cut = p * top_k_mass;
    float kept_mass = 0.0f;
    int m = 0;
    while (m < kk) {
      kept_mass += prob[m];
      ++m;
      if (kept_mass >= cut) break;
    }
    float threshold = uniforms[blockIdx.x] * kept_mass;
    float running = 0.0f;
    int token = index[m - 1];
    for (int j = 0; j < m; ++j) {
      running += prob[j];
      if (running > threshold) {
        token = index[j];
        break;
      }
    }
    tokens[blockIdx.x] = token;
  }
}

// Tensor-core matrix product through the PTX wmma instructions (sm_70 and newer), so that no
// header is needed: C (MxN, row-major, f32) = A (MxK, row-major, f16) * B (KxN, column-major,
// f16). One warp per 16x16 tile of C; grid (N/16, M/16); M, N, K multiples of 16.
extern "C" __global__ void triage_wmma_gemm(const unsigned short* a, const unsigned short* b,
                                            float* c, int m, int n, int k) {
  int tile_m = blockIdx.y * 16;
  int tile_n = blockIdx.x * 16;
  if (tile_m >= m || tile_n >= n) return;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0, d4 = 0, d5 = 0, d6 = 0, d7 = 0;
  for (int kk = 0; kk < k; kk += 16) {
    unsigned a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7;
    const unsigned short* pa = a + (unsigned long long)tile_m * k + kk;
    const unsigned short* pb = b + (unsigned long long)tile_n * k + kk;
    asm volatile(
        "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;"
        : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3), "=r"(a4), "=r"(a5), "=r"(a6), "=r"(a7)
        : "l"(pa), "r"(k));
    asm volatile(
        "wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;"
        : "=r"(b0), "=r"(b1), "=r"(b2), "=r"(b3), "=r"(b4), "=r"(b5), "=r"(b6), "=r"(b7)
        : "l"(pb), "r"(k));
    asm volatile(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, "
        "{%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19,%20,%21,%22,%23}, "
        "{%0,%1,%2,%3,%4,%5,%6,%7};"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3), "+f"(d4), "+f"(d5), "+f"(d6), "+f"(d7)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a6), "r"(a7), "r"(b0),
          "r"(b1), "r"(b2), "r"(b3), "r"(b4), "r"(b5), "r"(b6), "r"(b7));
  }
  float* pc = c + (unsigned long long)tile_m * n + tile_n;
  asm volatile(
      "wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;"
      :
      : "l"(pc), "f"(d0), "f"(d1), "f"(d2), "f"(d3), "f"(d4), "f"(d5), "f"(d6), "f"(d7), "r"(n)
      : "memory");
}
