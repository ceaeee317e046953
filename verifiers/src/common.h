// Shared pieces of the verifier implementations (private to the library).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triage/json.h"
#include "triage/verifiers/kernel_log.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers {

// One factory per verifier file.
std::unique_ptr<Verifier> MakeGpuDevices();
std::unique_ptr<Verifier> MakeCudaToolkits();
std::unique_ptr<Verifier> MakeCudaCompileLaunch();
std::unique_ptr<Verifier> MakeCudaFatbin();
std::unique_ptr<Verifier> MakeCudaMemory();
std::unique_ptr<Verifier> MakeGpuHealth();
std::unique_ptr<Verifier> MakeGpuPeers();
std::unique_ptr<Verifier> MakePythonEnv();
std::unique_ptr<Verifier> MakeHostOom();
std::unique_ptr<Verifier> MakeNativeLib();
std::unique_ptr<Verifier> MakeNetPort();
std::unique_ptr<Verifier> MakeHostDisk();
std::unique_ptr<Verifier> MakeHostShm();
std::unique_ptr<Verifier> MakeHostPath();
std::unique_ptr<Verifier> MakeGpuVisible();

// Reads at most `max` bytes of a file; nullopt (and errno set) when it cannot be opened.
std::optional<std::string> ReadSmallFile(const std::string& path, size_t max = 1 << 20);
std::vector<std::string> SplitLines(std::string_view text);
std::string Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
// "2.00 GiB", "512 MiB", "1.5GB", "1024" or "1,024 bytes" (bytes) -> bytes; 0 when unparsable.
uint64_t ParseByteSize(const std::string& text);
std::string ByteSizeText(uint64_t bytes);  // "1.50 GiB"

}  // namespace triage::verifiers
