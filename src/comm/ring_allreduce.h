// kRing: a pipelined ring all-reduce over nonblocking point-to-point messages.
#pragma once

#include <cstddef>
#include <memory>

#include "comm/allreduce.h"

namespace stepscope::comm {

struct RingOptions {
  // A chunk travels as segments of this many bytes, so that reducing one segment overlaps the
  // transfer of the next. Default 512 KiB.
  size_t segment_bytes = 512 * 1024;
};

// Collective over comm.world(); destroy it on every rank before the Communicator.
Result<std::unique_ptr<Allreducer>> MakeRingAllreducer(const Communicator& comm,
                                                       size_t max_elements,
                                                       const RingOptions& options);

}  // namespace stepscope::comm
