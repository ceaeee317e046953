#include "exporter.h"

#include <chrono>

#include "triage/atomic_file.h"

namespace triage::daemon::detail {

namespace {

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace

MetricsExporter::MetricsExporter(const Metrics& metrics, ExporterSettings settings, Log log)
    : metrics_(metrics), settings_(std::move(settings)), log_(std::move(log)) {}

Result<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(const Metrics& metrics,
                                                                ExporterSettings settings,
                                                                Log log) {
  std::unique_ptr<MetricsExporter> e(new MetricsExporter(metrics, std::move(settings), std::move(log)));
  if (e->settings_.listen) {
    const Metrics* m = &metrics;
    const double healthy = e->settings_.healthy_loop_seconds;
    auto server = HttpServer::Start(*e->settings_.listen, [m, healthy](std::string_view target) {
      const std::string_view path = target.substr(0, target.find('?'));
      // The probe first: it never waits behind an exposition being built.
      if (path == "/healthz") {
        const double quiet = m->LoopQuietSeconds();
        if (quiet > healthy)
          return HttpResponse{503, "text/plain; charset=utf-8",
                              "the daemon's loop has not run for " +
                                  std::to_string(static_cast<int64_t>(quiet)) + " s\n"};
        const std::string store = m->StoreUnreachable();
        if (!store.empty())
          return HttpResponse{503, "text/plain; charset=utf-8",
                              "the store cannot be reached (what closes waits in memory): " +
                                  store + "\n"};
        return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
      }
      if (path == "/metrics") return HttpResponse{200, kExpositionType, m->Exposition()};
      return HttpResponse{404, "text/plain; charset=utf-8", "not found: try /metrics or /healthz\n"};
    });
    if (!server.ok()) return server.status();
    e->server_ = std::move(server).value();
  }
  if (!e->settings_.textfile.empty()) {
    MetricsExporter* raw = e.get();
    e->textfile_thread_ = std::thread([raw] { raw->TextfileLoop(); });
  }
  return e;
}

MetricsExporter::~MetricsExporter() { Stop(); }

void MetricsExporter::Stop() {
  if (server_) server_->Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (textfile_thread_.joinable()) textfile_thread_.join();
}

void MetricsExporter::TextfileLoop() {
  const auto every = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.05, settings_.textfile_seconds)));
  for (;;) {
    WriteTextfile();
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, every, [&] { return stop_; })) break;
  }
  WriteTextfile();  // the state at the stop
}

void MetricsExporter::WriteTextfile() {
  // 0644: the daemon's umask (the unit's 0077) would hide it from the collector.
  Status st = WriteFileAtomically(settings_.textfile, metrics_.Exposition(), 0644);
  const std::string error = st.ok() ? std::string() : st.message();
  if (error == last_error_) return;
  if (!error.empty()) {
    log_({LogRecord::Level::kError, "metrics.textfile", {{"error", error}}});
  } else {
    log_({LogRecord::Level::kInfo, "metrics.textfile", {{"path", settings_.textfile}, {"state", "written"}}});
  }
  last_error_ = error;
}

}  // namespace triage::daemon::detail
