#include "train/trainer.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <thread>

#include "comm/mpi_status.h"
#include "core/clock.h"
#include "data/prng.h"
#include "data/source.h"
#include "decide/noise_scale.h"
#include "nn/optimizer.h"
#include "train/device_file.h"
#include "train/pacer.h"
#include "train/param_checksum.h"
#include "train/process_cpu.h"
#include "train/progress.h"
#include "train/recorder.h"
#include "train/reducer.h"
#include "train/run_queue.h"
#include "train/slice_readiness.h"
#include "train/watchdog.h"

namespace stepscope::train {
namespace {

// The emulated device speed needs this much of a core per replica to be honoured.
Status CheckEmulationFeasible(const EmulationOptions& e, const comm::Communicator& comm) {
  if (e.device_speed <= 0) return Status::Ok();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // Each replica needs F of a core for compute plus headroom for its communication thread.
  const double share = static_cast<double>(cores) / comm.local_size();
  if (e.device_speed > 0.8 * share) {
    return Status::Error("--emulate-device-speed " + std::to_string(e.device_speed) +
                         ": this host has " + std::to_string(cores) + " cores for " +
                         std::to_string(comm.local_size()) +
                         " replicas, so it cannot honour more than " + std::to_string(0.8 * share) +
                         " of a core each; lower F or the replicas");
  }
  return Status::Ok();
}

comm::AllreduceAlgorithm Resolve(AllreduceChoice choice, const comm::Communicator& comm) {
  switch (choice) {
    case AllreduceChoice::kMpi:
      return comm::AllreduceAlgorithm::kMpi;
    case AllreduceChoice::kRing:
      return comm::AllreduceAlgorithm::kRing;
    case AllreduceChoice::kShm:
      return comm::AllreduceAlgorithm::kShm;
    case AllreduceChoice::kAuto:
      break;
  }
  return comm.num_hosts() == 1 ? comm::AllreduceAlgorithm::kShm : comm::AllreduceAlgorithm::kRing;
}

Result<data::Split> LoadData(const TrainOptions& o) {
  if (o.dataset() == DatasetKind::kText) return data::LoadText(o.text, o.model.gpt_context);
  return data::LoadFashionMnist(o.data_dir);
}

// Each element of `v` replaced by its least over the ranks.
Status LeastOverRanks(const comm::Communicator& comm, std::vector<double>* v) {
  return comm::MpiStatus(MPI_Allreduce(MPI_IN_PLACE, v->data(), static_cast<int>(v->size()),
                                       MPI_DOUBLE, MPI_MIN, comm.world()),
                         "MPI_Allreduce (the least over the ranks)", comm.rank());
}

Status Barrier(const comm::Communicator& comm) {
  return comm::MpiStatus(MPI_Barrier(comm.world()), "MPI_Barrier", comm.rank());
}

// Emulated devices are identical: every rank paces each segment to the least cost per unit of
// work any rank measured for it (train/pacer.h), or, with a device file, to the cost the sweep's
// first run of this compute shape measured (train/device_file.h). Left uncalibrated when the
// ranks' segment counts differ. Rank 0 alone reads and writes the file and broadcasts the
// outcome, so a file error ends every rank with the same message.
Status CalibrateDevices(ComputePacer* pacer, const TrainOptions& o, const std::string& shape,
                        const comm::Communicator& comm, RunSummary* summary) {
  std::vector<Seconds> cost = pacer->CostPerWork();
  long long counts[2] = {static_cast<long long>(cost.size()), -static_cast<long long>(cost.size())};
  if (MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG_LONG, MPI_MAX, comm.world()) != MPI_SUCCESS) {
    return Status::Error("emulation: MPI_Allreduce of the segment counts failed");
  }
  if (counts[0] != -counts[1] || cost.empty()) return Status::Ok();
  for (Seconds& c : cost) {
    if (!(c > 0)) c = std::numeric_limits<double>::infinity();  // unmeasured: no say
  }
  STEPSCOPE_RETURN_IF_ERROR(
      LeastOverRanks(comm, &cost).WithContext("emulation: the devices' costs"));
  summary->device_calibration = "own";
  if (!o.emulation.device_file.empty()) {
    // 0: this run's own cost (recorded in the file), 1: the file's, -1: rank 0 failed.
    int outcome = 0;
    Status file_status;
    std::vector<Seconds> shared = cost;
    if (comm.rank() == 0) {
      Result<std::optional<DeviceCalibration>> found = FindDevice(o.emulation.device_file, shape);
      if (!found.ok()) {
        file_status = found.status();
      } else if (found.value() && found.value()->cost_per_work.size() == cost.size()) {
        shared = found.value()->cost_per_work;
        summary->device_calibrated_by = found.value()->calibrated_by;
        outcome = 1;
      } else {
        // A device of this shape with another segment count is the same model split otherwise
        // (it cannot be paced segment by segment): this run's own calibration replaces it.
        file_status = RecordDevice(o.emulation.device_file, {shape, cost, o.out});
      }
      if (!file_status.ok()) outcome = -1;
    }
    if (MPI_Bcast(&outcome, 1, MPI_INT, 0, comm.world()) != MPI_SUCCESS ||
        MPI_Bcast(shared.data(), static_cast<int>(shared.size()), MPI_DOUBLE, 0, comm.world()) !=
            MPI_SUCCESS) {
      return Status::Error("emulation: MPI_Bcast of the device file's costs failed");
    }
    if (outcome < 0) {
      return comm.rank() == 0
                 ? file_status.WithContext("--emulate-device-file")
                 : Status::Error("--emulate-device-file: rank 0 could not use the device file");
    }
    if (outcome == 1) {
      cost = std::move(shared);
      summary->device_calibration = "shared";
    }
  }
  summary->device_cost_per_work = cost;
  pacer->Calibrate(std::move(cost));
  return Status::Ok();
}

// Held-out evaluation: rank r evaluates examples r, r+N, ...; the sums are reduced.
Result<EvalSummary> Evaluate(nn::Model& model, const data::Dataset& test, const TrainOptions& o,
                             const comm::Communicator& comm) {
  const int64_t n = o.eval_limit > 0 ? std::min(o.eval_limit, test.size()) : test.size();
  const int chunk = o.dataset() == DatasetKind::kText ? 16 : 256;
  double sums[3] = {0, 0, 0};  // loss_sum, correct, count
  std::vector<int64_t> indices;
  Batch batch;
  for (int64_t i = comm.rank(); i < n;) {
    indices.clear();
    for (; i < n && static_cast<int>(indices.size()) < chunk; i += comm.size())
      indices.push_back(i);
    test.Fill(indices, /*augment=*/false, 0, &batch);
    nn::EvalResult r = model.Evaluate(batch);
    sums[0] += r.loss_sum;
    sums[1] += static_cast<double>(r.correct);
    sums[2] += static_cast<double>(r.count);
  }
  if (MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm.world()) != MPI_SUCCESS) {
    return Status::Error("evaluation: MPI_Allreduce failed");
  }
  EvalSummary e;
  e.done = true;
  e.count = static_cast<int64_t>(sums[2]);
  e.loss = sums[2] > 0 ? sums[0] / sums[2] : 0;
  if (o.dataset() == DatasetKind::kText) {
    e.bits_per_byte = e.loss / std::log(2.0);
  } else {
    e.accuracy = sums[2] > 0 ? sums[1] / sums[2] : 0;
  }
  return e;
}

Status SaveParams(const std::string& path, std::span<const float> params) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(params.data()),
            static_cast<std::streamsize>(params.size_bytes()));
  if (!out) return Status::Error(path + ": cannot write parameters (--save-params)");
  return Status::Ok();
}

// Fault injection for ground-truth tests: a rank that stops making progress, or dies.
void InjectFaults(const InjectionOptions& inj, int rank, int64_t step) {
  if (rank == inj.crash_rank && step == inj.crash_step) std::raise(SIGKILL);
  if (rank == inj.hang_rank && step == inj.hang_step) {
    for (;;) SleepSeconds(3600);  // the watchdogs of the other ranks end the job
  }
}

Seconds Sum(const std::vector<Interval>& v) {
  Seconds s = 0;
  for (const auto& i : v) s += i.end - i.begin;
  return s;
}

}  // namespace

Result<RunSummary> Train(const TrainOptions& o, const comm::Communicator& comm) {
  const int rank = comm.rank();
  const int world = comm.size();
  const Seconds wall_begin = comm.Now();
  openblas_set_num_threads(1);  // one core per replica: the parallelism is the replicas'
  STEPSCOPE_RETURN_IF_ERROR(Validate(o, world));
  STEPSCOPE_RETURN_IF_ERROR(CheckEmulationFeasible(o.emulation, comm));

  auto split = LoadData(o);
  if (!split.ok()) return split.status();
  auto model_or = nn::MakeModel(o.model);
  if (!model_or.ok()) return model_or.status();
  nn::Model& model = *model_or.value();
  auto optimizer = nn::MakeOptimizer(o.optimizer, model.params().size());

  std::unique_ptr<comm::Allreducer> allreducer;
  const comm::AllreduceAlgorithm algorithm = Resolve(o.reducer.algorithm, comm);
  if (o.reducer.reduce) {
    auto a = comm::MakeAllreducer(comm, algorithm, model.grads().size());
    if (!a.ok()) return a.status();
    allreducer = std::move(a.value());
    // Gradients kept where the algorithm can reduce them in place (kShm's window) skip its
    // staging copies; too small a region (never expected) leaves them where they are.
    std::span<float> resident = allreducer->ResidentStorage();
    if (world > 1 && !resident.empty()) model.RelocateGrads(resident);
  }

  data::LoaderOptions lo;
  lo.batch = o.batch;
  lo.workers = o.loader_workers;
  lo.prefetch = o.prefetch;
  lo.seed = o.seed;
  lo.rank = rank;
  lo.world = world;
  lo.augment = o.augment;
  lo.synthetic = o.synthetic_input;
  lo.input_delay_ms = o.injection.input_delay_ms;
  // Through the warm-up the workers stay one step's batches ahead (data::Loader::SetLookahead);
  // the first steady step lets them run the whole prefetch ahead.
  lo.lookahead = o.warmup_steps > 0 ? o.accum : 0;
  lo.lengths.variable = o.variable_length;
  lo.lengths.balanced = o.balance_lengths;
  auto loader_or = data::Loader::Create(*split->train, lo);
  if (!loader_or.ok()) return loader_or.status();
  data::Loader& loader = *loader_or.value();

  const int64_t per_epoch = std::max<int64_t>(1, loader.batches_per_epoch() / o.accum);
  const int64_t total_steps =
      o.steps > 0
          ? o.steps
          : std::max<int64_t>(1, static_cast<int64_t>(o.epochs * static_cast<double>(per_epoch)));
  // Steps before --warmup-steps are warm-up, unless the run is no longer than that (then every
  // step is measured, and the loader runs the whole prefetch ahead from the start).
  const bool has_warmup = o.warmup_steps > 0 && total_steps > o.warmup_steps;
  if (!has_warmup) loader.SetLookahead(o.prefetch);

  std::unique_ptr<RankRecorder> recorder;
  if (!o.out.empty()) {
    auto r = RankRecorder::Open(o.out, rank);
    if (!r.ok()) return r.status();
    recorder = std::move(r.value());
  }

  double slowdown = o.emulation.device_speed > 0 ? 1.0 / o.emulation.device_speed : 1.0;
  for (const StragglerInjection& s : o.injection.stragglers) {
    if (rank == s.rank) slowdown *= s.factor;
  }
  CoTenant co_tenant;
  if (rank == o.injection.noise_rank) {
    co_tenant = {o.injection.noise_share, data::MixSeed(o.seed, static_cast<uint64_t>(rank))};
  }
  ComputePacer pacer(slowdown, co_tenant);
  // Paced compute takes its emulated time whatever the core's queue, so only unpaced runs say
  // how much of their compute was spent waiting for a core.
  const RunQueueClock run_queue = pacer.active() ? RunQueueClock() : RunQueueClock::ForThisThread();
  Reducer reducer(model.grads(), o.reducer, o.emulation, allreducer.get(), world,
                  [&comm] { return comm.Now(); });
  Progress progress(o.progress && rank == 0, total_steps);
  auto board = comm::HeartbeatBoard::Create(comm);
  if (!board.ok()) return board.status();
  Watchdog watchdog(WatchdogHooks::For(comm, board.value().get()), o.stall_timeout_s);
  const Seconds to_aligned = comm.clock_offset();  // steady-clock seconds -> aligned seconds
  const int64_t samples_per_step = static_cast<int64_t>(o.batch) * o.accum;

  RunSummary summary;
  // Each steady step's start and end on this rank's aligned clock; reduced to the latest over
  // the ranks for the job's step (docs/metrics.md "The job's step").
  std::vector<double> steady_starts, steady_ends;
  SliceReadiness slice_readiness;  // rank 0's, written to run.json
  std::vector<double> recent_losses;
  double local_sq_sum = 0, global_sq_sum = 0;
  int64_t grad_sq_steps = 0;
  // Every sampled step's norms in training order, warm-up included (the noise scale over
  // training, decide/noise_scale.h).
  std::vector<double> sampled_local_sq, sampled_global_sq;
  double wire_error_sq = 0, wire_exact_sq = 0;  // --measure-wire-error, over the sampled steps

  model.ZeroGrads();  // from here on the optimizer leaves them zeroed after each update
  // Steps tile the run: each starts where the previous one ended, so the work between them
  // (writing records, the replica checksum) counts as the next step's overhead, not as no time.
  Seconds previous_end = -1;
  // The process's CPU time over the steady steps, tiled as the steps' times are (run.json cpu).
  StepCpu steady_cpu;
  // The emulated devices' common speed is fixed at the end of the warm-up (at least one step).
  const int64_t calibration_step =
      std::max<int64_t>(1, std::min<int64_t>(o.warmup_steps, total_steps)) - 1;
  int64_t steps_run = total_steps;
  double smoothed_loss = std::numeric_limits<double>::quiet_NaN();
  const int64_t eval_every = o.evaluate ? o.EvalEvery() : 0;
  int64_t last_eval_step = -1;  // steps done when the held-out set was last evaluated
  // Evaluates the held-out set after `steps_done` steps, counting its time apart from the
  // steps (evaluation_s); true when that reaches --target-accuracy (steps_to_target is set).
  auto evaluate_held_out = [&](int64_t steps_done) -> Result<bool> {
    const Seconds begin = comm.Now();
    Result<EvalSummary> e = Evaluate(model, *split->test, o, comm);
    if (!e.ok()) return e.status();
    summary.eval = e.value();
    summary.evaluations += 1;
    summary.evaluation_s += comm.Now() - begin;
    last_eval_step = steps_done;
    const bool reached = o.target_accuracy && e->accuracy >= *o.target_accuracy;
    if (reached) summary.steps_to_target = steps_done;
    return reached;
  };
  for (int64_t step = 0; step < total_steps; ++step) {
    StepRecord rec;
    StepTimeline tl;
    rec.rank = rank;
    rec.step = step;
    // A run too short for its warm-up keeps every step (and says so in run.json).
    rec.warmup = has_warmup && step < o.warmup_steps;
    rec.micro_batches = o.accum;
    rec.samples = samples_per_step;
    if (previous_end < 0) steady_cpu.Mark();
    rec.start = previous_end >= 0 ? previous_end : comm.Now();
    if (step == 0) summary.startup_s = rec.start - wall_begin;
    watchdog.Publish(step, comm::HeartbeatPhase::kCompute);
    InjectFaults(o.injection, rank, step);
    // Honour is counted over the measured steps: the warm-up's are paced alike but not measured.
    pacer.BeginStep(step, !rec.warmup);
    if (has_warmup && step == o.warmup_steps) loader.SetLookahead(o.prefetch);
    // One replica has no noise scale to estimate (B = b): no norms, no extra passes.
    reducer.BeginStep(world > 1 && step % o.grad_norm_every == 0, !rec.warmup);
    double loss = 0;
    CpuWait cpu_wait;
    for (int micro = 0; micro < o.accum; ++micro) {
      const bool reducing = micro + 1 == o.accum;
      watchdog.Publish(step, comm::HeartbeatPhase::kInput);
      Interval wait{comm.Now(), 0};
      Batch batch = loader.Next();
      watchdog.Publish(step, comm::HeartbeatPhase::kCompute);
      wait.end = comm.Now();
      tl.input_waits.push_back(wait);
      if (batch.load_end > 0)
        tl.loads.push_back({batch.load_begin + to_aligned, batch.load_end + to_aligned});
      rec.epoch = batch.epoch;
      if (!rec.warmup) {
        summary.lengths.Add(lo.lengths, {.seed = o.seed,
                                         .epoch = batch.epoch,
                                         .index = batch.index,
                                         .rank = rank,
                                         .batch = batch.size,
                                         .context = o.model.gpt_context});
      }

      // The batch's work for pacing: its tokens (variable-length text), else one unit.
      const double work = batch.tokens.empty() ? 1.0 : static_cast<double>(batch.tokens.size());
      if (o.variable_length && !batch.tokens.empty()) {
        rec.tokens = rec.tokens.value_or(0) + static_cast<int64_t>(batch.tokens.size());
      }
      Interval fwd{comm.Now(), 0};
      cpu_wait.Begin(run_queue);
      pacer.Begin();
      loss += model.Forward(batch) / o.accum;
      pacer.End(work);
      fwd.end = comm.Now();
      tl.forwards.push_back(fwd);

      Interval bwd{comm.Now(), 0};
      pacer.Begin();
      nn::GradReadyFn ready;
      if (reducing) {
        rec.backward_start = bwd.begin;  // the backward pass whose buckets get reduced
        slice_readiness.BeginBackward(bwd.begin);
        ready = [&](size_t offset, size_t count) {
          if (step == 0) {
            summary.ready_slice_bytes.push_back(static_cast<int64_t>(count * sizeof(float)));
          }
          // Pace the compute so far, so the bucket's arrival reflects the emulated device.
          pacer.End(work);
          slice_readiness.SliceReady(comm.Now());
          reducer.OnGradReady(offset, count);
          pacer.Begin();
        };
      }
      model.Backward(1.0f / static_cast<float>(o.accum), ready);
      pacer.End(work);
      bwd.end = comm.Now();
      if (reducing) slice_readiness.EndBackward(bwd.end, !rec.warmup);
      cpu_wait.End(run_queue);
      tl.backwards.push_back(bwd);
      loader.Recycle(std::move(batch));  // the workers reuse its buffers
    }
    watchdog.Publish(step, comm::HeartbeatPhase::kAllreduce);
    tl.exposed_wait.begin = comm.Now();
    auto exposed = reducer.FinishStep();
    watchdog.Publish(step, comm::HeartbeatPhase::kCompute);
    if (!exposed.ok()) return exposed.status().WithContext("step " + std::to_string(step));
    tl.exposed_wait.end = comm.Now();
    ReduceStats rs = reducer.TakeStats();
    if (o.emulation.link_gbps > 0 && world > 1 && o.reducer.reduce) {
      // Every rank paces its emulated link from the quickest reduction any rank has seen, so
      // that the collectives end together (Reducer::QuickestReductions). Every rank has the
      // same buckets; after the step's own reductions the ranks are together here anyway.
      std::vector<Seconds> quickest = reducer.QuickestReductions();
      STEPSCOPE_RETURN_IF_ERROR(LeastOverRanks(comm, &quickest)
                                    .WithContext("step " + std::to_string(step) +
                                                 ": emulation: the quickest reductions"));
      reducer.SetQuickestReductions(std::move(quickest));
    }
    if (rs.wire_exact_sq > 0) {
      wire_error_sq += rs.wire_error_sq;
      wire_exact_sq += rs.wire_exact_sq;
      summary.wire_relative_error_max =
          std::max(summary.wire_relative_error_max, std::sqrt(rs.wire_error_sq / rs.wire_exact_sq));
      ++summary.wire_error_steps;
    }

    tl.optimizer.begin = comm.Now();
    cpu_wait.Begin(run_queue);
    pacer.Begin();
    optimizer->StepAndZeroGrads(model.params(), model.grads());
    pacer.End();
    tl.optimizer.end = comm.Now();
    cpu_wait.End(run_queue);
    rec.end = comm.Now();
    previous_end = rec.end;
    if (rec.warmup) {
      steady_cpu.Mark();
    } else {
      steady_cpu.Add(rs.collective_cpu);
    }

    rec.input_wait = Sum(tl.input_waits);
    rec.forward = Sum(tl.forwards);
    rec.backward = Sum(tl.backwards);
    rec.optimizer = tl.optimizer.end - tl.optimizer.begin;
    rec.compute = rec.forward + rec.backward + rec.optimizer;
    rec.cpu_wait = cpu_wait.Total(rec.compute);
    rec.exposed_comm = tl.exposed_wait.end - tl.exposed_wait.begin;
    rec.comm_busy = rs.comm_busy;
    rec.loss = loss;
    rec.local_grad_sq = rs.local_grad_sq;
    rec.global_grad_sq = rs.global_grad_sq;
    rec.collectives = std::move(rs.collectives);
    if (!std::isfinite(loss)) {
      return Status::Error("step " + std::to_string(step) + ": training loss is " +
                           std::to_string(loss) + "; lower --lr or check the data");
    }
    if (rec.local_grad_sq >= 0 && rec.global_grad_sq >= 0) {
      sampled_local_sq.push_back(rec.local_grad_sq);
      sampled_global_sq.push_back(rec.global_grad_sq);
    }
    if (!rec.warmup) {
      steady_starts.push_back(rec.start);
      steady_ends.push_back(rec.end);
      if (rec.local_grad_sq >= 0 && rec.global_grad_sq >= 0) {
        local_sq_sum += rec.local_grad_sq;
        global_sq_sum += rec.global_grad_sq;
        ++grad_sq_steps;
      }
    }
    recent_losses.push_back(loss);
    if (recent_losses.size() > 20) recent_losses.erase(recent_losses.begin());
    const Seconds step_time = rec.step_time();
    if (recorder) STEPSCOPE_RETURN_IF_ERROR(recorder->Append(std::move(rec), std::move(tl)));

    if (o.emulation.device_speed > 0 && step == calibration_step) {
      watchdog.Publish(step, comm::HeartbeatPhase::kAllreduce);
      STEPSCOPE_RETURN_IF_ERROR(
          CalibrateDevices(&pacer, o, ComputeShape(o, model.Describe()), comm, &summary));
    }
    const bool check = o.reducer.reduce && world > 1 && o.checksum_every > 0 &&
                       ((step + 1) % o.checksum_every == 0 || step + 1 == total_steps);
    if (check) {
      watchdog.Publish(step, comm::HeartbeatPhase::kAllreduce);
      STEPSCOPE_RETURN_IF_ERROR(CheckReplicasAgree(model.params(), step, comm));
    }
    progress.Update(step, loss, static_cast<double>(samples_per_step * world) / step_time,
                    comm.Now());
    if (o.target_loss) {
      // Every rank gets the same mean loss, so every rank stops at the same step.
      double mean_loss = loss;
      if (MPI_Allreduce(MPI_IN_PLACE, &mean_loss, 1, MPI_DOUBLE, MPI_SUM, comm.world()) !=
          MPI_SUCCESS) {
        return Status::Error("target: MPI_Allreduce of the training loss failed");
      }
      mean_loss /= world;
      smoothed_loss = std::isnan(smoothed_loss)
                          ? mean_loss
                          : (1 - kTargetSmoothing) * smoothed_loss + kTargetSmoothing * mean_loss;
      if (step + 1 >= kTargetFirstStep && smoothed_loss <= *o.target_loss) {
        summary.steps_to_target = step + 1;
        steps_run = step + 1;
        break;
      }
    }
    if (eval_every > 0 && (step + 1) % eval_every == 0) {
      // Held-out evaluation during training: its time is the job's, not a step's, so the next
      // step starts after it and it is counted apart (evaluation_s).
      watchdog.Publish(step, comm::HeartbeatPhase::kCompute);
      Result<bool> reached = evaluate_held_out(step + 1);
      if (!reached.ok()) {
        return reached.status().WithContext("evaluation after step " + std::to_string(step));
      }
      previous_end = comm.Now();
      steady_cpu.Mark();
      if (*reached) {
        steps_run = step + 1;
        break;
      }
    }
  }
  summary.smoothed_loss = std::isnan(smoothed_loss) ? 0 : smoothed_loss;
  progress.Finish();
  watchdog.Publish(steps_run, comm::HeartbeatPhase::kAllreduce);  // the final reductions
  if (o.reducer.reduce && world > 1 && o.latency_probes > 0) {
    auto probe = ProbeLatency(
        allreducer.get(), o.reducer, o.emulation, world, [&comm] { return comm.Now(); },
        ProbeHooks{[&comm] { return Barrier(comm); },
                   [&comm](std::vector<double>* v) { return LeastOverRanks(comm, v); }},
        o.latency_probes);
    if (!probe.ok()) return probe.status();
    summary.latency_probe = std::move(probe.value());
  }
  summary.buckets_per_step = reducer.buckets_per_step();
  summary.ready_slice_backward_share = slice_readiness.MedianShares();
  summary.unhonoured_links = reducer.unhonoured_links();
  summary.paced_segments = pacer.segments();
  summary.unhonoured_segments = pacer.unhonoured();
  // The emulation is as honest as its worst rank: every rank is paced alike, and one that the
  // host could not keep up with (128 replicas on 2 cores) must show in run.json, not only
  // rank 0's own counts.
  long long honour[3] = {summary.paced_segments, summary.unhonoured_segments,
                         summary.unhonoured_links};
  if (MPI_Allreduce(MPI_IN_PLACE, honour, 3, MPI_LONG_LONG, MPI_MAX, comm.world()) != MPI_SUCCESS) {
    return Status::Error("summary: MPI_Allreduce of the emulation counts failed");
  }
  summary.paced_segments = honour[0];
  summary.unhonoured_segments = honour[1];
  summary.unhonoured_links = honour[2];

  // Job-level figures: the job's step runs from the moment its last rank began it to the moment
  // its last rank finished it. Each rank begins a step where it ended the previous one, so the
  // steps add up to the job's elapsed time; the largest step time of any rank, taken step by
  // step, would add every rank's wake-up jitter to the job (docs/metrics.md "The job's step").
  for (std::vector<double>* times : {&steady_starts, &steady_ends}) {
    if (!times->empty() &&
        MPI_Allreduce(MPI_IN_PLACE, times->data(), static_cast<int>(times->size()), MPI_DOUBLE,
                      MPI_MAX, comm.world()) != MPI_SUCCESS) {
      return Status::Error("summary: MPI_Allreduce of step times failed");
    }
  }
  double sums[4] = {
      recent_losses.empty()
          ? 0
          : std::accumulate(recent_losses.begin(), recent_losses.end(), 0.0) / recent_losses.size(),
      local_sq_sum, global_sq_sum, static_cast<double>(grad_sq_steps)};
  if (MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, comm.world()) != MPI_SUCCESS) {
    return Status::Error("summary: MPI_Allreduce of losses failed");
  }
  summary.replicas = world;
  summary.steps = steps_run;
  summary.steady_steps = static_cast<int64_t>(steady_ends.size());
  summary.cpu = steady_cpu.PerStretch();
  double steady_time = 0;
  for (size_t k = 0; k < steady_ends.size(); ++k) steady_time += steady_ends[k] - steady_starts[k];
  if (steady_time > 0) {
    summary.step_time_mean = steady_time / static_cast<double>(steady_ends.size());
    summary.samples_per_s = static_cast<double>(samples_per_step * world) / summary.step_time_mean;
  }
  summary.final_loss = sums[0] / world;
  // The reduced result is the same on every rank: rank-local sums are already the job's.
  if (wire_exact_sq > 0) summary.wire_relative_error = std::sqrt(wire_error_sq / wire_exact_sq);
  if (sums[3] > 0) {
    // Each rank contributed its own local norms, but the global norm is the same on every rank.
    summary.mean_local_grad_sq = sums[1] / sums[3];
    summary.mean_global_grad_sq = sums[2] / sums[3];
    if (world > 1 && o.reducer.reduce) {
      const decide::NoiseScale ns = decide::NoiseScaleFromMeans(
          summary.mean_local_grad_sq, summary.mean_global_grad_sq,
          static_cast<double>(samples_per_step), static_cast<double>(samples_per_step * world));
      if (ns.known) summary.noise_scale = ns.b_noise;
    }
  }
  if (world > 1 && o.reducer.reduce && !sampled_local_sq.empty()) {
    // Every rank sampled the same steps; the job's local norm is the mean over ranks.
    if (MPI_Allreduce(MPI_IN_PLACE, sampled_local_sq.data(),
                      static_cast<int>(sampled_local_sq.size()), MPI_DOUBLE, MPI_SUM,
                      comm.world()) != MPI_SUCCESS) {
      return Status::Error("summary: MPI_Allreduce of the gradient norms failed");
    }
    for (double& x : sampled_local_sq) x /= world;
    summary.noise_over_training = decide::NoiseScaleOverTraining(
        sampled_local_sq, sampled_global_sq, static_cast<double>(samples_per_step),
        static_cast<double>(samples_per_step * world));
  }
  if (o.evaluate && last_eval_step != steps_run) {
    Result<bool> reached = evaluate_held_out(steps_run);
    if (!reached.ok()) return reached.status();
  }

  summary.model = model.Stats();
  summary.model_description = model.Describe();
  summary.dataset_description = split->train->Describe();
  summary.allreduce = o.reducer.reduce ? comm::ToString(algorithm) : "none";
  summary.wall_time = comm.Now() - wall_begin;
  if (recorder) STEPSCOPE_RETURN_IF_ERROR(recorder->Close());
  if (!o.save_params.empty() && rank == 0) {
    STEPSCOPE_RETURN_IF_ERROR(SaveParams(o.save_params, model.params()));
  }
  return summary;
}

}  // namespace stepscope::train
