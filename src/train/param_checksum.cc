#include "train/param_checksum.h"

#include <cstring>
#include <string>
#include <vector>

namespace stepscope::train {

uint64_t ParamChecksum(std::span<const float> params) {
  uint64_t h = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &params[i], sizeof bits);
    h += static_cast<uint64_t>(bits) * (2 * i + 1);  // odd weights: any single change shows
  }
  return h;
}

Status CheckReplicasAgree(std::span<const float> params, int64_t step,
                          const comm::Communicator& comm) {
  unsigned long long mine = ParamChecksum(params);
  std::vector<unsigned long long> all(comm.size());
  if (MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                    comm.world()) != MPI_SUCCESS) {
    return Status::Error("parameter check: MPI_Allgather failed");
  }
  std::string diverged;
  for (int r = 1; r < comm.size(); ++r) {
    if (all[r] != all[0]) diverged += (diverged.empty() ? "" : ", ") + std::to_string(r);
  }
  if (diverged.empty()) return Status::Ok();
  return Status::Error("replicas diverged after step " + std::to_string(step) +
                       ": parameters of rank(s) " + diverged +
                       " differ from rank 0's. The reduction did not give every rank the same "
                       "result; rerun with --allreduce mpi to rule out the algorithm");
}

}  // namespace stepscope::train
