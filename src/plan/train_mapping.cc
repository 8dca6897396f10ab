#include "plan/train_mapping.h"

#include <fmt/format.h>

#include "core/units.h"
#include "nn/model.h"

namespace stepscope::plan {
namespace {

const char* InjectionFlag(RankedInjection injection) {
  switch (injection) {
    case RankedInjection::kNoise:
      return "--inject-noise";
    case RankedInjection::kCrash:
      return "--inject-crash";
    case RankedInjection::kHang:
      return "--inject-hang";
  }
  return "?";
}

int* InjectionRank(RankedInjection injection, train::InjectionOptions* o) {
  switch (injection) {
    case RankedInjection::kNoise:
      return &o->noise_rank;
    case RankedInjection::kCrash:
      return &o->crash_rank;
    case RankedInjection::kHang:
      return &o->hang_rank;
  }
  return nullptr;
}

// Builds the mapping one option at a time: typed field, argument list and words together.
class Mapper {
 public:
  Mapper(const TrainArgs& workload, const train::TrainOptions& options)
      : args_(workload), options_(options) {}

  template <typename T>
  void Set(const char* flag, const T& value) {
    const std::string text = fmt::format("{}", value);
    Replace(&args_, flag, text);
    flags_.push_back(fmt::format("{} {}", flag, text));
  }
  // A bare flag on (appended once) or off (removed).
  void SetBare(const char* flag, bool on) {
    const bool had = Has(args_, flag);
    Remove(&args_, flag);
    if (on) {
      args_.push_back({flag, std::nullopt});
      flags_.push_back(flag);
    } else if (had) {
      flags_.push_back(fmt::format("no {}", flag));
    }
  }
  void Drop(const char* flag) { Remove(&args_, flag); }
  // A value the run needs that is not part of the change's words (e.g. fewer stragglers).
  void Rewrite(const char* flag, const std::string& text) { Replace(&args_, flag, text); }
  void NotApplicable(std::string what) { not_applicable_.push_back(std::move(what)); }

  train::TrainOptions& options() { return options_; }
  TrainMapping Finish() {
    return {std::move(options_), Flatten(args_), std::move(flags_), std::move(not_applicable_)};
  }

 private:
  TrainArgs args_;
  train::TrainOptions options_;
  std::vector<std::string> flags_;
  std::vector<std::string> not_applicable_;
};

void MapLevers(const LeverChange& c, Mapper* m) {
  train::TrainOptions& o = m->options();
  if (c.micro_batch) {
    o.batch = *c.micro_batch;
    m->Set("--batch", o.batch);
  }
  if (c.accumulation) {
    o.accum = *c.accumulation;
    m->Set("--accum", o.accum);
  }
  if (c.bucket_mib) {
    o.reducer.bucket_mb = *c.bucket_mib;
    m->Set("--bucket-mb", o.reducer.bucket_mb);
  }
  if (c.overlap) {
    o.reducer.overlap = *c.overlap;
    m->SetBare("--no-overlap", !o.reducer.overlap);  // overlap is on unless this flag is given
  }
  if (c.wire) {
    o.reducer.dtype = *c.wire;
    m->Set("--reduce-dtype", comm::ToString(o.reducer.dtype));
  }
  if (c.loader_workers) {
    o.loader_workers = *c.loader_workers;
    m->Set("--loader-workers", o.loader_workers);
  }
  if (c.prefetch) {
    o.prefetch = *c.prefetch;
    m->Set("--prefetch", o.prefetch);
  }
  if (c.balance_lengths) {
    if (!o.variable_length) {
      m->NotApplicable("length balancing: the workload's batches are fixed-length");
    } else if (o.balance_lengths) {
      m->NotApplicable("length balancing: the workload's batches are balanced already");
    } else {
      o.balance_lengths = true;
      m->SetBare("--balance-lengths", true);
    }
  }
}

}  // namespace

TrainMapping MapOntoTrain(const TrainArgs& workload, const train::TrainOptions& options,
                          const RunChange& change) {
  Mapper m(workload, options);
  MapLevers(change.levers, &m);
  train::TrainOptions& o = m.options();
  if (change.no_reduce) {
    // No reduction: nothing on the wire, and train refuses a wire precision with --no-reduce.
    o.reducer.reduce = false;
    o.reducer.dtype = comm::WireDtype::kFp32;
    m.Drop("--reduce-dtype");
    m.SetBare("--no-reduce", true);
  }
  if (change.synthetic_input) {
    o.synthetic_input = true;
    m.SetBare("--synthetic-input", true);
  }
  for (RankedInjection injection : change.dropped) {
    m.Drop(InjectionFlag(injection));
    *InjectionRank(injection, &o.injection) = -1;
  }
  if (change.stragglers && *change.stragglers != o.injection.stragglers) {
    o.injection.stragglers = *change.stragglers;
    if (o.injection.stragglers.empty()) {
      m.Drop("--inject-straggler");
    } else {
      m.Rewrite("--inject-straggler", StragglersText(o.injection.stragglers));
    }
  }
  if (change.seed) {
    o.seed = *change.seed;
    m.Set("--seed", *change.seed);
  }
  if (change.steps) {
    o.steps = *change.steps;
    m.Set("--steps", *change.steps);
  }
  if (change.measure_wire_error) {
    o.reducer.measure_wire_error = true;
    m.SetBare("--measure-wire-error", true);
  }
  if (change.grad_norm_every) {
    o.grad_norm_every = *change.grad_norm_every;
    m.Set("--grad-norm-every", *change.grad_norm_every);
  }
  if (change.unpaced) {
    o.emulation = {};
    o.injection = {};
    for (const char* flag :
         {"--emulate-device-speed", "--emulate-link", "--inject-straggler", "--inject-noise",
          "--inject-input-delay", "--inject-hang", "--inject-crash"}) {
      m.Drop(flag);
    }
  }
  return m.Finish();
}

LeverBasis TrainBasis(const train::TrainOptions& o) {
  LeverBasis b;
  b.micro_batch = o.batch;
  b.accumulation = o.accum;
  b.bucket_mib = o.reducer.bucket_mb;
  b.overlap = o.reducer.overlap;
  b.wire = o.reducer.dtype;
  b.loader_workers = o.loader_workers;
  b.prefetch = o.prefetch;
  if (auto model = nn::MakeModel(o.model); model.ok()) {
    b.gradient_mib = static_cast<double>(model.value()->Stats().gradient_bytes) / kMiB;
  }
  return b;
}

std::vector<RankedInjection> InjectionsBeyond(const train::TrainOptions& options, int replicas,
                                              std::vector<std::string>* notes) {
  std::vector<RankedInjection> beyond;
  for (RankedInjection injection :
       {RankedInjection::kNoise, RankedInjection::kCrash, RankedInjection::kHang}) {
    train::InjectionOptions copy = options.injection;
    const int rank = *InjectionRank(injection, &copy);
    if (rank < replicas) continue;
    beyond.push_back(injection);
    notes->push_back(fmt::format("{} names rank {}: left out of the {}-replica runs",
                                 InjectionFlag(injection), rank, replicas));
  }
  return beyond;
}

std::vector<train::StragglerInjection> StragglersWithin(const train::TrainOptions& options,
                                                        int replicas,
                                                        std::vector<std::string>* notes) {
  std::vector<train::StragglerInjection> kept;
  for (const train::StragglerInjection& s : options.injection.stragglers) {
    if (s.rank < replicas) {
      kept.push_back(s);
    } else {
      notes->push_back(
          fmt::format("--inject-straggler names rank {}: left out of the "
                      "{}-replica runs",
                      s.rank, replicas));
    }
  }
  return kept;
}

std::string StragglersText(const std::vector<train::StragglerInjection>& stragglers) {
  std::vector<std::string> parts;
  for (const train::StragglerInjection& s : stragglers) {
    parts.push_back(fmt::format("{}:{}", s.rank, s.factor));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace stepscope::plan
