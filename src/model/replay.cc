#include "model/replay.h"

#include <algorithm>

namespace stepscope::model {

ReplayResult ReplayReductions(const std::vector<BucketEvent>& buckets, Seconds backward,
                              bool overlap, double overlap_rate) {
  ReplayResult r;
  const double rate = std::clamp(overlap_rate, 0.0, 1.0);
  Seconds channel_free = 0;
  for (const BucketEvent& b : buckets) {
    const Seconds ready = overlap ? std::min(b.ready, backward) : backward;
    const Seconds start = std::max(ready, channel_free);
    Seconds left = b.cost;
    Seconds at = start;
    if (at < backward && rate > 0) {  // beside backward the reduction runs at `rate`
      const Seconds done = std::min(left, (backward - at) * rate);
      at += done / rate;
      left -= done;
    } else if (at < backward) {
      at = backward;  // no progress beside backward at all
    }
    channel_free = at + left;
    r.busy += b.cost;
  }
  r.comm_end = buckets.empty() ? 0 : channel_free;
  r.exposed = std::max(0.0, r.comm_end - (buckets.empty() ? 0 : backward));
  return r;
}

}  // namespace stepscope::model
