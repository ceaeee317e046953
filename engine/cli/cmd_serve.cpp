// `triage serve`: the store's incidents as pages in a browser, read-only.
#include <pthread.h>
#include <signal.h>

#include <cctype>
#include <fstream>
#include <iostream>
#include <memory>

#include "history_common.h"
#include "triage/daemon/http_server.h"
#include "triage/page/page.h"

namespace triage::cli {
namespace {

constexpr const char* kUsage =
    "Usage: triage serve [--listen ADDRESS:PORT] [--token-file FILE | --token TOKEN]\n"
    "                    [--db PATH]\n\n"
    "Serves the incident store as pages, read-only, until SIGINT or SIGTERM: the incidents with\n"
    "filters (cause, host, service, since) and their occurrences per day by cause, each incident\n"
    "(the page of `show --html`), a job's timeline across its ranks, and hosts by cause with the\n"
    "versions each host's incidents show (whether a failure follows a node or a version). HTML\n"
    "and inline SVG only: no script, nothing loaded from elsewhere, every log text escaped.\n\n"
    "It listens on 127.0.0.1:8470 unless told otherwise. Any address that is not loopback needs\n"
    "an access token (--token-file, or --token: 16 or more letters, digits, '-', '.', '_' or\n"
    "'~'), and with a token set every request must carry it: an 'Authorization: Bearer TOKEN'\n"
    "header, or the cookie that opening any page once with ?token=TOKEN sets. It prints\n"
    "'serving on http://ADDRESS/' once it listens.\n\n";

constexpr const char* kDefaultListen = "127.0.0.1:8470";
constexpr const char* kCookie = "triage_token=";

// Letters, digits and -._~ only: a token is then the same in a header, a cookie and a URL's
// query, with nothing to encode.
bool TokenCharactersAllowed(const std::string& token) {
  if (token.size() < 16) return false;
  for (unsigned char c : token)
    if (!std::isalnum(c) && c != '-' && c != '.' && c != '_' && c != '~') return false;
  return true;
}

// Compares in time that depends on the lengths only.
bool SameToken(std::string_view given, const std::string& token) {
  if (given.size() != token.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ token[i]);
  return diff == 0;
}

std::string_view CookieValue(std::string_view header) {
  size_t at = 0;
  while (at < header.size()) {
    while (at < header.size() && (header[at] == ' ' || header[at] == ';')) ++at;
    const size_t end = std::min(header.find(';', at), header.size());
    const std::string_view pair = header.substr(at, end - at);
    if (pair.starts_with(kCookie)) return pair.substr(std::string_view(kCookie).size());
    at = end;
  }
  return {};
}

// The value of the target's token=... parameter, as sent; empty when it has none.
std::string_view QueryToken(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (pair.starts_with("token=")) return pair.substr(6);
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return {};
}

// The target with its token=... parameter taken out (the raw text, still encoded).
std::string WithoutToken(std::string_view target) {
  const size_t q = target.find('?');
  std::string out(target.substr(0, q));
  if (q == std::string_view::npos) return out;
  std::string query;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (!pair.starts_with("token=") && !pair.empty()) {
      if (!query.empty()) query += '&';
      query.append(pair);
    }
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return query.empty() ? out : out + "?" + query;
}

daemon::HttpResponse Secured(daemon::HttpResponse r) {
  r.headers.push_back({"Content-Security-Policy", page::kContentSecurityPolicy});
  r.headers.push_back({"X-Content-Type-Options", "nosniff"});
  r.headers.push_back({"Referrer-Policy", "no-referrer"});
  r.headers.push_back({"X-Frame-Options", "DENY"});
  r.headers.push_back({"Cache-Control", "no-store"});
  return r;
}

// Answers a request: the token checked (when one is set), then the page.
daemon::HttpResponse Answer(page::Site& site, const std::string& token,
                            const daemon::HttpRequest& req) {
  if (!token.empty()) {
    const std::string_view auth = req.authorization;
    const bool bearer = auth.starts_with("Bearer ") && SameToken(auth.substr(7), token);
    if (!bearer && !SameToken(CookieValue(req.cookie), token)) {
      if (!SameToken(QueryToken(req.target), token))
        return Secured({401, "text/plain; charset=utf-8",
                        "an access token is needed: 'Authorization: Bearer TOKEN', or open a page "
                        "once with ?token=TOKEN\n"});
      daemon::HttpResponse r{303, "text/plain; charset=utf-8", "see the page without its token\n"};
      // A path of this site only: "//host/..." would send the browser elsewhere.
      const std::string location = WithoutToken(req.target);
      const bool local = location.size() >= 1 && location[0] == '/' &&
                         (location.size() == 1 || (location[1] != '/' && location[1] != '\\'));
      r.headers.push_back({"Location", local ? location : "/"});
      r.headers.push_back({"Set-Cookie", kCookie + token + "; Path=/; HttpOnly; SameSite=Strict"});
      return Secured(std::move(r));
    }
  }
  page::Page p = site.Get(req.target);
  return Secured({p.status, "text/html; charset=utf-8", std::move(p.body)});
}

std::optional<std::string> ReadToken(const Args& args) {
  if (auto t = args.Get("token")) return *t;
  auto file = args.Get("token-file");
  if (!file) return std::string();
  std::ifstream in(*file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    PrintError("serve", "cannot read the token file " + *file);
    return std::nullopt;
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

int RunServe(const std::vector<std::string>& argv) {
  Args args;
  args.Option("listen", "ADDRESS:PORT",
              std::string("where to listen (default ") + kDefaultListen +
                  "; port 0: one the kernel picks)")
      .Option("token-file", "FILE", "the access token, the first line of FILE")
      .Option("token", "TOKEN",
              "the access token (visible to other users in ps: prefer --token-file)");
  AddDatabaseOptions(args);
  if (!args.Parse(argv)) {
    PrintError("serve", args.error());
    return kExitUsage;
  }
  if (args.help_requested()) {
    std::cout << kUsage << args.Help();
    return kExitOk;
  }
  if (!args.Positionals().empty()) {
    PrintError("serve", "takes no arguments (the store is --db)");
    return kExitUsage;
  }
  auto address = daemon::ParseListenAddress(args.Get("listen").value_or(kDefaultListen));
  if (!address.ok()) {
    PrintError("serve", address.status().message());
    return kExitUsage;
  }
  auto token = ReadToken(args);
  if (!token) return kExitUsage;
  if (!token->empty() && !TokenCharactersAllowed(*token)) {
    PrintError("serve", "the token must be 16 or more letters, digits, '-', '.', '_' or '~'");
    return kExitUsage;
  }
  if (token->empty() && !daemon::IsLoopback(*address)) {
    PrintError("serve", address->host +
                            " is not a loopback address: give an access token "
                            "(--token-file FILE) for anyone else to reach the pages");
    return kExitUsage;
  }
  auto store = OpenDatabase("serve", args, /*read_only=*/true);
  if (!store) return kExitUsage;
  auto held = std::make_shared<store::Store>(std::move(*store));
  auto site = std::make_shared<page::Site>(*held);
  // Blocked before the server's thread starts, so that it inherits the mask and only sigwait
  // below takes them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto server = daemon::HttpServer::Start(
      *address, [held, site, secret = *token](const daemon::HttpRequest& req) {
        return Answer(*site, secret, req);
      });
  if (!server.ok()) {
    PrintError("serve", server.status().message());
    return kExitUsage;
  }
  std::cout << "serving on http://" << (*server)->bound() << "/" << std::endl;
  int signal = 0;
  sigwait(&stop, &signal);
  (*server)->Stop();
  return kExitOk;
}

}  // namespace

TRIAGE_REGISTER_COMMAND("serve", "the store's incidents as pages in a browser, read-only",
                        RunServe);

}  // namespace triage::cli
