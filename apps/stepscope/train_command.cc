#include "apps/stepscope/train_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <sstream>

#include "apps/stepscope/numeric_option.h"
#include "comm/communicator.h"
#include "core/number_text.h"
#include "nn/model.h"
#include "train/run_info.h"
#include "train/trainer.h"

namespace stepscope::app {
namespace {

Result<std::vector<int>> ParseWidths(const std::string& text) {
  const NumberContext context{"option --hidden", "--hidden 2048,2048"};
  std::vector<int> widths;
  for (std::string_view item : SplitText(text, ',')) {
    Result<int64_t> w = ParseInteger(item, context);
    if (!w.ok()) return w.status();
    if (*w <= 0 || *w > (1 << 24)) {
      return Status::Error(
          "option --hidden: widths must be positive; write e.g. --hidden 2048,2048");
    }
    widths.push_back(static_cast<int>(*w));
  }
  if (widths.empty()) return Status::Error("option --hidden: needs at least one width");
  return widths;
}

// "RANK:VALUE": a whole rank number and a decimal number.
Status ParseRankValue(std::string_view text, const std::string& flag, const std::string& example,
                      int* rank, double* value) {
  const NumberContext context{"option " + flag, flag + " " + example};
  const std::vector<std::string_view> parts = SplitText(text, ':');
  if (parts.size() != 2) {
    return Status::Error("option " + flag + ": cannot read '" + std::string(text) +
                         "'; write RANK:VALUE, e.g. " + flag + " " + example);
  }
  Result<int64_t> r = ParseInteger(parts[0], context);
  if (!r.ok()) return r.status();
  if (*r < 0 || *r > (1 << 20)) {
    return Status::Error("option " + flag + ": RANK must be a rank number, e.g. " + flag + " " +
                         example);
  }
  Result<double> v = ParseDouble(parts[1], context);
  if (!v.ok()) return v.status();
  *rank = static_cast<int>(*r);
  *value = *v;
  return Status::Ok();
}

Status ParseRankStep(const std::string& text, const std::string& flag, int* rank, int64_t* step) {
  if (text.empty()) return Status::Ok();
  const NumberContext context{"option " + flag, flag + " 1:10"};
  const std::vector<std::string_view> parts = SplitText(text, ':');
  if (parts.size() != 2) {
    return Status::Error("option " + flag + ": write RANK:STEP with whole numbers, e.g. 1:10");
  }
  Result<int64_t> r = ParseInteger(parts[0], context);
  if (!r.ok()) return r.status();
  Result<int64_t> s = ParseInteger(parts[1], context);
  if (!s.ok()) return s.status();
  if (*r < 0 || *s < 0 || *r > (1 << 20)) {
    return Status::Error("option " + flag + ": write RANK:STEP with whole numbers, e.g. 1:10");
  }
  *rank = static_cast<int>(*r);
  *step = *s;
  return Status::Ok();
}

int PrintModel(const train::TrainOptions& o) {
  auto model = nn::MakeModel(o.model);
  if (!model.ok()) {
    std::fprintf(stderr, "stepscope: %s\n", model.status().message().c_str());
    return 2;
  }
  const nn::ModelStats s = model.value()->Stats();
  fmt::print("model                       {}\n", model.value()->Describe());
  fmt::print("parameters                  {}\n", s.parameters);
  fmt::print("gradient bytes (fp32)       {} ({:.2f} MiB)\n", s.gradient_bytes,
             s.gradient_bytes / kMiB);
  fmt::print("FLOPs per sample (fwd+bwd)  {:.4g}\n", s.flops_per_sample);
  fmt::print("activation bytes per sample {}\n", s.activation_bytes_per_sample);
  fmt::print("gradient bytes per FLOP at micro-batch {}: {:.4g}\n", o.batch,
             s.gradient_bytes / (s.flops_per_sample * o.batch));
  return 0;
}

}  // namespace

void AddTrainOptions(CLI::App* cmd, TrainFlags* f) {
  auto& o = f->options;
  cmd->add_option("--model", f->model, "Model: mlp, cnn (Fashion-MNIST) or gpt (text)")
      ->capture_default_str();
  cmd->add_option("--hidden", f->hidden, "mlp hidden widths, comma separated")
      ->capture_default_str();
  cmd->add_option("--channels", o.model.cnn_channels, "cnn channels of the first convolution")
      ->capture_default_str()
      ->transform(WholeNumber("--channels 8"));
  cmd->add_option("--layers", o.model.gpt_layers, "gpt transformer blocks")
      ->capture_default_str()
      ->transform(WholeNumber("--layers 2"));
  cmd->add_option("--width", o.model.gpt_width, "gpt embedding width")
      ->capture_default_str()
      ->transform(WholeNumber("--width 128"));
  cmd->add_option("--heads", o.model.gpt_heads, "gpt attention heads")
      ->capture_default_str()
      ->transform(WholeNumber("--heads 4"));
  cmd->add_option("--context", o.model.gpt_context, "gpt context length in bytes")
      ->capture_default_str()
      ->transform(WholeNumber("--context 64"));
  cmd->add_option("--batch", o.batch, "Per-replica micro-batch")
      ->capture_default_str()
      ->transform(WholeNumber("--batch 32"));
  cmd->add_option("--accum", o.accum, "Micro-batches per step (gradient accumulation)")
      ->capture_default_str()
      ->transform(WholeNumber("--accum 2"));
  cmd->add_option("--steps", o.steps, "Steps to run (0: run --epochs)")
      ->capture_default_str()
      ->transform(WholeNumber("--steps 30"));
  cmd->add_option("--epochs", o.epochs, "Epochs to run when --steps is 0")
      ->capture_default_str()
      ->check(Number("--epochs 1"));
  cmd->add_option("--warmup-steps", o.warmup_steps, "Steps excluded from steady-state figures")
      ->capture_default_str()
      ->transform(WholeNumber("--warmup-steps 5"));
  cmd->add_option("--optimizer", f->optimizer,
                  "auto (adamw for gpt, sgd otherwise), sgd (with momentum) or adamw")
      ->capture_default_str();
  cmd->add_option("--lr", f->lr, "Learning rate (default: 0.02 for sgd, 0.002 for adamw)")
      ->check(Number("--lr 0.02"));
  cmd->add_option("--momentum", f->momentum, "SGD momentum")
      ->capture_default_str()
      ->check(Number("--momentum 0.9"));
  cmd->add_option("--weight-decay", f->weight_decay, "Weight decay")
      ->capture_default_str()
      ->check(Number("--weight-decay 0.01"));
  cmd->add_option("--seed", o.seed, "Seed for initialisation, shuffling and augmentation")
      ->capture_default_str()
      ->transform(WholeNumber("--seed 1", 0, INT64_MAX));
  cmd->add_option("--data", o.data_dir, "Fashion-MNIST directory (gzip'd IDX files)")
      ->capture_default_str();
  cmd->add_option("--text", o.text, "Text file or directory for gpt")->capture_default_str();
  cmd->add_option("--loader-workers", o.loader_workers, "Loader threads per replica")
      ->capture_default_str()
      ->transform(WholeNumber("--loader-workers 2"));
  cmd->add_option("--prefetch", o.prefetch, "Batches the loader may prepare ahead")
      ->capture_default_str()
      ->transform(WholeNumber("--prefetch 8"));
  cmd->add_flag("--augment", o.augment, "Random crop with padding and horizontal flip");
  cmd->add_flag("--variable-length", o.variable_length,
                "gpt: each example its own sequence length (log-uniform, 1/32 to all of "
                "--context), each batch padded to its longest, so per-rank work varies from "
                "step to step");
  cmd->add_flag("--balance-lengths", o.balance_lengths,
                "With --variable-length: length-bucketed batches, every rank's batch of a step "
                "of similar length (less padding, no rank left behind)");
  cmd->add_flag("--synthetic-input", o.synthetic_input,
                "Serve one prepared in-memory batch (ablation: removes the input pipeline)");
  cmd->add_flag("--no-eval", f->no_eval, "Skip held-out evaluation at the end");
  cmd->add_option("--eval-limit", o.eval_limit, "Held-out examples to evaluate (0: all)")
      ->capture_default_str()
      ->transform(WholeNumber("--eval-limit 1000"));
  cmd->add_option("--bucket-mb", o.reducer.bucket_mb, "Gradient bucket cap in MiB")
      ->capture_default_str()
      ->check(Number("--bucket-mb 25"));
  cmd->add_flag("--no-overlap", f->no_overlap, "Reduce only after backward finishes");
  cmd->add_flag("--no-reduce", f->no_reduce,
                "Skip gradient reduction (ablation: replicas drift apart, timings stay valid)");
  cmd->add_option("--reduce-dtype", f->reduce_dtype, "Wire precision: fp32, bf16 or fp16")
      ->capture_default_str();
  cmd->add_flag("--measure-wire-error", o.reducer.measure_wire_error,
                "With a bf16/fp16 wire: at the steps whose gradient norms are sampled "
                "(--grad-norm-every), also reduce an fp32 copy of each bucket and record the "
                "reduced gradient's relative error against it (run.json wire_error)");
  cmd->add_option("--allreduce", f->allreduce,
                  "All-reduce: auto (shm on one host, ring across hosts), mpi, ring or shm")
      ->capture_default_str();
  cmd->add_option("--target-loss", o.target_loss,
                  "Stop once the smoothed training loss reaches this value; run.json records "
                  "steps_to_target and samples_to_target")
      ->check(Number("--target-loss 0.6"));
  cmd->add_option("--target-accuracy", o.target_accuracy,
                  "Stop once the held-out accuracy (mlp, cnn; evaluated every --eval-every steps "
                  "on --eval-limit examples) reaches this fraction; run.json records "
                  "steps_to_target and samples_to_target")
      ->check(Number("--target-accuracy 0.85"));
  cmd->add_option("--eval-every", o.eval_every,
                  "Steps between held-out evaluations during training (0: every 50 with "
                  "--target-accuracy, else only at the end); their time is kept out of the steps "
                  "and recorded as evaluation_s")
      ->capture_default_str()
      ->transform(WholeNumber("--eval-every 50"));
  cmd->add_option("--grad-norm-every", o.grad_norm_every,
                  "Steps between gradient-norm samples for the noise scale (multi-replica runs)")
      ->capture_default_str()
      ->transform(WholeNumber("--grad-norm-every 1"));
  cmd->add_option("--checksum-every", o.checksum_every,
                  "Steps between replica parameter agreement checks (0: never)")
      ->capture_default_str()
      ->transform(WholeNumber("--checksum-every 10"));
  cmd->add_option("--latency-probes", o.latency_probes,
                  "Small all-reduces timed after the steps, which identify the reduction's "
                  "latency for the step-time model (0: none)")
      ->capture_default_str()
      ->transform(WholeNumber("--latency-probes 16"));
  cmd->add_option("--stall-timeout", o.stall_timeout_s,
                  "Seconds a rank may make no progress before the job is ended")
      ->capture_default_str()
      ->check(Number("--stall-timeout 60"));
  cmd->add_option("--emulate-device-speed", o.emulation.device_speed,
                  "Emulate a device computing at F of a core (0: off)")
      ->capture_default_str()
      ->check(Number("--emulate-device-speed 0.25"));
  cmd->add_option("--emulate-device-file", o.emulation.device_file,
                  "With --emulate-device-speed: a JSON file of calibrated emulated devices shared "
                  "by the runs of a sweep (the first run of a compute shape records its device, "
                  "later ones pace to it; ignored without an emulated device); diagnose passes "
                  "DIR/device.json");
  cmd->add_option("--emulate-link", f->emulate_link,
                  "Emulate an interconnect: GBPS[,LATENCY_US] per link (ring cost model)");
  cmd->add_option("--inject-straggler", f->inject_straggler,
                  "Fault injection RANK:FACTOR[,RANK:FACTOR...]: each rank named computes "
                  "FACTOR times slower");
  cmd->add_option("--inject-noise", f->inject_noise,
                  "Fault injection RANK:SHARE: a noisy co-tenant takes SHARE of that rank's core "
                  "on average, in bursts of whole steps");
  cmd->add_option("--inject-input-delay", o.injection.input_delay_ms,
                  "Fault injection: extra milliseconds per batch in the loader")
      ->capture_default_str()
      ->check(Number("--inject-input-delay 20"));
  cmd->add_option("--inject-hang", f->inject_hang,
                  "Fault injection RANK:STEP: that rank stops making progress at STEP");
  cmd->add_option("--inject-crash", f->inject_crash,
                  "Fault injection RANK:STEP: that rank dies at STEP");
  cmd->add_option("--out", o.out, "Directory for run.json, rank-R.steps.jsonl, rank-R.trace.json");
  cmd->add_option("--save-params", o.save_params,
                  "Rank 0 writes the final parameters here (raw float32)");
  cmd->add_flag("--quiet", f->quiet, "No progress line");
}

Status FinishTrainOptions(TrainFlags* f) {
  auto& o = f->options;
  auto kind = train::ParseModelKind(f->model);
  if (!kind.ok()) return kind.status();
  o.model.kind = kind.value();
  auto widths = ParseWidths(f->hidden);
  if (!widths.ok()) return widths.status();
  o.model.hidden = widths.value();
  o.model.seed = o.seed;
  std::string optimizer = f->optimizer;
  if (optimizer == "auto") optimizer = o.model.kind == nn::ModelKind::kGpt ? "adamw" : "sgd";
  if (optimizer == "sgd") {
    o.optimizer.kind = nn::OptimizerKind::kSgd;
    o.optimizer.lr = 0.02f;
  } else if (optimizer == "adamw") {
    o.optimizer.kind = nn::OptimizerKind::kAdamW;
    o.optimizer.lr = 2e-3f;
  } else {
    return Status::Error("option --optimizer: unknown '" + f->optimizer +
                         "'; choose auto, sgd or adamw");
  }
  if (f->lr != -1) o.optimizer.lr = static_cast<float>(f->lr);
  o.optimizer.momentum = static_cast<float>(f->momentum);
  o.optimizer.weight_decay = static_cast<float>(f->weight_decay);
  auto dtype = comm::ParseWireDtype(f->reduce_dtype);
  if (!dtype.ok()) return dtype.status().WithContext("option --reduce-dtype");
  o.reducer.dtype = dtype.value();
  auto algo = train::ParseAllreduceChoice(f->allreduce);
  if (!algo.ok()) return algo.status();
  o.reducer.algorithm = algo.value();
  o.reducer.overlap = !f->no_overlap;
  o.reducer.reduce = !f->no_reduce;
  o.evaluate = !f->no_eval;
  o.progress = !f->quiet;
  if (!f->emulate_link.empty()) {
    STEPSCOPE_RETURN_IF_ERROR(
        ParsePair(f->emulate_link, ',', {"option --emulate-link", "--emulate-link 0.012,50"},
                  &o.emulation.link_gbps, &o.emulation.link_latency_us, false));
    if (!(o.emulation.link_gbps > 0)) {
      return Status::Error("option --emulate-link: bandwidth must be positive GB/s");
    }
  }
  if (!f->inject_straggler.empty()) {
    for (std::string_view item : SplitText(f->inject_straggler, ',')) {
      train::StragglerInjection s;
      STEPSCOPE_RETURN_IF_ERROR(
          ParseRankValue(item, "--inject-straggler", "1:1.7,3:1.4", &s.rank, &s.factor));
      o.injection.stragglers.push_back(s);
    }
  }
  if (!f->inject_noise.empty()) {
    STEPSCOPE_RETURN_IF_ERROR(ParseRankValue(f->inject_noise, "--inject-noise", "1:0.3",
                                             &o.injection.noise_rank, &o.injection.noise_share));
  }
  STEPSCOPE_RETURN_IF_ERROR(ParseRankStep(f->inject_hang, "--inject-hang", &o.injection.hang_rank,
                                          &o.injection.hang_step));
  STEPSCOPE_RETURN_IF_ERROR(ParseRankStep(f->inject_crash, "--inject-crash",
                                          &o.injection.crash_rank, &o.injection.crash_step));
  return Status::Ok();
}

int RunTrain(TrainFlags& flags, int argc, char** argv) {
  if (Status st = FinishTrainOptions(&flags); !st.ok()) {
    std::fprintf(stderr, "stepscope train: %s\n", st.message().c_str());
    return 2;
  }
  const train::TrainOptions& o = flags.options;
  if (flags.print_model) return PrintModel(o);

  auto comm_or = comm::Communicator::Init(&argc, &argv);
  if (!comm_or.ok()) {
    std::fprintf(stderr, "stepscope train: %s\n", comm_or.status().message().c_str());
    return 1;
  }
  const comm::Communicator& comm = *comm_or.value();
  if (Status st = train::Validate(o, comm.size()); !st.ok()) {
    if (comm.rank() == 0) std::fprintf(stderr, "stepscope train: %s\n", st.message().c_str());
    return 2;
  }
  if (comm.rank() == 0 && o.progress) {
    std::fprintf(stderr, "stepscope train: %d replica(s) on %d host(s)%s\n", comm.size(),
                 comm.num_hosts(), o.emulation.active() ? " [EMULATED devices/links]" : "");
  }
  auto summary = train::Train(o, comm);
  if (!summary.ok()) {
    if (comm.size() > 1) comm.Abort(summary.status().message());
    std::fprintf(stderr, "stepscope train: %s\n", summary.status().message().c_str());
    return 1;
  }
  if (!o.out.empty()) {
    if (Status st = train::WriteRunJson(o.out, o, summary.value(), comm); !st.ok()) {
      if (comm.size() > 1) comm.Abort(st.message());
      std::fprintf(stderr, "stepscope train: %s\n", st.message().c_str());
      return 1;
    }
  }
  if (comm.rank() == 0) {
    const auto& s = summary.value();
    fmt::print("{} on {} replica(s): {:.0f} samples/s, step {:.2f} ms, final loss {:.4f}",
               s.model_description, s.replicas, s.samples_per_s, s.step_time_mean * 1e3,
               s.final_loss);
    if (s.eval.accuracy >= 0) fmt::print(", test accuracy {:.2f} %", 100 * s.eval.accuracy);
    if (s.eval.bits_per_byte >= 0) fmt::print(", held-out {:.3f} bits/byte", s.eval.bits_per_byte);
    if (s.noise_scale >= 0) fmt::print(", B_noise ~ {:.0f}", s.noise_scale);
    fmt::print("\n");
  }
  return 0;
}

void AddTrainCommand(CLI::App& app, int argc, char** argv, std::function<int()>* run) {
  auto flags = std::make_shared<TrainFlags>();
  CLI::App* cmd =
      app.add_subcommand("train",
                         "Data-parallel training that records where every step's time goes "
                         "(run under mpirun -np N for N replicas)");
  AddTrainOptions(cmd, flags.get());
  cmd->add_flag("--print-model", flags->print_model,
                "Print parameters, gradient bytes, FLOPs and activation bytes, then exit");
  cmd->callback([flags, argc, argv, run] {
    *run = [flags, argc, argv] { return RunTrain(*flags, argc, argv); };
  });
}

}  // namespace stepscope::app
