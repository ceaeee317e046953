// The whole-buffer prefilter's compiled databases are kept in a cache folder ($TRIAGE_CACHE_DIR)
// and read back by the next start with the same literals. What is read back must find exactly
// what a fresh compilation finds; a damaged, cut or foreign file, or a folder others may write,
// is passed over (the databases are compiled again), and the folder keeps a few files only.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "triage/core/rules.h"
#include "triage/ingest/pipeline.h"

namespace triage::core {
namespace {

namespace fs = std::filesystem;

std::string Rules(const std::string& extra = "") {
  return R"(
[[signature]]
id       = "t.oom"
pattern  = '''CUDA failure: out of memory'''

[[signature]]
id       = "t.port"
pattern  = '''(?i)port \d+ is already in use'''

[[signature]]
id       = "t.access"
pattern  = '''HTTP/1\.1" 200'''
benign   = true
)" + extra;
}

const std::string kText =
    "E1201 CUDA failure: out of memory\n"
    "nothing here\n"
    "OSError: PORT 8000 IS ALREADY IN USE\n"
    "INFO: \"GET /health HTTP/1.1\" 200 OK\n";

class PrefilterCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("triage-hscache-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "rules");
    cache_ = root_ / "cache";
    const char* old = std::getenv("TRIAGE_CACHE_DIR");
    had_old_ = old != nullptr;
    if (old) old_ = old;
    setenv("TRIAGE_CACHE_DIR", cache_.c_str(), 1);
  }
  void TearDown() override {
    if (had_old_) setenv("TRIAGE_CACHE_DIR", old_.c_str(), 1);
    else unsetenv("TRIAGE_CACHE_DIR");
    fs::remove_all(root_);
  }

  // The hits of a finder of freshly loaded `rules` over kText, weak ones too.
  std::vector<uint32_t> Hits(const std::string& rules) {
    std::ofstream(root_ / "rules" / "r.toml", std::ios::trunc) << rules;
    auto loaded = LoadRules({(root_ / "rules").string()});
    EXPECT_TRUE(loaded.rules);
    if (!loaded.rules) return {};
    auto finder = loaded.rules->MakeLineFinder();
    if (!finder) return {};
    std::vector<uint32_t> hits;
    finder(kText, true, hits);
    return hits;
  }

  std::vector<fs::path> Files() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache_, ec))
      if (e.path().extension() == ".hsdb") out.push_back(e.path());
    return out;
  }

  bool Available() {
    std::ofstream(root_ / "rules" / "r.toml", std::ios::trunc) << Rules();
    auto loaded = LoadRules({(root_ / "rules").string()});
    return loaded.rules && loaded.rules->MakeLineFinder();
  }

  // Sets the file's modification time an hour back: a file written again shows a new one.
  static void Age(const fs::path& p) {
    fs::last_write_time(p, fs::last_write_time(p) - std::chrono::hours(1));
  }

  fs::path root_, cache_;
  bool had_old_ = false;
  std::string old_;
};

TEST_F(PrefilterCache, ASecondStartReadsTheDatabasesAndFindsTheSame) {
  if (!Available()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  fs::remove_all(cache_);
  const auto fresh = Hits(Rules());
  ASSERT_FALSE(fresh.empty());
  auto files = Files();
  ASSERT_EQ(files.size(), 1u);
  struct stat st {};
  ASSERT_EQ(stat(cache_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);  // the folder is this user's alone
  Age(files[0]);
  const auto before = fs::last_write_time(files[0]);
  EXPECT_EQ(Hits(Rules()), fresh);
  EXPECT_EQ(fs::last_write_time(files[0]), before) << "read back, not compiled and written again";
  // Other literals: another file, and the first one still there.
  const auto other = Hits(Rules("\n[[signature]]\nid = \"t.more\"\npattern = '''disk quota exceeded'''\n"));
  EXPECT_EQ(Files().size(), 2u);
  EXPECT_EQ(other, fresh);  // the new literal is not in the text
}

TEST_F(PrefilterCache, ADamagedOrCutFileIsCompiledAgainAndReplaced) {
  if (!Available()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  fs::remove_all(cache_);
  const auto fresh = Hits(Rules());
  auto files = Files();
  ASSERT_EQ(files.size(), 1u);
  const fs::path file = files[0];
  const auto size = fs::file_size(file);
  for (uintmax_t at : {uintmax_t(3), size / 2, size - 1}) {  // the magic, the middle, the end
    {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(std::streamoff(at));
      char c = 0;
      f.get(c);
      f.seekp(std::streamoff(at));
      f.put(char(c ^ 0x5a));
    }
    EXPECT_EQ(Hits(Rules()), fresh) << "byte " << at;
    EXPECT_EQ(fs::file_size(file), size);
  }
  fs::resize_file(file, size / 3);
  EXPECT_EQ(Hits(Rules()), fresh);
  EXPECT_EQ(fs::file_size(file), size) << "written again whole";
  std::ofstream(file, std::ios::trunc) << "not a cache file";
  EXPECT_EQ(Hits(Rules()), fresh);
  EXPECT_EQ(fs::file_size(file), size);
}

TEST_F(PrefilterCache, AFolderOthersMayWriteIsNotUsed) {
  if (!Available()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  fs::remove_all(cache_);
  const auto fresh = Hits(Rules());
  auto files = Files();
  ASSERT_EQ(files.size(), 1u);
  Age(files[0]);
  const auto before = fs::last_write_time(files[0]);
  ASSERT_EQ(chmod(cache_.c_str(), 0777), 0);
  EXPECT_EQ(Hits(Rules()), fresh);
  // Neither read (its file could be anyone's) nor written.
  EXPECT_EQ(fs::last_write_time(files[0]), before);
  EXPECT_EQ(Files().size(), 1u);
  // A file others may write, in a folder of this user's: not read, written again.
  ASSERT_EQ(chmod(cache_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(files[0].c_str(), 0666), 0);
  EXPECT_EQ(Hits(Rules()), fresh);
  struct stat st {};
  ASSERT_EQ(stat(files[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A link in place of the folder: not followed.
  fs::remove_all(cache_);
  fs::create_directories(root_ / "elsewhere");
  fs::create_directory_symlink(root_ / "elsewhere", cache_);
  EXPECT_EQ(Hits(Rules()), fresh);
  EXPECT_TRUE(fs::is_empty(root_ / "elsewhere"));
}

TEST_F(PrefilterCache, AnEmptyFolderNameTurnsTheCacheOff) {
  if (!Available()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  fs::remove_all(cache_);
  setenv("TRIAGE_CACHE_DIR", "", 1);
  EXPECT_FALSE(Hits(Rules()).empty());
  EXPECT_FALSE(fs::exists(cache_));
}

TEST_F(PrefilterCache, TheFolderKeepsTheNewestFewFiles) {
  if (!Available()) GTEST_SKIP() << "this build has no whole-buffer prefilter";
  fs::remove_all(cache_);
  for (int i = 0; i < 7; ++i) {
    Hits(Rules("\n[[signature]]\nid = \"t.n\"\npattern = '''" + std::to_string(i) +
               " is a literal'''\n"));  // first bytes differ: the databases hold those
    for (const auto& f : Files()) Age(f);  // each older than the next
  }
  EXPECT_EQ(Files().size(), 4u);
}

}  // namespace
}  // namespace triage::core
