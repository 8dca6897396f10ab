// The overlap of gradient reduction with backward, replayed event by event: buckets queue on one
// communication channel as they become ready; what ends after backward is exposed.
#pragma once

#include <vector>

#include "core/units.h"

namespace stepscope::model {

struct BucketEvent {
  Seconds ready = 0;  // from the start of backward
  Seconds cost = 0;   // the reduction's duration once it starts
};

struct ReplayResult {
  Seconds comm_end = 0;  // when the last reduction ends, from the start of backward
  Seconds exposed = 0;   // max(0, comm_end - backward)
  Seconds busy = 0;      // the channel's busy time (sum of costs)
};

// `buckets` in launch order. Without overlap every bucket waits for the end of backward.
// `overlap_rate`: how fast a reduction progresses while backward still runs (1: as fast as
// alone; below 1 when the reduction and backward share cores or memory bandwidth); after
// backward every reduction runs at full speed.
ReplayResult ReplayReductions(const std::vector<BucketEvent>& buckets, Seconds backward,
                              bool overlap, double overlap_rate = 1.0);

}  // namespace stepscope::model
