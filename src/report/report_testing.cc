#include "report/report_testing.h"

#include "analysis/synthetic_run.h"
#include "decide/build_diagnosis.h"

namespace stepscope::report {
namespace {

decide::RunSet Runs(int replicas, double input_wait, bool straggler) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = replicas;
  spec.steps = 12;
  spec.compute = 0.010;
  spec.input_wait = input_wait;
  spec.buckets = 3;
  spec.bucket_time = 0.0015;
  spec.jitter = 0.02;
  spec.grad_sq = 1.0;
  spec.trace_sigma = 64.0;
  if (straggler && replicas > 2) spec.rank_compute_factor[replicas - 1] = 1.6;
  decide::RunSet set;
  set.baseline = analysis::SynthesizeRun(spec);
  if (replicas > 1) {
    analysis::SyntheticRunSpec no_reduce = spec;
    no_reduce.reduce = false;
    set.no_reduce = analysis::SynthesizeRun(no_reduce);
    analysis::SyntheticRunSpec synthetic = spec;
    synthetic.input_wait = 0;
    set.synthetic_input = analysis::SynthesizeRun(synthetic);
  }
  return set;
}

decide::PricedOption Option(decide::OptionKind kind, Decision action, int n, double rate,
                            std::vector<Lever> levers, std::string label) {
  decide::PricedOption o;
  o.kind = kind;
  o.action = action;
  o.replicas = n;
  o.global_batch = 32 * n;
  o.samples_per_s = {rate, 0.9 * rate, 1.1 * rate};
  o.statistical_efficiency = 1.0 / (1.0 + n / 16.0);
  o.goodput = rate * o.statistical_efficiency;
  o.price_per_hour = 2.5 * n;
  o.hours_per_million = 1e6 / o.goodput / 3600;
  o.cost_per_million = o.price_per_hour * o.hours_per_million;
  o.levers = std::move(levers);
  o.label = std::move(label);
  return o;
}

void AddPricedOptions(bool hostile, decide::Verdict* v) {
  using decide::OptionKind;
  const std::vector<Lever> lever = {Lever::kLowPrecisionReduction};
  const std::string tag = hostile ? std::string(" ") + kHostileName : "";
  v->options = {
      Option(OptionKind::kStay, Decision::kStay, 4, 3000, {}, "stay: 4 replicas" + tag),
      Option(OptionKind::kLever, Decision::kPullLevers, 4, 3300, lever, "4 replicas, bf16"),
      Option(OptionKind::kFewerDevices, Decision::kReduceDevices, 2, 1800, lever, "2 replicas"),
      Option(OptionKind::kMoreDevices, Decision::kBuyDevices, 8, 5200, lever, "8 replicas"),
      Option(OptionKind::kMoreDevices, Decision::kBuyDevices, 16, 8000, lever, "16 replicas"),
      Option(OptionKind::kFasterLink, Decision::kUpgradeInterconnect, 8, 6000, lever,
             "8 replicas on a faster link")};
  v->options.back().link = "100 GB/s, 1 us";
  decide::PricedDecision p;
  p.action = Decision::kBuyDevices;
  p.option = v->options[3].label;
  p.replicas = 8;
  p.reason = "8 replicas has the least cost per million samples";
  v->priced = p;
}

}  // namespace

Result<decide::Diagnosis> MakeTestDiagnosis(const TestDiagnosisOptions& options) {
  decide::DiagnoseOptions opts;
  opts.source.origin = "diagnose";
  opts.source.workload = options.hostile ? std::string("mlp 256x2 on ") + kHostileName
                                         : "mlp 256x2, micro-batch 32, fashion-mnist";
  opts.source.tool_version = "0.1.0";
  opts.cost.device_cost_per_hour = 2.5;
  if (options.emulated || options.hostile) {
    opts.emulation.emulated = true;
    opts.emulation.parameters["device_speed"] = "0.25";
    if (options.hostile) opts.emulation.parameters["host"] = kHostileName;
  }
  std::vector<decide::RunSet> runs = {Runs(1, 0.001, true), Runs(2, 0.001, true),
                                      Runs(4, 0.001, true)};
  auto d = decide::BuildDiagnosis(runs, opts);
  if (!d.ok()) return d.status();
  if (options.hostile) d.value().warnings.push_back(std::string("trace ") + kHostileName);
  if (options.after) {
    std::vector<decide::RunSet> after = {Runs(1, 0, false), Runs(2, 0, false), Runs(4, 0, false)};
    STEPSCOPE_RETURN_IF_ERROR(
        decide::AddAfterLevers(after,
                               {{Lever::kLoaderWorkersPrefetch, "--loader-workers 2 --prefetch 8"},
                                {Lever::kRemoveStraggler, "rank 1 replaced"}},
                               opts, &d.value()));
  }
  if (options.priced) {
    decide::Diagnosis& diag = d.value();
    AddPricedOptions(options.hostile,
                     diag.after && diag.after->verdict ? &*diag.after->verdict : &diag.verdict);
  }
  return d;
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

std::string MarkupOutsideScripts(const std::string& page, bool* data_block_clean) {
  std::string markup;
  size_t at = 0;
  *data_block_clean = true;
  for (size_t open = page.find("<script"); open != std::string::npos;
       open = page.find("<script", at)) {
    const size_t body = page.find('>', open) + 1;
    markup += page.substr(at, body - at);
    at = page.find("</script>", body);
    if (at == std::string::npos) return markup;
    if (page.compare(open, 36, "<script type=\"application/json\" id=\"") == 0 &&
        page.substr(body, at - body).find('<') != std::string::npos) {
      *data_block_clean = false;
    }
  }
  return markup + page.substr(at);
}

}  // namespace stepscope::report
