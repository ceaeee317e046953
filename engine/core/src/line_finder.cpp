#include "line_finder.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <string_view>
#include <unordered_map>

#if defined(TRIAGE_HAVE_HYPERSCAN)
#include <hs/hs.h>
#endif

namespace triage::core::detail {

#if defined(TRIAGE_HAVE_HYPERSCAN)

// Two Hyperscan databases: one of the literals whose hits may be weak (ingest::kWeakHit, the
// benign lines, a third of a busy service log), scanned only while weak hits matter, and one of
// all the others. Each holds covers, not the literals themselves: a literal's first
// kCoverBytes bytes, and of those only the ones that hold no shorter cover. Hyperscan's scan
// costs grow with the literals it holds (the vocabulary tables brought 1,600, a third of them
// sharing their start with another), and with those it must find in any case (a caseless
// literal widens every byte's reach); the covers are two thirds as many, and those of literals
// that keep their case keep it. A cover's hit is confirmed where it stands against each literal
// it stands for (the literal's own bytes, in its case or any, at the offset the cover has inside
// it), so the hits reported are exactly those of the literals.
// Scratch space is per thread and grown for every database that thread scans with; a
// database is known to it by a serial number, never by its address, which a later database
// may reuse.
struct LiteralDatabase::Impl {
  struct Member {
    uint32_t literal;  // id
    uint32_t offset;   // where the cover starts inside the literal
  };
  struct Cover {
    uint32_t size = 0;
    bool keep_case = false;  // found as written, else in any ASCII case
    bool exact = false;      // its one member is the cover itself: nothing to confirm
    std::vector<Member> members;
  };
  struct Part {
    hs_database_t* db = nullptr;
    std::vector<Cover> covers;  // by Hyperscan id
  };
  Part strong, weak;
  std::vector<std::string> literals;  // by id, in lower case unless it keeps its case
  std::vector<uint8_t> keep_case;     // by id
  std::vector<uint32_t> flags;        // by id
  uint64_t serial = 0;
  ~Impl() {
    for (Part* part : {&strong, &weak})
      if (part->db) hs_free_database(part->db);
  }

  // Calls on(literal id, offset of its last byte) for every occurrence in `text` of a literal
  // that the cover `id` of `part`, ending just before `to`, stands for.
  template <typename On>
  void Confirm(const Part& part, unsigned id, unsigned long long to, std::string_view text,
               On&& on) const {
    const Cover& c = part.covers[id];
    if (c.exact) {
      on(c.members[0].literal, to - 1);
      return;
    }
    const unsigned long long at = to - c.size;  // where the cover starts in text
    for (const Member& m : c.members) {
      if (at < m.offset) continue;
      const std::string& lit = literals[m.literal];
      const unsigned long long start = at - m.offset;
      if (start + lit.size() > text.size()) continue;
      const char* t = text.data() + start;
      if (keep_case[m.literal] ? std::memcmp(t, lit.data(), lit.size()) == 0
                               : SameIgnoringAsciiCase(t, lit))
        on(m.literal, start + lit.size() - 1);
    }
  }

  static char Lower(char ch) { return ch >= 'A' && ch <= 'Z' ? char(ch - 'A' + 'a') : ch; }
  static bool SameIgnoringAsciiCase(const char* text, const std::string& lower) {
    for (size_t i = 0; i < lower.size(); ++i)
      if (Lower(text[i]) != lower[i]) return false;
    return true;
  }
};

namespace {

using Impl = LiteralDatabase::Impl;

struct ScratchDeleter {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};

std::atomic<uint64_t> next_serial{1};

// Grows `scratch` (allocated when null) for both databases of `impl`.
bool AllocScratch(const Impl& impl, hs_scratch_t** scratch) {
  for (const Impl::Part* part : {&impl.strong, &impl.weak})
    if (part->db && hs_alloc_scratch(part->db, scratch) != HS_SUCCESS) return false;
  return true;
}

hs_scratch_t* ThreadScratch(const Impl& impl) {
  struct Holder {
    hs_scratch_t* scratch = nullptr;
    uint64_t sized_for = 0;
    ~Holder() {
      if (scratch) hs_free_scratch(scratch);
    }
  };
  thread_local Holder h;
  if (h.sized_for != impl.serial) {
    if (!AllocScratch(impl, &h.scratch)) return nullptr;
    h.sized_for = impl.serial;
  }
  return h.scratch;
}

struct BufferScan {
  const Impl* impl;
  const Impl::Part* part;
  std::string_view lines;
  std::vector<uint32_t>* hits;
};

void AddHit(std::vector<uint32_t>& hits, uint32_t flag, unsigned long long last) {
  // A byte of the line that holds the literal.
  const auto at = static_cast<uint32_t>(last) | flag;
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
}

// Hyperscan calls this for every cover occurrence, with `to` one past its last byte.
int OnBufferMatch(unsigned id, unsigned long long /*from*/, unsigned long long to,
                  unsigned /*flags*/, void* context) {
  auto& scan = *static_cast<BufferScan*>(context);
  scan.impl->Confirm(*scan.part, id, to, scan.lines, [&](uint32_t literal, unsigned long long last) {
    AddHit(*scan.hits, scan.impl->flags[literal], last);
  });
  return 0;  // go on
}

struct TextScan {
  const Impl* impl;
  const Impl::Part* part;
  std::string_view text;
  void (*call)(void*, unsigned);
  void* context;
};

int OnTextMatch(unsigned id, unsigned long long, unsigned long long to, unsigned, void* context) {
  auto* s = static_cast<TextScan*>(context);
  s->impl->Confirm(*s->part, id, to, s->text,
                   [&](uint32_t literal, unsigned long long) { s->call(s->context, literal); });
  return 0;
}

// How many leading bytes of a literal its cover keeps. Shorter covers are fewer (more literals
// share them) but are confirmed in vain more often (at 6 bytes the bench log is scanned 1.5
// times slower than at 12); at 12 the shipped rules' 1,630 literals have about 1,000 covers.
constexpr size_t kCoverBytes = 12;

// The covers of the literals `ids` (none empty): each literal's first kCoverBytes bytes (in
// lower case for a literal found in any case); then, shortest first, a cover that holds a
// shorter one is dropped, its members going to that one at the offset the shorter one has
// inside it. A cover found in any case may stand for literals that keep theirs (its hit is
// confirmed in their case), never the reverse.
std::vector<Impl::Cover> MakeCovers(const Impl& impl, const std::vector<uint32_t>& ids) {
  using Member = Impl::Member;
  using Key = std::pair<std::string, bool>;  // text, keeps its case
  std::map<Key, std::vector<Member>> prefixes;
  for (uint32_t id : ids)
    prefixes[Key(impl.literals[id].substr(0, kCoverBytes), impl.keep_case[id] != 0)].push_back(
        Member{id, 0});
  std::vector<const Key*> order;
  order.reserve(prefixes.size());
  for (const auto& entry : prefixes) order.push_back(&entry.first);
  std::stable_sort(order.begin(), order.end(),
                   [](const Key* a, const Key* b) { return a->first.size() < b->first.size(); });
  std::vector<Impl::Cover> covers;
  std::unordered_map<std::string_view, uint32_t> kept[2];  // by keep_case: cover -> index
  std::string lowered;
  for (const Key* key : order) {
    const std::string& p = key->first;
    const bool keeps = key->second;
    if (keeps) {
      lowered = p;
      for (auto& ch : lowered) ch = Impl::Lower(ch);
    }
    // A shorter kept cover inside p: the leftmost, then the shortest; one in any case inside
    // p in lower case too, where p keeps its case.
    const uint32_t* into = nullptr;
    uint32_t offset = 0;
    for (size_t from = 0; from < p.size() && !into; ++from) {
      for (size_t len = 1; from + len <= p.size() && len < p.size() && !into; ++len) {
        auto look = [&](int cls, std::string_view text) {
          auto it = kept[cls].find(text.substr(from, len));
          if (it != kept[cls].end()) into = &it->second, offset = uint32_t(from);
        };
        look(0, keeps ? std::string_view(lowered) : std::string_view(p));
        if (!into && keeps) look(1, p);
      }
    }
    std::vector<Member>& members = prefixes[*key];
    if (into) {
      auto& dest = covers[*into].members;
      for (Member m : members) dest.push_back(Member{m.literal, m.offset + offset});
      continue;
    }
    kept[keeps ? 1 : 0].emplace(p, uint32_t(covers.size()));
    Impl::Cover c;
    c.size = uint32_t(p.size());
    c.keep_case = keeps;
    c.members = std::move(members);
    covers.push_back(std::move(c));
  }
  for (auto& c : covers)
    c.exact = c.members.size() == 1 && c.members[0].offset == 0 &&
              impl.literals[c.members[0].literal].size() == c.size &&
              (impl.keep_case[c.members[0].literal] != 0) == c.keep_case;
  return covers;
}

// Compiles the covers of `ids` into part.db (nothing to compile: no database). False when
// Hyperscan refuses them.
bool CompilePart(const Impl& impl, const std::vector<uint32_t>& ids, Impl::Part& part) {
  if (ids.empty()) return true;
  part.covers = MakeCovers(impl, ids);
  std::vector<std::string> texts;  // a cover's bytes: its first member's, from the offset
  texts.reserve(part.covers.size());
  for (const Impl::Cover& c : part.covers)
    texts.push_back(impl.literals[c.members[0].literal].substr(c.members[0].offset, c.size));
  std::vector<const char*> exprs;
  std::vector<size_t> lens;
  std::vector<unsigned> flags;
  std::vector<unsigned> hs_ids;
  for (size_t i = 0; i < texts.size(); ++i) {
    flags.push_back(part.covers[i].keep_case ? 0u : unsigned(HS_FLAG_CASELESS));
    exprs.push_back(texts[i].data());
    lens.push_back(texts[i].size());
    hs_ids.push_back(unsigned(i));
  }
  hs_compile_error_t* err = nullptr;
  if (hs_compile_lit_multi(exprs.data(), flags.data(), hs_ids.data(), lens.data(),
                           unsigned(exprs.size()), HS_MODE_BLOCK, nullptr, &part.db,
                           &err) != HS_SUCCESS) {
    hs_free_compile_error(err);
    part.db = nullptr;
    return false;
  }
  return true;
}

bool ScanPart(const Impl& impl, const Impl::Part& part, std::string_view lines,
              hs_scratch_t* scratch, std::vector<uint32_t>& hits) {
  if (!part.db) return true;
  BufferScan scan{&impl, &part, lines, &hits};
  return hs_scan(part.db, lines.data(), unsigned(lines.size()), 0, scratch, OnBufferMatch,
                 &scan) == HS_SUCCESS;
}

}  // namespace

std::unique_ptr<LiteralDatabase> LiteralDatabase::Build(const std::vector<std::string>& literals,
                                                        const std::vector<uint8_t>& keep_case,
                                                        const std::vector<uint32_t>& hit_flags) {
  if (hs_valid_platform() != HS_SUCCESS || literals.empty() ||
      hit_flags.size() != literals.size() || keep_case.size() != literals.size())
    return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->literals = literals;
  impl->keep_case = keep_case;
  for (size_t i = 0; i < literals.size(); ++i)
    if (!keep_case[i])
      for (auto& ch : impl->literals[i]) ch = Impl::Lower(ch);
  impl->flags = hit_flags;
  std::vector<uint32_t> strong, weak;
  for (size_t i = 0; i < literals.size(); ++i) {
    if (literals[i].empty()) continue;
    ((hit_flags[i] & ingest::kWeakHit) ? weak : strong).push_back(uint32_t(i));
  }
  if (strong.empty() && weak.empty()) return nullptr;
  if (!CompilePart(*impl, strong, impl->strong) || !CompilePart(*impl, weak, impl->weak))
    return nullptr;
  impl->serial = next_serial.fetch_add(1);
  if (!ThreadScratch(*impl)) return nullptr;
  return std::unique_ptr<LiteralDatabase>(new LiteralDatabase(std::move(impl)));
}

FindLines LiteralDatabase::MakeFinder() const {
  hs_scratch_t* s = nullptr;
  if (!AllocScratch(*impl_, &s)) {
    if (s) hs_free_scratch(s);
    return {};
  }
  std::shared_ptr<hs_scratch_t> scratch(s, ScratchDeleter());
  const Impl* impl = impl_.get();
  return [impl, scratch](std::string_view lines, bool weak, std::vector<uint32_t>& hits) {
    auto offset_less = [](uint32_t a, uint32_t b) {
      return (a & ingest::kHitOffset) < (b & ingest::kHitOffset);
    };
    bool ok = ScanPart(*impl, impl->strong, lines, scratch.get(), hits);
    if (ok && weak) {
      const size_t mid = hits.size();
      ok = ScanPart(*impl, impl->weak, lines, scratch.get(), hits);
      if (ok && mid > 0 && mid < hits.size())
        std::inplace_merge(hits.begin(), hits.begin() + ptrdiff_t(mid), hits.end(), offset_less);
    }
    // Should a scan fail (it cannot with a valid database and scratch), every line is a
    // candidate (a hit on each '\n'): slow, but nothing is lost.
    if (!ok) {
      hits.clear();
      for (uint32_t i = 0; i < lines.size(); ++i)
        if (lines[i] == '\n') hits.push_back(i);
    }
    // The pipeline relies on ascending offsets. A cover's hits come in the order of the covers'
    // ends, and a literal may end after a later cover: make sure.
    if (!std::is_sorted(hits.begin(), hits.end(), offset_less))
      std::stable_sort(hits.begin(), hits.end(), offset_less);
  };
}

bool LiteralDatabase::Scan(std::string_view text, void (*call)(void*, unsigned),
                           void* context) const {
  hs_scratch_t* scratch = ThreadScratch(*impl_);
  if (!scratch || text.size() > UINT32_MAX) return false;
  for (const Impl::Part* part : {&impl_->strong, &impl_->weak}) {
    if (!part->db) continue;
    TextScan s{impl_.get(), part, text, call, context};
    if (hs_scan(part->db, text.data(), unsigned(text.size()), 0, scratch, OnTextMatch, &s) !=
        HS_SUCCESS)
      return false;
  }
  return true;
}

#else  // no Hyperscan in this build

struct LiteralDatabase::Impl {};

std::unique_ptr<LiteralDatabase> LiteralDatabase::Build(const std::vector<std::string>&,
                                                        const std::vector<uint8_t>&,
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
