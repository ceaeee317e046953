// Secrets in store addresses and webhook URLs are hidden wherever they are printed.
#include "triage/redact.h"

#include <gtest/gtest.h>

namespace triage {
namespace {

TEST(RedactSecrets, AUrlsPasswordAndSecretQueryParametersAreHidden) {
  EXPECT_EQ(RedactSecrets("postgresql://triage:s3cret@db.example:5432/triage"),
            "postgresql://triage:***@db.example:5432/triage");
  EXPECT_EQ(RedactSecrets("postgresql://db/triage?user=t&password=s3cret&sslmode=require"),
            "postgresql://db/triage?user=t&password=***&sslmode=require");
  EXPECT_EQ(RedactSecrets("http://hooks.example/x?channel=gpu&token=abc123"),
            "http://hooks.example/x?channel=gpu&token=***");
  EXPECT_EQ(RedactSecrets("webhook http://127.0.0.1:9/h?Token=abc: no answer within the deadline (connect)"),
            "webhook http://127.0.0.1:9/h?Token=***: no answer within the deadline (connect)");
  EXPECT_EQ(RedactSecrets("postgresql://user:p%40ss@host/db"), "postgresql://user:***@host/db");
}

TEST(RedactSecrets, LibpqKeywordsAreHiddenQuotedOrNot) {
  EXPECT_EQ(RedactSecrets("host=db dbname=triage user=t password=s3cret"),
            "host=db dbname=triage user=t password=***");
  EXPECT_EQ(RedactSecrets("host=db password = 'a b\\'c' dbname=x"), "host=db password =*** dbname=x");
  EXPECT_EQ(RedactSecrets("sslpassword=k1 host=db"), "sslpassword=*** host=db");
}

TEST(RedactSecrets, EverythingElseIsKept) {
  EXPECT_EQ(RedactSecrets("/var/lib/triage/triage.db"), "/var/lib/triage/triage.db");
  EXPECT_EQ(RedactSecrets("postgresql://db.example/triage"), "postgresql://db.example/triage");
  EXPECT_EQ(RedactSecrets("http://127.0.0.1:9400/metrics?monkey=1"), "http://127.0.0.1:9400/metrics?monkey=1");
  EXPECT_EQ(RedactSecrets(""), "");
}

TEST(RedactSecrets, TheKeywordFormIsToldFromAPath) {
  EXPECT_TRUE(IsLibpqKeywords("host=db dbname=triage"));
  EXPECT_TRUE(IsLibpqKeywords("  dbname = triage"));
  EXPECT_FALSE(IsLibpqKeywords("/tmp/host=1.db"));
  EXPECT_FALSE(IsLibpqKeywords("triage.db"));
  EXPECT_FALSE(IsLibpqKeywords("colour=blue"));
}

}  // namespace
}  // namespace triage
