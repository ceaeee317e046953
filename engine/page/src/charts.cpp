// Counts as pictures: occurrences per day by cause, and hosts by cause.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "site.h"
#include "triage/page/page.h"

namespace triage::page::detail {
namespace {

constexpr int kChartHeight = 160;
constexpr int kBarWidth = 14;
constexpr int kGap = 4;
constexpr int kAxis = 40;

std::string FirstCause(const store::StoredIncident& s) {
  return s.incident.causes.empty() ? s.summary.top_cause : s.incident.causes.front().cause;
}

std::string Legend(const std::set<std::string>& causes) {
  std::string out = "<div class=\"legend\">";
  for (const auto& c : causes)
    out += "<span><i style=\"background:" + std::string(CauseColour(c)) + "\"></i>" + HtmlText(c) +
           "</span>";
  return out + "</div>";
}

}  // namespace

Buckets OccurrencesPerDay(const std::vector<store::DayCount>& counts,
                          const std::vector<store::StoredIncident>& incidents) {
  std::map<int64_t, std::string> cause_of;
  for (const auto& s : incidents) cause_of[s.summary.id] = FirstCause(s);
  Buckets out;
  for (const auto& c : counts)
    if (auto it = cause_of.find(c.incident_id); it != cause_of.end())
      out[c.day][it->second] += c.count;
  return out;
}

Buckets IncidentsPerHour(const std::vector<store::StoredIncident>& incidents) {
  Buckets out;
  for (const auto& s : incidents)
    if (s.summary.last_seen.size() >= 13) ++out[s.summary.last_seen.substr(0, 13)][FirstCause(s)];
  return out;
}

std::string Bars(const Buckets& buckets, size_t keep) {
  if (buckets.empty()) return "<p class=\"chart-empty\">Nothing counted in this time.</p>";
  const Buckets shown(
      std::prev(buckets.end(), static_cast<std::ptrdiff_t>(std::min(keep, buckets.size()))),
      buckets.end());
  int64_t top = 1;
  std::set<std::string> causes;
  for (const auto& [day, by_cause] : shown) {
    int64_t sum = 0;
    for (const auto& [cause, n] : by_cause) {
      sum += n;
      causes.insert(cause);
    }
    top = std::max(top, sum);
  }
  const int width = kAxis + static_cast<int>(shown.size()) * (kBarWidth + kGap) + 60;
  const int height = kChartHeight + 70;
  std::string svg = "<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"counts over time by cause\">";
  svg += "<text x=\"0\" y=\"12\">" + std::to_string(top) + "</text><text x=\"0\" y=\"" +
         std::to_string(kChartHeight + 10) + "\">0</text>";
  int x = kAxis;
  for (const auto& [day, by_cause] : shown) {
    double y = 10 + kChartHeight;
    svg += "<g class=\"bar\" data-at=\"" + HtmlText(day) + "\">";
    for (const auto& [cause, n] : by_cause) {
      const double h = double(n) * kChartHeight / double(top);
      y -= h;
      svg += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
             std::to_string(kBarWidth) + "\" height=\"" + std::to_string(h) + "\" fill=\"" +
             CauseColour(cause) + "\"><title>" +
             HtmlText(day + ": " + cause + ", " + std::to_string(n)) + "</title></rect>";
    }
    svg +=
        "<text transform=\"translate(" + std::to_string(x + 10) + "," +
        std::to_string(kChartHeight + 16) + ") rotate(60)\">" +
        HtmlText(day.size() > 10 ? day.substr(5, 5) + " " + day.substr(11) + "h" : day.substr(5)) +
        "</text></g>";
    x += kBarWidth + kGap;
  }
  return svg + "</svg>" + Legend(causes);
}

namespace {

// The version columns, in this order, where some host's incidents show them.
constexpr const char* kVersionPackages[] = {"driver", "cuda", "nccl", "torch", "vllm", "sglang"};

struct HostRow {
  std::map<std::string, int64_t> by_cause;                // occurrences
  std::map<std::string, std::set<std::string>> versions;  // package -> versions shown
};

// Whether `cause` follows one node, or one version of a package that the hosts it was seen on
// share and no other host shows.
std::string Follows(const std::string& cause, const std::map<std::string, HostRow>& hosts,
                    const std::vector<std::string>& packages) {
  std::set<std::string> with;
  for (const auto& [host, row] : hosts)
    if (row.by_cause.count(cause)) with.insert(host);
  if (hosts.size() > 1 && with.size() == 1)
    return "follows a node: only on " + *with.begin() + " of " + std::to_string(hosts.size()) +
           " hosts";
  for (const auto& package : packages) {
    std::set<std::string> shared;
    bool first = true, known = true;
    for (const auto& host : with) {
      auto it = hosts.at(host).versions.find(package);
      if (it == hosts.at(host).versions.end() || it->second.size() != 1) {
        known = false;
        break;
      }
      if (first)
        shared = it->second;
      else if (shared != it->second)
        shared.clear();
      first = false;
    }
    if (!known || shared.size() != 1) continue;
    bool elsewhere = false, others_known = false;
    for (const auto& [host, row] : hosts) {
      if (with.count(host)) continue;
      auto it = row.versions.find(package);
      if (it == row.versions.end()) continue;
      others_known = true;
      elsewhere = elsewhere || it->second.count(*shared.begin());
    }
    if (others_known && !elsewhere)
      return "follows " + package + " " + *shared.begin() + ": on the " +
             std::to_string(with.size()) + " hosts with it, on none of the others";
  }
  if (with.size() == hosts.size()) return "on every host";
  return "on " + std::to_string(with.size()) + " of " + std::to_string(hosts.size()) +
         " hosts, with no node or version of their own";
}

}  // namespace

std::string HostMatrix(const std::vector<store::StoredIncident>& incidents) {
  std::map<std::string, HostRow> hosts;
  std::map<std::string, int64_t> cause_total;
  for (const auto& s : incidents) {
    const std::string cause = FirstCause(s);
    for (const auto& h : s.hosts) {
      hosts[h.host].by_cause[cause] += h.occurrences;
      cause_total[cause] += h.occurrences;
    }
    // The versions are the latest occurrence's, on the incident's latest host.
    for (const auto& v : s.incident.versions)
      hosts[s.incident.host].versions[v.package].insert(v.version);
  }
  if (hosts.empty()) return "<p>No incidents.</p>";
  std::vector<std::string> packages;
  for (const char* p : kVersionPackages)
    for (const auto& [host, row] : hosts)
      if (row.versions.count(p)) {
        packages.push_back(p);
        break;
      }
  std::vector<std::string> causes;
  for (const auto& [cause, n] : cause_total) causes.push_back(cause);
  std::sort(causes.begin(), causes.end(), [&](const auto& a, const auto& b) {
    return cause_total[a] != cause_total[b] ? cause_total[a] > cause_total[b] : a < b;
  });
  std::string out = "<table class=\"matrix\"><tr><th>host</th>";
  for (const auto& p : packages) out += "<th class=\"version\">" + HtmlText(p) + "</th>";
  for (const auto& c : causes) out += "<th><code>" + HtmlText(c) + "</code></th>";
  out += "</tr>";
  for (const auto& [host, row] : hosts) {
    out += "<tr class=\"host\"><td><a href=\"/?host=" + QueryValue(host) + "\">" + HtmlText(host) +
           "</a></td>";
    for (const auto& p : packages) {
      std::string v;
      if (auto it = row.versions.find(p); it != row.versions.end())
        for (const auto& one : it->second) v += (v.empty() ? "" : ", ") + one;
      out += "<td>" + HtmlText(v) + "</td>";
    }
    for (const auto& c : causes) {
      auto it = row.by_cause.find(c);
      out += it == row.by_cause.end()
                 ? "<td></td>"
                 : "<td class=\"n\" style=\"background:" + std::string(CauseColour(c)) + "22\">" +
                       std::to_string(it->second) + "</td>";
    }
    out += "</tr>";
  }
  out += "</table><ul class=\"follows\">";
  for (const auto& c : causes)
    out +=
        "<li><code>" + HtmlText(c) + "</code>: " + HtmlText(Follows(c, hosts, packages)) + "</li>";
  return out + "</ul>";
}

}  // namespace triage::page::detail
