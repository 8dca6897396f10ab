#include "decide/build_diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "analysis/attribution.h"
#include "analysis/scaling.h"
#include "analysis/straggler_persistence.h"
#include "core/text_format.h"
#include "decide/noise_scale.h"

namespace stepscope::decide {
namespace {

// Replaces every `from` in `text` with `to`.
void ReplaceAll(std::string* text, std::string_view from, std::string_view to) {
  for (size_t at = text->find(from); at != std::string::npos;
       at = text->find(from, at + to.size())) {
    text->replace(at, from.size(), to);
  }
}

// The analysis words its sentences in samples. When the records give no batch size the rates
// are steps per second: say so in every sentence, so that no step rate reads as a sample rate.
void InSteps(std::string* s) {
  ReplaceAll(s, "samples/s", "steps/s");
  ReplaceAll(s, "per sample", "per step");
}

void SpeakInSteps(DiagnosisPoint* p) {
  InSteps(&p->ablations.sentence);
  for (analysis::AblationCheck& c : p->ablations.checks) {
    InSteps(&c.unit);
    InSteps(&c.sentence);
  }
  for (std::string& e : p->skew.evidence) InSteps(&e);
}

void SpeakInSteps(Verdict* v) {
  for (std::string& e : v->evidence) InSteps(&e);
  for (LeverAdvice& l : v->levers) {
    InSteps(&l.action);
    InSteps(&l.basis);
  }
  InSteps(&v->decision_reason);
  InSteps(&v->quality_note);
  InSteps(&v->explanation);
}

void SpeakInSteps(Diagnosis* d) {
  for (DiagnosisPoint& p : d->points) SpeakInSteps(&p);
  if (d->after) {
    for (DiagnosisPoint& p : d->after->points) SpeakInSteps(&p);
  }
  SpeakInSteps(&d->verdict);
  if (d->after && d->after->verdict) SpeakInSteps(&*d->after->verdict);
  InSteps(&d->noise_scale.reason);
  for (std::string& w : d->warnings) InSteps(&w);
}

struct Measured {
  analysis::Decomposition baseline;
  std::vector<analysis::Decomposition> repeats;
  analysis::SkewReport skew;
  analysis::AblationReport ablations;
  const RunSet* run = nullptr;
};

Result<analysis::Decomposition> DecomposeNamed(const std::vector<StepRecord>& records,
                                               const char* what, int replicas) {
  Result<analysis::Decomposition> d = analysis::Decompose(records);
  if (!d.ok()) {
    return d.status().WithContext(replicas > 0
                                      ? fmt::format("{} run at {} replicas", what, replicas)
                                      : fmt::format("{} run", what));
  }
  return d;
}

}  // namespace

Result<std::vector<DiagnosisPoint>> BuildPoints(const std::vector<RunSet>& runs,
                                                const DiagnoseOptions& options,
                                                analysis::Decomposition* reference,
                                                std::vector<std::string>* warnings) {
  if (runs.empty()) return Status::Error("no runs to diagnose");
  std::vector<Measured> measured;
  for (const RunSet& run : runs) {
    Measured m;
    m.run = &run;
    Result<analysis::Decomposition> base = DecomposeNamed(run.baseline, "baseline", 0);
    if (!base.ok()) return base.status();
    m.baseline = std::move(base).value();
    const int n = m.baseline.replicas;
    for (size_t k = 0; k < run.repeats.size(); ++k) {
      Result<analysis::Decomposition> again = DecomposeNamed(run.repeats[k], "repeat", n);
      if (!again.ok()) return again.status();
      const double x = again->samples_per_s;
      m.baseline.repeat_samples_per_s.push_back(x);
      m.baseline.throughput.low = std::min(m.baseline.throughput.low, x);
      m.baseline.throughput.high = std::max(m.baseline.throughput.high, x);
      m.repeats.push_back(std::move(again).value());
    }
    if (run.replicas > 0 && run.replicas != n) {
      std::vector<int> seen;
      for (const analysis::RankDecomposition& r : m.baseline.ranks) seen.push_back(r.rank);
      m.baseline.warnings.push_back(fmt::format(
          "{} ranks were launched but records came from {} (ranks {}); the point is placed at {} "
          "replicas",
          run.replicas, n, fmt::join(seen, ","), n));
    }
    Result<analysis::SkewReport> skew = analysis::AnalyzeSkew(run.baseline, options.skew);
    if (!skew.ok()) return skew.status();
    m.skew = std::move(skew).value();
    if (!m.skew.straggler_ranks.empty() && !run.repeats.empty()) {
      // A straggler must be the same rank in most of the point's runs.
      std::vector<analysis::SkewReport> again;
      for (const std::vector<StepRecord>& r : run.repeats) {
        Result<analysis::SkewReport> s = analysis::AnalyzeSkew(r, options.skew);
        if (!s.ok()) return s.status().WithContext(fmt::format("repeat run at {} replicas", n));
        again.push_back(std::move(s).value());
      }
      analysis::KeepPersistentStragglers(again, &m.skew);
    }
    analysis::AblationRuns ab;
    if (run.no_reduce) {
      Result<analysis::Decomposition> d = DecomposeNamed(*run.no_reduce, "no-reduce ablation", n);
      if (!d.ok()) return d.status();
      ab.no_reduce = std::move(d).value();
    }
    if (run.synthetic_input) {
      Result<analysis::Decomposition> d =
          DecomposeNamed(*run.synthetic_input, "synthetic-input ablation", n);
      if (!d.ok()) return d.status();
      ab.synthetic_input = std::move(d).value();
    }
    if (run.double_batch) {
      Result<analysis::Decomposition> d =
          DecomposeNamed(*run.double_batch, "double-batch ablation", n);
      if (!d.ok()) return d.status();
      ab.double_batch = std::move(d).value();
    }
    m.ablations = analysis::CompareAblations(m.baseline, ab, &m.skew, options.ablation);
    measured.push_back(std::move(m));
  }
  std::sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    return a.baseline.replicas < b.baseline.replicas;
  });

  double x1 = 0;
  if (measured.front().baseline.replicas == 1) {
    *reference = measured.front().baseline;
  } else {
    *reference = analysis::EstimateSingleReplica(measured.front().baseline);
    x1 = reference->samples_per_s;
    warnings->push_back(
        fmt::format("no 1-replica run: one device's throughput ({:.1f} {}) is estimated from the "
                    "{}-replica run's fastest rank without exposed communication",
                    x1, analysis::UnitText(options.source.throughput_unit),
                    measured.front().baseline.replicas));
  }
  std::vector<analysis::ScalingInput> inputs;
  for (const Measured& m : measured) {
    inputs.push_back({m.baseline.replicas, m.baseline.samples_per_s});
  }
  Result<std::vector<analysis::ScalingPoint>> curve = analysis::ScalingCurve(inputs, x1);
  if (!curve.ok()) return curve.status();

  std::vector<DiagnosisPoint> points;
  for (size_t i = 0; i < measured.size(); ++i) {
    DiagnosisPoint p;
    p.scaling = (*curve)[i];
    p.decomposition = std::move(measured[i].baseline);
    p.skew = std::move(measured[i].skew);
    p.ablations = std::move(measured[i].ablations);
    p.repeats = std::move(measured[i].repeats);
    points.push_back(std::move(p));
  }
  return points;
}

namespace {

// The set's replica count: as launched, else the ranks of its baseline's records.
int ReplicasOf(const RunSet& run) {
  if (run.replicas > 0) return run.replicas;
  std::set<int> ranks;
  for (const StepRecord& r : run.baseline) ranks.insert(r.rank);
  return static_cast<int>(ranks.size());
}

// Warns for every run (baselines and ablations) the emulation did not fully honour, and sums
// the pacing of the runs that decide the binding: the largest replica count with its ablations,
// and the 1-replica reference.
std::optional<EmulationHonesty> DecidingHonesty(const std::vector<RunSet>& runs, int largest,
                                                std::vector<std::string>* warnings) {
  std::optional<EmulationHonesty> sum;
  const auto weigh = [&](const EmulationHonesty& h, int n, const std::string& what, bool deciding) {
    if (h.unhonoured_segments > 0 || h.unhonoured_links > 0) {
      warnings->push_back(fmt::format(
          "emulation {}at {} replica(s): {} of {} paced compute segments ({}) and {} of {} link "
          "reductions ({}) ran slower than the emulated device or link: the host could not "
          "honour the emulation there",
          what, n, h.unhonoured_segments, h.paced_segments, Pct(h.SegmentShare(), 1),
          h.unhonoured_links, h.link_reductions, Pct(h.LinkShare(), 1)));
    }
    if (!deciding) return;
    if (!sum) sum = EmulationHonesty{};
    sum->paced_segments += h.paced_segments;
    sum->unhonoured_segments += h.unhonoured_segments;
    sum->unhonoured_links += h.unhonoured_links;
    sum->link_reductions += h.link_reductions;
  };
  for (const RunSet& run : runs) {
    const int n = ReplicasOf(run);
    if (run.honesty) weigh(*run.honesty, n, "", n == largest || n == 1);
    for (const auto& [name, h] : run.ablation_honesty) {
      weigh(h, n, "in the " + name + " ablation ", n == largest);
    }
  }
  return sum;
}

// The verdict on a curve (its points sorted by replica count, its reference the one-replica
// decomposition) by the largest count's decomposition, skew and ablations.
Verdict VerdictOf(const std::vector<RunSet>& runs, const std::vector<DiagnosisPoint>& points,
                  const analysis::Decomposition& reference, const NoiseScale& noise,
                  const DiagnoseOptions& options, std::vector<std::string>* warnings) {
  const DiagnosisPoint& largest = points.back();
  VerdictInputs in;
  for (const DiagnosisPoint& p : points) in.points.push_back(p.scaling);
  in.largest = largest.decomposition;
  in.largest_repeats = largest.repeats;
  in.reference = reference;
  in.reference_estimated = points.front().scaling.replicas != 1;
  in.ablations = largest.ablations;
  in.skew = largest.skew;
  in.noise = noise;
  in.cost = options.cost;
  in.emulation = DecidingHonesty(runs, largest.scaling.replicas, warnings);
  for (const RunSet& run : runs) {
    if (ReplicasOf(run) == largest.scaling.replicas) {
      in.script_collectives = run.script_collectives;
    }
  }
  return DecideVerdict(in, options.verdict);
}

}  // namespace

Result<Diagnosis> BuildDiagnosis(const std::vector<RunSet>& runs, const DiagnoseOptions& options) {
  Diagnosis d;
  d.source = options.source;
  d.emulation = options.emulation;
  analysis::Decomposition reference;
  Result<std::vector<DiagnosisPoint>> points = BuildPoints(runs, options, &reference, &d.warnings);
  if (!points.ok()) return points.status();
  d.points = std::move(points).value();
  const DiagnosisPoint& largest = d.points.back();
  if (largest.scaling.replicas > 1) {
    Result<analysis::Attribution> a = analysis::Attribute(reference, largest.decomposition);
    if (a.ok()) {
      d.attribution = std::move(a).value();
      d.attribution->reference_estimated = d.points.front().scaling.replicas != 1;
    } else {
      d.warnings.push_back(a.status().message());
    }
  }
  // The noise scale from every run with more than one replica (docs/metrics.md).
  std::vector<const std::vector<StepRecord>*> noise_runs;
  for (const RunSet& run : runs) {
    if (!run.baseline.empty()) noise_runs.push_back(&run.baseline);
    for (const std::vector<StepRecord>& r : run.repeats) noise_runs.push_back(&r);
    if (run.double_batch) noise_runs.push_back(&*run.double_batch);
  }
  d.noise_scale = options.measured_noise && options.measured_noise->known
                      ? *options.measured_noise
                      : EstimatePooledNoiseScale(noise_runs);
  d.verdict = VerdictOf(runs, d.points, reference, d.noise_scale, options, &d.warnings);
  if (d.source.throughput_unit == analysis::ThroughputUnit::kSteps) SpeakInSteps(&d);
  return d;
}

Status AddAfterLevers(const std::vector<RunSet>& runs, const std::vector<AppliedLever>& levers,
                      const DiagnoseOptions& options, Diagnosis* diagnosis) {
  analysis::Decomposition reference;
  Result<std::vector<DiagnosisPoint>> points =
      BuildPoints(runs, options, &reference, &diagnosis->warnings);
  if (!points.ok()) return points.status().WithContext("after applying the levers");
  AfterLevers after;
  after.levers_applied = levers;
  after.points = std::move(points).value();
  if (!diagnosis->points.empty() && diagnosis->points.back().scaling.speedup > 0) {
    const analysis::ScalingPoint& last = diagnosis->points.back().scaling;
    after.original_x1 = last.samples_per_s / last.speedup;
  }
  // The verdict on the re-measured curve, by the same method as the first (the levered runs
  // have no ablations: nothing confirms or overturns the binding there).
  if (after.points.back().scaling.replicas > 1) {
    after.verdict = VerdictOf(runs, after.points, reference, diagnosis->noise_scale, options,
                              &diagnosis->warnings);
  }
  diagnosis->after = std::move(after);
  if (diagnosis->source.throughput_unit == analysis::ThroughputUnit::kSteps)
    SpeakInSteps(diagnosis);
  return Status::Ok();
}

}  // namespace stepscope::decide
