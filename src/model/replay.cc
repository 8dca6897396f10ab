#include "model/replay.h"

#include <algorithm>

namespace stepscope::model {

ReplayResult ReplayReductions(const std::vector<BucketEvent>& buckets, Seconds backward,
                              bool overlap) {
  ReplayResult r;
  Seconds channel_free = 0;
  for (const BucketEvent& b : buckets) {
    const Seconds ready = overlap ? std::min(b.ready, backward) : backward;
    const Seconds start = std::max(ready, channel_free);
    channel_free = start + b.cost;
    r.busy += b.cost;
  }
  r.comm_end = buckets.empty() ? 0 : channel_free;
  r.exposed = std::max(0.0, r.comm_end - (buckets.empty() ? 0 : backward));
  return r;
}

}  // namespace stepscope::model
