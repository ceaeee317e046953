// A reader of the subset of Python's pickle format that data-only dumps use (protocol 2 to 5
// opcodes for dicts, lists, tuples, strings, bytes, ints, floats, None and booleans, with the
// memo), as PyTorch's Flight Recorder writes its dumps. It builds values only: an opcode that
// would look up a global, construct an object or call anything refuses the input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "triage/status.h"

namespace triage::ingest::detail {

struct PickleValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict };
  Kind kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                          // a str, or bytes
  std::vector<const PickleValue*> items;  // a list's or a tuple's
  std::vector<std::pair<const PickleValue*, const PickleValue*>> dict;

  // The dict's value under the string key `key`, or null.
  const PickleValue* Get(std::string_view key) const;
};

// A pickle's values, all owned here (the memo can hand one value out twice, or put a container
// inside itself: a reader of the values must bound its depth).
struct Pickle {
  std::vector<std::unique_ptr<PickleValue>> values;
  const PickleValue* root = nullptr;
};

// Reads one pickle; Corrupt when the input is not one of the subset, is cut short, nests its
// marks deeper than 64 levels or holds more than 1 << 22 values.
Result<Pickle> ReadPickle(std::string_view bytes);

}  // namespace triage::ingest::detail
