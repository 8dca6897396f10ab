#include "plan/train_mapping.h"

#include <fmt/format.h>

#include "core/units.h"
#include "nn/model.h"

namespace stepscope::plan {
namespace {

const char* InjectionFlag(RankedInjection injection) {
  switch (injection) {
    case RankedInjection::kStraggler:
      return "--inject-straggler";
    case RankedInjection::kCrash:
      return "--inject-crash";
    case RankedInjection::kHang:
      return "--inject-hang";
  }
  return "?";
}

int* InjectionRank(RankedInjection injection, train::InjectionOptions* o) {
  switch (injection) {
    case RankedInjection::kStraggler:
      return &o->straggler_rank;
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
    m->NotApplicable(
        "length balancing: train has no option for it yet (its batches are fixed-length)");
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
       {RankedInjection::kStraggler, RankedInjection::kCrash, RankedInjection::kHang}) {
    train::InjectionOptions copy = options.injection;
    const int rank = *InjectionRank(injection, &copy);
    if (rank < replicas) continue;
    beyond.push_back(injection);
    notes->push_back(fmt::format("{} names rank {}: left out of the {}-replica runs",
                                 InjectionFlag(injection), rank, replicas));
  }
  return beyond;
}

}  // namespace stepscope::plan
