// All-reduce algorithms over float buffers with a chosen wire precision.
// Each algorithm lives in its own file; docs/algorithms.md gives steps and bytes on the wire.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "comm/communicator.h"
#include "core/status.h"
#include "core/units.h"

namespace stepscope::comm {

enum class AllreduceAlgorithm {
  kMpi,   // OpenMPI's own MPI_Allreduce
  kRing,  // pipelined ring over point-to-point (ring_allreduce.cc)
  kShm,   // MPI-3 shared-memory window within one host (shm_allreduce.cc)
};
enum class WireDtype { kFp32, kBf16, kFp16 };
enum class ReduceOp { kSum, kMean };

Result<AllreduceAlgorithm> ParseAllreduceAlgorithm(const std::string& name);
Result<WireDtype> ParseWireDtype(const std::string& name);
std::string ToString(AllreduceAlgorithm algorithm);
std::string ToString(WireDtype dtype);
Bytes WireBytes(WireDtype dtype, size_t elements);

class Allreducer {
 public:
  virtual ~Allreducer() = default;
  // Reduces `data` in place across all ranks. Values travel at `dtype` precision; kMean
  // scales before reducing so fp16 cannot overflow. Collective: every rank calls it in the
  // same order with the same length. Safe to call from one thread at a time.
  virtual Status Allreduce(std::span<float> data, WireDtype dtype, ReduceOp op) = 0;
  virtual AllreduceAlgorithm algorithm() const = 0;
  // Memory in which a caller may keep the buffers it reduces so that reductions run in place,
  // without staging copies (kShm: this rank's part of the shared window, room for max_elements
  // floats). Empty for algorithms without such memory. A buffer reduced from it must start at the
  // same offset on every rank.
  virtual std::span<float> ResidentStorage() { return {}; }
};

// `max_elements` is the largest buffer that will be reduced (for preallocated staging).
Result<std::unique_ptr<Allreducer>> MakeAllreducer(const Communicator& comm,
                                                   AllreduceAlgorithm algorithm,
                                                   size_t max_elements);

// nccl-tests convention: algbw = bytes / seconds, busbw = algbw * 2(N-1)/N (GB/s).
double AllreduceBusBandwidthGBps(Bytes bytes, Seconds seconds, int ranks);
// Ring all-reduce time on a link of `gbps` (GB/s per direction) and `latency` per hop:
// 2(N-1) * latency + 2(N-1)/N * bytes / bandwidth. Used to pace emulated links.
Seconds RingAllreduceSeconds(Bytes bytes, int ranks, double gbps, Seconds latency);

}  // namespace stepscope::comm
