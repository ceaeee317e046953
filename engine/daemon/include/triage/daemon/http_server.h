// A small HTTP server (Boost.Beast, wrapped in the daemon's http.cpp): what the daemon's
// `/metrics` and `/healthz` and `triage serve`'s pages are served with. GET and HEAD only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "triage/status.h"

namespace triage::daemon {

// "127.0.0.1:9400", "[::1]:9400", "localhost:9400", ":9400" (every address). The host must be
// an IP address or "localhost"; the port 0..65535 (0: one the kernel picks).
struct ListenAddress {
  std::string host;  // an IP address
  uint16_t port = 0;
};
Result<ListenAddress> ParseListenAddress(std::string_view text);

// True for an address only this machine can reach: 127.0.0.0/8 and ::1 (an IPv4 loopback
// address mapped into IPv6 too). False for every other address, "0.0.0.0" and "::" included.
bool IsLoopback(const ListenAddress& address);

// What a handler is given of a GET or HEAD: the path and query as sent, and the two headers a
// handler may check a credential in (empty when absent). Valid during the call only.
struct HttpRequest {
  std::string_view target;
  std::string_view authorization;
  std::string_view cookie;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // More header fields, sent as given (names and values must be tokens and visible text; the
  // handler builds them from constants, never from a request).
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// Called on the server's thread for each GET or HEAD (other methods get 405 without a call).
using HttpHandler = std::function<HttpResponse(std::string_view target)>;
using HttpRequestHandler = std::function<HttpResponse(const HttpRequest& request)>;

// Serves on its own thread with its own event loop; never touches the caller's. A request
// must arrive whole within a few seconds and be small (headers of 8 KiB, no body); at most a
// few dozen connections are served at once, and one client (one remote address) holds at most 4
// of them; connections past either limit are closed as soon as they are accepted, so a client
// with many slow connections cannot keep the others' requests waiting.
class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> Start(const ListenAddress& address,
                                                   HttpRequestHandler handler);
  // A handler that reads the target only.
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

}  // namespace triage::daemon
