// The fatbin nvcc built at build time, linked in as bytes (an .incbin of the file that the
// build made), or nothing in a build without nvcc.
#include "triage/kernels/kernels.h"

#if TRIAGE_KERNELS_PREBUILT
// The fatbin must stay 8-byte aligned for cuModuleLoadData.
asm(".section .rodata.triage_kernels,\"a\",@progbits\n"
    ".balign 16\n"
    ".globl triage_kernels_fatbin_begin\n"
    "triage_kernels_fatbin_begin:\n"
    ".incbin \"" TRIAGE_KERNELS_FATBIN_PATH "\"\n"
    ".globl triage_kernels_fatbin_end\n"
    "triage_kernels_fatbin_end:\n"
    ".byte 0\n"
    ".previous\n");
extern "C" const unsigned char triage_kernels_fatbin_begin[];
extern "C" const unsigned char triage_kernels_fatbin_end[];
#endif

namespace triage::kernels {

std::span<const unsigned char> PrebuiltImage() {
#if TRIAGE_KERNELS_PREBUILT
  return {triage_kernels_fatbin_begin,
          static_cast<size_t>(triage_kernels_fatbin_end - triage_kernels_fatbin_begin)};
#else
  return {};
#endif
}

bool HavePrebuilt() { return !PrebuiltImage().empty(); }

std::vector<int> PrebuiltArchs() {
#if TRIAGE_KERNELS_PREBUILT
  return {TRIAGE_KERNELS_ARCH_LIST};
#else
  return {};
#endif
}

int PrebuiltCudaVersion() {
#if TRIAGE_KERNELS_PREBUILT
  return TRIAGE_KERNELS_CUDA_VERSION;
#else
  return 0;
#endif
}

}  // namespace triage::kernels
