#include "line_finder.h"

#include <algorithm>

#if defined(TRIAGE_HAVE_HYPERSCAN)
#include <hs/hs.h>
#endif

namespace triage::core::detail {

#if defined(TRIAGE_HAVE_HYPERSCAN)

namespace {

struct ScratchDeleter {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};

// Hyperscan calls this for every literal occurrence, with `to` one past its last byte.
// A literal's id carries the flags of its hits (kWeakHit, kKeepHit).
int OnMatch(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
            void* context) {
  auto& hits = *static_cast<std::vector<uint32_t>*>(context);
  // A byte of the line that holds the literal.
  const auto at = static_cast<uint32_t>(to - 1) | (id & ~ingest::kHitOffset);
  // Overlapping literals often end on the same byte: one hit is enough. Other repeats within a
  // line are passed over by the pipeline.
  if (hits.empty() || (hits.back() & ingest::kHitOffset) != (at & ingest::kHitOffset)) {
    hits.push_back(at);
  } else {
    // Same byte: strong beats weak, and a promise to keep is kept.
    const uint32_t keep = (hits.back() | at) & ingest::kKeepHit;
    const uint32_t weak = hits.back() & at & ingest::kWeakHit;
    hits.back() = (at & ingest::kHitOffset) | keep | weak;
  }
  return 0;  // go on
}

// Compiles `groups` (each with the id flag of its hits) into one literal database; null on
// failure or when there is nothing to look for.
hs_database_t* Compile(std::initializer_list<std::pair<const std::vector<std::string>*, unsigned>> groups) {
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags;
  std::vector<unsigned> ids;
  for (const auto& [literals, flag] : groups) {
    for (size_t i = 0; i < literals->size(); ++i) {
      const std::string& lit = (*literals)[i];
      if (lit.empty()) continue;
      exprs.push_back(lit.data());
      lens.push_back(lit.size());
      flags.push_back(HS_FLAG_CASELESS);
      ids.push_back(unsigned(i) | flag);
    }
  }
  if (exprs.empty()) return nullptr;
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                           unsigned(exprs.size()), HS_MODE_BLOCK, nullptr, &db,
                           &err) != HS_SUCCESS) {
    hs_free_compile_error(err);
    return nullptr;
  }
  return db;
}

// Scans `lines` with `db`. Should the scan fail (it cannot with a valid database and scratch),
// every line is a candidate (a hit on each '\n'): slow, but nothing is lost.
void Scan(const hs_database_t* db, hs_scratch_t* scratch, std::string_view lines,
          std::vector<uint32_t>& hits) {
  if (hs_scan(db, lines.data(), unsigned(lines.size()), 0, scratch, OnMatch, &hits) != HS_SUCCESS) {
    hits.clear();
    for (uint32_t i = 0; i < lines.size(); ++i)
      if (lines[i] == '\n') hits.push_back(i);
  }
  // Matches come in order of their end; the pipeline relies on that, so make sure.
  auto offset_less = [](uint32_t a, uint32_t b) {
    return (a & ingest::kHitOffset) < (b & ingest::kHitOffset);
  };
  if (!std::is_sorted(hits.begin(), hits.end(), offset_less))
    std::stable_sort(hits.begin(), hits.end(), offset_less);
}

}  // namespace

// Two databases: the strong literals alone (what most buffers need), and strong and weak ones
// together (while benign lines matter). One scratch space serves both.
struct LineFinderDatabase::Impl {
  hs_database_t* strong = nullptr;
  hs_database_t* all = nullptr;
  hs_scratch_t* prototype = nullptr;  // cloned for every finder
  ~Impl() {
    if (prototype) hs_free_scratch(prototype);
    if (strong) hs_free_database(strong);
    if (all) hs_free_database(all);
  }
};

std::unique_ptr<LineFinderDatabase> LineFinderDatabase::Build(const std::vector<std::string>& keep,
                                                             const std::vector<std::string>& strong,
                                                             const std::vector<std::string>& weak) {
  if (hs_valid_platform() != HS_SUCCESS || (keep.empty() && strong.empty())) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->strong = Compile({{&keep, ingest::kKeepHit}, {&strong, 0u}});
  impl->all = Compile({{&keep, ingest::kKeepHit}, {&strong, 0u}, {&weak, ingest::kWeakHit}});
  if (!impl->strong || !impl->all) return nullptr;
  if (hs_alloc_scratch(impl->strong, &impl->prototype) != HS_SUCCESS ||
      hs_alloc_scratch(impl->all, &impl->prototype) != HS_SUCCESS) {
    return nullptr;
  }
  return std::unique_ptr<LineFinderDatabase>(new LineFinderDatabase(std::move(impl)));
}

FindLines LineFinderDatabase::MakeFinder() const {
  hs_scratch_t* s = nullptr;
  if (hs_clone_scratch(impl_->prototype, &s) != HS_SUCCESS) return {};
  std::shared_ptr<hs_scratch_t> scratch(s, ScratchDeleter());
  const hs_database_t* strong = impl_->strong;
  const hs_database_t* all = impl_->all;
  return [strong, all, scratch](std::string_view lines, bool weak, std::vector<uint32_t>& hits) {
    Scan(weak ? all : strong, scratch.get(), lines, hits);
  };
}

#else  // no Hyperscan in this build

struct LineFinderDatabase::Impl {};

std::unique_ptr<LineFinderDatabase> LineFinderDatabase::Build(const std::vector<std::string>&,
                                                             const std::vector<std::string>&,
                                                             const std::vector<std::string>&) {
  return nullptr;
}

FindLines LineFinderDatabase::MakeFinder() const { return {}; }

#endif

LineFinderDatabase::LineFinderDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LineFinderDatabase::~LineFinderDatabase() = default;

// What the whole-buffer prefilter of this build is: the Hyperscan version linked (and whether
// this CPU can run it), or that the build has none.
std::string LineFinderBackend() {
#if defined(TRIAGE_HAVE_HYPERSCAN)
  std::string out = std::string("yes (Hyperscan ") + hs_version() + ")";
  if (hs_valid_platform() != HS_SUCCESS) out += ", not usable on this CPU";
  return out;
#else
  return "no";
#endif
}

}  // namespace triage::core::detail
