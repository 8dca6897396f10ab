// kMpi: the MPI library's own MPI_Allreduce. 16-bit wire precisions travel as 16-bit buffers
// reduced by a user-defined MPI_Op that adds in float.
#pragma once

#include <memory>

#include "comm/allreduce.h"

namespace stepscope::comm {

// Collective over comm.world(); destroy it on every rank before the Communicator.
Result<std::unique_ptr<Allreducer>> MakeMpiAllreducer(const Communicator& comm,
                                                      size_t max_elements);

}  // namespace stepscope::comm
