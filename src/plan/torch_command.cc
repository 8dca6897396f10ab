#include "plan/torch_command.h"

#include <fmt/format.h>

#include <algorithm>

#include "comm/allreduce.h"
#include "core/placeholders.h"

namespace stepscope::plan {

Result<TorchCommand> TorchCommand::FromWords(std::vector<std::string> words) {
  if (words.size() < 2) {
    return Status::Error(
        "option --torch: give the interpreter and the script, e.g. --torch \"python3 train.py "
        "--batch {batch}\"");
  }
  if (!words[1].empty() && words[1][0] == '-') {
    return Status::Error("option --torch: '" + words[1] +
                         "' after the interpreter is an option; the second word must be the "
                         "script (python3 train.py ...)");
  }
  const std::vector<std::string> args(words.begin() + 2, words.end());
  const Status placeholders = core::CheckPlaceholders(
      args, {std::begin(kTorchPlaceholders), std::end(kTorchPlaceholders)}, "option --torch");
  if (!placeholders.ok()) return placeholders;
  TorchCommand c;
  c.interpreter = words[0];
  c.script = words[1];
  c.args.assign(words.begin() + 2, words.end());
  return c;
}

bool TorchCommand::Has(std::string_view placeholder) const {
  if (placeholder.size() > 2 && placeholder.front() == '{' && placeholder.back() == '}') {
    placeholder = placeholder.substr(1, placeholder.size() - 2);
  }
  return std::any_of(args.begin(), args.end(), [&](const std::string& w) {
    const std::vector<std::string> names = core::PlaceholderNames(w);
    return std::find(names.begin(), names.end(), placeholder) != names.end();
  });
}

std::vector<std::string> TorchCommand::Words() const {
  std::vector<std::string> words = {interpreter, script};
  words.insert(words.end(), args.begin(), args.end());
  return words;
}

std::string DefaultTorchLauncher(const TorchCommand& command) {
  return fmt::format("{} -m stepscope_torch.run --nproc_per_node {{n}}", command.interpreter);
}

TorchMapping MapOntoTorch(const TorchCommand& command, const train::TrainOptions& options,
                          const RunChange& change, int replicas) {
  TorchMapping m;
  const LeverChange& c = change.levers;
  // A value goes into its placeholder when the command has one, else to the helper's variable
  // (when it has one), else it cannot be made.
  auto route = [&](const char* placeholder, const char* variable, bool changed,
                   const std::string& value, const std::string& what) {
    if (command.Has(placeholder)) {
      if (changed) m.flags.push_back(fmt::format("{} {}", placeholder, value));
    } else if (changed && variable != nullptr && command.helper) {
      m.env.push_back(fmt::format("{}={}", variable, value));
      m.flags.push_back(fmt::format("{}={}", variable, value));
    } else if (changed) {
      m.not_applicable.push_back(
          fmt::format("{}: the command has no {} placeholder", what, placeholder));
    }
  };
  const int batch = c.micro_batch.value_or(options.batch);
  const int accum = c.accumulation.value_or(options.accum);
  const double bucket = c.bucket_mib.value_or(options.reducer.bucket_mb);
  const int workers = c.loader_workers.value_or(options.loader_workers);
  const uint64_t seed = change.seed.value_or(options.seed);
  route("{batch}", nullptr, c.micro_batch.has_value(), std::to_string(batch), "micro-batch");
  route("{accum}", "STEPSCOPE_ACCUM", c.accumulation.has_value(), std::to_string(accum),
        "gradient accumulation");
  if (!c.accumulation && accum != 1 && !command.Has("{accum}") && command.helper) {
    m.env.push_back(fmt::format("STEPSCOPE_ACCUM={}", accum));  // the baseline's (--accum)
  }
  route("{bucket_mb}", "STEPSCOPE_BUCKET_MB", c.bucket_mib.has_value(), fmt::format("{}", bucket),
        "bucket size");
  route("{workers}", "STEPSCOPE_LOADER_WORKERS", c.loader_workers.has_value(),
        std::to_string(workers), "loader workers");
  route("{seed}", "STEPSCOPE_SEED", change.seed.has_value(), std::to_string(seed), "seed");
  if (c.prefetch && command.helper) {
    m.env.push_back(fmt::format("STEPSCOPE_PREFETCH={}", *c.prefetch));
    m.flags.push_back(fmt::format("STEPSCOPE_PREFETCH={}", *c.prefetch));
  }
  if (c.overlap && !*c.overlap) {
    m.not_applicable.push_back("no overlap: DDP always reduces buckets during backward");
  }
  if (c.balance_lengths) {
    m.not_applicable.push_back("length balancing: the helper cannot regroup the script's batches");
  }
  if (c.wire && *c.wire != comm::WireDtype::kFp32 && !change.no_reduce && !command.helper) {
    m.not_applicable.push_back("reduced precision: needs the stepscope_torch helper");
  } else if (c.wire && *c.wire != comm::WireDtype::kFp32 && !change.no_reduce) {
    const std::string dtype = comm::ToString(*c.wire);
    m.env.push_back("STEPSCOPE_REDUCE_DTYPE=" + dtype);
    m.flags.push_back("STEPSCOPE_REDUCE_DTYPE=" + dtype);
    // The reduced-precision check's reduced run: each sampled bucket also reduced in fp32.
    if (change.measure_wire_error) m.env.push_back("STEPSCOPE_MEASURE_WIRE_ERROR=1");
  }
  if (change.no_reduce) m.env.push_back("STEPSCOPE_VARIANT=no_reduce");
  if (change.synthetic_input) m.env.push_back("STEPSCOPE_VARIANT=synthetic_input");
  if (const int64_t steps = change.steps.value_or(options.steps); steps > 0) {
    m.env.push_back(fmt::format("STEPSCOPE_STEPS={}", steps));
  }
  m.env.push_back(fmt::format("STEPSCOPE_WARMUP_STEPS={}", options.warmup_steps));
  // The helper's stall watchdog has train's default (python/stepscope_torch/watchdog.py).
  if (options.stall_timeout_s != train::TrainOptions{}.stall_timeout_s) {
    m.env.push_back(fmt::format("STEPSCOPE_STALL_TIMEOUT={}", options.stall_timeout_s));
  }
  m.env.push_back(fmt::format("STEPSCOPE_GRAD_NORM_EVERY={}",
                              change.grad_norm_every.value_or(options.grad_norm_every)));
  const std::vector<std::pair<std::string_view, std::string>> values = {
      {"batch", std::to_string(batch)},         {"accum", std::to_string(accum)},
      {"bucket_mb", fmt::format("{}", bucket)}, {"workers", std::to_string(workers)},
      {"seed", std::to_string(seed)},           {"n", std::to_string(replicas)}};
  for (const std::string& word : command.args)
    m.args.push_back(core::FillPlaceholders(word, values));
  return m;
}

}  // namespace stepscope::plan
