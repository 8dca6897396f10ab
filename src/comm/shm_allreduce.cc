// kShm: every rank of the host maps one shared window holding, per rank, two staging slots and
// a resident region (ResidentStorage) where a caller may keep the buffers it reduces.
//
// Resident buffers are reduced in place: after a barrier (every rank's buffer final), rank
// r sums slice r (1/N of the buffer) over all N ranks' copies in float, in rank order, and
// writes the result into every copy; a second barrier ends the call. Each rank reads and writes
// the buffer's size once: no staging.
//
// Other buffers (and bf16/fp16) are staged. For each block of the buffer
// (ShmOptions::block_elements), with the window's two slot sets used alternately so that no
// trailing barrier is needed:
//   1. copy in:  rank r writes its block, converted to the wire precision, into its slot.
//   2. barrier   (all slots written).
//   3. reduce:   rank r owns slice r of the block (1/N of it); it sums that slice across all N
//                slots in float, in rank order, and writes the result (at wire precision) into
//                the same slice of its own slot.
//   4. barrier   (all slices reduced).
//   5. copy out: rank r reads slice j of the block from slot j, for every j, into its buffer.
// A rank writes a slot set again only two blocks later, after a barrier every rank passes
// only once it finished reading that set. Waiting is MPI_Barrier on the node communicator,
// which yields the CPU when mpi_yield_when_idle is set (scripts/mpirun-local.sh sets it).
// Both paths sum in the same order, so a buffer gets the same bits either way.
#include "comm/shm_allreduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/mpi_status.h"
#include "comm/wire_dtype.h"

namespace stepscope::comm {
namespace {

constexpr size_t kTile = 2048;  // float accumulator tile, stays in L1

class ShmAllreducer final : public Allreducer {
 public:
  ShmAllreducer(MPI_Comm node, int rank, int size, size_t block, MPI_Win win,
                std::vector<std::byte*> slots, std::vector<float*> residents, size_t resident_size)
      : node_(node),
        rank_(rank),
        size_(size),
        block_(block),
        win_(win),
        slots_(std::move(slots)),
        residents_(std::move(residents)),
        resident_size_(resident_size) {}
  ~ShmAllreducer() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    MPI_Comm_free(&node_);
  }

  Status Allreduce(std::span<float> data, WireDtype dtype, ReduceOp op) override {
    const size_t n = data.size();
    if (n == 0) return Status::Ok();
    const MeanScaling scaling = ScalingFor(dtype, op);
    if (IsResident(data)) {
      return InPlace(static_cast<size_t>(data.data() - residents_[rank_]), n, dtype, scaling);
    }
    if (scaling.pre != 1.0f) Scale(data.data(), scaling.pre, n);
    for (size_t begin = 0; begin < n; begin += block_) {
      const size_t length = std::min(block_, n - begin);
      STEPSCOPE_RETURN_IF_ERROR(Block(data.data() + begin, length, dtype, scaling.post));
      ++blocks_done_;
    }
    return Status::Ok();
  }

  AllreduceAlgorithm algorithm() const override { return AllreduceAlgorithm::kShm; }
  std::span<float> ResidentStorage() override { return {residents_[rank_], resident_size_}; }

 private:
  // The mean's 1/N: fp16 scales each input first so its sums cannot overflow; the others scale
  // the sum while reducing (fused: no extra pass over the buffer). 1 where not applied.
  struct MeanScaling {
    float pre = 1.0f;
    float post = 1.0f;
  };
  MeanScaling ScalingFor(WireDtype dtype, ReduceOp op) const {
    if (op != ReduceOp::kMean) return {};
    const float inv = 1.0f / static_cast<float>(size_);
    return dtype == WireDtype::kFp16 ? MeanScaling{inv, 1.0f} : MeanScaling{1.0f, inv};
  }

  bool IsResident(std::span<float> data) const {
    const float* base = residents_[rank_];
    return data.data() >= base && data.data() + data.size() <= base + resident_size_;
  }
  // Slice j of a block of `length` elements: rank j reduces it.
  size_t SliceBegin(size_t length, int j) const {
    return j * (length / size_) + std::min<size_t>(j, length % size_);
  }
  size_t SliceLength(size_t length, int j) const {
    return length / size_ + (static_cast<size_t>(j) < length % size_ ? 1 : 0);
  }

  // The resident path. Values are rounded to the wire precision where the staged path would
  // round them (each input, after fp16's pre-scaling, and the result), so both give the same bits.
  Status InPlace(size_t offset, size_t n, WireDtype dtype, MeanScaling scaling) {
    STEPSCOPE_RETURN_IF_ERROR(Sync());  // every rank's buffer is final
    const size_t begin = offset + SliceBegin(n, rank_), length = SliceLength(n, rank_);
    float acc[kTile], scaled[kTile];
    uint16_t wire[kTile];  // Bf16Bits and Fp16Bits are both uint16_t
    for (size_t t = 0; t < length; t += kTile) {
      const size_t m = std::min(kTile, length - t), at = begin + t;
      switch (dtype) {
        case WireDtype::kFp32:
          std::memcpy(acc, residents_[0] + at, m * sizeof(float));
          for (int j = 1; j < size_; ++j) AccumulateFp32(acc, residents_[j] + at, m);
          break;
        case WireDtype::kBf16:
          std::fill(acc, acc + m, 0.0f);
          for (int j = 0; j < size_; ++j) AddBf16RoundedToFloat(residents_[j] + at, acc, m);
          break;
        case WireDtype::kFp16:
          std::fill(acc, acc + m, 0.0f);
          for (int j = 0; j < size_; ++j) {
            const float* in = residents_[j] + at;
            if (scaling.pre != 1.0f) {
              std::memcpy(scaled, in, m * sizeof(float));
              Scale(scaled, scaling.pre, m);
              in = scaled;
            }
            FloatToFp16(in, wire, m);
            AddFp16ToFloat(wire, acc, m);
          }
          break;
      }
      if (scaling.post != 1.0f) Scale(acc, scaling.post, m);
      if (dtype == WireDtype::kBf16) {
        RoundToBf16(acc, m);
      } else if (dtype == WireDtype::kFp16) {
        FloatToFp16(acc, wire, m);
        Fp16ToFloat(wire, acc, m);
      }
      for (int j = 0; j < size_; ++j) std::memcpy(residents_[j] + at, acc, m * sizeof(float));
    }
    return Sync();  // every slice is written into every rank's buffer
  }
  // Slot of rank j in the slot set used by the current block.
  std::byte* Slot(int j) const { return slots_[j] + (blocks_done_ % 2) * block_ * sizeof(float); }

  Status Sync() {
    MPI_Win_sync(win_);
    STEPSCOPE_RETURN_IF_ERROR(
        MpiStatus(MPI_Barrier(node_), "kShm MPI_Barrier on the node communicator", rank_));
    MPI_Win_sync(win_);
    return Status::Ok();
  }

  Status Block(float* data, size_t length, WireDtype dtype, float post_scale) {
    const size_t width = dtype == WireDtype::kFp32 ? 4 : 2;
    // 1. copy in
    std::byte* mine = Slot(rank_);
    switch (dtype) {
      case WireDtype::kFp32:
        std::memcpy(mine, data, length * sizeof(float));
        break;
      case WireDtype::kBf16:
        FloatToBf16(data, reinterpret_cast<Bf16Bits*>(mine), length);
        break;
      case WireDtype::kFp16:
        FloatToFp16(data, reinterpret_cast<Fp16Bits*>(mine), length);
        break;
    }
    STEPSCOPE_RETURN_IF_ERROR(Sync());
    // 3. reduce my slice in float tiles
    const size_t my_begin = SliceBegin(length, rank_), my_length = SliceLength(length, rank_);
    float acc[kTile];
    for (size_t t = 0; t < my_length; t += kTile) {
      const size_t m = std::min(kTile, my_length - t);
      const size_t at = (my_begin + t) * width;
      for (int j = 0; j < size_; ++j) {
        const std::byte* src = Slot(j) + at;
        switch (dtype) {
          case WireDtype::kFp32:
            if (j == 0) {
              std::memcpy(acc, src, m * sizeof(float));
            } else {
              AccumulateFp32(acc, reinterpret_cast<const float*>(src), m);
            }
            break;
          case WireDtype::kBf16:
            if (j == 0) std::fill(acc, acc + m, 0.0f);
            AddBf16ToFloat(reinterpret_cast<const Bf16Bits*>(src), acc, m);
            break;
          case WireDtype::kFp16:
            if (j == 0) std::fill(acc, acc + m, 0.0f);
            AddFp16ToFloat(reinterpret_cast<const Fp16Bits*>(src), acc, m);
            break;
        }
      }
      if (post_scale != 1.0f) Scale(acc, post_scale, m);
      switch (dtype) {
        case WireDtype::kFp32:
          std::memcpy(mine + at, acc, m * sizeof(float));
          break;
        case WireDtype::kBf16:
          FloatToBf16(acc, reinterpret_cast<Bf16Bits*>(mine + at), m);
          break;
        case WireDtype::kFp16:
          FloatToFp16(acc, reinterpret_cast<Fp16Bits*>(mine + at), m);
          break;
      }
    }
    STEPSCOPE_RETURN_IF_ERROR(Sync());
    // 5. copy out every slice from its owner's slot
    for (int j = 0; j < size_; ++j) {
      const std::byte* src = Slot(j) + SliceBegin(length, j) * width;
      float* dst = data + SliceBegin(length, j);
      const size_t m = SliceLength(length, j);
      switch (dtype) {
        case WireDtype::kFp32:
          std::memcpy(dst, src, m * sizeof(float));
          break;
        case WireDtype::kBf16:
          Bf16ToFloat(reinterpret_cast<const Bf16Bits*>(src), dst, m);
          break;
        case WireDtype::kFp16:
          Fp16ToFloat(reinterpret_cast<const Fp16Bits*>(src), dst, m);
          break;
      }
    }
    return Status::Ok();
  }

  MPI_Comm node_;
  int rank_, size_;
  size_t block_;
  MPI_Win win_;
  std::vector<std::byte*> slots_;  // base of each local rank's part of the window
  std::vector<float*> residents_;  // each local rank's resident region, after its two slots
  size_t resident_size_;           // floats per resident region
  uint64_t blocks_done_ = 0;       // selects the slot set (parity)
};

}  // namespace

Result<std::unique_ptr<Allreducer>> MakeShmAllreducer(const Communicator& comm, size_t max_elements,
                                                      const ShmOptions& options) {
  if (comm.local_size() != comm.size()) {
    return Status::Error("kShm needs all ranks on one host, but this world of " +
                         std::to_string(comm.size()) + " ranks spans " +
                         std::to_string(comm.num_hosts()) + " hosts (use kRing)");
  }
  if (options.block_elements == 0) return Status::Error("kShm: block_elements must be > 0");
  // No bigger than needed: small buffers get a small window.
  const size_t block = std::min(options.block_elements, std::max<size_t>(max_elements, 1));
  const int rank = comm.local_rank();
  MPI_Comm node = MPI_COMM_NULL;
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Comm_dup(comm.node(), &node), "MPI_Comm_dup for kShm", comm.rank()));
  MPI_Win win = MPI_WIN_NULL;
  void* base = nullptr;
  // Per rank: two staging slots of `block` floats, then the resident region of max_elements.
  const size_t resident = max_elements;
  // Rounded up to whole cache lines so every rank's part starts on one.
  const size_t part = ((2 * block + resident) * sizeof(float) + 63) / 64 * 64;
  const MPI_Aint bytes = static_cast<MPI_Aint>(part);
  Status st = MpiStatus(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &base, &win),
                        "MPI_Win_allocate_shared (" + std::to_string(bytes) + " bytes) for kShm",
                        comm.rank());
  if (!st.ok()) {
    MPI_Comm_free(&node);
    return st;
  }
  std::vector<std::byte*> slots(comm.local_size());
  std::vector<float*> residents(comm.local_size());
  for (int j = 0; j < comm.local_size(); ++j) {
    MPI_Aint size = 0;
    int disp = 0;
    void* ptr = nullptr;
    MPI_Win_shared_query(win, j, &size, &disp, &ptr);
    slots[j] = static_cast<std::byte*>(ptr);
    residents[j] = reinterpret_cast<float*>(slots[j] + 2 * block * sizeof(float));
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  return std::unique_ptr<Allreducer>(new ShmAllreducer(
      node, rank, comm.local_size(), block, win, std::move(slots), std::move(residents), resident));
}

}  // namespace stepscope::comm
