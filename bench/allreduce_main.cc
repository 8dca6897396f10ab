// All-reduce benchmark: every algorithm and wire precision over a range of message sizes,
// with OpenMPI's MPI_Allreduce (kMpi, fp32) measured in the same run as the peer.
//
// For each configuration: warm-up, then iterations of {refill input (untimed), barrier,
// all-reduce}; an iteration's time is the slowest rank's. Reports min / median / p95 time,
// algbw = S / t and busbw = algbw * 2(N-1)/N (S = fp32 buffer bytes, whatever the wire
// precision), and #wrong: elements that differ from the closed form after the timed
// iterations, summed over ranks.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "comm/allreduce.h"
#include "comm/communicator.h"
#include "comm/ring_allreduce.h"
#include "comm/shm_allreduce.h"

namespace stepscope::comm {
namespace {

struct BenchOptions {
  // shm-resident: kShm on a buffer kept in its window (ResidentStorage), reduced in place, as
  // the trainer keeps its gradients.
  std::vector<std::string> algorithms = {"mpi", "ring", "shm", "shm-resident"};
  std::vector<std::string> dtypes = {"fp32", "bf16"};
  // fp32 payload sizes: 64 KiB .. 64 MiB in powers of 4, plus 25 MiB.
  std::vector<int64_t> sizes = {64 << 10, 256 << 10, 1 << 20, 4 << 20,
                                16 << 20, 25 << 20,  64 << 20};
  int warmup = 2;
  int min_iters = 5;
  int max_iters = 100;
  double seconds_per_config = 0.4;  // iterations are chosen to take about this long
  std::string label = "default";    // names the MPI configuration in RESULT lines
  bool memcpy = false;              // also measure memcpy bandwidth at each size
  RingOptions ring;                 // kRing tuning (segment size)
  ShmOptions shm;                   // kShm tuning (block size)
};

Result<std::unique_ptr<Allreducer>> Make(const Communicator& comm, AllreduceAlgorithm algorithm,
                                         size_t max_elements, const BenchOptions& options) {
  if (algorithm == AllreduceAlgorithm::kRing) {
    return MakeRingAllreducer(comm, max_elements, options.ring);
  }
  if (algorithm == AllreduceAlgorithm::kShm) {
    return MakeShmAllreducer(comm, max_elements, options.shm);
  }
  return MakeAllreducer(comm, algorithm, max_elements);
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * v.size())) - 1);
  return v[q <= 0 ? 0 : i];
}

// Rank r holds (r + 1) * (1 + (i mod 8) / 8): exact at every wire precision for small N.
void Fill(std::vector<float>& data, int rank) {
  for (size_t i = 0; i < data.size(); ++i) data[i] = (rank + 1) * (1.0f + (i % 8) / 8.0f);
}

int64_t CountWrong(const std::vector<float>& data, int ranks, WireDtype dtype) {
  const double u = dtype == WireDtype::kFp32   ? 1e-6
                   : dtype == WireDtype::kBf16 ? std::ldexp(1.0, -8)
                                               : std::ldexp(1.0, -11);
  int64_t wrong = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    const double expected = ranks * (ranks + 1) / 2.0 * (1.0 + (i % 8) / 8.0);
    if (!(std::abs(data[i] - expected) <= (ranks + 1) * u * expected)) ++wrong;
  }
  return wrong;
}

double MemcpyGBps(int64_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::vector<double> times;
  for (int i = 0; i < 7; ++i) {
    const double t0 = Now();
    std::memcpy(b.data(), a.data(), bytes);
    times.push_back(Now() - t0);
    a[i] = b[bytes - 1 - i];  // keep the copies observable
  }
  return bytes / Quantile(times, 0.5) / kGB;
}

int Run(const Communicator& comm, const BenchOptions& options) {
  const int N = comm.size(), rank = comm.rank();
  const int64_t max_bytes = *std::max_element(options.sizes.begin(), options.sizes.end());
  const size_t max_elements = max_bytes / sizeof(float);
  std::map<std::string, double> median_at;  // "algo/dtype/bytes" -> median seconds
  if (rank == 0) {
    std::printf("# all-reduce, %d ranks on %d host(s), label %s\n", N, comm.num_hosts(),
                options.label.c_str());
    std::printf("%-12s %-5s %10s %6s %9s %9s %9s %8s %8s %7s%s\n", "algo", "wire", "bytes", "iters",
                "min_ms", "med_ms", "p95_ms", "algbw", "busbw", "#wrong",
                options.memcpy ? "  memcpy_GB/s" : "");
  }
  std::vector<float> data(max_elements);
  for (const auto& algorithm_name : options.algorithms) {
    const bool resident = algorithm_name == "shm-resident";
    auto algorithm = ParseAllreduceAlgorithm(resident ? "shm" : algorithm_name);
    if (!algorithm.ok()) comm.Abort(algorithm.status().message());
    auto reducer = Make(comm, *algorithm, max_elements, options);
    if (!reducer.ok()) {
      if (rank == 0)
        std::printf("# %s skipped: %s\n", algorithm_name.c_str(),
                    reducer.status().message().c_str());
      continue;
    }
    std::span<float> memory = data;
    if (resident) memory = (*reducer)->ResidentStorage();
    for (const auto& dtype_name : options.dtypes) {
      auto dtype = ParseWireDtype(dtype_name);
      if (!dtype.ok()) comm.Abort(dtype.status().message());
      for (int64_t bytes : options.sizes) {
        std::span<float> buffer = memory.first(bytes / sizeof(float));
        std::vector<float> input(buffer.size());
        Fill(input, rank);
        auto iteration = [&]() {
          std::memcpy(buffer.data(), input.data(), buffer.size_bytes());
          MPI_Barrier(comm.world());
          const double t0 = Now();
          Status st = (*reducer)->Allreduce(buffer, *dtype, ReduceOp::kSum);
          double dt = Now() - t0, slowest = 0;
          if (!st.ok()) comm.Abort(st.message());
          MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.world());
          return slowest;
        };
        double first = 0;
        for (int i = 0; i < options.warmup; ++i) first = iteration();
        const int iters = std::clamp(static_cast<int>(options.seconds_per_config / first),
                                     options.min_iters, options.max_iters);
        std::vector<double> times;
        for (int i = 0; i < iters; ++i) times.push_back(iteration());
        const int64_t local_wrong =
            CountWrong(std::vector<float>(buffer.begin(), buffer.end()), N, *dtype);
        int64_t wrong = 0;
        MPI_Allreduce(&local_wrong, &wrong, 1, MPI_INT64_T, MPI_SUM, comm.world());
        const double median = Quantile(times, 0.5);
        median_at[algorithm_name + "/" + dtype_name + "/" + std::to_string(bytes)] = median;
        if (rank == 0) {
          const double algbw = bytes / median / kGB;
          const double busbw = AllreduceBusBandwidthGBps(bytes, median, N);
          std::printf("%-12s %-5s %10lld %6d %9.3f %9.3f %9.3f %8.3f %8.3f %7lld",
                      algorithm_name.c_str(), dtype_name.c_str(), static_cast<long long>(bytes),
                      iters, Quantile(times, 0) * 1e3, median * 1e3, Quantile(times, 0.95) * 1e3,
                      algbw, busbw, static_cast<long long>(wrong));
          if (options.memcpy) std::printf("  %11.3f", MemcpyGBps(bytes));
          std::printf("\n");
          std::printf("RESULT %s %s %s %lld %.6f %.4f\n", options.label.c_str(),
                      algorithm_name.c_str(), dtype_name.c_str(), static_cast<long long>(bytes),
                      median, busbw);
          std::fflush(stdout);
        }
      }
    }
  }
  // Our best algorithm at 25 MiB against MPI_Allreduce (fp32) from this same run.
  const std::string at = "/" + std::to_string(int64_t{25} << 20);
  if (rank == 0 && median_at.count("mpi/fp32" + at)) {
    const double peer = median_at["mpi/fp32" + at];
    for (const std::string dtype : {"fp32", "bf16"}) {
      std::string best;
      double best_time = 0;
      for (const std::string algorithm : {"ring", "shm", "shm-resident"}) {
        auto it = median_at.find(algorithm + "/" + dtype + at);
        if (it != median_at.end() && (best.empty() || it->second < best_time)) {
          best = algorithm;
          best_time = it->second;
        }
      }
      if (!best.empty()) {
        std::printf("# 25 MiB: best of ours at %s is %s, %.2fx MPI_Allreduce (%s, fp32)\n",
                    dtype.c_str(), best.c_str(), peer / best_time, options.label.c_str());
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace stepscope::comm

int main(int argc, char** argv) {
  stepscope::comm::BenchOptions options;
  CLI::App app{"All-reduce benchmark (run under mpirun)"};
  app.add_option("--algorithms", options.algorithms, "mpi, ring, shm, shm-resident");
  app.add_option("--dtypes", options.dtypes, "wire precisions: fp32, bf16, fp16");
  app.add_option("--sizes", options.sizes, "fp32 buffer sizes in bytes");
  app.add_option("--warmup", options.warmup, "untimed iterations per configuration");
  app.add_option("--min-iters", options.min_iters, "timed iterations, at least");
  app.add_option("--max-iters", options.max_iters, "timed iterations, at most");
  app.add_option("--seconds", options.seconds_per_config, "target time per configuration");
  app.add_option("--label", options.label, "names this MPI configuration in RESULT lines");
  app.add_flag("--memcpy", options.memcpy, "also print memcpy bandwidth at each size");
  app.add_option("--ring-segment-bytes", options.ring.segment_bytes, "kRing pipeline segment");
  app.add_option("--shm-block-elements", options.shm.block_elements, "kShm block per round");
  CLI11_PARSE(app, argc, argv);
  auto comm = stepscope::comm::Communicator::Init(&argc, &argv);
  if (!comm.ok()) {
    std::fprintf(stderr, "stepscope: %s\n", comm.status().message().c_str());
    return 1;
  }
  return stepscope::comm::Run(**comm, options);
}
