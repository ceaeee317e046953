#include "inotify_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <cerrno>
#include <cstring>

namespace triage::daemon::detail {

namespace {
constexpr uint32_t kFolderMask = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |
                                 IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |
                                 IN_ATTRIB | IN_ONLYDIR;
}

Result<std::unique_ptr<InotifyWatcher>> InotifyWatcher::Create(boost::asio::io_context& io,
                                                               Handler handler) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return Status::Io(std::string("inotify_init1: ") + std::strerror(errno));
  return std::unique_ptr<InotifyWatcher>(new InotifyWatcher(io, fd, std::move(handler)));
}

InotifyWatcher::InotifyWatcher(boost::asio::io_context& io, int fd, Handler handler)
    : stream_(io, fd), handler_(std::move(handler)), buffer_(256 * 1024) {}

InotifyWatcher::~InotifyWatcher() { Stop(); }

Result<int> InotifyWatcher::WatchFolder(const std::string& path) {
  int wd = inotify_add_watch(stream_.native_handle(), path.c_str(), kFolderMask);
  if (wd < 0) {
    int err = errno;
    std::string why = std::strerror(err);
    if (err == ENOSPC) why += " (raise fs.inotify.max_user_watches)";
    return Status::Io(path + ": inotify_add_watch: " + why);
  }
  return wd;
}

void InotifyWatcher::Unwatch(int wd) {
  if (stream_.is_open()) inotify_rm_watch(stream_.native_handle(), wd);
}

void InotifyWatcher::Start() {
  stopped_ = false;
  ReadMore();
}

void InotifyWatcher::Stop() {
  stopped_ = true;
  if (stream_.is_open()) {
    boost::system::error_code ec;
    stream_.cancel(ec);
    stream_.close(ec);
  }
}

void InotifyWatcher::ReadMore() {
  if (stopped_) return;
  stream_.async_read_some(
      boost::asio::buffer(buffer_), [this](const boost::system::error_code& ec, size_t n) {
        if (ec || stopped_) return;  // cancelled on Stop(); nothing else fails on inotify reads
        std::vector<FsChange> changes;
        size_t pos = 0;
        while (pos + sizeof(inotify_event) <= n) {
          inotify_event ev;
          std::memcpy(&ev, buffer_.data() + pos, sizeof ev);
          FsChange c;
          c.wd = ev.wd;
          c.mask = ev.mask;
          c.cookie = ev.cookie;
          if (ev.len > 0) {
            const char* name = buffer_.data() + pos + sizeof(inotify_event);
            c.name.assign(name, strnlen(name, ev.len));
          }
          changes.push_back(std::move(c));
          pos += sizeof(inotify_event) + ev.len;
        }
        if (!changes.empty()) handler_(changes);
        ReadMore();
      });
}

}  // namespace triage::daemon::detail
