// The data-only pickle subset (pickle.h). Values are owned by the Pickle and pointed to, not
// copied, where the memo hands one out again (BINGET): a dict that names one list twice holds it
// twice.
#include "pickle.h"

#include <cstring>

namespace triage::ingest::detail {

namespace {

using Value = PickleValue*;
using Kind = PickleValue::Kind;

constexpr size_t kMaxValues = size_t(1) << 22;
constexpr size_t kMaxDepth = 64;

class Unpickler {
 public:
  explicit Unpickler(std::string_view s) : s_(s) {}

  Result<Pickle> Run() {
    while (p_ < s_.size()) {
      const auto op = static_cast<unsigned char>(s_[p_++]);
      if (op == '.') {
        if (stack_.size() != 1 || !marks_.empty()) return Fail("STOP with a stack of " + std::to_string(stack_.size()));
        out_.root = stack_.back();
        return std::move(out_);
      }
      if (!Step(op)) return Fail(error_.empty() ? "opcode 0x" + Hex(op) + " is not read" : error_);
      if (stack_.size() > kMaxValues || out_.values.size() > kMaxValues) return Fail("too many values");
    }
    return Fail("no STOP");
  }

 private:
  static std::string Hex(unsigned char c) {
    const char* d = "0123456789abcdef";
    return std::string{d[c >> 4], d[c & 15]};
  }
  Status Fail(const std::string& why) const {
    return Status::Corrupt("pickle at byte " + std::to_string(p_ ? p_ - 1 : 0) + ": " + why);
  }

  bool Need(size_t n) {
    if (s_.size() - p_ < n) {
      error_ = "cut short";
      return false;
    }
    return true;
  }
  uint64_t LittleEndian(size_t n) {
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= uint64_t(static_cast<unsigned char>(s_[p_ + k])) << (8 * k);
    p_ += n;
    return v;
  }
  Value Make(Kind kind) {
    out_.values.push_back(std::make_unique<PickleValue>());
    out_.values.back()->kind = kind;
    return out_.values.back().get();
  }
  void Push(Value v) { stack_.push_back(v); }
  bool Pop(Value& out) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
      error_ = "stack underflow";
      return false;
    }
    out = stack_.back();
    stack_.pop_back();
    return true;
  }
  // The values since the last MARK, taken off the stack with the mark.
  bool PopMark(std::vector<Value>& out) {
    if (marks_.empty()) {
      error_ = "no MARK";
      return false;
    }
    const size_t m = marks_.back();
    marks_.pop_back();
    out.assign(stack_.begin() + std::ptrdiff_t(m), stack_.end());
    stack_.resize(m);
    return true;
  }
  bool Top(Kind kind, PickleValue*& out) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()) || stack_.back()->kind != kind) {
      error_ = "no container to add to";
      return false;
    }
    out = stack_.back();
    return true;
  }
  bool String(size_t n) {
    if (!Need(n)) return false;
    auto v = Make(Kind::kString);
    v->s.assign(s_.substr(p_, n));
    p_ += n;
    Push(v);
    return true;
  }
  bool Int(int64_t i) {
    auto v = Make(Kind::kInt);
    v->i = i;
    Push(v);
    return true;
  }
  // LONG1: a little-endian two's complement integer of n bytes; only those that fit 64 bits.
  bool Long(size_t n) {
    if (!Need(n)) return false;
    if (n > 8) {
      error_ = "an integer over 64 bits";
      return false;
    }
    uint64_t u = LittleEndian(n);
    if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~uint64_t(0) << (8 * n);
    int64_t i = 0;
    std::memcpy(&i, &u, sizeof i);
    return Int(i);
  }
  bool Float() {
    if (!Need(8)) return false;
    uint64_t u = 0;
    for (size_t k = 0; k < 8; ++k) u = (u << 8) | static_cast<unsigned char>(s_[p_ + k]);  // big-endian
    p_ += 8;
    auto v = Make(Kind::kFloat);
    std::memcpy(&v->f, &u, sizeof u);
    Push(v);
    return true;
  }
  bool Memo(size_t index) {
    if (stack_.empty()) {
      error_ = "memo of nothing";
      return false;
    }
    if (index >= kMaxValues) {
      error_ = "memo index too large";
      return false;
    }
    if (memo_.size() <= index) memo_.resize(index + 1, nullptr);
    memo_[index] = stack_.back();
    return true;
  }
  bool Get(size_t index) {
    if (index >= memo_.size() || !memo_[index]) {
      error_ = "memo " + std::to_string(index) + " unset";
      return false;
    }
    Push(memo_[index]);
    return true;
  }
  bool Tuple(const std::vector<Value>& items) {
    auto v = Make(Kind::kTuple);
    v->items.assign(items.begin(), items.end());
    Push(v);
    return true;
  }
  bool Mark() {
    if (marks_.size() >= kMaxDepth) {
      error_ = "nested too deep";
      return false;
    }
    marks_.push_back(stack_.size());
    return true;
  }
  bool Step(unsigned char op);
  bool Containers(unsigned char op);

  std::string_view s_;
  size_t p_ = 0;
  Pickle out_;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::vector<Value> memo_;
  std::string error_;
};

// The opcodes that fill or close containers.
bool Unpickler::Containers(unsigned char op) {
  std::vector<Value> items;
  PickleValue* top = nullptr;
  Value a, b;
  switch (op) {
    case ']': Push(Make(Kind::kList)); return true;                        // EMPTY_LIST
    case '}': Push(Make(Kind::kDict)); return true;                        // EMPTY_DICT
    case ')': return Tuple({});                                             // EMPTY_TUPLE
    case '(': return Mark();                                                // MARK
    case 't': return PopMark(items) && Tuple(items);                        // TUPLE
    case 0x85: return Pop(a) && Tuple({a});                                 // TUPLE1
    case 0x86: return Pop(b) && Pop(a) && Tuple({a, b});                    // TUPLE2
    case 0x87: {                                                            // TUPLE3
      Value c;
      return Pop(c) && Pop(b) && Pop(a) && Tuple({a, b, c});
    }
    case 'a': return Pop(a) && Top(Kind::kList, top) && (top->items.push_back(a), true);  // APPEND
    case 'e':                                                               // APPENDS
      if (!PopMark(items) || !Top(Kind::kList, top)) return false;
      for (auto v : items) top->items.push_back(v);
      return true;
    case 'l': {                                                             // LIST
      if (!PopMark(items)) return false;
      auto v = Make(Kind::kList);
      v->items.assign(items.begin(), items.end());
      Push(v);
      return true;
    }
    case 's': return Pop(b) && Pop(a) && Top(Kind::kDict, top) && (top->dict.emplace_back(a, b), true);  // SETITEM
    case 'u':                                                               // SETITEMS
      if (!PopMark(items) || items.size() % 2 != 0 || !Top(Kind::kDict, top)) {
        if (error_.empty()) error_ = "SETITEMS of an odd count";
        return false;
      }
      for (size_t k = 0; k < items.size(); k += 2) top->dict.emplace_back(items[k], items[k + 1]);
      return true;
    case 'd': {                                                             // DICT
      if (!PopMark(items) || items.size() % 2 != 0) return false;
      auto v = Make(Kind::kDict);
      for (size_t k = 0; k < items.size(); k += 2) v->dict.emplace_back(items[k], items[k + 1]);
      Push(v);
      return true;
    }
    default: return false;
  }
}

bool Unpickler::Step(unsigned char op) {
  switch (op) {
    case 0x80: return Need(1) && (++p_, true);                              // PROTO
    case 0x95: return Need(8) && (p_ += 8, true);                           // FRAME
    case 'N': Push(Make(Kind::kNone)); return true;                         // NONE
    case 0x88: case 0x89: {                                                 // NEWTRUE, NEWFALSE
      auto v = Make(Kind::kBool);
      v->b = op == 0x88;
      Push(v);
      return true;
    }
    case 'J': return Need(4) && Int(int32_t(uint32_t(LittleEndian(4))));  // BININT
    case 'K': return Need(1) && Int(int64_t(LittleEndian(1)));             // BININT1
    case 'M': return Need(2) && Int(int64_t(LittleEndian(2)));             // BININT2
    case 0x8a: return Need(1) && Long(size_t(LittleEndian(1)));            // LONG1
    case 'G': return Float();                                               // BINFLOAT
    case 'X': return Need(4) && String(size_t(LittleEndian(4)));           // BINUNICODE
    case 0x8c: return Need(1) && String(size_t(LittleEndian(1)));          // SHORT_BINUNICODE
    case 'C': return Need(1) && String(size_t(LittleEndian(1)));           // SHORT_BINBYTES
    case 'B': return Need(4) && String(size_t(LittleEndian(4)));           // BINBYTES
    case 'q': return Need(1) && Memo(size_t(LittleEndian(1)));             // BINPUT
    case 'r': return Need(4) && Memo(size_t(LittleEndian(4)));             // LONG_BINPUT
    case 0x94: return Memo(memo_.size());                                   // MEMOIZE
    case 'h': return Need(1) && Get(size_t(LittleEndian(1)));              // BINGET
    case 'j': return Need(4) && Get(size_t(LittleEndian(4)));              // LONG_BINGET
    case '0': {                                                             // POP
      Value v;
      return Pop(v);
    }
    default: return Containers(op);
  }
}

}  // namespace

const PickleValue* PickleValue::Get(std::string_view key) const {
  for (const auto& [k, v] : dict)
    if (k && k->kind == Kind::kString && k->s == key) return v;
  return nullptr;
}

Result<Pickle> ReadPickle(std::string_view bytes) { return Unpickler(bytes).Run(); }

}  // namespace triage::ingest::detail
