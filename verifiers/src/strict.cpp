// `doctor --strict`: a GPU node whose driver does not answer is a failure, not "unavailable".
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "triage/verifiers/verifier.h"

namespace triage::verifiers {

namespace {

std::string FirstWord(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

std::string NvidiaHardware(const VerifyConfig& config) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(config.pci_device_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    // NVIDIA's PCI vendor id; class 0x03xxxx is a display controller (VGA 0x0300, 3D 0x0302).
    if (FirstWord(it->path() / "vendor") != "0x10de") continue;
    if (FirstWord(it->path() / "class").rfind("0x03", 0) != 0) continue;
    return "an NVIDIA GPU on the PCI bus at " + it->path().filename().string();
  }
  for (const char* node : {"nvidiactl", "nvidia0"}) {
    struct stat st {};
    const std::string path = config.device_node_dir + "/" + node;
    if (::stat(path.c_str(), &st) == 0) return "the NVIDIA device node " + path;
  }
  return "";
}

void ApplyStrict(std::vector<HostCheck>& checks, const VerifyConfig& config) {
  std::optional<std::string> hardware;
  for (auto& c : checks) {
    if (c.status != HostStatus::kUnavailable || c.name != "gpu.devices") continue;
    if (!hardware) hardware = NvidiaHardware(config);
    if (hardware->empty()) continue;
    c.status = HostStatus::kFail;
    c.detail = "no working driver beside " + *hardware + ": " + c.detail;
  }
}

}  // namespace triage::verifiers
