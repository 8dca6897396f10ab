#include "train/run_info.h"

#include <cblas.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <thread>

#include "comm/allreduce.h"
#include "core/cpu_dispatch.h"
#include "data/length_balancing.h"
#include "train/trainer.h"

#ifndef STEPSCOPE_VERSION
#define STEPSCOPE_VERSION "dev"
#endif

namespace stepscope::train {
namespace {

using nlohmann::json;

std::string OptimizerName(nn::OptimizerKind kind) {
  return kind == nn::OptimizerKind::kAdamW ? "adamw" : "sgd";
}

// Host name of every rank, in rank order (collective).
Result<std::vector<std::string>> GatherHosts(const comm::Communicator& comm) {
  constexpr int kLen = 256;
  char mine[kLen] = {};
  comm.hostname().copy(mine, kLen - 1);
  std::vector<char> all(static_cast<size_t>(kLen) * comm.size());
  if (MPI_Gather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, 0, comm.world()) !=
      MPI_SUCCESS) {
    return Status::Error("run.json: MPI_Gather of host names failed");
  }
  std::vector<std::string> hosts;
  for (int r = 0; r < comm.size(); ++r) hosts.emplace_back(&all[static_cast<size_t>(r) * kLen]);
  return hosts;
}

// Every rank's peak resident memory in bytes (getrusage), in rank order on rank 0 (collective).
Result<std::vector<int64_t>> GatherPeakResident(const comm::Communicator& comm) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const int64_t mine = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
  std::vector<int64_t> all(static_cast<size_t>(comm.size()));
  if (MPI_Gather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0, comm.world()) !=
      MPI_SUCCESS) {
    return Status::Error("run.json: MPI_Gather of peak memory failed");
  }
  return all;
}

// Per rank in GatherCpuPerStep: CPU per step, of it inside reductions, wall time per step.
constexpr int kCpuFields = 3;

// Every rank's process CPU seconds per steady step, of it what went inside reductions (-1 where
// unknown), and the wall time of its own steady steps per step (0 where unknown), in rank order
// on rank 0 (collective), flattened.
Result<std::vector<double>> GatherCpuPerStep(const comm::Communicator& comm, const RunSummary& s) {
  const double mine[kCpuFields] = {s.cpu ? s.cpu->cpu : -1.0,
                                   s.cpu && s.cpu->in_reductions ? *s.cpu->in_reductions : -1.0,
                                   s.cpu ? s.cpu->wall : 0.0};
  std::vector<double> all(static_cast<size_t>(comm.size()) * kCpuFields);
  if (MPI_Gather(mine, kCpuFields, MPI_DOUBLE, all.data(), kCpuFields, MPI_DOUBLE, 0,
                 comm.world()) != MPI_SUCCESS) {
    return Status::Error("run.json: MPI_Gather of CPU time failed");
  }
  return all;
}

// How much of their hosts' cores the ranks took over the steady steps (docs/train-output.md
// `cpu`); null when any rank's CPU time is unknown. The busiest host's share sums each rank's CPU
// over its own steps' wall time: a rank's CPU is tiled from its own step ends, and a rank that
// left the warm-up a step before the others counts a step more than the job's steps hold (the
// job's mean step stands in where a rank's wall time is unknown).
json CpuJson(const std::vector<double>& fields, const std::vector<std::string>& host_of_rank,
             unsigned cores, Seconds step_time_mean) {
  const size_t ranks = fields.size() / kCpuFields;
  if (ranks == 0 || cores == 0) return nullptr;
  std::vector<double> cpu(ranks), inside(ranks);
  std::map<std::string, double> per_host;
  bool inside_known = true, share_known = true;
  double cpu_sum = 0, inside_sum = 0;
  for (size_t r = 0; r < ranks; ++r) {
    cpu[r] = fields[kCpuFields * r], inside[r] = fields[kCpuFields * r + 1];
    if (cpu[r] < 0) return nullptr;
    const double wall =
        fields[kCpuFields * r + 2] > 0 ? fields[kCpuFields * r + 2] : step_time_mean;
    inside_known = inside_known && inside[r] >= 0;
    share_known = share_known && wall > 0;
    cpu_sum += cpu[r], inside_sum += inside[r];
    if (wall > 0) per_host[host_of_rank[r]] += cpu[r] / wall;
  }
  double busiest = 0;
  for (const auto& [host, used] : per_host) busiest = std::max(busiest, used);
  const double n = static_cast<double>(ranks);
  return {{"per_step_s", cpu_sum / n},
          {"per_rank_per_step_s", cpu},
          {"in_reductions_per_step_s", inside_known ? json(inside_sum / n) : json(nullptr)},
          {"per_rank_in_reductions_per_step_s", inside_known ? json(inside) : json(nullptr)},
          {"outside_reductions_per_step_s",
           inside_known ? json((cpu_sum - inside_sum) / n) : json(nullptr)},
          {"busiest_host_share", share_known ? json(busiest / cores) : json(nullptr)},
          {"how",
           "each rank's process CPU time (every thread, user and system) over the steady steps, "
           "per step; in reductions: the part the reducing thread spent inside the gradient "
           "reductions (their arithmetic, and their spinning while they wait for other ranks); "
           "outside reductions: the rest, work that needs a core whoever else waits; the busiest "
           "host's share: the sum over its ranks of each one's CPU over its own steps' time, over "
           "its cores"}};
}

// Memory per replica: what the model's buffers hold (weights, gradients, optimizer state, the
// activations a micro-batch saves for backward) and the peak resident memory measured on the
// rank that peaked highest (the process: those buffers plus data, loader, communication).
json MemoryJson(const TrainOptions& o, const RunSummary& s, const std::vector<int64_t>& peaks) {
  const int64_t parameters = s.model.parameters * 4;
  // AdamW keeps two moments per parameter, SGD its velocity (allocated whatever the momentum).
  const int64_t state_floats = o.optimizer.kind == nn::OptimizerKind::kAdamW ? 2 : 1;
  const int64_t optimizer = s.model.parameters * 4 * state_floats;
  const int64_t activations = s.model.activation_bytes_per_sample * o.batch;
  int peak_rank = 0;
  for (size_t r = 0; r < peaks.size(); ++r) {
    if (peaks[r] > peaks[static_cast<size_t>(peak_rank)]) peak_rank = static_cast<int>(r);
  }
  return {{"parameters_bytes", parameters},
          {"gradients_bytes", s.model.gradient_bytes},
          {"optimizer_state_bytes", optimizer},
          {"activations_bytes", activations},
          {"model_bytes", parameters + s.model.gradient_bytes + optimizer + activations},
          {"peak_resident_bytes", peaks.empty() ? 0 : peaks[static_cast<size_t>(peak_rank)]},
          {"peak_rank", peak_rank}};
}

}  // namespace

json OptionsToJson(const TrainOptions& o) {
  json model{{"kind", ToString(o.model.kind)}, {"seed", o.model.seed}};
  switch (o.model.kind) {
    case nn::ModelKind::kMlp:
      model["hidden"] = o.model.hidden;
      break;
    case nn::ModelKind::kCnn:
      model["channels"] = o.model.cnn_channels;
      break;
    case nn::ModelKind::kGpt:
      model["layers"] = o.model.gpt_layers;
      model["width"] = o.model.gpt_width;
      model["heads"] = o.model.gpt_heads;
      model["context"] = o.model.gpt_context;
      break;
  }
  json stragglers = json::array();
  for (const StragglerInjection& st : o.injection.stragglers) {
    stragglers.push_back({{"rank", st.rank}, {"factor", st.factor}});
  }
  return json{
      {"model", model},
      {"optimizer",
       {{"kind", OptimizerName(o.optimizer.kind)},
        {"lr", o.optimizer.lr},
        {"momentum", o.optimizer.momentum},
        {"weight_decay", o.optimizer.weight_decay}}},
      {"batch", o.batch},
      {"accum", o.accum},
      {"steps", o.steps},
      {"epochs", o.epochs},
      {"warmup_steps", o.warmup_steps},
      {"seed", o.seed},
      {"data", o.dataset() == DatasetKind::kText ? o.text : o.data_dir},
      {"loader_workers", o.loader_workers},
      {"prefetch", o.prefetch},
      {"augment", o.augment},
      {"synthetic_input", o.synthetic_input},
      {"reducer",
       {{"bucket_mb", o.reducer.bucket_mb},
        {"overlap", o.reducer.overlap},
        {"reduce", o.reducer.reduce},
        {"dtype", comm::ToString(o.reducer.dtype)},
        {"allreduce", ToString(o.reducer.algorithm)},
        {"measure_wire_error", o.reducer.measure_wire_error}}},
      {"variable_length", o.variable_length},
      {"balance_lengths", o.balance_lengths},
      {"injection",
       {{"stragglers", stragglers},
        {"noise", o.injection.noise_rank >= 0
                      ? json{{"rank", o.injection.noise_rank}, {"share", o.injection.noise_share}}
                      : json(nullptr)},
        {"input_delay_ms", o.injection.input_delay_ms}}},
  };
}

// Every rank's tally of its steady batches, as drawn and bucketed (data/length_balancing.h),
// summed on rank 0.
Result<data::LengthTally> GatherLengths(const comm::Communicator& comm, const RunSummary& s) {
  const double mine[3] = {s.lengths.drawn_work, s.lengths.drawn_tokens, s.lengths.bucketed_work};
  double sum[3] = {};
  if (MPI_Reduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, 0, comm.world()) != MPI_SUCCESS) {
    return Status::Error("run.json: MPI_Reduce of the length tallies failed");
  }
  return data::LengthTally{sum[0], sum[1], sum[2]};
}

// Variable-length text: what the job's batches padded over its steady steps, and what
// length-bucketed batches would change (data/length_balancing.h); null for fixed-length batches.
json LengthsJson(const TrainOptions& o, const data::LengthTally& tally) {
  if (!o.variable_length) return nullptr;
  const int b = o.batch, t = o.model.gpt_context;
  return json{
      {"balanced", o.balance_lengths},
      {"buckets", data::kLengthBuckets},
      {"padded_share", tally.PaddedShare()},
      {"bucketed_work_ratio", tally.WorkRatio()},
      {"bucketed_spread", data::StepSpread({.variable = true, .balanced = true}, o.seed, b, t)}};
}

json SoftwareVersions() {
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  std::string mpi_version(mpi, static_cast<size_t>(len));
  if (auto nl = mpi_version.find('\n'); nl != std::string::npos) mpi_version.resize(nl);
  return json{{"stepscope", STEPSCOPE_VERSION},
              {"compiler", __VERSION__},
              {"mpi", mpi_version},
              {"openblas", openblas_get_config()}};
}

Status WriteRunJson(const std::string& dir, const TrainOptions& o, const RunSummary& s,
                    const comm::Communicator& comm) {
  auto hosts = GatherHosts(comm);
  if (!hosts.ok()) return hosts.status();
  auto peaks = GatherPeakResident(comm);
  if (!peaks.ok()) return peaks.status();
  auto cpu = GatherCpuPerStep(comm, s);
  if (!cpu.ok()) return cpu.status();
  auto lengths = GatherLengths(comm, s);
  if (!lengths.ok()) return lengths.status();
  if (comm.rank() != 0) return Status::Ok();
  std::map<std::string, int> per_host;
  for (const auto& h : hosts.value()) ++per_host[h];

  json eval = nullptr;
  if (s.eval.done) {
    eval = {{"examples", s.eval.count}, {"loss", s.eval.loss}};
    if (s.eval.accuracy >= 0) eval["accuracy"] = s.eval.accuracy;
    if (s.eval.bits_per_byte >= 0) eval["bits_per_byte"] = s.eval.bits_per_byte;
  }
  const bool emulated = o.emulation.active();
  json j{
      {"schema", "stepscope.run/1"},
      {"config", OptionsToJson(o)},
      {"model",
       {{"description", s.model_description},
        {"parameters", s.model.parameters},
        {"gradient_bytes", s.model.gradient_bytes},
        {"flops_per_sample", s.model.flops_per_sample},
        {"activation_bytes_per_sample", s.model.activation_bytes_per_sample},
        {"ready_slices_bytes", s.ready_slice_bytes},
        {"ready_slices_backward_share", s.ready_slice_backward_share}}},
      {"memory", MemoryJson(o, s, peaks.value())},
      {"lengths", LengthsJson(o, lengths.value())},
      {"cpu",
       CpuJson(cpu.value(), hosts.value(), std::thread::hardware_concurrency(), s.step_time_mean)},
      {"dataset", s.dataset_description},
      {"replicas", s.replicas},
      {"hosts", per_host},
      {"host_of_rank", hosts.value()},
      {"cores_per_host", std::thread::hardware_concurrency()},
      {"instruction_set", DispatchLevel()},
      {"clock", {{"offset_s", comm.clock_offset()}, {"max_error_s", comm.clock_error()}}},
      {"allreduce", s.allreduce},
      {"buckets_per_step", s.buckets_per_step},
      {"latency_probe",
       s.latency_probe
           ? json{{"bytes", s.latency_probe->bytes},
                  {"seconds", s.latency_probe->seconds},
                  {"how", fmt::format("all-reduces of {} bytes per rank through the run's own "
                                      "reduction path after its steps, each begun together "
                                      "after a barrier, {} before them not kept; each one's "
                                      "duration as the last rank to begin it saw it",
                                      s.latency_probe->bytes, kLatencyProbeWarmup)}}
           : json(nullptr)},
      {"steps", s.steps},
      {"steady_steps", s.steady_steps},
      {"samples_per_step", s.replicas * o.batch * o.accum},
      {"samples_per_s", s.samples_per_s},
      {"step_time_mean_s", s.step_time_mean},
      {"wall_time_s", s.wall_time},
      {"startup_s", s.startup_s},
      {"evaluation_s", s.evaluation_s},
      {"evaluations", s.evaluations},
      {"final_loss", s.final_loss},
      {"target",
       {{"loss", o.target_loss ? json(*o.target_loss) : json(nullptr)},
        {"accuracy", o.target_accuracy ? json(*o.target_accuracy) : json(nullptr)},
        {"eval_every", o.EvalEvery()},
        {"reached", s.steps_to_target.has_value()},
        {"steps_to_target", s.steps_to_target ? json(*s.steps_to_target) : json(nullptr)},
        {"samples_to_target", s.steps_to_target
                                  ? json(*s.steps_to_target * s.replicas * o.batch * o.accum)
                                  : json(nullptr)},
        {"smoothed_loss", s.smoothed_loss},
        {"smoothing", fmt::format("exponential moving average of the mean training loss over "
                                  "ranks, weight {} per step, compared from step {}",
                                  kTargetSmoothing, kTargetFirstStep)}}},
      {"eval", eval},
      {"gradient_noise",
       {{"mean_local_grad_sq", s.mean_local_grad_sq},
        {"mean_global_grad_sq", s.mean_global_grad_sq},
        {"local_batch", o.batch * o.accum},
        {"global_batch", s.replicas * o.batch * o.accum},
        {"b_noise", s.noise_scale >= 0 ? json(s.noise_scale) : json(nullptr)},
        {"b_noise_over_training",
         s.noise_over_training.known ? json(s.noise_over_training.b_noise) : json(nullptr)},
        {"over_training_least",
         s.noise_over_training.known ? json(s.noise_over_training.b_noise_low) : json(nullptr)},
        {"over_training_most",
         s.noise_over_training.known ? json(s.noise_over_training.b_noise_high) : json(nullptr)},
        {"over_training_how", s.noise_over_training.reason}}},
      {"wire_error", s.wire_relative_error >= 0 ? json{{"dtype", comm::ToString(o.reducer.dtype)},
                                                       {"relative", s.wire_relative_error},
                                                       {"relative_max", s.wire_relative_error_max},
                                                       {"steps", s.wire_error_steps}}
                                                : json(nullptr)},
      {"emulation",
       {{"emulated", emulated},
        {"device_speed", o.emulation.device_speed},
        {"link_gbps", o.emulation.link_gbps},
        {"link_latency_us", o.emulation.link_latency_us},
        {"paced_segments", s.paced_segments},
        {"unhonoured_segments", s.unhonoured_segments},
        {"unhonoured_links", s.unhonoured_links},
        {"counted_steps", s.steady_steps},
        {"device",
         {{"calibration", s.device_calibration},
          {"file", o.emulation.device_file.empty() ? json(nullptr) : json(o.emulation.device_file)},
          {"calibrated_by",
           s.device_calibrated_by.empty() ? json(nullptr) : json(s.device_calibrated_by)},
          {"cost_per_work_s", s.device_cost_per_work}}}}},
      {"software", SoftwareVersions()},
  };
  const std::string path = dir + "/run.json";
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) return Status::Error(path + ": write failed");
  return Status::Ok();
}

}  // namespace stepscope::train
