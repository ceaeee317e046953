// A whole input as the ingest pipeline reads it (a gzip-compressed file decompressed), for tests
// that need its bytes at once. Empty when it cannot be read.
#pragma once

#include <string>

#include "triage/ingest/pipeline.h"

namespace triage::testing {

inline std::string ReadSource(const std::string& path) {
  std::string text;
  auto src = ingest::OpenSource(path);
  if (!src.ok()) return text;
  std::string buf(1 << 16, '\0');
  for (;;) {
    auto n = (*src)->Read(buf.data(), buf.size());
    if (!n.ok() || *n == 0) break;
    text.append(buf.data(), *n);
  }
  return text;
}

}  // namespace triage::testing
