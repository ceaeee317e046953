// The public HTTP server (triage/daemon/http_server.h): which addresses are loopback, and what a
// request handler is given and can answer with.
#include "triage/daemon/http_server.h"

#include <gtest/gtest.h>

#include "loopback.h"

namespace triage::daemon {
namespace {

using testing::ConnectLoopback;

bool Loopback(const std::string& host) { return IsLoopback(ListenAddress{host, 0}); }

TEST(HttpServer, LoopbackIsOnlyWhatThisMachineAloneReaches) {
  EXPECT_TRUE(Loopback("127.0.0.1"));
  EXPECT_TRUE(Loopback("127.45.0.9"));
  EXPECT_TRUE(Loopback("::1"));
  EXPECT_TRUE(Loopback("::ffff:127.0.0.1"));
  EXPECT_FALSE(Loopback("0.0.0.0"));
  EXPECT_FALSE(Loopback("::"));
  EXPECT_FALSE(Loopback("10.1.2.3"));
  EXPECT_FALSE(Loopback("::ffff:10.1.2.3"));
  EXPECT_FALSE(Loopback("not an address"));
}

// Sends `request` as it is and returns everything the server answers before closing.
std::string Exchange(int port, const std::string& request) {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
  close(fd);
  return all;
}

TEST(HttpServer, AHandlerGetsTheCredentialHeadersAndAddsFields) {
  std::string seen;
  auto server = HttpServer::Start(ListenAddress{"127.0.0.1", 0}, [&seen](const HttpRequest& r) {
    seen = std::string(r.target) + "|" + std::string(r.authorization) + "|" + std::string(r.cookie);
    HttpResponse out{200, "text/html; charset=utf-8", "<p>ok</p>"};
    out.headers.push_back({"Content-Security-Policy", "default-src 'none'"});
    return out;
  });
  ASSERT_TRUE(server.ok()) << server.status().message();
  const int port = std::stoi((*server)->bound().substr((*server)->bound().rfind(':') + 1));
  const std::string answer =
      Exchange(port,
               "GET /a?b=1 HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer abc\r\n"
               "Cookie: one=1; triage_token=xyz\r\n\r\n");
  EXPECT_EQ(seen, "/a?b=1|Bearer abc|one=1; triage_token=xyz");
  EXPECT_NE(answer.find("HTTP/1.0 200"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Content-Security-Policy: default-src 'none'\r\n"), std::string::npos)
      << answer;
  EXPECT_NE(answer.find("<p>ok</p>"), std::string::npos);
  // Without them, both are empty.
  Exchange(port, "GET / HTTP/1.0\r\nHost: x\r\n\r\n");
  EXPECT_EQ(seen, "/||");
}

TEST(HttpServer, AHandlerOfTheTargetOnlyIsStillServed) {
  auto server = HttpServer::Start(ListenAddress{"127.0.0.1", 0}, [](std::string_view target) {
    return HttpResponse{200, "text/plain; charset=utf-8", std::string(target)};
  });
  ASSERT_TRUE(server.ok());
  const int port = std::stoi((*server)->bound().substr((*server)->bound().rfind(':') + 1));
  EXPECT_EQ(testing::HttpGet(port, "/x?y").body, "/x?y");
}

}  // namespace
}  // namespace triage::daemon
