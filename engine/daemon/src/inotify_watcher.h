// inotify behind a Boost.Asio stream descriptor: the daemon's only source of file-system news.
// One watch per folder (files are reported by name through their folder's watch), so a folder
// of thousands of files costs one watch. Not thread-safe: used from the daemon's event loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "triage/status.h"

namespace triage::daemon::detail {

struct FsChange {
  int wd = -1;        // the folder's watch (-1 with kOverflow)
  uint32_t mask = 0;  // IN_* bits
  uint32_t cookie = 0;
  std::string name;   // entry name inside the folder; empty for the folder itself
};

class InotifyWatcher {
 public:
  // Called with each batch of changes, in the order the kernel queued them.
  using Handler = std::function<void(std::vector<FsChange>& changes)>;

  static Result<std::unique_ptr<InotifyWatcher>> Create(boost::asio::io_context& io,
                                                        Handler handler);
  ~InotifyWatcher();
  InotifyWatcher(const InotifyWatcher&) = delete;
  InotifyWatcher& operator=(const InotifyWatcher&) = delete;

  // Watches a folder for entries created, written, closed, moved and deleted, and for the folder
  // itself going away. Returns the watch descriptor (the same one for a folder watched twice).
  Result<int> WatchFolder(const std::string& path);
  void Unwatch(int wd);
  // Starts reading (asynchronously); changes are delivered to the handler from io.run().
  void Start();
  void Stop();

 private:
  InotifyWatcher(boost::asio::io_context& io, int fd, Handler handler);
  void ReadMore();

  boost::asio::posix::stream_descriptor stream_;
  Handler handler_;
  std::vector<char> buffer_;
  bool stopped_ = false;
};

}  // namespace triage::daemon::detail
