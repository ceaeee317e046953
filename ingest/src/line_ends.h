// How a source ends its lines: with '\n' (a '\r' before it is part of the end), or with a lone
// '\r' (classic Mac OS text, some serial consoles and device logs), which the framer alone would
// read as one endless line.
//
// Decided once per source, from its first bytes: they are held (at most kDecideBytes) until a
// '\n' comes, which means '\n' ends lines and the bytes pass on untouched from then on. When
// kDecideBytes, the end of input or a flush come first, a lone '\r' among the held bytes means
// lone '\r's end lines: from then on every '\r' not followed by '\n' is passed on as '\n', byte
// for byte, so offsets and byte counts stay those of the input ("\r\n" still ends one line). A
// '\r' that ends a buffer waits for the next byte in that mode. Bytes before a source's first
// '\n' are held by the framer anyway (it frames nothing before a line end), so the decision adds
// no delay to a source with '\n' line ends. Not thread-safe; one per source.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace triage::ingest::detail {

class LineEnds {
 public:
  static constexpr size_t kDecideBytes = 64 << 10;

  // The bytes to frame for `bytes` (maybe none yet): `bytes` itself, or a view of a buffer of
  // this object valid until the next call.
  std::string_view Next(std::string_view bytes) {
    if (mode_ == Mode::kNewline) return bytes;
    if (mode_ == Mode::kCarriageReturn) return Translate(bytes);
    if (std::memchr(bytes.data(), '\n', bytes.size()) != nullptr) {
      mode_ = Mode::kNewline;
      if (held_.empty()) return bytes;
      out_.assign(held_);
      out_.append(bytes);
      Release(held_);
      return out_;
    }
    held_.append(bytes);
    if (held_.size() < kDecideBytes) return {};
    return Decide();
  }

  // The end of input (`end` true), or a flush of a quiet source: what is still held is passed
  // on, the way of line ends decided if it was not yet; a '\r' that ended the input ends its
  // last line (after a flush it still waits for the next byte).
  std::string_view Drain(bool end) {
    std::string_view out;
    if (mode_ == Mode::kUndecided) out = Decide();
    if (end && cr_held_) {
      cr_held_ = false;
      if (out.data() != out_.data()) out_.assign(out);
      out_.push_back('\n');
      out = out_;
    }
    return out;
  }

  // True while bytes fed have not been passed on.
  bool holding() const { return !held_.empty() || cr_held_; }

 private:
  enum class Mode { kUndecided, kNewline, kCarriageReturn };

  // No '\n' among the held bytes: a '\r' among them decides for '\r' line ends.
  std::string_view Decide() {
    if (held_.find('\r') == std::string::npos) {
      mode_ = Mode::kNewline;
      out_.assign(held_);
      Release(held_);
      return out_;
    }
    mode_ = Mode::kCarriageReturn;
    const std::string_view translated = Translate(held_);  // a copy in out_: held_ has a '\r'
    Release(held_);
    return translated;
  }

  static void Release(std::string& s) {
    s.clear();
    s.shrink_to_fit();
  }

  // `bytes` with each lone '\r' as '\n'; a '\r' at its end waits for the next byte.
  std::string_view Translate(std::string_view bytes) {
    if (!cr_held_ && std::memchr(bytes.data(), '\r', bytes.size()) == nullptr) return bytes;
    out_.clear();
    if (cr_held_ && !bytes.empty()) {
      out_.push_back(bytes[0] == '\n' ? '\r' : '\n');
      cr_held_ = false;
    }
    for (size_t i = 0; i < bytes.size(); ++i) {
      char c = bytes[i];
      if (c == '\r') {
        if (i + 1 == bytes.size()) {
          cr_held_ = true;
          break;
        }
        if (bytes[i + 1] != '\n') c = '\n';
      }
      out_.push_back(c);
    }
    return out_;
  }

  Mode mode_ = Mode::kUndecided;
  std::string held_;  // the first bytes, while undecided
  std::string out_;
  bool cr_held_ = false;  // a '\r' that ended the last bytes, in the '\r' mode
};

}  // namespace triage::ingest::detail
