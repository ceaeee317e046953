// Boost.Beast is used here and nowhere else: its headers are slow to compile, and the rest of
// the daemon sees only http.h.
#include "http.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <thread>

namespace triage::daemon::detail {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

constexpr auto kRequestTimeout = std::chrono::seconds(5);
constexpr size_t kMaxConnections = 32;
// Connections one client (one remote address) may hold at once: one client with many slow
// connections takes at most these, and the others' scrapes and probes are still served.
// Connections past it are closed as soon as they are accepted.
constexpr size_t kMaxPerClient = 4;
constexpr uint32_t kHeaderLimit = 8 * 1024;
constexpr uint64_t kAnswerBodyLimit = 64 * 1024;

Result<uint16_t> ParsePort(std::string_view text, std::string_view what) {
  if (text.empty() || text.size() > 5) return Status::InvalidInput(std::string(what) + ": expected a port");
  uint32_t port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Status::InvalidInput(std::string(what) + ": expected a port");
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port > 65535) return Status::InvalidInput(std::string(what) + ": port out of range");
  return static_cast<uint16_t>(port);
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

}  // namespace
}  // namespace triage::daemon::detail

namespace triage::daemon {

using namespace detail;  // the aliases and limits above

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const std::string what = "listen address '" + std::string(text) + "'";
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Status::InvalidInput(what + ": expected [ADDRESS]:PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return Status::InvalidInput(what + ": expected HOST:PORT (e.g. 127.0.0.1:9400)");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return Status::InvalidInput(what + ": an IPv6 address goes in brackets: [::1]:9400");
  }
  auto p = ParsePort(port, what);
  if (!p.ok()) return p.status();
  ListenAddress out;
  out.port = *p;
  if (host.empty()) {
    out.host = "0.0.0.0";
  } else if (host == "localhost") {
    out.host = "127.0.0.1";
  } else {
    boost::system::error_code ec;
    asio::ip::address a = asio::ip::make_address(std::string(host), ec);
    if (ec) return Status::InvalidInput(what + ": the host must be an IP address or localhost");
    out.host = a.to_string();
  }
  return out;
}

bool IsLoopback(const ListenAddress& address) {
  boost::system::error_code ec;
  const asio::ip::address a = asio::ip::make_address(address.host, ec);
  if (ec) return false;
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

}  // namespace triage::daemon

namespace triage::daemon::detail {

Result<HttpUrl> ParseHttpUrl(std::string_view text) {
  const std::string what = "URL '" + std::string(text) + "'";
  for (unsigned char c : text)
    if (c <= ' ' || c == 0x7f) return Status::InvalidInput(what + ": spaces or control characters");
  const bool https = StartsWithNoCase(text, "https://");
  if (!https && !StartsWithNoCase(text, "http://"))
    return Status::InvalidInput(what + ": expected http:// or https://HOST[:PORT]/PATH");
  std::string_view rest = text.substr(https ? 8 : 7);
  const size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (authority.find('@') != std::string_view::npos)
    return Status::InvalidInput(what + ": credentials in the URL are not supported");
  HttpUrl url;
  url.https = https;
  url.port = https ? 443 : 80;
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::InvalidInput(what + ": unclosed [");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return Status::InvalidInput(what + ": expected :PORT after ]");
      port = authority.substr(close + 2);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return Status::InvalidInput(what + ": no host");
  url.host = std::string(host);
  if (!port.empty()) {
    auto p = ParsePort(port, what);
    if (!p.ok()) return p.status();
    url.port = *p;
  }
  if (const size_t hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
  if (target.empty()) target = "/";
  url.target = target.front() == '/' ? std::string(target) : "/" + std::string(target);
  return url;
}

// ---------------------------------------------------------------------------------------------
// server

}  // namespace triage::daemon::detail

namespace triage::daemon {

struct HttpServer::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  HttpRequestHandler handler;
  // Touched on the server's thread only: connections being served, in all and per client.
  size_t active = 0;
  std::map<asio::ip::address, size_t> per_client;
  std::thread thread;

  void Accept();
  void Finished(const asio::ip::address& client) {
    --active;
    if (auto it = per_client.find(client); it != per_client.end() && --it->second == 0)
      per_client.erase(it);
  }
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, asio::ip::address client, HttpServer::Impl& server)
      : stream_(std::move(socket)), client_(std::move(client)), server_(server) {}

  void Read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    stream_.expires_after(kRequestTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) return Close();
    const auto& req = parser_->get();
    response_ = {};
    response_.version(req.version());
    response_.keep_alive(req.keep_alive());
    response_.set(http::field::server, "triage");
    const bool head = req.method() == http::verb::head;
    if (!head && req.method() != http::verb::get) {
      response_.result(http::status::method_not_allowed);
      response_.set(http::field::allow, "GET, HEAD");
      response_.set(http::field::content_type, "text/plain; charset=utf-8");
      response_.body() = "only GET and HEAD\n";
    } else {
      HttpResponse r;
      try {
        auto field = [&req](http::field f) {
          const auto it = req.find(f);
          return it == req.end() ? std::string_view()
                                 : std::string_view(it->value().data(), it->value().size());
        };
        r = server_.handler(HttpRequest{std::string_view(req.target().data(), req.target().size()),
                                        field(http::field::authorization), field(http::field::cookie)});
      } catch (const std::exception& e) {
        r = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
      }
      response_.result(static_cast<unsigned>(r.status));
      response_.set(http::field::content_type, r.content_type);
      for (const auto& [name, value] : r.headers) response_.set(name, value);
      response_.body() = std::move(r.body);
    }
    response_.prepare_payload();
    if (head) response_.body().clear();  // the length stays that of the GET's body
    stream_.expires_after(kRequestTimeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code wec, size_t) {
                        if (wec || !self->response_.keep_alive()) return self->Close();
                        self->Read();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    server_.Finished(client_);
  }

  beast::tcp_stream stream_;
  const asio::ip::address client_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

// Always accepting: a connection past the limits (all of them, or its client's share) is
// closed at once, so that the kernel's queue never holds another client's request behind them.
void HttpServer::Impl::Accept() {
  if (!acceptor.is_open()) return;
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    boost::system::error_code peer_ec;
    const tcp::endpoint peer = ec ? tcp::endpoint() : socket.remote_endpoint(peer_ec);
    if (!ec && !peer_ec) {
      size_t& held = per_client[peer.address()];
      if (held < kMaxPerClient && active < kMaxConnections) {
        ++held;
        ++active;
        std::make_shared<Session>(std::move(socket), peer.address(), *this)->Read();
      } else {
        if (held == 0) per_client.erase(peer.address());
        boost::system::error_code ignored;
        socket.close(ignored);
      }
    }
    Accept();
  });
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ListenAddress& address,
                                                      HttpHandler handler) {
  return Start(address, [handler = std::move(handler)](const HttpRequest& request) {
    return handler(request.target);
  });
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const ListenAddress& address,
                                                      HttpRequestHandler handler) {
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address.host, ec);
  if (ec) return Status::InvalidInput(address.host + ": not an IP address");
  const tcp::endpoint endpoint(ip, address.port);
  const std::string where = "listening on " + address.host + ":" + std::to_string(address.port);
  if (impl->acceptor.open(endpoint.protocol(), ec); ec) return Status::Io(where + ": " + ec.message());
  impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (impl->acceptor.bind(endpoint, ec); ec) return Status::Io(where + ": " + ec.message());
  if (impl->acceptor.listen(asio::socket_base::max_listen_connections, ec); ec)
    return Status::Io(where + ": " + ec.message());
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    try {
      raw->io.run();
    } catch (const std::exception&) {
      // A handler that throws ends the server; the daemon goes on without /metrics.
    }
  });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  asio::post(impl_->io, [impl = impl_.get()] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
    impl->io.stop();
  });
  impl_->thread.join();
}

std::string HttpServer::bound() const {
  boost::system::error_code ec;
  const tcp::endpoint ep = impl_->acceptor.local_endpoint(ec);
  if (ec) return "";
  const std::string host = ep.address().is_v6() ? "[" + ep.address().to_string() + "]"
                                                : ep.address().to_string();
  return host + ":" + std::to_string(ep.port());
}

}  // namespace triage::daemon

namespace triage::daemon::detail {

// ---------------------------------------------------------------------------------------------
// client

namespace {

// The certificate check of an https POST: the chain against the CA file or the system's store,
// the name (or address) against the URL's host, which also goes out as SNI.
Status PrepareTls(ssl::context& ctx, SSL* ssl, const HttpUrl& url, const std::string& ca_file,
                  const std::string& where) {
  boost::system::error_code ec;
  ctx.set_verify_mode(ssl::verify_peer, ec);
  if (ca_file.empty()) {
    ctx.set_default_verify_paths(ec);
  } else {
    ctx.load_verify_file(ca_file, ec);
    if (ec) return Status::InvalidInput(where + ": CA file " + ca_file + ": " + ec.message());
  }
  if (ec) return Status::Unavailable(where + ": the system's certificate store: " + ec.message());
  SSL_set_verify(ssl, SSL_VERIFY_PEER, nullptr);
  boost::system::error_code not_ip;
  asio::ip::make_address(url.host, not_ip);
  if (not_ip) {
    if (SSL_set_tlsext_host_name(ssl, url.host.c_str()) != 1 || SSL_set1_host(ssl, url.host.c_str()) != 1)
      return Status::InvalidInput(where + ": host name refused by OpenSSL");
  } else if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url.host.c_str()) != 1) {
    return Status::InvalidInput(where + ": address refused by OpenSSL");
  }
  return Status::Ok();
}

// Why a handshake failed: the certificate's check when that is what failed.
std::string HandshakeError(SSL* ssl, const beast::error_code& ec) {
  const long verdict = SSL_get_verify_result(ssl);
  if (verdict != X509_V_OK)
    return std::string("certificate not trusted: ") + X509_verify_cert_error_string(verdict);
  return ec.message();
}

// The exchange over a connected `stream` (TCP, or TLS after its handshake): the request, then the
// answer; `result` set when it ends.
template <class Stream>
void Exchange(Stream& stream, http::request<http::string_body>& req, beast::flat_buffer& buffer,
              http::response_parser<http::string_body>& parser, std::optional<Status>& result,
              const std::function<void(const char*, beast::error_code)>& fail,
              const std::string& where) {
  http::async_write(stream, req, [&](beast::error_code wec, size_t) {
    if (wec) return fail("send", wec);
    http::async_read(stream, buffer, parser, [&](beast::error_code rec, size_t) {
      if (rec) return fail("answer", rec);
      const unsigned status = parser.get().result_int();
      if (status >= 200 && status < 300) {
        result = Status::Ok();
      } else {
        result = Status::Unavailable(where + ": answered " + std::to_string(status) + " " +
                                     std::string(http::obsolete_reason(parser.get().result())));
      }
    });
  });
}

}  // namespace

Status HttpPost(const HttpUrl& url, std::string_view content_type, std::string_view body,
                double timeout_seconds, const std::string& ca_file) {
  const std::string where = (url.https ? "https://" : "http://") + url.host + ":" + std::to_string(url.port);
  const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(timeout_seconds));
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  asio::io_context io{1};
  tcp::resolver resolver(io);
  ssl::context ctx(ssl::context::tls_client);
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  if (url.https) {
    Status tls = PrepareTls(ctx, stream.native_handle(), url, ca_file, where);
    if (!tls.ok()) return tls;
  }
  beast::tcp_stream& tcp_layer = beast::get_lowest_layer(stream);
  beast::flat_buffer buffer;
  http::request<http::string_body> req{http::verb::post, url.target, 11};
  req.set(http::field::host, url.host + ":" + std::to_string(url.port));
  req.set(http::field::user_agent, "triage");
  req.set(http::field::content_type, std::string(content_type));
  req.keep_alive(false);
  req.body() = std::string(body);
  req.prepare_payload();
  http::response_parser<http::string_body> parser;
  parser.body_limit(kAnswerBodyLimit);

  std::optional<Status> result;
  const std::function<void(const char*, beast::error_code)> fail = [&](const char* step,
                                                                       beast::error_code ec) {
    if (ec == beast::error::timeout) {
      result = Status::Timeout(where + ": no answer within the deadline (" + step + ")");
    } else if (std::string_view(step) == "TLS handshake") {
      result = Status::Unavailable(where + ": " + step + ": " + HandshakeError(stream.native_handle(), ec));
    } else {
      result = Status::Unavailable(where + ": " + step + ": " + ec.message());
    }
  };
  resolver.async_resolve(url.host, std::to_string(url.port),
                         [&](beast::error_code ec, tcp::resolver::results_type endpoints) {
    if (ec) return fail("resolve", ec);
    tcp_layer.expires_at(deadline);
    tcp_layer.async_connect(endpoints, [&](beast::error_code cec, const tcp::endpoint&) {
      if (cec) return fail("connect", cec);
      if (!url.https) return Exchange(tcp_layer, req, buffer, parser, result, fail, where);
      stream.async_handshake(ssl::stream_base::client, [&](beast::error_code hec) {
        if (hec) return fail("TLS handshake", hec);
        Exchange(stream, req, buffer, parser, result, fail, where);
      });
    });
  });
  io.run_until(deadline);
  if (!result) {
    // Still resolving (the only step the stream's timer does not bound).
    resolver.cancel();
    return Status::Timeout(where + ": no answer within the deadline (resolve)");
  }
  beast::error_code ignored;
  tcp_layer.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return *result;
}

}  // namespace triage::daemon::detail
