// The daemon's HTTP, both ways, wrapped once (Boost.Beast stays in http.cpp): a small server
// for `/metrics` and `/healthz` (plain http), and a POST for webhooks (http, or https over
// OpenSSL with the server's certificate checked).
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

// "http://host[:port][/path?query]" or "https://..." (port 443 unless given). Other schemes and
// credentials in the URL are refused with a message that says so.
struct HttpUrl {
  bool https = false;
  std::string host;
  uint16_t port = 80;
  std::string target = "/";
};
Result<HttpUrl> ParseHttpUrl(std::string_view text);

// POSTs `body` to `url` and reads the answer, all within `timeout_seconds` (name resolution
// and the TLS handshake included). Ok on a 2xx status; Unavailable naming the status (or the
// network or certificate error) otherwise; Timeout past the deadline. Blocks the calling thread.
// For https the server's certificate must chain to `ca_file` (a PEM file of one or more
// certificates) or, when it is empty, to the system's store, and name the URL's host; the host
// name is sent as SNI. The error names the host and port, never the URL's path or query (where a
// receiver's token often is).
Status HttpPost(const HttpUrl& url, std::string_view content_type, std::string_view body,
                double timeout_seconds, const std::string& ca_file = "");

}  // namespace triage::daemon::detail
