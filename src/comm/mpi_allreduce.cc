// kMpi: MPI_Allreduce on a duplicate of the world communicator.
//   fp32: MPI_Allreduce(MPI_IN_PLACE, data, MPI_FLOAT, MPI_SUM).
//   bf16/fp16: convert to a 16-bit staging buffer, MPI_Allreduce with a user-defined
//   commutative MPI_Op whose kernel widens both operands to float, adds, and rounds back.
#include "comm/mpi_allreduce.h"

#include <climits>
#include <vector>

#include "comm/mpi_status.h"
#include "comm/wire_dtype.h"

namespace stepscope::comm {
namespace {

void SumBf16(void* in, void* inout, int* len, MPI_Datatype*) {
  AccumulateBf16(static_cast<Bf16Bits*>(inout), static_cast<const Bf16Bits*>(in),
                 static_cast<size_t>(*len));
}

void SumFp16(void* in, void* inout, int* len, MPI_Datatype*) {
  AccumulateFp16(static_cast<Fp16Bits*>(inout), static_cast<const Fp16Bits*>(in),
                 static_cast<size_t>(*len));
}

class MpiAllreducer final : public Allreducer {
 public:
  MpiAllreducer(MPI_Comm comm, int rank, int size, size_t max_elements)
      : comm_(comm), rank_(rank), size_(size), staging_(max_elements) {
    MPI_Op_create(&SumBf16, /*commute=*/1, &bf16_sum_);
    MPI_Op_create(&SumFp16, /*commute=*/1, &fp16_sum_);
  }
  ~MpiAllreducer() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Op_free(&bf16_sum_);
    MPI_Op_free(&fp16_sum_);
    MPI_Comm_free(&comm_);
  }

  Status Allreduce(std::span<float> data, WireDtype dtype, ReduceOp op) override {
    const size_t n = data.size();
    if (n == 0) return Status::Ok();
    if (n > INT_MAX) return Status::Error("kMpi all-reduce: more than INT_MAX elements");
    const float inv = 1.0f / static_cast<float>(size_);
    if (dtype == WireDtype::kFp32) {
      STEPSCOPE_RETURN_IF_ERROR(MpiStatus(
          MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, comm_),
          "MPI_Allreduce", rank_));
      if (op == ReduceOp::kMean) Scale(data.data(), inv, n);
      return Status::Ok();
    }
    if (n > staging_.size()) staging_.resize(n);
    uint16_t* wire = staging_.data();
    if (dtype == WireDtype::kFp16) {
      if (op == ReduceOp::kMean) Scale(data.data(), inv, n);  // before: keeps sums in range
      FloatToFp16(data.data(), wire, n);
    } else {
      FloatToBf16(data.data(), wire, n);
    }
    MPI_Op sum = dtype == WireDtype::kBf16 ? bf16_sum_ : fp16_sum_;
    STEPSCOPE_RETURN_IF_ERROR(
        MpiStatus(MPI_Allreduce(MPI_IN_PLACE, wire, static_cast<int>(n), MPI_UINT16_T, sum, comm_),
                  "MPI_Allreduce (16-bit)", rank_));
    if (dtype == WireDtype::kFp16) {
      Fp16ToFloat(wire, data.data(), n);
    } else {
      Bf16ToFloat(wire, data.data(), n);
      if (op == ReduceOp::kMean) Scale(data.data(), inv, n);
    }
    return Status::Ok();
  }

  AllreduceAlgorithm algorithm() const override { return AllreduceAlgorithm::kMpi; }

 private:
  MPI_Comm comm_;
  int rank_, size_;
  std::vector<uint16_t> staging_;
  MPI_Op bf16_sum_ = MPI_OP_NULL, fp16_sum_ = MPI_OP_NULL;
};

}  // namespace

Result<std::unique_ptr<Allreducer>> MakeMpiAllreducer(const Communicator& comm,
                                                      size_t max_elements) {
  MPI_Comm dup = MPI_COMM_NULL;
  STEPSCOPE_RETURN_IF_ERROR(
      MpiStatus(MPI_Comm_dup(comm.world(), &dup), "MPI_Comm_dup for kMpi", comm.rank()));
  return std::unique_ptr<Allreducer>(
      new MpiAllreducer(dup, comm.rank(), comm.size(), max_elements));
}

}  // namespace stepscope::comm
