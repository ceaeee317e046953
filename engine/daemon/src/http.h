// The daemon's HTTP, both ways, wrapped once (Boost.Beast stays in http.cpp): a small server
// for `/metrics` and `/healthz`, and a POST for webhooks. Plain http only: no TLS.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "triage/daemon/http_server.h"
#include "triage/status.h"

namespace triage::daemon::detail {

// The server is public (triage/daemon/http_server.h); the daemon's code names it from here.
using daemon::HttpHandler;
using daemon::HttpRequest;
using daemon::HttpResponse;
using daemon::HttpServer;
using daemon::ListenAddress;
using daemon::ParseListenAddress;

// "http://host[:port][/path?query]". https and other schemes are refused with a message that
// says so.
struct HttpUrl {
  std::string host;
  uint16_t port = 80;
  std::string target = "/";
};
Result<HttpUrl> ParseHttpUrl(std::string_view text);

// POSTs `body` to `url` and reads the answer, all within `timeout_seconds` (name resolution
// included). Ok on a 2xx status; Unavailable naming the status (or the network error)
// otherwise; Timeout past the deadline. Blocks the calling thread.
Status HttpPost(const HttpUrl& url, std::string_view content_type, std::string_view body,
                double timeout_seconds);

}  // namespace triage::daemon::detail
