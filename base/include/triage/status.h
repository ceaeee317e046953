// Status and Result<T>: the one error type of triage.
//
// No exception crosses a library boundary: every fallible public function returns a Status or a
// Result<T>. A Status carries a kind (what went wrong, for callers to branch on) and a message
// (for people: "what: why"). Library code never prints; the CLI decides how to show a Status.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace triage {

class [[nodiscard]] Status {
 public:
  enum class Kind { kOk, kInvalidInput, kNotFound, kIo, kUnavailable, kCorrupt, kTimeout, kBusy };

  Status() = default;  // ok

  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string msg) { return Status(Kind::kInvalidInput, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Kind::kNotFound, std::move(msg)); }
  static Status Io(std::string msg) { return Status(Kind::kIo, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Kind::kUnavailable, std::move(msg)); }
  static Status Corrupt(std::string msg) { return Status(Kind::kCorrupt, std::move(msg)); }
  static Status Timeout(std::string msg) { return Status(Kind::kTimeout, std::move(msg)); }
  static Status Busy(std::string msg) { return Status(Kind::kBusy, std::move(msg)); }

  bool ok() const { return kind_ == Kind::kOk; }
  Kind kind() const { return kind_; }
  const std::string& message() const { return message_; }

  // "what: why" with a prefix naming the caller's context, e.g. Annotate("rules/cuda.toml:42").
  // A message that already starts with that context ("/x.db: ...") is left as it is, so that a
  // path is not named twice.
  Status Annotate(const std::string& context) const {
    if (ok()) return *this;
    if (message_.size() > context.size() && message_.compare(0, context.size(), context) == 0 &&
        message_[context.size()] == ':')
      return *this;
    return Status(kind_, context + ": " + message_);
  }

 private:
  Status(Kind kind, std::string msg) : kind_(kind), message_(std::move(msg)) {}
  Kind kind_ = Kind::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace triage
