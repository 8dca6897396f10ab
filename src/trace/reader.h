// Streaming Chrome trace reader: object form {"traceEvents":[...], other keys} or bare array
// form [...], plain or gzip (detected by magic). The event array is cut at top-level element
// boundaries by a small scanner (string/escape/depth aware), batches of whole events are parsed
// with simdjson, and each event goes to a visitor. Memory stays bounded by the batch size
// (default 4 MiB) plus the largest single event, whatever the file size.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "trace/event.h"

namespace stepscope::trace {

struct ReaderOptions {
  // Events are parsed in batches of about this size. Small enough that the batch, simdjson's
  // tape for it and the structural index stay in a core's L2 and few pages are touched.
  size_t batch_bytes = 256 << 10;
  size_t max_event_bytes = 64 << 20;     // one event larger than this is a corrupt file
  size_t max_metadata_bytes = 16 << 20;  // a non-event top-level value larger is skipped
  size_t max_warning_messages = 20;      // warnings kept verbatim (all are counted)
};

struct ReadStats {
  uint64_t bytes = 0;                         // uncompressed JSON bytes read
  uint64_t events = 0;                        // events handed to the visitor
  uint64_t warnings = 0;                      // events skipped or fixed (see messages)
  std::vector<std::string> warning_messages;  // the first few, each naming file and offset
  bool gzip = false;
  bool array_form = false;  // bare array, no metadata
  // Top-level keys other than traceEvents (distributedInfo, deviceProperties, ...).
  nlohmann::json metadata = nlohmann::json::object();
};

using EventVisitor = std::function<void(const TraceEvent&)>;

// Reads `path` (plain or gzip) and calls `visit` for each event in file order. Errors name the
// file and the byte offset in the uncompressed stream.
Result<ReadStats> ReadChromeTrace(const std::string& path, const EventVisitor& visit,
                                  const ReaderOptions& options = {});

// The same over an in-memory plain or gzip buffer; `name` is used in messages.
Result<ReadStats> ReadChromeTraceBuffer(std::string_view data, const std::string& name,
                                        const EventVisitor& visit,
                                        const ReaderOptions& options = {});

}  // namespace stepscope::trace
