// The daemon's HTTP, both ways, wrapped once (Boost.Beast stays in http.cpp): a small server
// for `/metrics` and `/healthz` (plain http), and a POST for webhooks (http, or https over
// OpenSSL with the server's certificate checked).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "triage/status.h"

namespace triage::daemon::detail {

// "127.0.0.1:9400", "[::1]:9400", "localhost:9400", ":9400" (every address). The host must be
// an IP address or "localhost"; the port 0..65535 (0: one the kernel picks).
struct ListenAddress {
  std::string host;  // an IP address
  uint16_t port = 0;
};
Result<ListenAddress> ParseListenAddress(std::string_view text);

// "http://host[:port][/path?query]" or "https://..." (port 443 unless given). Other schemes and
// credentials in the URL are refused with a message that says so.
struct HttpUrl {
  bool https = false;
  std::string host;
  uint16_t port = 80;
  std::string target = "/";
};
Result<HttpUrl> ParseHttpUrl(std::string_view text);

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Called on the server's thread for each GET or HEAD (other methods get 405 without a call).
// `target` is the request's path and query as sent.
using HttpHandler = std::function<HttpResponse(std::string_view target)>;

// Serves on its own thread with its own event loop; never touches the caller's. A request
// must arrive whole within a few seconds and be small (headers of 8 KiB, no body); at most a
// few dozen connections are served at once, and one client (one remote address) holds at most 4
// of them; connections past either limit are closed as soon as they are accepted, so a client
// with many slow connections cannot keep the others' requests waiting.
class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> Start(const ListenAddress& address,
                                                   HttpHandler handler);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  // Closes the listener and every connection, joins the thread.
  void Stop();
  // The address bound ("127.0.0.1:41234"; the port the kernel picked when asked for 0).
  std::string bound() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

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
