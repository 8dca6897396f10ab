// Replicas must hold identical parameters after every synchronous step; this checks they do.
#pragma once

#include <cstdint>
#include <span>

#include "comm/communicator.h"
#include "core/status.h"

namespace stepscope::train {

// A position-sensitive 64-bit checksum of the parameters' bit patterns.
uint64_t ParamChecksum(std::span<const float> params);

// Collective: compares every rank's checksum with rank 0's; the error names the ranks that
// diverged and the step.
Status CheckReplicasAgree(std::span<const float> params, int64_t step,
                          const comm::Communicator& comm);

}  // namespace stepscope::train
