// kShm: all-reduce through an MPI-3 shared-memory window, for ranks on one host.
#pragma once

#include <cstddef>
#include <memory>

#include "comm/allreduce.h"

namespace stepscope::comm {

struct ShmOptions {
  // Elements per rank slot per round. Large buffers are reduced in blocks of this many
  // elements so the shared window stays small (2 * ranks * block * 4 bytes) and each block is
  // still in cache when the other ranks read it. Default 256 Ki elements (1 MiB at fp32).
  size_t block_elements = 256 * 1024;
};

// Collective over comm.node(). Fails when the world spans more than one host (use kRing).
// Destroy it on every rank (MPI_Win_free is collective) before the Communicator.
Result<std::unique_ptr<Allreducer>> MakeShmAllreducer(const Communicator& comm, size_t max_elements,
                                                      const ShmOptions& options);

}  // namespace stepscope::comm
