#include "triage/core/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace triage::core {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("triage-config-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    ::setenv("XDG_CONFIG_HOME", (dir_ / "config").c_str(), 1);
    ::setenv("XDG_STATE_HOME", (dir_ / "state").c_str(), 1);
    ::unsetenv("TRIAGE_DB");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(ConfigTest, NoFileGivesDefaults) {
  auto cfg = LoadConfig(std::nullopt);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->file.empty());
  EXPECT_EQ(cfg->quiet_gap_seconds, 300);
  EXPECT_FALSE(cfg->verify_enabled);
  EXPECT_EQ(ResolveDbPath(std::nullopt, *cfg), (dir_ / "state/triage/triage.db").string());
}

TEST_F(ConfigTest, XdgConfigFileIsReadWithOrigins) {
  std::string file = Write("config/triage/config.toml",
                           "[store]\npath = \"/srv/triage.db\"\n[verify]\nenabled = true\n"
                           "allowed_prefixes = [\"/opt/venvs\"]\n[watch]\nquiet_gap = 60\n");
  auto cfg = LoadConfig(std::nullopt);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->file, file);
  EXPECT_EQ(cfg->store_path.value_or(""), "/srv/triage.db");
  EXPECT_TRUE(cfg->verify_enabled);
  EXPECT_EQ(cfg->verify_allowed_prefixes, std::vector<std::string>{"/opt/venvs"});
  EXPECT_EQ(cfg->quiet_gap_seconds, 60);
  EXPECT_EQ(cfg->origin.at("store.path"), file);
  std::string described = DescribeConfig(*cfg);
  EXPECT_NE(described.find("store.path = \"/srv/triage.db\"  # " + file), std::string::npos);
  EXPECT_NE(described.find("rules.folders = []  # default"), std::string::npos);
}

TEST_F(ConfigTest, MetricsAndNotifySectionsAreReadWithOrigins) {
  std::string file = Write("config/triage/config.toml",
                           "[metrics]\nlisten = \"127.0.0.1:9400\"\ntextfile = \"/srv/tf/triage.prom\"\n"
                           "[notify]\nexec = [\"/usr/local/bin/page\", \"--team\", \"gpu\"]\n"
                           "webhook = \"http://127.0.0.1:8080/hook\"\ndeadline = 3\nper_minute = 4\n");
  auto cfg = LoadConfig(std::nullopt);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->metrics_listen, "127.0.0.1:9400");
  EXPECT_EQ(cfg->metrics_textfile, "/srv/tf/triage.prom");
  EXPECT_EQ(cfg->notify_exec, (std::vector<std::string>{"/usr/local/bin/page", "--team", "gpu"}));
  EXPECT_EQ(cfg->notify_webhook, "http://127.0.0.1:8080/hook");
  EXPECT_EQ(cfg->notify_deadline_seconds, 3);
  EXPECT_EQ(cfg->notify_per_minute, 4);
  std::string described = DescribeConfig(*cfg);
  EXPECT_NE(described.find("metrics.listen = \"127.0.0.1:9400\"  # " + file), std::string::npos)
      << described;
  EXPECT_NE(described.find("notify.per_minute = 4  # " + file), std::string::npos) << described;
}

TEST_F(ConfigTest, DbPathPrecedenceFlagThenEnvThenFile) {
  Config cfg;
  cfg.store_path = "/from/file.db";
  EXPECT_EQ(ResolveDbPath(std::nullopt, cfg), "/from/file.db");
  ::setenv("TRIAGE_DB", "/from/env.db", 1);
  EXPECT_EQ(ResolveDbPath(std::nullopt, cfg), "/from/env.db");
  EXPECT_EQ(ResolveDbPath(std::string("/from/flag.db"), cfg), "/from/flag.db");
  ::unsetenv("TRIAGE_DB");
}

TEST_F(ConfigTest, MalformedFileNamesFileAndLine) {
  std::string file = Write("bad.toml", "[store]\npath = \"unterminated\n");
  auto cfg = LoadConfig(file);
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().kind(), Status::Kind::kInvalidInput);
  EXPECT_NE(cfg.status().message().find(file + ":2"), std::string::npos) << cfg.status().message();
}

TEST_F(ConfigTest, WrongTypeAndUnknownSectionAreErrors) {
  std::string file = Write("types.toml", "[verify]\nenabled = \"yes\"\n");
  auto cfg = LoadConfig(file);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("verify.enabled"), std::string::npos);
  std::string file2 = Write("sections.toml", "[stroe]\npath = \"x\"\n");
  auto cfg2 = LoadConfig(file2);
  ASSERT_FALSE(cfg2.ok());
  EXPECT_NE(cfg2.status().message().find("unknown section [stroe] (did you mean [store]?)"), std::string::npos)
      << cfg2.status().message();
}

TEST_F(ConfigTest, UnknownKeyIsAWarningWithFileAndLine) {
  std::string file = Write("keys.toml", "[watch]\nquiet_gap = 60\n\nfolder = [\"/x\"]\n[verify]\nfrobnicate = 1\n");
  auto cfg = LoadConfig(file);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->quiet_gap_seconds, 60);
  EXPECT_TRUE(cfg->watch_folders.empty());
  ASSERT_EQ(cfg->warnings.size(), 2u);
  EXPECT_EQ(cfg->warnings[0], file + ":4: unknown key watch.folder (did you mean watch.folders?); ignored");
  EXPECT_EQ(cfg->warnings[1], file + ":6: unknown key verify.frobnicate; ignored");
}

TEST_F(ConfigTest, KeysOfTheDaemonAndTheSharedStoreAreKnown) {
  std::string file = Write("fleet.toml",
                           "[metrics]\nlisten = \"127.0.0.1:9400\"\ntextfile = \"/var/lib/prom/triage.prom\"\n"
                           "[notify]\nexec = [\"/bin/true\"]\nwebhook = \"http://hook.example/in\"\n"
                           "[store]\nurl = \"postgresql://db/triage\"\n");
  auto cfg = LoadConfig(file);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_TRUE(cfg->warnings.empty()) << cfg->warnings.front();
}

TEST_F(ConfigTest, TheTimezoneIsAUtcOffset) {
  std::string file = Write("tz.toml", "[analyze]\ntimezone = \"-05:30\"\n");
  auto cfg = LoadConfig(file);
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg->timezone.value_or(1), -(5 * 3600 + 1800));
  EXPECT_NE(DescribeConfig(*cfg).find("analyze.timezone = \"-05:30\"  # " + file), std::string::npos)
      << DescribeConfig(*cfg);
  EXPECT_NE(DescribeConfig(Config{}).find("analyze.timezone = \"\"  # default"), std::string::npos);
  for (const char* bad : {"\"Asia/Shanghai\"", "\"+15:00\"", "\"+8\"", "8"}) {
    std::string wrong = Write("wrong.toml", std::string("[analyze]\ntimezone = ") + bad + "\n");
    auto refused = LoadConfig(wrong);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find(wrong + ":2: analyze.timezone: expected a UTC offset"),
              std::string::npos)
        << refused.status().message();
  }
  EXPECT_EQ(ParseUtcOffset("UTC"), 0);
  EXPECT_EQ(ParseUtcOffset("Z"), 0);
  EXPECT_EQ(ParseUtcOffset("+08:00"), 8 * 3600);
  EXPECT_EQ(ParseUtcOffset("+0545"), 5 * 3600 + 45 * 60);
  EXPECT_EQ(ParseUtcOffset("UTC-03"), -3 * 3600);
  EXPECT_EQ(FormatUtcOffset(-(5 * 3600 + 1800)), "-05:30");
  EXPECT_EQ(FormatUtcOffset(0), "+00:00");
}

TEST_F(ConfigTest, ExplicitMissingFileIsNotFound) {
  auto cfg = LoadConfig((dir_ / "absent.toml").string());
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().kind(), Status::Kind::kNotFound);
}

}  // namespace
}  // namespace triage::core
