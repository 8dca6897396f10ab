// TraceEvent: one Chrome trace event as the reader hands it to a visitor. Compact and flat: the
// string views point into the reader's parse buffer and are valid only during the callback
// (copy what you keep). Only the fields and args the importers use are extracted.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope::trace {

struct TraceEvent {
  std::string_view name;
  std::string_view cat;
  char ph = 0;     // phase: 'X' complete, 'B'/'E', 'i', 'M', 's'/'f' flows, ...; 0 if absent
  double ts = 0;   // microseconds
  double dur = 0;  // microseconds ('X' events); 0 if absent
  bool has_ts = false;
  bool has_dur = false;
  // pid/tid: numeric when the trace gives numbers; otherwise the string (e.g. "CPU functions")
  // is in *_str and the number is -1.
  int64_t pid = -1;
  int64_t tid = -1;
  std::string_view pid_str;
  std::string_view tid_str;
  uint64_t byte_offset = 0;  // offset of the event in the uncompressed JSON (for messages)

  // Selected args (absent: empty view / -1).
  int64_t stream = -1;               // args.stream (GPU stream of kernels)
  int64_t external_id = -1;          // args."External id"
  std::string_view collective_name;  // args."Collective name" (record_param_comms)
  std::string_view process_group;    // args."Process Group Name" or args.pg_name
  std::string_view dtype;            // args.dtype
  int64_t in_msg_nelems = -1;        // args."In msg nelems"
  int64_t seq = -1;                  // args.seq / args."Seq" (collective sequence number)
  int64_t step = -1;                 // args.step (stepscope's own traces)
  int64_t samples = -1;              // args.samples (stepscope's step events)
  int warmup = -1;                   // args.warmup: 1 true, 0 false, -1 absent (stepscope)
  int64_t bytes = -1;                // args.bytes (stepscope's collectives)
  std::string_view meta_name;        // args.name of 'M' events (process_name/thread_name)
};

}  // namespace stepscope::trace
