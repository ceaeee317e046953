// The whole-buffer prefilter behind IngestOptions::find_lines (internal to triage::core).
//
// One pass over a buffer of log lines finds every occurrence of the matcher's literals and the
// ingest pipeline's multi-line starters, ignoring ASCII case. Where Hyperscan is available (its
// literal matcher scans many literals at once with SIMD) it does the scan; without it there is
// no finder and the pipeline asks the per-line prefilter line by line, with the same events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "triage/ingest/pipeline.h"

namespace triage::core::detail {

using ingest::FindLines;

class LineFinderDatabase {
 public:
  // Compiles the literals; null when this build or this CPU has no fast scanner, or the
  // compilation failed (the caller then goes without). Hits of `keep` literals (each one that
  // the caller's keep_line accepts whenever it occurs) carry ingest::kKeepHit, hits of `weak`
  // ones ingest::kWeakHit, hits of `strong` ones neither.
  static std::unique_ptr<LineFinderDatabase> Build(const std::vector<std::string>& keep,
                                                   const std::vector<std::string>& strong,
                                                   const std::vector<std::string>& weak);
  ~LineFinderDatabase();
  LineFinderDatabase(const LineFinderDatabase&) = delete;
  LineFinderDatabase& operator=(const LineFinderDatabase&) = delete;

  // A finder with its own scratch space: one per thread. Empty if the scratch cannot be had.
  // The database must outlive it.
  FindLines MakeFinder() const;

 private:
  struct Impl;
  explicit LineFinderDatabase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "yes (Hyperscan 5.4.0 2023-...)" when the build linked Hyperscan, "no" otherwise (for
// `triage --version`).
std::string LineFinderBackend();

}  // namespace triage::core::detail
