// The loader model native.lib resolves names with, nothing loaded: ELF headers judged as glibc's
// loader judges a candidate, /etc/ld.so.cache in both formats, and the search order
// (LD_LIBRARY_PATH with its empty entries, the cache, the default folders).
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "helpers.h"
#include "triage/verifiers/detail/binary.h"

namespace triage::verifiers {
namespace {

using detail::ElfFit;
using Outcome = detail::LibraryResolution::Outcome;

// An ELF header of this build's machine, ET_DYN, to vary one field at a time.
Elf64_Ehdr Header() {
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
#if defined(__x86_64__)
  h.e_machine = EM_X86_64;
#elif defined(__aarch64__)
  h.e_machine = EM_AARCH64;
#else
  h.e_machine = EM_PPC64;
#endif
  h.e_version = EV_CURRENT;
  h.e_phentsize = sizeof(Elf64_Phdr);
  return h;
}

std::vector<unsigned char> Bytes(const Elf64_Ehdr& h) {
  std::vector<unsigned char> b(sizeof h);
  std::memcpy(b.data(), &h, sizeof h);
  return b;
}

std::string WriteBytes(const testing::TempDir& dir, const std::string& name, const std::vector<unsigned char>& b) {
  std::string p = dir.path() + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return p;
}

TEST(ElfHeader, JudgedAsTheLoaderJudgesACandidate) {
  EXPECT_EQ(detail::JudgeElfHeader(Bytes(Header())).fit, ElfFit::kLoadable);
  Elf64_Ehdr h = Header();
  h.e_ident[EI_CLASS] = ELFCLASS32;
  auto other_class = detail::JudgeElfHeader(Bytes(h));
  EXPECT_EQ(other_class.fit, ElfFit::kOtherMachine);
  EXPECT_EQ(other_class.why, "wrong ELF class: ELFCLASS32");
  h = Header();
  h.e_machine = h.e_machine == EM_S390 ? EM_X86_64 : EM_S390;
  EXPECT_EQ(detail::JudgeElfHeader(Bytes(h)).fit, ElfFit::kOtherMachine);
  h = Header();
  h.e_type = ET_EXEC;
  EXPECT_EQ(detail::JudgeElfHeader(Bytes(h)).why, "cannot dynamically load executable");
  h = Header();
  h.e_type = ET_REL;
  EXPECT_EQ(detail::JudgeElfHeader(Bytes(h)).fit, ElfFit::kUnloadable);
  h = Header();
  h.e_ident[EI_DATA] = h.e_ident[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
  EXPECT_EQ(detail::JudgeElfHeader(Bytes(h)).fit, ElfFit::kUnloadable);
  h = Header();
  h.e_phentsize = 1;
  EXPECT_EQ(detail::JudgeElfHeader(Bytes(h)).fit, ElfFit::kUnloadable);
  const std::string text = "/* GNU ld script */\nGROUP ( libc.so.6 )\n";
  auto script = detail::JudgeElfHeader({reinterpret_cast<const unsigned char*>(text.data()), text.size()});
  EXPECT_EQ(script.fit, ElfFit::kUnloadable);
  EXPECT_EQ(script.why, "invalid ELF header");
  auto b = Bytes(Header());
  b.resize(20);
  EXPECT_EQ(detail::JudgeElfHeader(b).why, "file too short");
}

TEST(ElfHeader, RealFilesAndThingsThatAreNotFiles) {
  auto lib = detail::ReadElfHeader(testing::FixtureDir("with/libprobe.so"));
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  EXPECT_EQ(lib->fit, ElfFit::kLoadable) << lib->why;
  auto exe = detail::ReadElfHeader("/proc/self/exe");  // a PIE is ET_DYN too, and loadable
  ASSERT_TRUE(exe.ok());
  EXPECT_NE(exe->fit, ElfFit::kOtherMachine);
  EXPECT_EQ(detail::ReadElfHeader("/nonexistent/libx.so").status().kind(), Status::Kind::kNotFound);
  // A FIFO would block an open and a device may act on one: neither is opened.
  testing::TempDir dir;
  std::string fifo = dir.path() + "/libfifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto f = detail::ReadElfHeader(fifo);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->fit, ElfFit::kUnloadable);
  EXPECT_EQ(f->why, "not a regular file");
  EXPECT_EQ(detail::ReadElfHeader("/dev/null")->why, "not a regular file");
}

// --- ld.so.cache ---

struct CacheLib {
  int32_t flags;
  std::string key, value;
  uint64_t hwcap = 0;
};

void Put32(std::vector<unsigned char>& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void Put64(std::vector<unsigned char>& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// A cache image as ldconfig writes it: the new format alone, or after the old one.
std::vector<unsigned char> CacheImage(const std::vector<CacheLib>& libs, bool with_old) {
  std::vector<unsigned char> b;
  // With the old format first: its header and entries, then the new format aligned to 8; the
  // strings (at the end) serve both, each format counting offsets from its own origin.
  const size_t new_at = with_old ? (16 + libs.size() * 12 + 7) & ~size_t{7} : 0;
  size_t entries = new_at + 48;
  size_t strings = entries + libs.size() * 24;
  std::string table;
  std::vector<std::pair<uint32_t, uint32_t>> offs;
  for (const auto& l : libs) {
    uint32_t k = static_cast<uint32_t>(strings - new_at + table.size());
    table += l.key + '\0';
    uint32_t v = static_cast<uint32_t>(strings - new_at + table.size());
    table += l.value + '\0';
    offs.emplace_back(k, v);
  }
  b.resize(strings + table.size());
  std::memcpy(b.data() + strings, table.data(), table.size());
  const char kNew[] = "glibc-ld.so.cache1.1";
  std::memcpy(b.data() + new_at, kNew, 20);
  Put32(b, new_at + 20, static_cast<uint32_t>(libs.size()));
  Put32(b, new_at + 24, static_cast<uint32_t>(table.size()));
  b[new_at + 28] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3;
  for (size_t i = 0; i < libs.size(); ++i) {
    size_t e = entries + i * 24;
    Put32(b, e, static_cast<uint32_t>(libs[i].flags));
    Put32(b, e + 4, offs[i].first);
    Put32(b, e + 8, offs[i].second);
    Put64(b, e + 16, libs[i].hwcap);
  }
  if (with_old) {
    std::memcpy(b.data(), "ld.so-1.7.0", 11);
    Put32(b, 12, static_cast<uint32_t>(libs.size()));
    // Old string offsets count from the end of the old entries.
    const size_t old_strings_at = 16 + libs.size() * 12;
    for (size_t i = 0; i < libs.size(); ++i) {
      size_t e = 16 + i * 12;
      Put32(b, e, static_cast<uint32_t>(libs[i].flags & 0xff));
      Put32(b, e + 4, static_cast<uint32_t>(new_at + offs[i].first - old_strings_at));
      Put32(b, e + 8, static_cast<uint32_t>(new_at + offs[i].second - old_strings_at));
    }
  }
  return b;
}

const int32_t kThisFlags = [] {
  for (int32_t f : {0x0303, 0x0a03, 0x0003})
    if (detail::LdCacheFlagsFit(f)) return f;
  return 1;
}();

TEST(LdCache, TheNewFormatAloneAndAfterTheOldOne) {
  std::vector<CacheLib> libs = {{kThisFlags, "libfoo.so.1", "/opt/foo/libfoo.so.1"},
                                {0x0003, "libfoo.so.1", "/usr/lib32/libfoo.so.1"},
                                {kThisFlags, "libbar.so", "/opt/bar/lib/libbar.so", 1ull << 62}};
  for (bool with_old : {false, true}) {
    auto image = CacheImage(libs, with_old);
    auto entries = detail::ParseLdCache(image);
    ASSERT_TRUE(entries.ok()) << entries.status().message();
    ASSERT_EQ(entries->size(), 3u);
    EXPECT_EQ((*entries)[0].name, "libfoo.so.1");
    EXPECT_EQ((*entries)[0].path, "/opt/foo/libfoo.so.1");
    EXPECT_EQ((*entries)[0].flags, kThisFlags);
    EXPECT_EQ((*entries)[2].path, "/opt/bar/lib/libbar.so");
    EXPECT_EQ((*entries)[2].hwcap, 1ull << 62);
  }
  // The old format alone: header (magic, padding, count), one entry, its strings after it.
  std::vector<unsigned char> image(16 + 12);
  std::memcpy(image.data(), "ld.so-1.7.0", 11);
  Put32(image, 12, 1);
  Put32(image, 16, 0x0003);
  Put32(image, 20, 0);   // "libold.so.2"
  Put32(image, 24, 12);  // "/lib/libold.so.2"
  std::string strings = std::string("libold.so.2") + '\0' + "/lib/libold.so.2" + '\0';
  image.insert(image.end(), strings.begin(), strings.end());
  auto old = detail::ParseLdCache(image);
  ASSERT_TRUE(old.ok()) << old.status().message();
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].name, "libold.so.2");
  EXPECT_EQ((*old)[0].path, "/lib/libold.so.2");
}

TEST(LdCache, BadImagesAreCorruptNeverACrash) {
  auto image = CacheImage({{kThisFlags, "libfoo.so.1", "/opt/foo/libfoo.so.1"}}, false);
  auto count = image;
  Put32(count, 20, 1000000);
  EXPECT_EQ(detail::ParseLdCache(count).status().kind(), Status::Kind::kCorrupt);
  auto offset = image;
  Put32(offset, 48 + 4, 0xfffffff0u);
  EXPECT_EQ(detail::ParseLdCache(offset).status().kind(), Status::Kind::kCorrupt);
  auto unterminated = image;
  unterminated.pop_back();  // the last string loses its NUL
  EXPECT_EQ(detail::ParseLdCache(unterminated).status().kind(), Status::Kind::kCorrupt);
  for (size_t n = 0; n < image.size(); ++n)
    (void)detail::ParseLdCache(std::span<const unsigned char>(image.data(), n));
  const std::string text = "not a cache";
  EXPECT_FALSE(detail::ParseLdCache({reinterpret_cast<const unsigned char*>(text.data()), text.size()}).ok());
}

TEST(LdCache, ThisHostsCacheNamesLibc) {
  if (!std::filesystem::exists("/etc/ld.so.cache")) GTEST_SKIP() << "no /etc/ld.so.cache on this host";
  auto entries = detail::ReadLdCache("/etc/ld.so.cache");
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  bool libc = false;
  for (const auto& e : *entries)
    if (e.name == "libc.so.6" && detail::LdCacheFlagsFit(e.flags)) {
      auto h = detail::ReadElfHeader(e.path);
      libc = h.ok() && h->fit == ElfFit::kLoadable;
    }
  EXPECT_TRUE(libc) << "no loadable libc.so.6 entry among " << entries->size();
}

// --- the search order ---

class Search : public ::testing::Test {
 protected:
  void SetUp() override {
    search_.cache = "";  // none, unless a test writes one
    search_.default_dirs = {dir_.path() + "/default"};
  }
  std::string Lib(const std::string& rel, const std::vector<unsigned char>& bytes = Bytes(Header())) {
    return WriteBytes(dir_, rel, bytes);
  }
  testing::TempDir dir_;
  detail::LibrarySearch search_;
};

TEST_F(Search, LdLibraryPathThenTheCacheThenTheDefaultFolders) {
  std::string in_default = Lib("default/libx.so");
  auto r = detail::ResolveLibraryName("libx.so", search_);
  EXPECT_EQ(r.outcome, Outcome::kFound);
  EXPECT_EQ(r.path, in_default);
  EXPECT_EQ(r.where, "default folder " + dir_.path() + "/default");

  std::string cached = Lib("cached/libx.so");
  search_.cache = WriteBytes(dir_, "ld.so.cache", CacheImage({{kThisFlags, "libx.so", cached}}, false));
  r = detail::ResolveLibraryName("libx.so", search_);
  EXPECT_EQ(r.path, cached);
  EXPECT_EQ(r.where, search_.cache);

  std::string on_path = Lib("llp/libx.so");
  search_.ld_library_path = "/nonexistent-a;" + dir_.path() + "/llp";
  r = detail::ResolveLibraryName("libx.so", search_);
  EXPECT_EQ(r.path, on_path);
  EXPECT_EQ(r.where, "LD_LIBRARY_PATH entry " + dir_.path() + "/llp");
  ASSERT_GE(r.looked.size(), 2u);
  EXPECT_EQ(r.looked[0], "LD_LIBRARY_PATH entry /nonexistent-a");
}

TEST_F(Search, AnotherMachinesLibraryIsPassedOverAndANonElfStopsTheLoader) {
  Elf64_Ehdr h = Header();
  h.e_ident[EI_CLASS] = ELFCLASS32;
  std::string other = Lib("a/libx.so", Bytes(h));
  std::string good = Lib("b/libx.so");
  search_.ld_library_path = dir_.path() + "/a:" + dir_.path() + "/b";
  auto r = detail::ResolveLibraryName("libx.so", search_);
  EXPECT_EQ(r.outcome, Outcome::kFound);
  EXPECT_EQ(r.path, good);
  ASSERT_EQ(r.passed_over.size(), 1u);
  EXPECT_EQ(r.passed_over[0], other + " (wrong ELF class: ELFCLASS32)");

  std::string text = dir_.Write("a/libx.so", "INPUT(-lx)\n");
  r = detail::ResolveLibraryName("libx.so", search_);
  EXPECT_EQ(r.outcome, Outcome::kLoaderError);
  EXPECT_EQ(r.path, text);
  EXPECT_EQ(r.error, "invalid ELF header");
}

TEST_F(Search, AnEmptyEntryIsTheCurrentFolderAndUnexpandedEntriesAreSkipped) {
  std::string here = Lib("cwd/libx.so");
  std::string was = std::filesystem::current_path().string();
  ASSERT_EQ(::chdir((dir_.path() + "/cwd").c_str()), 0);
  search_.ld_library_path = "$ORIGIN/../lib::/nonexistent";
  auto r = detail::ResolveLibraryName("libx.so", search_);
  ASSERT_EQ(::chdir(was.c_str()), 0);
  EXPECT_EQ(r.outcome, Outcome::kFound);
  EXPECT_EQ(r.path, here);
  EXPECT_EQ(r.where, "the current folder " + dir_.path() + "/cwd, an empty LD_LIBRARY_PATH entry");
  ASSERT_FALSE(r.looked.empty());
  EXPECT_EQ(r.looked[0], "LD_LIBRARY_PATH entry $ORIGIN/../lib (not expanded, skipped)");
  // An empty variable adds nothing (ld.so ignores it).
  search_.ld_library_path = "";
  EXPECT_EQ(detail::ResolveLibraryName("libx.so", search_).outcome, Outcome::kNotFound);
}

TEST_F(Search, NotFoundListsEveryPlaceLooked) {
  search_.ld_library_path = dir_.path() + "/llp";
  search_.cache = dir_.path() + "/no-cache";
  auto r = detail::ResolveLibraryName("libabsent.so", search_);
  EXPECT_EQ(r.outcome, Outcome::kNotFound);
  ASSERT_EQ(r.looked.size(), 3u);
  EXPECT_EQ(r.looked[0], "LD_LIBRARY_PATH entry " + dir_.path() + "/llp");
  EXPECT_EQ(r.looked[1].rfind(dir_.path() + "/no-cache (", 0), 0u) << r.looked[1];
  EXPECT_EQ(r.looked[2], dir_.path() + "/default");
}

}  // namespace
}  // namespace triage::verifiers
