// A job's processes on one time axis: a lane per rank, its first failure marked.
#include <algorithm>
#include <cstdio>

#include "html.h"
#include "triage/page/page.h"

namespace triage::page {
namespace {

constexpr int kLabelWidth = 190;
constexpr int kPlotWidth = 560;
constexpr int kDetailWidth = 330;
constexpr int kLane = 24;
constexpr int kTop = 26;

const char* StateColour(const std::string& state) {
  if (state == "failed") return "#d62728";
  if (state == "victim") return "#ff7f0e";
  if (state == "hung") return "#9467bd";
  if (state == "exited") return "#7f7f7f";
  return "#1f77b4";
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "+%.3f s" : "+%.1f s", s);
  return buf;
}

}  // namespace

std::string TimelineSvg(const core::Incident& incident) {
  const auto& ranks = incident.ranks;
  if (ranks.empty()) return "";
  double span = 0;
  bool timed = false;
  for (const auto& r : ranks)
    if (r.offset_seconds) {
      timed = true;
      span = std::max(span, *r.offset_seconds);
    }
  if (span <= 0) span = 1;
  const int width = kLabelWidth + kPlotWidth + kDetailWidth;
  const int height = kTop + kLane * static_cast<int>(ranks.size()) + 8;
  std::string svg = "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"timeline of the job's ranks\">";
  svg += "<text x=\"" + std::to_string(kLabelWidth) + "\" y=\"14\">" +
         std::string(timed ? "seconds after the job's first failure (0 to " + Number(span) + ")"
                           : "the order the ranks failed in (the log has no times)") +
         "</text>";
  for (size_t i = 0; i < ranks.size(); ++i) {
    const auto& r = ranks[i];
    const int y = kTop + kLane * static_cast<int>(i);
    const double at = timed               ? r.offset_seconds.value_or(0) / span
                      : ranks.size() == 1 ? 0
                                          : double(i) / double(ranks.size() - 1);
    const std::string x = Number(kLabelWidth + 8 + at * (kPlotWidth - 16));
    const std::string mid = std::to_string(y + kLane / 2);
    svg += "<g class=\"lane\" data-state=\"" + HtmlText(r.state) + "\">";
    svg += "<rect x=\"0\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(width) +
           "\" height=\"" + std::to_string(kLane) + "\" fill=\"" + (i % 2 ? "#ffffff" : "#f1f3f7") +
           "\"/>";
    svg += "<text class=\"actor\" x=\"6\" y=\"" + std::to_string(y + 16) + "\">" +
           HtmlText(r.actor) + "</text>";
    svg += "<line x1=\"" + std::to_string(kLabelWidth) + "\" x2=\"" +
           std::to_string(kLabelWidth + kPlotWidth) + "\" y1=\"" + mid + "\" y2=\"" + mid +
           "\" stroke=\"#c5cbd6\"/>";
    // A rank of a timed job whose own lines have no time: an open mark at the start.
    const bool untimed = timed && !r.offset_seconds;
    svg += "<circle cx=\"" + x + "\" cy=\"" + mid + "\" r=\"6\" " +
           (untimed ? "fill=\"#ffffff\" stroke=\"" : "fill=\"") + StateColour(r.state) +
           "\"><title>" +
           HtmlText(r.actor + ": " + r.state + (r.first_failure ? " at " + *r.first_failure : "")) +
           "</title></circle>";
    std::string detail = r.state;
    if (r.offset_seconds) detail.append(" ").append(Seconds(*r.offset_seconds));
    if (untimed) detail.append(" (no time in its lines)");
    if (!r.cause.empty()) detail.append(" ").append(r.cause);
    if (!r.detail.empty()) detail.append(": ").append(r.detail);
    if (detail.size() > 60) {
      size_t cut = 57;
      while (cut > 0 && (static_cast<unsigned char>(detail[cut]) & 0xC0) == 0x80) --cut;
      detail = detail.substr(0, cut) + "...";
    }
    svg += "<text x=\"" + std::to_string(kLabelWidth + kPlotWidth + 8) + "\" y=\"" +
           std::to_string(y + 16) + "\">" + HtmlText(detail) + "</text></g>";
  }
  svg += "</svg>";
  return svg;
}

}  // namespace triage::page
