// All-reduce of rank-filled buffers against closed forms, for every algorithm, wire precision
// and an assortment of sizes (empty, one, odd, not divisible by the world size).
#include "comm/allreduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "comm/communicator.h"

namespace stepscope::comm {
namespace {

constexpr size_t kMaxElements = 1000003;

class AllreduceTest
    : public testing::TestWithParam<std::tuple<AllreduceAlgorithm, WireDtype, size_t>> {
 public:
  static void SetUpTestSuite() {
    auto comm = Communicator::Init(nullptr, nullptr);
    ASSERT_TRUE(comm.ok()) << comm.status().message();
    comm_ = std::move(comm).value().release();
    for (auto algorithm :
         {AllreduceAlgorithm::kMpi, AllreduceAlgorithm::kRing, AllreduceAlgorithm::kShm}) {
      auto reducer = MakeAllreducer(*comm_, algorithm, kMaxElements);
      ASSERT_TRUE(reducer.ok()) << reducer.status().message();
      reducers_[algorithm] = std::move(reducer).value().release();
    }
  }
  static void TearDownTestSuite() {
    for (auto& [algorithm, reducer] : reducers_) delete reducer;
    reducers_.clear();
    delete comm_;
    comm_ = nullptr;
  }

 protected:
  // Relative error allowed for positive data: each input and each of the (up to N) partial
  // sums is rounded once to the wire precision (unit roundoff u), so |error| <= (N+1) u sum.
  static double Tolerance(WireDtype dtype, int ranks) {
    const double u = dtype == WireDtype::kBf16   ? std::ldexp(1.0, -8)
                     : dtype == WireDtype::kFp16 ? std::ldexp(1.0, -11)
                                                 : std::ldexp(1.0, -24);
    return (ranks + 1) * u + 1e-6 * (dtype == WireDtype::kFp32 ? 1 : 0);
  }

  static inline Communicator* comm_ = nullptr;
  static inline std::map<AllreduceAlgorithm, Allreducer*> reducers_;
};

// Rank r holds (r + 1) + (i mod 3): small integers, exact at every wire precision, so the sum
// N(N+1)/2 + N (i mod 3) must come back exactly.
TEST_P(AllreduceTest, IntegerSumIsExact) {
  const auto [algorithm, dtype, n] = GetParam();
  const int r = comm_->rank(), N = comm_->size();
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>((r + 1) + i % 3);
  Status st = reducers_[algorithm]->Allreduce(data, dtype, ReduceOp::kSum);
  ASSERT_TRUE(st.ok()) << st.message();
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    const float expected = static_cast<float>(N * (N + 1) / 2 + N * (i % 3));
    if (data[i] != expected && wrong++ == 0) first = i;
  }
  EXPECT_EQ(wrong, 0u) << "first wrong index " << first << ": " << (n ? data[first] : 0.f);
}

// Rank r holds (r + 1) * f_i with f_i = 1 + (i mod 1000)/1000 (not representable): the sum is
// f_i N(N+1)/2 and the mean f_i (N+1)/2, within the wire precision's error bound.
TEST_P(AllreduceTest, FractionalSumAndMeanWithinBound) {
  const auto [algorithm, dtype, n] = GetParam();
  const int r = comm_->rank(), N = comm_->size();
  const double tolerance = Tolerance(dtype, N);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
    std::vector<float> data(n);
    auto f = [](size_t i) { return 1.0 + static_cast<double>(i % 1000) / 1000.0; };
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>((r + 1) * f(i));
    Status st = reducers_[algorithm]->Allreduce(data, dtype, op);
    ASSERT_TRUE(st.ok()) << st.message();
    size_t wrong = 0, first = 0;
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
      const double sum = f(i) * N * (N + 1) / 2.0;
      const double expected = op == ReduceOp::kSum ? sum : sum / N;
      const double relative = std::abs(data[i] - expected) / expected;
      worst = std::max(worst, relative);
      if (!(relative <= tolerance) && wrong++ == 0) first = i;
    }
    EXPECT_EQ(wrong, 0u) << (op == ReduceOp::kSum ? "sum" : "mean") << ": first wrong index "
                         << first << ", worst relative error " << worst << " > " << tolerance;
  }
}

// Every rank must end with bit-identical results (replicas must not drift apart).
TEST_P(AllreduceTest, AllRanksAgreeBitwise) {
  const auto [algorithm, dtype, n] = GetParam();
  const int r = comm_->rank();
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = std::sin(0.001f * i + r) * (1.0f + r);
  Status st = reducers_[algorithm]->Allreduce(data, dtype, ReduceOp::kMean);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<float> from_root = data;
  MPI_Bcast(from_root.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(from_root, data);
}

std::string Name(
    const testing::TestParamInfo<std::tuple<AllreduceAlgorithm, WireDtype, size_t>>& info) {
  return ToString(std::get<0>(info.param)) + "_" + ToString(std::get<1>(info.param)) + "_n" +
         std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    All, AllreduceTest,
    testing::Combine(testing::Values(AllreduceAlgorithm::kMpi, AllreduceAlgorithm::kRing,
                                     AllreduceAlgorithm::kShm),
                     testing::Values(WireDtype::kFp32, WireDtype::kBf16, WireDtype::kFp16),
                     testing::Values(size_t{0}, size_t{1}, size_t{7}, size_t{1000003})),
    Name);

// A buffer larger than max_elements still works (staging grows) for every algorithm.
TEST(AllreduceGrow, LargerThanReservedBuffer) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const int N = (*comm)->size();
  for (auto algorithm :
       {AllreduceAlgorithm::kMpi, AllreduceAlgorithm::kRing, AllreduceAlgorithm::kShm}) {
    auto reducer = MakeAllreducer(**comm, algorithm, 3);
    ASSERT_TRUE(reducer.ok()) << reducer.status().message();
    std::vector<float> data(5000, 1.0f);
    ASSERT_TRUE((*reducer)->Allreduce(data, WireDtype::kFp32, ReduceOp::kSum).ok());
    EXPECT_EQ(data.front(), N);
    EXPECT_EQ(data.back(), N);
    EXPECT_EQ((*reducer)->algorithm(), algorithm);
  }
}

// kShm reduces buffers kept in its resident storage in place: at every wire precision and for
// both ops the result equals the staged path's bit for bit, and memory around the buffer is left
// alone.
TEST(AllreduceResident, InPlaceMatchesStagedAndStaysInItsRange) {
  auto comm = Communicator::Init(nullptr, nullptr);
  ASSERT_TRUE(comm.ok()) << comm.status().message();
  const int r = (*comm)->rank();
  constexpr size_t kOffset = 5, kN = 100003;
  auto reducer = MakeAllreducer(**comm, AllreduceAlgorithm::kShm, kOffset + kN + 7);
  ASSERT_TRUE(reducer.ok()) << reducer.status().message();
  std::span<float> storage = (*reducer)->ResidentStorage();
  ASSERT_GE(storage.size(), kOffset + kN + 7);
  std::fill(storage.begin(), storage.end(), -7.0f);
  std::span<float> resident = storage.subspan(kOffset, kN);
  for (WireDtype dtype : {WireDtype::kFp32, WireDtype::kBf16, WireDtype::kFp16}) {
    for (ReduceOp op : {ReduceOp::kMean, ReduceOp::kSum}) {
      std::vector<float> staged(kN);
      for (size_t i = 0; i < kN; ++i) staged[i] = std::sin(0.001f * i + r) * (1.0f + r);
      std::copy(staged.begin(), staged.end(), resident.begin());
      ASSERT_TRUE((*reducer)->Allreduce(resident, dtype, op).ok());
      ASSERT_TRUE((*reducer)->Allreduce(staged, dtype, op).ok());
      EXPECT_EQ(std::memcmp(staged.data(), resident.data(), kN * sizeof(float)), 0)
          << ToString(dtype) << (op == ReduceOp::kMean ? " mean" : " sum");
    }
  }
  for (size_t i = 0; i < kOffset; ++i) EXPECT_EQ(storage[i], -7.0f) << i;
  for (size_t i = kOffset + kN; i < storage.size(); ++i) EXPECT_EQ(storage[i], -7.0f) << i;
  // Integer sums come back exact through the in-place path too.
  for (size_t i = 0; i < kN; ++i) resident[i] = static_cast<float>(r + 1 + i % 3);
  ASSERT_TRUE((*reducer)->Allreduce(resident, WireDtype::kFp32, ReduceOp::kSum).ok());
  const int N = (*comm)->size();
  for (size_t i = 0; i < kN; ++i) {
    ASSERT_EQ(resident[i], N * (N + 1) / 2 + N * static_cast<int>(i % 3)) << i;
  }
  // Algorithms without resident memory say so.
  auto ring = MakeAllreducer(**comm, AllreduceAlgorithm::kRing, kN);
  ASSERT_TRUE(ring.ok());
  EXPECT_TRUE((*ring)->ResidentStorage().empty());
}

}  // namespace
}  // namespace stepscope::comm
