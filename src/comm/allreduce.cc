#include "comm/allreduce.h"

#include "comm/mpi_allreduce.h"
#include "comm/ring_allreduce.h"
#include "comm/shm_allreduce.h"

namespace stepscope::comm {

Result<AllreduceAlgorithm> ParseAllreduceAlgorithm(const std::string& name) {
  if (name == "mpi") return AllreduceAlgorithm::kMpi;
  if (name == "ring") return AllreduceAlgorithm::kRing;
  if (name == "shm") return AllreduceAlgorithm::kShm;
  return Status::Error("unknown all-reduce algorithm '" + name + "' (use mpi, ring or shm)");
}

Result<WireDtype> ParseWireDtype(const std::string& name) {
  if (name == "fp32" || name == "float32") return WireDtype::kFp32;
  if (name == "bf16" || name == "bfloat16") return WireDtype::kBf16;
  if (name == "fp16" || name == "float16" || name == "half") return WireDtype::kFp16;
  return Status::Error("unknown wire precision '" + name + "' (use fp32, bf16 or fp16)");
}

std::string ToString(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::kMpi:
      return "mpi";
    case AllreduceAlgorithm::kRing:
      return "ring";
    case AllreduceAlgorithm::kShm:
      return "shm";
  }
  return "unknown";
}

std::string ToString(WireDtype dtype) {
  switch (dtype) {
    case WireDtype::kFp32:
      return "fp32";
    case WireDtype::kBf16:
      return "bf16";
    case WireDtype::kFp16:
      return "fp16";
  }
  return "unknown";
}

Bytes WireBytes(WireDtype dtype, size_t elements) {
  const Bytes width = dtype == WireDtype::kFp32 ? 4 : 2;
  return width * static_cast<Bytes>(elements);
}

double AllreduceBusBandwidthGBps(Bytes bytes, Seconds seconds, int ranks) {
  if (seconds <= 0 || ranks <= 0) return 0.0;
  const double algbw = static_cast<double>(bytes) / seconds / kGB;
  return algbw * 2.0 * (ranks - 1) / ranks;
}

Seconds RingAllreduceSeconds(Bytes bytes, int ranks, double gbps, Seconds latency) {
  if (ranks <= 1) return 0.0;
  const double steps = 2.0 * (ranks - 1);
  return steps * latency + steps / ranks * static_cast<double>(bytes) / (gbps * kGB);
}

Result<std::unique_ptr<Allreducer>> MakeAllreducer(const Communicator& comm,
                                                   AllreduceAlgorithm algorithm,
                                                   size_t max_elements) {
  switch (algorithm) {
    case AllreduceAlgorithm::kMpi:
      return MakeMpiAllreducer(comm, max_elements);
    case AllreduceAlgorithm::kRing:
      return MakeRingAllreducer(comm, max_elements, RingOptions{});
    case AllreduceAlgorithm::kShm:
      return MakeShmAllreducer(comm, max_elements, ShmOptions{});
  }
  return Status::Error("MakeAllreducer: unknown algorithm");
}

}  // namespace stepscope::comm
