// A stand-in for the all-reduce of `world` identical replicas, in one process, for the tests of
// what drives it (the reducer, the latency probe).
#pragma once

#include <chrono>
#include <mutex>
#include <span>
#include <thread>

#include "comm/allreduce.h"
#include "comm/wire_dtype.h"
#include "core/units.h"

namespace stepscope::train {

// Stands in for `world` identical replicas: a sum multiplies by the world size, a mean keeps the
// values. Counts what it reduced; optionally fails or takes its time.
class FakeAllreducer final : public comm::Allreducer {
 public:
  explicit FakeAllreducer(int world) : world_(world) {}

  Status Allreduce(std::span<float> data, comm::WireDtype dtype, comm::ReduceOp op) override {
    if (dtype == comm::WireDtype::kBf16) {  // the wire rounds each value, as a bf16 one does
      for (float& x : data) x = comm::Bf16ToFloat(comm::FloatToBf16(x));
    }
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    if (fail_) return Status::Error("link down");
    if (op == comm::ReduceOp::kSum) {
      for (float& x : data) x *= static_cast<float>(world_);
    }
    std::lock_guard<std::mutex> lock(mu_);
    elements_ += data.size();
    ++calls_;
    return Status::Ok();
  }
  comm::AllreduceAlgorithm algorithm() const override { return comm::AllreduceAlgorithm::kShm; }

  size_t elements() {
    std::lock_guard<std::mutex> lock(mu_);
    return elements_;
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  int delay_ms_ = 0;
  bool fail_ = false;

 private:
  int world_;
  std::mutex mu_;
  size_t elements_ = 0;
  int calls_ = 0;
};

// The tests' clock for the reducer: steady seconds.
inline Seconds SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace stepscope::train
