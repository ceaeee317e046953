#include "line_finder.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <unordered_map>

#include "triage/atomic_file.h"
#include "triage/fnv.h"

#if defined(TRIAGE_HAVE_HYPERSCAN)
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hs/hs.h>
#endif

namespace triage::core::detail {

#if defined(TRIAGE_HAVE_HYPERSCAN)

// Two Hyperscan databases: one of the literals whose hits may be weak (ingest::kWeakHit, the
// benign lines, a third of a busy service log), scanned only while weak hits matter, and one of
// all the others. Each holds covers, not the literals themselves: a literal's first
// kCoverBytes bytes, and of those only the ones that do not stand only for literals that hold
// another cover (Absorb). Hyperscan's scan costs grow with the
// literals it holds (the vocabulary tables brought 1,600, a third of them sharing their start
// with another), and with those it must find in any case (a caseless literal widens every
// byte's reach); the covers are half as many, and those of literals that keep their case keep
// it. A cover's hit is confirmed where it stands against each literal
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
    std::string text;  // what Hyperscan looks for: in lower case unless keep_case
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
  bool from_cache = false;  // the databases were read from the cache folder, not compiled
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
    const unsigned long long at = to - c.text.size();  // where the cover starts in text
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

// The first 8 bytes of `p` (fewer when shorter), as a number.
uint64_t Head8(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// A cover whose every literal holds another cover (a shorter one inside the shared first bytes,
// the same text in any case, or one further on: a vocabulary row's form around a value another
// row has bare, "[Errno 28] No space left on device" around "No space left on device") is
// dropped, its literals going to the covers they hold (the leftmost, then the shortest), at the
// offsets they hold them. Longest covers are tried first; a dropped cover is no one's
// destination, and a cover that took literals over tries them again when its turn comes. The
// shipped rules' 1,150-odd first-byte covers become about 860, and Hyperscan's scan costs grow
// with their count.
void Absorb(const Impl& impl, std::vector<Impl::Cover>& covers) {
  using Member = Impl::Member;
  // Covers by case and their first bytes; a 64K table of their first two bytes passes over
  // most places at once.
  std::unordered_multimap<uint64_t, uint32_t> by_head[2];
  std::vector<uint8_t> pair[2];
  std::vector<uint8_t> lengths[2];  // lengths under 8 that some cover has, by case
  for (int k = 0; k < 2; ++k) pair[k].assign(65536, 0), lengths[k].assign(9, 0);
  for (uint32_t i = 0; i < covers.size(); ++i) {
    const Impl::Cover& c = covers[i];
    if (c.text.size() < 2) continue;  // never a destination
    const int k = c.keep_case ? 1 : 0;
    by_head[k].emplace(Head8(c.text.data(), c.text.size()), i);
    pair[k][static_cast<unsigned char>(c.text[0]) | (static_cast<unsigned char>(c.text[1]) << 8)] = 1;
    lengths[k][std::min<size_t>(c.text.size(), 8)] = 1;
  }
  std::vector<uint8_t> dropped(covers.size(), 0);
  // A cover other than `self`, not dropped, inside `lit` at or past its first byte: its index,
  // and the offset, or false.
  auto find_in = [&](uint32_t self, uint32_t literal, uint32_t& into, uint32_t& offset) {
    const std::string& lit = impl.literals[literal];
    const bool keeps = impl.keep_case[literal] != 0;
    std::string lowered;
    if (keeps) {
      lowered = lit;
      for (auto& ch : lowered) ch = Impl::Lower(ch);
    }
    for (int k = keeps ? 1 : 0; k >= 0; --k) {
      const std::string& text = (keeps && k == 0) ? lowered : lit;
      for (size_t at = 0; at + 1 < text.size(); ++at) {
        if (!pair[k][static_cast<unsigned char>(text[at]) | (static_cast<unsigned char>(text[at + 1]) << 8)])
          continue;
        for (size_t len = 2; len <= 8 && at + len <= text.size(); ++len) {
          if (len < 8 && !lengths[k][len]) continue;
          auto [b, e] = by_head[k].equal_range(Head8(text.data() + at, len));
          for (auto it = b; it != e; ++it) {
            const uint32_t i = it->second;
            const Impl::Cover& c = covers[i];
            if (i == self || dropped[i] || std::min<size_t>(c.text.size(), 8) != len) continue;
            if (at + c.text.size() > text.size() || text.compare(at, c.text.size(), c.text) != 0) continue;
            into = i;
            offset = uint32_t(at);
            return true;
          }
        }
      }
    }
    return false;
  };
  std::vector<uint32_t> order(covers.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return covers[a].text.size() > covers[b].text.size(); });
  std::vector<std::pair<uint32_t, Member>> moves;
  for (uint32_t x : order) {
    moves.clear();
    bool all = !covers[x].members.empty();
    for (const Member& m : covers[x].members) {
      uint32_t into = 0, offset = 0;
      if (!find_in(x, m.literal, into, offset)) {
        all = false;
        break;
      }
      moves.emplace_back(into, Member{m.literal, offset});
    }
    if (!all) continue;
    dropped[x] = 1;
    covers[x].members.clear();
    for (const auto& [into, m] : moves) covers[into].members.push_back(m);
  }
  std::vector<Impl::Cover> kept;
  kept.reserve(covers.size());
  for (uint32_t i = 0; i < covers.size(); ++i)
    if (!dropped[i]) kept.push_back(std::move(covers[i]));
  covers = std::move(kept);
}

// The covers of the literals `ids` (none empty): each literal's first kCoverBytes bytes (in
// lower case for a literal found in any case), those that share them one cover; then Absorb
// drops each cover that holds another (its literals confirmed where they hold that one). A cover
// found in any case may stand for literals that keep theirs (its hit is confirmed in their
// case), never the reverse; it also stands for the same text kept in its case.
std::vector<Impl::Cover> MakeCovers(const Impl& impl, const std::vector<uint32_t>& ids) {
  using Key = std::pair<std::string, bool>;  // text, keeps its case
  std::map<Key, std::vector<Impl::Member>> prefixes;
  for (uint32_t id : ids)
    prefixes[Key(impl.literals[id].substr(0, kCoverBytes), impl.keep_case[id] != 0)].push_back(
        Impl::Member{id, 0});
  std::vector<Impl::Cover> covers;
  covers.reserve(prefixes.size() + 1);
  for (auto& [key, members] : prefixes) {
    Impl::Cover c;
    c.text = key.first;
    c.keep_case = key.second;
    c.members = std::move(members);
    covers.push_back(std::move(c));
  }
  Absorb(impl, covers);
  for (auto& c : covers)
    c.exact = c.members.size() == 1 && c.members[0].offset == 0 &&
              impl.literals[c.members[0].literal].size() == c.text.size() &&
              (impl.keep_case[c.members[0].literal] != 0) == c.keep_case;
  // Hyperscan's literal matcher (FDR) steps through the text one, two, three or four bytes at a
  // time, and chooses the step from the count and the shortest length of its literals: for
  // covers of four bytes or more it takes a step of two to four. Over log text the one-byte
  // step measured faster for every set of covers tried (bench/README.md): the shipped rules'
  // ~1,000 covers scan the 64 MB bench log in 0.034 s instead of 0.045 s, and some sets of 250
  // to 600 of them in a quarter of the time. A two-byte cover that stands for no literal asks
  // for that step; its bytes (0xff 0xfe) are in no UTF-8 text, and should a line hold them, the
  // hit confirms nothing.
  Impl::Cover step;
  step.text = "\xff\xfe";
  step.keep_case = true;
  covers.push_back(std::move(step));
  return covers;
}

// Compiles part.covers into part.db (no covers: no database). False when Hyperscan refuses
// them.
bool CompilePart(Impl::Part& part) {
  if (part.covers.empty()) return true;
  std::vector<std::string> texts;
  texts.reserve(part.covers.size());
  for (const Impl::Cover& c : part.covers) texts.push_back(c.text);
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

// The compiled databases kept on disk (PrefilterCacheDir): compiling a thousand covers costs
// a start about a third of its time, reading them back a millisecond. A file holds what the
// compilation was given (Hyperscan's version, this CPU's features, every cover with its case
// and part), compared byte for byte before its databases are used, then the databases
// Hyperscan serialized, with a checksum. Anything that does not fit (another version, a cut or
// damaged file, a file or folder that others may write) is passed over, and the databases
// compiled and written again.
namespace cache {

constexpr std::string_view kMagic = "triage prefilter cache 1\n";
constexpr size_t kMaxFile = size_t(256) << 20;
constexpr int kKeep = 4;  // files kept in the folder: the newest

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

bool GetU64(std::string_view& in, uint64_t& v) {
  if (in.size() < 8) return false;
  v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(in[size_t(i)])) << (8 * i);
  in.remove_prefix(8);
  return true;
}

// What the compilation depends on.
std::string Material(const Impl& impl) {
  hs_platform_info_t platform{};
  hs_populate_platform(&platform);
  std::string m = hs_version();
  m += '\n' + std::to_string(platform.tune) + ' ' + std::to_string(platform.cpu_features) + '\n';
  for (const Impl::Part* part : {&impl.strong, &impl.weak}) {
    m += "part " + std::to_string(part->covers.size()) + '\n';
    for (const Impl::Cover& c : part->covers) {
      const std::string& text = c.text;
      m += (c.keep_case ? 'k' : 'i') + std::to_string(text.size()) + ':';
      m += text;
    }
  }
  return m;
}

std::string FileName(const std::string& material) {
  static const char* hex = "0123456789abcdef";
  std::string name = "prefilter-";
  const uint64_t h = Fnv1a64(material);
  for (int i = 15; i >= 0; --i) name += hex[(h >> (4 * i)) & 0xf];
  return name + ".hsdb";
}

// A folder or file only this user may write (and, for the folder, no link).
bool OwnFolder(const std::string& dir) {
  struct stat st {};
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

bool Load(const std::string& dir, const std::string& material, Impl& impl) {
  if (!OwnFolder(dir)) return false;
  const std::string path = dir + "/" + FileName(material);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  std::string bytes;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 && size_t(st.st_size) <= kMaxFile) {
    bytes.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
      if (n <= 0) break;
      got += size_t(n);
    }
    bytes.resize(got);
  }
  close(fd);
  std::string_view in = bytes;
  uint64_t mlen = 0, slen = 0, wlen = 0, sum = 0;
  if (in.substr(0, kMagic.size()) != kMagic) return false;
  in.remove_prefix(kMagic.size());
  if (!GetU64(in, mlen) || mlen > in.size() || in.substr(0, mlen) != material) return false;
  in.remove_prefix(mlen);
  if (!GetU64(in, slen) || !GetU64(in, wlen) || !GetU64(in, sum) || slen > in.size() ||
      wlen != in.size() - slen || Fnv1a64(in) != sum)
    return false;
  Impl::Part* parts[2] = {&impl.strong, &impl.weak};
  const uint64_t lens[2] = {slen, wlen};
  for (int i = 0; i < 2; ++i) {
    Impl::Part& part = *parts[i];
    if ((lens[i] == 0) != part.covers.empty()) return false;
    if (lens[i] && hs_deserialize_database(in.data(), size_t(lens[i]), &part.db) != HS_SUCCESS) {
      part.db = nullptr;
      return false;
    }
    in.remove_prefix(size_t(lens[i]));
  }
  return true;
}

// Creates `dir` (and its parent) for this user alone where missing.
bool MakeFolder(const std::string& dir) {
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) mkdir(dir.substr(0, slash).c_str(), 0700);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  return OwnFolder(dir);
}

// Writes the compiled databases (failures pass silently: the cache saves time, nothing else),
// then removes all but the newest kKeep files of the folder.
void Save(const std::string& dir, const std::string& material, const Impl& impl) {
  if (!MakeFolder(dir)) return;
  std::string out(kMagic);
  PutU64(out, material.size());
  out += material;
  std::string blobs[2];
  const Impl::Part* parts[2] = {&impl.strong, &impl.weak};
  for (int i = 0; i < 2; ++i) {
    if (!parts[i]->db) continue;
    char* bytes = nullptr;
    size_t len = 0;
    if (hs_serialize_database(parts[i]->db, &bytes, &len) != HS_SUCCESS) return;
    blobs[i].assign(bytes, len);
    std::free(bytes);
  }
  PutU64(out, blobs[0].size());
  PutU64(out, blobs[1].size());
  PutU64(out, Fnv1a64(blobs[1], Fnv1a64(blobs[0])));
  out += blobs[0];
  out += blobs[1];
  if (!WriteFileAtomically(dir + "/" + FileName(material), out, 0600).ok()) return;
  // Rule folders that change (a user's own) leave files behind: the newest few stay.
  std::vector<std::pair<int64_t, std::string>> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("prefilter-", 0) != 0 || name.size() < 5 ||
          name.compare(name.size() - 5, 5, ".hsdb") != 0)
        continue;
      struct stat st {};
      if (fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        files.emplace_back(int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, name);
    }
    closedir(d);
  }
  std::sort(files.rbegin(), files.rend());
  for (size_t i = kKeep; i < files.size(); ++i) unlinkat(AT_FDCWD, (dir + "/" + files[i].second).c_str(), 0);
}

}  // namespace cache

}  // namespace

std::unique_ptr<LiteralDatabase> LiteralDatabase::Build(const std::vector<std::string>& literals,
                                                        const std::vector<uint8_t>& keep_case,
                                                        const std::vector<uint32_t>& hit_flags,
                                                        const std::string& cache_dir) {
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
  if (!strong.empty()) impl->strong.covers = MakeCovers(*impl, strong);
  if (!weak.empty()) impl->weak.covers = MakeCovers(*impl, weak);
  const std::string material = cache_dir.empty() ? std::string() : cache::Material(*impl);
  impl->from_cache = !cache_dir.empty() && cache::Load(cache_dir, material, *impl);
  if (!impl->from_cache) {
    for (Impl::Part* part : {&impl->strong, &impl->weak}) {
      if (part->db) hs_free_database(part->db);  // what a failed load left
      part->db = nullptr;
    }
    if (!CompilePart(impl->strong) || !CompilePart(impl->weak)) return nullptr;
    if (!cache_dir.empty()) cache::Save(cache_dir, material, *impl);
  }
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
    // ends, and a literal may end after a later cover: make sure. A hit is out of place by the
    // few hits that end within its literal: each is moved back where it belongs (as a stable
    // sort would put it), unless that turns out far.
    constexpr size_t kFar = 64;
    for (size_t i = 1; i < hits.size(); ++i) {
      if (!offset_less(hits[i], hits[i - 1])) continue;
      const uint32_t h = hits[i];
      size_t j = i;
      while (j > 0 && i - j < kFar && offset_less(h, hits[j - 1])) {
        hits[j] = hits[j - 1];
        --j;
      }
      hits[j] = h;
      if (j > 0 && offset_less(h, hits[j - 1])) {
        std::stable_sort(hits.begin(), hits.end(), offset_less);
        break;
      }
    }
    // Every literal of keep_line's scanner is a strong literal here, flagged kKeepHit when it is
    // long enough for that scanner to look for it: a scan that went through marks every line
    // keep_line accepts.
    return ok;
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
                                                        const std::vector<uint32_t>&,
                                                        const std::string&) {
  return nullptr;
}

FindLines LiteralDatabase::MakeFinder() const { return {}; }

bool LiteralDatabase::Scan(std::string_view, void (*)(void*, unsigned), void*) const {
  return false;
}

#endif

LiteralDatabase::LiteralDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LiteralDatabase::~LiteralDatabase() = default;

bool LiteralDatabase::from_cache() const {
#if defined(TRIAGE_HAVE_HYPERSCAN)
  return impl_->from_cache;
#else
  return false;
#endif
}

std::string PrefilterCacheDir() {
  if (const char* dir = std::getenv("TRIAGE_CACHE_DIR")) return dir;  // empty: no cache
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::string(xdg) + "/triage";
  if (const char* home = std::getenv("HOME"); home && *home == '/')
    return std::string(home) + "/.cache/triage";
  return {};
}

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
