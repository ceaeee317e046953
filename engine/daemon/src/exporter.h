// Publishes the daemon's Metrics: `/metrics` and `/healthz` over HTTP when a listen address is
// set, and the textfile for node_exporter's textfile collector when a path is set, each on its
// own thread (a slow scraper or a slow disk never holds the daemon's loop).
//
//   /metrics   the exposition (text format 0.0.4)
//   /healthz   200 "ok" while the daemon's loop has run within `healthy_loop_seconds` and its
//              store can be reached, else 503 with the reason
//
// The textfile is rewritten every `textfile_seconds` and once more at Stop(), atomically: a
// temporary file in the same folder (a name the collector ignores: a dot first, no `.prom`)
// renamed over it, mode 0644 so that a collector running as another user can read it.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "http.h"
#include "triage/daemon/daemon.h"
#include "triage/daemon/metrics.h"

namespace triage::daemon::detail {

struct ExporterSettings {
  std::optional<ListenAddress> listen;
  std::string textfile;  // empty: none
  double textfile_seconds = 5;
  double healthy_loop_seconds = 30;
};

class MetricsExporter {
 public:
  using Log = std::function<void(LogRecord)>;  // thread-safe
  // `metrics` must outlive the exporter. Fails when the address cannot be bound.
  static Result<std::unique_ptr<MetricsExporter>> Start(const Metrics& metrics,
                                                        ExporterSettings settings, Log log);
  ~MetricsExporter();  // Stop()
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  void Stop();
  // The address served ("127.0.0.1:9400"), empty without one.
  std::string bound() const { return server_ ? server_->bound() : std::string(); }

 private:
  MetricsExporter(const Metrics& metrics, ExporterSettings settings, Log log);
  void TextfileLoop();
  void WriteTextfile();

  const Metrics& metrics_;
  const ExporterSettings settings_;
  Log log_;
  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string last_error_;  // of the textfile: logged when it changes
  std::thread textfile_thread_;
};

}  // namespace triage::daemon::detail
