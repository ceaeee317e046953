#include "triage/ingest/event.h"

namespace triage::ingest {

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kTraceback:
      return "traceback";
    case EventKind::kBlock:
      return "block";
    case EventKind::kLine:
      break;
  }
  return "line";
}

}  // namespace triage::ingest
