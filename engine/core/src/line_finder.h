// The Hyperscan side of the matcher's prefilter (internal to triage::core).
//
// One database holds every literal of the matcher and the ingest pipeline's multi-line
// starters, ignoring ASCII case. It serves twice: over a whole buffer of log lines, to find the
// lines worth framing and decoding (IngestOptions::find_lines); and over one candidate text, to
// tell which literals, so which signatures, to try there. Where Hyperscan is not available
// there is no database: the pipeline asks the per-line prefilter line by line and the matcher
// uses its own scanner, with the same events and hits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "triage/ingest/pipeline.h"

namespace triage::core::detail {

using ingest::FindLines;

class LiteralDatabase {
 public:
  // Compiles `literals`; a literal's id is its index. Literal i is found as written where
  // `keep_case[i]` is set, else in any ASCII case. `hit_flags[i]` (ingest::kKeepHit for a
  // literal whose every occurrence keep_line accepts, ingest::kWeakHit for one that only
  // weak_line may accept, 0 otherwise) marks the whole-buffer hits of literal i. Null when this
  // build or this CPU has no Hyperscan, or the compilation failed (callers then go without).
  // With a `cache_dir`, the compiled databases are read from there when a file holds those of
  // exactly these literals (for this Hyperscan and this CPU), else compiled and written there.
  static std::unique_ptr<LiteralDatabase> Build(const std::vector<std::string>& literals,
                                                const std::vector<uint8_t>& keep_case,
                                                const std::vector<uint32_t>& hit_flags,
                                                const std::string& cache_dir = {});
  ~LiteralDatabase();
  LiteralDatabase(const LiteralDatabase&) = delete;
  LiteralDatabase& operator=(const LiteralDatabase&) = delete;

  // The databases were read from the cache folder rather than compiled.
  bool from_cache() const;

  // A whole-buffer finder with its own scratch space: one per stream or thread (weak hits are
  // left out when the call says weak lines do not matter). Empty if the scratch cannot be had.
  // The database must outlive it.
  FindLines MakeFinder() const;

  // Calls on_hit(id) at least once for every literal in `text` (in its case, or any). Thread-safe: each thread scans
  // with scratch space of its own. False when the scan failed, and the caller must find them
  // another way (a literal reported before the failure may then be reported again).
  template <typename OnHit>
  bool ForEachLiteral(std::string_view text, OnHit&& on_hit) const {
    using F = std::remove_reference_t<OnHit>;
    auto call = [](void* f, unsigned id) { (*static_cast<F*>(f))(size_t(id)); };
    return Scan(text, call, &on_hit);
  }

 // What the database holds (line_finder.cpp).
  struct Impl;

 private:
  explicit LiteralDatabase(std::unique_ptr<Impl> impl);
  bool Scan(std::string_view text, void (*call)(void*, unsigned), void* context) const;
  std::unique_ptr<Impl> impl_;
};

// Where compiled databases are kept between runs: $TRIAGE_CACHE_DIR (set and empty: nowhere),
// else $XDG_CACHE_HOME/triage, else ~/.cache/triage.
std::string PrefilterCacheDir();

// "yes (Hyperscan 5.4.0 2023-...)" when the build linked Hyperscan, "no" otherwise (for
// `triage --version`).
std::string LineFinderBackend();

}  // namespace triage::core::detail
