// `triage serve`'s pages: routing, the incident list and the job page.
#include "site.h"

#include <cstdio>
#include <ctime>
#include <optional>
#include <set>

#include "triage/page/page.h"

namespace triage::page {
namespace detail {

std::string Filters::Query() const {
  std::string q;
  auto add = [&q](const char* name, const std::string& value) {
    if (value.empty()) return;
    if (!q.empty()) q += '&';
    q.append(name).append("=").append(QueryValue(value));
  };
  add("cause", cause);
  add("host", host);
  add("service", service);
  add("since", since);
  return q;
}

namespace {

bool OnHost(const store::StoredIncident& s, const std::string& host) {
  if (s.summary.host == host) return true;
  for (const auto& h : s.hosts)
    if (h.host == host) return true;
  return false;
}

}  // namespace

Selection Select(store::Store& store, const Filters& filters) {
  Selection out;
  store::HistoryFilter f;
  if (!filters.cause.empty()) f.cause = filters.cause;
  if (!filters.service.empty()) f.service = filters.service;
  if (!filters.since.empty()) {
    auto since = store::ParseSince(filters.since, static_cast<int64_t>(std::time(nullptr)));
    if (!since.ok()) {
      out.error = since.status().message();
      out.bad_request = true;
      return out;
    }
    f.since = *since;
  }
  // A host filter is applied to each incident's hosts, so more are read than are kept.
  f.limit = filters.host.empty() ? int64_t(kMaxSelected) + 1 : 0;
  auto rows = store.History(f);
  if (!rows.ok()) {
    out.error = rows.status().message();
    return out;
  }
  for (const auto& row : *rows) {
    if (out.incidents.size() == kMaxSelected) {
      out.more = true;
      break;
    }
    auto stored = store.GetIncident(row.id);
    if (!stored.ok()) {
      out.error = stored.status().message();
      return out;
    }
    if (!filters.host.empty() && !OnHost(*stored, filters.host)) continue;
    out.incidents.push_back(std::move(*stored));
  }
  return out;
}

}  // namespace detail

namespace {

using detail::Filters;
using detail::Selection;

Page ErrorPage(int status, std::string_view what) {
  return {status,
          detail::Document("triage: " + std::string(what),
                           detail::Navigation() + "<main><h1>" + HtmlText(what) + "</h1></main>")};
}

Filters FiltersOf(const detail::Target& t) {
  Filters f;
  auto get = [&t](const char* name) {
    auto it = t.query.find(name);
    return it == t.query.end() ? std::string() : it->second;
  };
  f.cause = get("cause");
  f.host = get("host");
  f.service = get("service");
  f.since = get("since");
  return f;
}

std::string FilterForm(const Filters& f, const char* action) {
  auto input = [](const char* name, const std::string& value, const char* hint) {
    return std::string("<label>") + name + " <input name=\"" + name + "\" value=\"" +
           HtmlText(value) + "\" placeholder=\"" + hint + "\"></label>";
  };
  return std::string("<form class=\"filters\" method=\"get\" action=\"") + action + "\">" +
         input("cause", f.cause, "cuda or cuda.oom") + input("host", f.host, "node name") +
         input("service", f.service, "service") + input("since", f.since, "2d, 12h, 2026-12-01") +
         "<button>Show</button></form>";
}

std::string HostsOf(const store::StoredIncident& s) {
  if (s.hosts.size() <= 1) return HtmlText(s.summary.host);
  return HtmlText(s.hosts.front().host) + " and " + std::to_string(s.hosts.size() - 1) + " more";
}

std::string IncidentRows(const std::vector<store::StoredIncident>& incidents) {
  std::string out =
      "<table class=\"incidents\"><tr><th>#</th><th>last seen</th><th>service</th>"
      "<th>host</th><th>cause</th><th>what</th><th>seen</th><th>status</th><th>job</th></tr>";
  for (const auto& s : incidents) {
    const std::string id = std::to_string(s.summary.id);
    out += "<tr class=\"incident\"><td><a href=\"/incident/" + id + "\">" + id + "</a></td><td>" +
           HtmlText(s.summary.last_seen) + "</td><td>" + HtmlText(s.summary.service) + "</td><td>" +
           HostsOf(s) + "</td><td><code>" + HtmlText(s.summary.top_cause) + "</code></td><td>" +
           HtmlText(s.summary.title) + "</td><td class=\"n\">" +
           std::to_string(s.summary.occurrences) + "</td><td>" + HtmlText(s.summary.status) +
           "</td><td>" +
           (s.incident.ranks.empty() ? std::string()
                                     : "<a href=\"/job/" + id + "\">" +
                                           std::to_string(s.incident.ranks.size()) + " ranks</a>") +
           "</td></tr>";
  }
  return out + "</table>";
}

Page ListPage(store::Store& store, const Filters& f, bool by_hour) {
  Selection sel = detail::Select(store, f);
  if (!sel.error.empty()) return ErrorPage(sel.bad_request ? 400 : 500, sel.error);
  std::string body = detail::Navigation() + "<main><h1>Incidents</h1>" + FilterForm(f, "/");
  body +=
      "<p>" + std::to_string(sel.incidents.size()) + (sel.more ? " (the newest; more match)" : "") +
      (sel.incidents.size() == 1 ? " incident" : " incidents") + ". <a href=\"/hosts" +
      (f.Query().empty() ? "" : "?" + HtmlText(f.Query())) + "\">Hosts by cause</a> for these.</p>";
  const std::string query = f.Query().empty() ? "?" : "?" + f.Query() + "&";
  if (by_hour) {
    body += "<h2>Incidents per hour they were last seen, by cause</h2><p><a href=\"/" +
            HtmlText(query.substr(0, query.size() - 1)) + "\">Occurrences per day</a></p>" +
            detail::Bars(detail::IncidentsPerHour(sel.incidents));
  } else {
    const std::string since_day = f.since.empty() ? "" : [&] {
      auto s = store::ParseSince(f.since, static_cast<int64_t>(std::time(nullptr)));
      return s.ok() ? s->substr(0, 10) : std::string();
    }();
    auto counts = store.OccurrencesByDay(since_day);
    if (!counts.ok()) return ErrorPage(500, counts.status().message());
    body += "<h2>Occurrences per day, by cause</h2><p><a href=\"/" + HtmlText(query) +
            "by=hour\">Incidents per hour</a></p>" +
            detail::Bars(detail::OccurrencesPerDay(*counts, sel.incidents));
  }
  body += "<h2>Incidents</h2>" + IncidentRows(sel.incidents) + "</main>";
  return {200, detail::Document("triage: incidents", body)};
}

std::string RankRows(const core::Incident& inc) {
  std::string out =
      "<table class=\"ranks\"><tr><th>rank</th><th>state</th><th>first failure</th>"
      "<th>after</th><th>cause</th><th>what it did or missed</th></tr>";
  for (const auto& r : inc.ranks) {
    char after[32] = "";
    if (r.offset_seconds) std::snprintf(after, sizeof after, "+%.3f s", *r.offset_seconds);
    out += "<tr><td>" + HtmlText(r.actor) + "</td><td>" + HtmlText(r.state) + "</td><td>" +
           HtmlText(r.first_failure.value_or("")) + "</td><td class=\"n\">" + after +
           "</td><td><code>" + HtmlText(r.cause) + "</code></td><td>" + HtmlText(r.detail) +
           "</td></tr>";
  }
  return out + "</table>";
}

Page JobPage(store::Store& store, int64_t id) {
  auto stored = store.GetIncident(id);
  if (!stored.ok())
    return ErrorPage(stored.status().kind() == Status::Kind::kNotFound ? 404 : 500,
                     stored.status().message());
  const auto& inc = stored->incident;
  const std::string sid = std::to_string(id);
  std::string body = detail::Navigation() + "<main><h1>Job of incident <a href=\"/incident/" + sid +
                     "\">" + sid + "</a>: " + HtmlText(stored->summary.title) + "</h1>";
  std::string hosts;
  for (const auto& h : stored->hosts) hosts += (hosts.empty() ? "" : ", ") + HtmlText(h.host);
  body += "<p>" + HtmlText(inc.service) + " on " + (hosts.empty() ? HtmlText(inc.host) : hosts) +
          "; " + std::to_string(inc.ranks.size()) + " ranks in the timeline";
  if (inc.more_actors)
    body += ", " + std::to_string(inc.more_actors) + " more processes not listed";
  body += ".</p>";
  if (inc.ranks.empty()) body += "<p>This incident is no job's: it has no ranks.</p>";
  body += TimelineSvg(inc) + RankRows(inc) + "</main>";
  return {200, detail::Document("triage: job of incident " + sid, body)};
}

Page HostsPage(store::Store& store, const Filters& f) {
  Selection sel = detail::Select(store, f);
  if (!sel.error.empty()) return ErrorPage(sel.bad_request ? 400 : 500, sel.error);
  std::string body =
      detail::Navigation() + "<main><h1>Hosts by cause</h1>" + FilterForm(f, "/hosts");
  body += "<p>Occurrences of " + std::to_string(sel.incidents.size()) +
          (sel.more ? " (the newest)" : "") + " incidents, by host and first cause.</p>";
  body += detail::HostMatrix(sel.incidents) + "</main>";
  return {200, detail::Document("triage: hosts by cause", body)};
}

std::optional<int64_t> IdAfter(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = path.substr(prefix.size());
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

}  // namespace

Page Site::Get(std::string_view target) {
  const detail::Target t = detail::ParseTarget(target);
  if (t.path == "/") {
    auto by = t.query.find("by");
    return ListPage(store_, FiltersOf(t), by != t.query.end() && by->second == "hour");
  }
  if (t.path == "/hosts") return HostsPage(store_, FiltersOf(t));
  if (auto id = IdAfter(t.path, "/incident/")) {
    auto stored = store_.GetIncident(*id);
    if (!stored.ok())
      return ErrorPage(stored.status().kind() == Status::Kind::kNotFound ? 404 : 500,
                       stored.status().message());
    return {200, IncidentDocument(*stored, /*links=*/true)};
  }
  if (auto id = IdAfter(t.path, "/job/")) return JobPage(store_, *id);
  return ErrorPage(404, "not found: " + t.path);
}

}  // namespace triage::page
