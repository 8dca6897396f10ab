#include "train/options.h"

#include <string>

namespace stepscope::train {
namespace {

Status Bad(const std::string& option, const std::string& what) {
  return Status::Error("option " + option + ": " + what);
}

}  // namespace

Status Validate(const TrainOptions& o, int world) {
  if (o.batch <= 0) return Bad("--batch", "must be a positive number of examples per replica");
  if (o.accum <= 0) return Bad("--accum", "must be at least 1");
  if (o.steps < 0) return Bad("--steps", "must not be negative");
  if (o.steps == 0 && !(o.epochs > 0)) return Bad("--epochs", "must be positive when --steps is 0");
  if (o.warmup_steps < 0) return Bad("--warmup-steps", "must not be negative");
  if (o.target_loss && !(*o.target_loss > 0)) {
    return Bad("--target-loss", "must be a positive training loss (e.g. --target-loss 0.6)");
  }
  if (o.target_accuracy) {
    if (!(*o.target_accuracy > 0 && *o.target_accuracy <= 1)) {
      return Bad("--target-accuracy",
                 "must be a held-out accuracy in (0, 1] (e.g. --target-accuracy 0.85)");
    }
    if (o.dataset() != DatasetKind::kFashionMnist) {
      return Bad("--target-accuracy",
                 "needs a classifier (--model mlp or cnn); for the gpt give --target-loss");
    }
    if (o.target_loss) return Bad("--target-accuracy", "give one target: it or --target-loss");
    if (!o.evaluate) return Bad("--target-accuracy", "needs held-out evaluation (drop --no-eval)");
  }
  if (o.eval_every < 0) return Bad("--eval-every", "must not be negative");
  if (!(o.optimizer.lr > 0)) return Bad("--lr", "must be positive");
  if (o.loader_workers < 1) return Bad("--loader-workers", "must be at least 1");
  if (o.prefetch < 1) return Bad("--prefetch", "must be at least 1");
  if (o.grad_norm_every < 1) return Bad("--grad-norm-every", "must be at least 1");
  if (o.checksum_every < 0) return Bad("--checksum-every", "must not be negative (0 disables)");
  if (o.latency_probes < 0) return Bad("--latency-probes", "must not be negative (0 disables)");
  if (!(o.stall_timeout_s > 0)) return Bad("--stall-timeout", "must be positive seconds");
  if (!(o.reducer.bucket_mb > 0)) return Bad("--bucket-mb", "must be positive");
  if (o.model.kind == nn::ModelKind::kMlp) {
    if (o.model.hidden.empty()) return Bad("--hidden", "needs at least one width, e.g. 256,256");
    for (int h : o.model.hidden) {
      if (h <= 0) return Bad("--hidden", "widths must be positive, got " + std::to_string(h));
    }
  }
  if (o.model.kind == nn::ModelKind::kGpt) {
    if (o.model.gpt_width <= 0 || o.model.gpt_heads <= 0 || o.model.gpt_layers <= 0 ||
        o.model.gpt_context <= 0) {
      return Bad("--layers/--width/--heads/--context", "must all be positive");
    }
    if (o.model.gpt_width % o.model.gpt_heads != 0) {
      return Bad("--heads", std::to_string(o.model.gpt_heads) + " does not divide --width " +
                                std::to_string(o.model.gpt_width));
    }
  }
  if (o.emulation.device_speed < 0 || o.emulation.device_speed > 1) {
    return Bad("--emulate-device-speed", "must be in (0, 1]: the fraction of a core per replica");
  }
  if (o.emulation.link_gbps < 0 || o.emulation.link_latency_us < 0) {
    return Bad("--emulate-link", "bandwidth and latency must not be negative");
  }
  for (size_t i = 0; i < o.injection.stragglers.size(); ++i) {
    const StragglerInjection& s = o.injection.stragglers[i];
    if (s.rank < 0 || s.rank >= world) {
      return Bad("--inject-straggler", "rank " + std::to_string(s.rank) +
                                           " does not exist in a job of " + std::to_string(world) +
                                           " replicas");
    }
    if (!(s.factor >= 1)) {
      return Bad("--inject-straggler", "FACTOR must be at least 1 (2 = twice as slow)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (o.injection.stragglers[j].rank == s.rank) {
        return Bad("--inject-straggler", "rank " + std::to_string(s.rank) + " is named twice");
      }
    }
  }
  if (o.injection.noise_rank >= world) {
    return Bad("--inject-noise", "rank " + std::to_string(o.injection.noise_rank) +
                                     " does not exist in a job of " + std::to_string(world) +
                                     " replicas");
  }
  if (o.injection.noise_rank >= 0 &&
      !(o.injection.noise_share > 0 && o.injection.noise_share < 0.9)) {
    return Bad("--inject-noise", "SHARE must be above 0 and below 0.9 (0.3 = 30% of its core)");
  }
  if ((o.variable_length || o.balance_lengths) && o.model.kind != nn::ModelKind::kGpt) {
    return Bad(o.variable_length ? "--variable-length" : "--balance-lengths",
               "only the gpt has sequences (--model gpt)");
  }
  if (o.balance_lengths && !o.variable_length) {
    return Bad("--balance-lengths", "balances --variable-length batches; add --variable-length");
  }
  if (o.injection.input_delay_ms < 0) return Bad("--inject-input-delay", "must not be negative");
  if (!o.reducer.reduce && o.reducer.dtype != comm::WireDtype::kFp32) {
    return Bad("--reduce-dtype", "has no effect with --no-reduce; drop one of them");
  }
  return Status::Ok();
}

std::string ToString(nn::ModelKind kind) {
  switch (kind) {
    case nn::ModelKind::kMlp:
      return "mlp";
    case nn::ModelKind::kCnn:
      return "cnn";
    case nn::ModelKind::kGpt:
      return "gpt";
  }
  return "?";
}

Result<nn::ModelKind> ParseModelKind(const std::string& name) {
  if (name == "mlp") return nn::ModelKind::kMlp;
  if (name == "cnn") return nn::ModelKind::kCnn;
  if (name == "gpt") return nn::ModelKind::kGpt;
  return Bad("--model", "unknown model '" + name + "'; choose mlp, cnn or gpt");
}

Result<AllreduceChoice> ParseAllreduceChoice(const std::string& name) {
  if (name == "auto") return AllreduceChoice::kAuto;
  if (name == "mpi") return AllreduceChoice::kMpi;
  if (name == "ring") return AllreduceChoice::kRing;
  if (name == "shm") return AllreduceChoice::kShm;
  return Bad("--allreduce", "unknown algorithm '" + name + "'; choose auto, mpi, ring or shm");
}

std::string ToString(AllreduceChoice choice) {
  switch (choice) {
    case AllreduceChoice::kAuto:
      return "auto";
    case AllreduceChoice::kMpi:
      return "mpi";
    case AllreduceChoice::kRing:
      return "ring";
    case AllreduceChoice::kShm:
      return "shm";
  }
  return "?";
}

}  // namespace stepscope::train
