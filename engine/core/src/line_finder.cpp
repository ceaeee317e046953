#include "line_finder.h"

#include <algorithm>
#include <atomic>

#if defined(TRIAGE_HAVE_HYPERSCAN)
#include <hs/hs.h>
#endif

namespace triage::core::detail {

#if defined(TRIAGE_HAVE_HYPERSCAN)

// The database and the hit flags of its literals, by id. Scratch space is per thread and grown
// for every database that thread scans with; a database is known to it by a serial number,
// never by its address, which a later database may reuse.
struct LiteralDatabase::Impl {
  hs_database_t* db = nullptr;
  std::vector<uint32_t> flags;
  uint64_t serial = 0;
  ~Impl() {
    if (db) hs_free_database(db);
  }
};

namespace {

struct ScratchDeleter {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};

std::atomic<uint64_t> next_serial{1};

hs_scratch_t* ThreadScratch(const hs_database_t* db, uint64_t serial) {
  struct Holder {
    hs_scratch_t* scratch = nullptr;
    uint64_t sized_for = 0;
    ~Holder() {
      if (scratch) hs_free_scratch(scratch);
    }
  };
  thread_local Holder h;
  if (h.sized_for != serial) {
    if (hs_alloc_scratch(db, &h.scratch) != HS_SUCCESS) return nullptr;
    h.sized_for = serial;
  }
  return h.scratch;
}

struct BufferScan {
  const std::vector<uint32_t>* flags;
  bool weak;  // whether weak hits matter to this scan
  std::vector<uint32_t>* hits;
};

// Hyperscan calls this for every literal occurrence, with `to` one past its last byte.
int OnBufferMatch(unsigned id, unsigned long long /*from*/, unsigned long long to,
                  unsigned /*flags*/, void* context) {
  auto& scan = *static_cast<BufferScan*>(context);
  const uint32_t flag = (*scan.flags)[id];
  if ((flag & ingest::kWeakHit) && !scan.weak) return 0;
  auto& hits = *scan.hits;
  // A byte of the line that holds the literal.
  const auto at = static_cast<uint32_t>(to - 1) | flag;
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

struct TextScan {
  void (*call)(void*, unsigned);
  void* context;
};

int OnTextMatch(unsigned id, unsigned long long, unsigned long long, unsigned, void* context) {
  auto* s = static_cast<TextScan*>(context);
  s->call(s->context, id);
  return 0;
}

}  // namespace

std::unique_ptr<LiteralDatabase> LiteralDatabase::Build(const std::vector<std::string>& literals,
                                                        const std::vector<uint32_t>& hit_flags) {
  if (hs_valid_platform() != HS_SUCCESS || literals.empty() || hit_flags.size() != literals.size())
    return nullptr;
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags;
  std::vector<unsigned> ids;
  for (size_t i = 0; i < literals.size(); ++i) {
    if (literals[i].empty()) continue;
    exprs.push_back(literals[i].data());
    lens.push_back(literals[i].size());
    flags.push_back(HS_FLAG_CASELESS);
    ids.push_back(unsigned(i));
  }
  if (exprs.empty()) return nullptr;
  auto impl = std::make_unique<Impl>();
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), ids.data(), lens.data(),
                           unsigned(exprs.size()), HS_MODE_BLOCK, nullptr, &impl->db,
                           &err) != HS_SUCCESS) {
    hs_free_compile_error(err);
    return nullptr;
  }
  impl->flags = hit_flags;
  impl->serial = next_serial.fetch_add(1);
  if (!ThreadScratch(impl->db, impl->serial)) return nullptr;
  return std::unique_ptr<LiteralDatabase>(new LiteralDatabase(std::move(impl)));
}

FindLines LiteralDatabase::MakeFinder() const {
  hs_scratch_t* s = nullptr;
  if (hs_alloc_scratch(impl_->db, &s) != HS_SUCCESS) return {};
  std::shared_ptr<hs_scratch_t> scratch(s, ScratchDeleter());
  const Impl* impl = impl_.get();
  // Should the scan fail (it cannot with a valid database and scratch), every line is a
  // candidate (a hit on each '\n'): slow, but nothing is lost.
  return [impl, scratch](std::string_view lines, bool weak, std::vector<uint32_t>& hits) {
    BufferScan scan{&impl->flags, weak, &hits};
    if (hs_scan(impl->db, lines.data(), unsigned(lines.size()), 0, scratch.get(), OnBufferMatch,
                &scan) != HS_SUCCESS) {
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
  };
}

bool LiteralDatabase::Scan(std::string_view text, void (*call)(void*, unsigned),
                           void* context) const {
  hs_scratch_t* scratch = ThreadScratch(impl_->db, impl_->serial);
  if (!scratch || text.size() > UINT32_MAX) return false;
  TextScan s{call, context};
  return hs_scan(impl_->db, text.data(), unsigned(text.size()), 0, scratch, OnTextMatch, &s) ==
         HS_SUCCESS;
}

#else  // no Hyperscan in this build

struct LiteralDatabase::Impl {};

std::unique_ptr<LiteralDatabase> LiteralDatabase::Build(const std::vector<std::string>&,
                                                        const std::vector<uint32_t>&) {
  return nullptr;
}

FindLines LiteralDatabase::MakeFinder() const { return {}; }

bool LiteralDatabase::Scan(std::string_view, void (*)(void*, unsigned), void*) const {
  return false;
}

#endif

LiteralDatabase::LiteralDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LiteralDatabase::~LiteralDatabase() = default;

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
