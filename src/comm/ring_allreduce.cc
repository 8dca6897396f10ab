// kRing: reduce-scatter then all-gather around the ring 0 -> 1 -> ... -> N-1 -> 0.
//
// The buffer of n elements is cut into N chunks (the first n % N chunks one element longer).
// Steps t = 0 .. 2(N-1)-1, each sending one chunk to the right neighbour and receiving one from
// the left:
//   reduce-scatter (t < N-1):  send chunk (r - t), receive chunk (r - t - 1) into a staging
//                              buffer and add it into our copy. After N-1 steps, rank r holds
//                              the full sum of chunk (r + 1).
//   all-gather (u = t-(N-1)):  send chunk (r + 1 - u), receive chunk (r - u) straight into place.
// What a rank receives at step t is what it sends at step t+1. Chunks travel as segments: as
// soon as segment k of step t has arrived (and been reduced), segment k of step t+1 is posted,
// so the transfer of later segments overlaps the arithmetic on earlier ones. 16-bit wire
// precisions reduce in float and round back to the wire type at every hop.
#include "comm/ring_allreduce.h"

#include <algorithm>
#include <climits>
#include <vector>

#include "comm/mpi_status.h"
#include "comm/wire_dtype.h"

namespace stepscope::comm {
namespace {

template <typename Wire>
using AccumulateFn = void (*)(Wire*, const Wire*, size_t);

class RingAllreducer final : public Allreducer {
 public:
  RingAllreducer(MPI_Comm comm, int rank, int size, size_t max_elements, const RingOptions& options)
      : comm_(comm), rank_(rank), size_(size), options_(options) {
    Reserve(max_elements);
  }
  ~RingAllreducer() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  Status Allreduce(std::span<float> data, WireDtype dtype, ReduceOp op) override {
    const size_t n = data.size();
    if (n == 0) return Status::Ok();
    Reserve(n);
    const float inv = 1.0f / static_cast<float>(size_);
    float* values = data.data();
    switch (dtype) {
      case WireDtype::kFp32:
        STEPSCOPE_RETURN_IF_ERROR(Ring<float>(values, n, MPI_FLOAT, &AccumulateFp32));
        break;
      case WireDtype::kBf16:
        FloatToBf16(values, wire16_.data(), n);
        STEPSCOPE_RETURN_IF_ERROR(Ring<uint16_t>(wire16_.data(), n, MPI_UINT16_T, &AccumulateBf16));
        Bf16ToFloat(wire16_.data(), values, n);
        break;
      case WireDtype::kFp16:
        if (op == ReduceOp::kMean) Scale(values, inv, n);  // before: keeps fp16 sums in range
        FloatToFp16(values, wire16_.data(), n);
        STEPSCOPE_RETURN_IF_ERROR(Ring<uint16_t>(wire16_.data(), n, MPI_UINT16_T, &AccumulateFp16));
        Fp16ToFloat(wire16_.data(), values, n);
        return Status::Ok();
    }
    if (op == ReduceOp::kMean) Scale(values, inv, n);
    return Status::Ok();
  }

  AllreduceAlgorithm algorithm() const override { return AllreduceAlgorithm::kRing; }

 private:
  void Reserve(size_t n) {
    if (wire16_.size() < n) wire16_.resize(n);
    const size_t chunk_bytes = (n / size_ + 1) * sizeof(float);
    for (auto& stage : stage_) {
      if (stage.size() < chunk_bytes) stage.resize(chunk_bytes);
    }
  }

  template <typename Wire>
  Status Ring(Wire* buf, size_t n, MPI_Datatype type, AccumulateFn<Wire> accumulate) {
    const int N = size_, r = rank_;
    if (N == 1) return Status::Ok();
    const int right = (r + 1) % N, left = (r + N - 1) % N;
    const size_t base = n / N, extra = n % N;
    auto chunk_offset = [&](int c) { return c * base + std::min<size_t>(c, extra); };
    auto chunk_length = [&](int c) { return base + (static_cast<size_t>(c) < extra ? 1 : 0); };
    const size_t seg = std::max<size_t>(1, options_.segment_bytes / sizeof(Wire));
    const size_t max_chunk = base + (extra > 0 ? 1 : 0);
    const int segments = static_cast<int>(std::max<size_t>(1, (max_chunk + seg - 1) / seg));
    if (seg > INT_MAX) return Status::Error("kRing: segment_bytes too large");
    auto mod = [N](int x) { return ((x % N) + N) % N; };
    const int steps = 2 * (N - 1);
    auto recv_chunk = [&](int t) { return t < N - 1 ? mod(r - t - 1) : mod(r - (t - (N - 1))); };
    auto send_chunk = [&](int t) { return t == 0 ? r : recv_chunk(t - 1); };
    // Segment k of chunk c: [offset, offset + length), possibly empty.
    auto seg_offset = [&](int c, int k) {
      return chunk_offset(c) + std::min(chunk_length(c), k * seg);
    };
    auto seg_length = [&](int c, int k) {
      const size_t start = std::min(chunk_length(c), k * seg);
      return std::min(seg, chunk_length(c) - start);
    };
    auto stage = [&](int t, int k) {
      return reinterpret_cast<Wire*>(stage_[t % 2].data()) + static_cast<size_t>(k) * seg;
    };

    std::vector<MPI_Request> recvs[2], sends[2];
    for (int p = 0; p < 2; ++p) {
      recvs[p].assign(segments, MPI_REQUEST_NULL);
      sends[p].assign(segments, MPI_REQUEST_NULL);
    }
    auto post = [&](int t, int k) -> Status {
      const int rc = recv_chunk(t), sc = send_chunk(t);
      Wire* dst = t < N - 1 ? stage(t, k) : buf + seg_offset(rc, k);
      STEPSCOPE_RETURN_IF_ERROR(MpiStatus(MPI_Irecv(dst, static_cast<int>(seg_length(rc, k)), type,
                                                    left, kTag, comm_, &recvs[t % 2][k]),
                                          "kRing MPI_Irecv from rank " + std::to_string(left),
                                          rank_));
      return MpiStatus(MPI_Isend(buf + seg_offset(sc, k), static_cast<int>(seg_length(sc, k)), type,
                                 right, kTag, comm_, &sends[t % 2][k]),
                       "kRing MPI_Isend to rank " + std::to_string(right), rank_);
    };

    for (int k = 0; k < segments; ++k) STEPSCOPE_RETURN_IF_ERROR(post(0, k));
    for (int t = 0; t < steps; ++t) {
      const int rc = recv_chunk(t);
      // In the all-gather, step t+1 receives into the chunk step t may still be sending
      // (only when N == 2): that send must finish before its buffer is overwritten.
      const bool next_overwrites_send =
          t + 1 < steps && t + 1 >= N - 1 && recv_chunk(t + 1) == send_chunk(t);
      for (int k = 0; k < segments; ++k) {
        STEPSCOPE_RETURN_IF_ERROR(MpiStatus(MPI_Wait(&recvs[t % 2][k], MPI_STATUS_IGNORE),
                                            "kRing MPI_Wait (receive)", rank_));
        if (t < N - 1) accumulate(buf + seg_offset(rc, k), stage(t, k), seg_length(rc, k));
        if (t + 1 < steps) {
          if (next_overwrites_send) {
            STEPSCOPE_RETURN_IF_ERROR(MpiStatus(MPI_Wait(&sends[t % 2][k], MPI_STATUS_IGNORE),
                                                "kRing MPI_Wait (send)", rank_));
          }
          STEPSCOPE_RETURN_IF_ERROR(post(t + 1, k));
        }
      }
      STEPSCOPE_RETURN_IF_ERROR(
          MpiStatus(MPI_Waitall(segments, sends[t % 2].data(), MPI_STATUSES_IGNORE),
                    "kRing MPI_Waitall (sends)", rank_));
    }
    return Status::Ok();
  }

  static constexpr int kTag = 0;  // messages match in posting order on a private communicator
  MPI_Comm comm_;
  int rank_, size_;
  RingOptions options_;
  std::vector<uint16_t> wire16_;
  std::vector<std::byte> stage_[2];
};

}  // namespace

Result<std::unique_ptr<Allreducer>> MakeRingAllreducer(const Communicator& comm,
                                                       size_t max_elements,
                                                       const RingOptions& options) {
  if (options.segment_bytes == 0) return Status::Error("kRing: segment_bytes must be > 0");
  MPI_Comm dup = MPI_COMM_NULL;
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Comm_dup(comm.world(), &dup), "MPI_Comm_dup for kRing", comm.rank()));
  return std::unique_ptr<Allreducer>(
      new RingAllreducer(dup, comm.rank(), comm.size(), max_elements, options));
}

}  // namespace stepscope::comm
