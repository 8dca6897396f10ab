#include "decide/diagnosis.h"

#include <fmt/format.h>

#include "decide/decision_json.h"
#include "decide/json_fields.h"

namespace stepscope::decide {
namespace {

using nlohmann::json;
using namespace json_fields;  // NOLINT: the strict field readers

// ---- writing ----

json ComponentsJson(const analysis::Components& c) {
  return {{"step", c.step},
          {"compute", c.compute},
          {"input_wait", c.input_wait},
          {"exposed_comm", c.exposed_comm},
          {"sync_wait", c.sync_wait},
          {"transfer", c.transfer},
          {"overhead", c.overhead},
          {"backward", c.backward},
          {"comm_busy", c.comm_busy},
          {"script_comm", c.script_comm}};
}

json SkewJson(const analysis::SkewReport& s) {
  json ranks = json::array();
  for (const analysis::RankSkew& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"compute_mean", r.compute_mean},
                     {"last_arrivals", r.last_arrivals},
                     {"last_fraction", r.last_fraction},
                     {"wait_share", r.wait_share},
                     {"compute_excess", r.compute_excess},
                     {"pre_arrival_mean", r.pre_arrival_mean},
                     {"arrival_excess", r.arrival_excess},
                     {"input_wait_mean", r.input_wait_mean},
                     {"others_input_wait", r.others_input_wait}});
  }
  json collectives = json::array();
  for (const analysis::CollectiveSkew& c : s.collectives) {
    collectives.push_back({{"index", c.index}, {"mean", c.mean}, {"p90", c.p90}});
  }
  return {{"compute_spread", s.compute_spread},
          {"compute_cv", s.compute_cv},
          {"arrival_skew_mean", s.arrival_skew_mean},
          {"arrival_skew_p90", s.arrival_skew_p90},
          {"arrival_events", s.arrival_events},
          {"by_steps", s.by_steps},
          {"straggler_ranks", s.straggler_ranks},
          {"evidence", s.evidence},
          {"ranks", ranks},
          {"collectives", collectives}};
}

json AblationsJson(const analysis::AblationReport& a) {
  json checks = json::array();
  for (const analysis::AblationCheck& c : a.checks) {
    checks.push_back({{"check", ToString(c.check)},
                      {"unit", c.unit},
                      {"measured", c.measured},
                      {"predicted", ToJson(c.Accepted())},
                      {"predicted_high", c.predicted_high},
                      {"noise", c.noise},
                      {"agrees", c.agrees},
                      {"sentence", c.sentence}});
  }
  return {{"agree", a.agree ? json(*a.agree) : json(nullptr)},
          {"sentence", a.sentence},
          {"checks", checks}};
}

json CollectiveSplitsJson(const std::vector<analysis::CollectiveSplit>& splits) {
  json out = json::array();
  for (const analysis::CollectiveSplit& c : splits) {
    out.push_back({{"index", c.index}, {"sync_wait", c.sync_wait}, {"transfer", c.transfer}});
  }
  return out;
}

json PointJson(const DiagnosisPoint& p) {
  const analysis::Decomposition& d = p.decomposition;
  json ranks = json::array();
  for (const analysis::RankDecomposition& r : d.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"samples_per_step", r.samples_per_step},
                     {"step_p50", r.step_p50},
                     {"step_p90", r.step_p90},
                     {"work_lead", r.work_lead},
                     {"components", ComponentsJson(r.mean)}});
  }
  return {{"replicas", p.scaling.replicas},
          {"samples_per_s", p.scaling.samples_per_s},
          {"throughput", ToJson(d.throughput)},
          {"repeat_samples_per_s", d.repeat_samples_per_s},
          {"speedup", p.scaling.speedup},
          {"efficiency", p.scaling.efficiency},
          {"marginal_device_value",
           p.scaling.has_marginal ? json(p.scaling.marginal_device_value) : json(nullptr)},
          {"steps", d.steps},
          {"samples_per_step", d.samples_per_step},
          {"step_time", {{"mean", d.job.step}, {"p50", d.step_p50}, {"p90", d.step_p90}}},
          {"components", ComponentsJson(d.job)},
          {"collectives", CollectiveSplitsJson(d.job_collectives)},
          {"ranks", ranks},
          {"skew", SkewJson(p.skew)},
          {"ablations", AblationsJson(p.ablations)},
          {"warnings", d.warnings}};
}

json PointsJson(const std::vector<DiagnosisPoint>& points) {
  json out = json::array();
  for (const DiagnosisPoint& p : points) out.push_back(PointJson(p));
  return out;
}

json AttributionJson(const analysis::Attribution& a) {
  json lines = json::array();
  for (const analysis::WaterfallLine& l : a.lines) {
    lines.push_back({{"component", ToString(l.component)},
                     {"delta_seconds", l.delta_seconds},
                     {"devices", l.devices}});
  }
  return {{"replicas", a.replicas},
          {"ideal_devices", a.ideal_devices},
          {"measured_speedup", a.measured_speedup},
          {"lost_devices", a.lost_devices},
          {"reference_estimated", a.reference_estimated},
          {"lines", lines}};
}

json WireCheckJson(const std::optional<WireCheck>& w) {
  if (!w) return nullptr;
  return {{"dtype", w->dtype},
          {"replicas", w->replicas},
          {"steps", w->steps},
          {"tail_steps", w->tail_steps},
          {"loss_fp32", w->loss_fp32},
          {"loss_reduced", w->loss_reduced},
          {"loss_fp32_reseeded", w->loss_fp32_reseeded},
          {"difference", w->difference},
          {"spread", w->spread},
          {"kept", w->kept},
          {"relative_error", w->relative_error ? json(*w->relative_error) : json(nullptr)},
          {"relative_error_max", w->relative_error_max},
          {"error_steps", w->error_steps},
          {"sentence", w->sentence}};
}

json VerdictJson(const Verdict& v, int largest_replicas) {
  json levers = json::array();
  for (const LeverAdvice& l : v.levers) {
    levers.push_back({{"lever", ToString(l.lever)},
                      {"action", l.action},
                      {"expected_samples_per_s", l.expected_samples_per_s},
                      {"expected_gain_samples_per_s", l.expected_gain_samples_per_s},
                      {"expected_efficiency", l.expected_efficiency},
                      {"expected_gain_goodput",
                       l.expected_gain_goodput ? json(*l.expected_gain_goodput) : json(nullptr)},
                      {"basis", l.basis}});
  }
  json dropped = json::array();
  for (const DroppedLever& l : v.levers_dropped) {
    dropped.push_back({{"lever", ToString(l.lever)},
                       {"action", l.action},
                       {"expected_gain_samples_per_s", l.expected_gain_samples_per_s},
                       {"reason", l.reason}});
  }
  json costs = json::array();
  for (const CostPoint& c : v.costs) {
    costs.push_back({{"replicas", c.replicas},
                     {"cost_per_million_samples", c.cost_per_million_samples},
                     {"marginal_cost_per_million_samples", c.marginal_cost_per_million_samples}});
  }
  json losses = json::array();
  for (const BindingLoss& l : v.losses) {
    losses.push_back({{"binding", ToString(l.binding)},
                      {"seconds_per_step", l.seconds},
                      {"devices", l.devices}});
  }
  json candidates = json::array();
  for (const BindingCandidate& c : v.candidates) {
    candidates.push_back({{"binding", ToString(c.binding)},
                          {"seconds_per_step", ToJson(c.seconds)},
                          {"devices", ToJson(c.devices)}});
  }
  return {{"binding", ToString(v.binding)},
          {"throughput_constraint", ToString(v.throughput_constraint)},
          {"losses", losses},
          {"candidates", candidates},
          {"straggler_ranks", v.straggler_ranks},
          {"evidence", v.evidence},
          {"levers", levers},
          {"levers_dropped", dropped},
          {"decision", DecisionJson(v, largest_replicas)},
          // Derived, for scripts written against version 1: yes, not yet or no.
          {"buy_more_devices", v.decision == Decision::kBuyDevices   ? "yes"
                               : v.decision == Decision::kPullLevers ? "not yet"
                                                                     : "no"},
          {"options", OptionsJson(v.options)},
          {"time_to_quality", TimeToQualityJson(v.time_to_quality)},
          {"wire_check", WireCheckJson(v.wire_check)},
          {"currency", ToString(v.currency)},
          {"costs", costs},
          {"quality_note", v.quality_note},
          {"explanation", v.explanation}};
}

json NoiseJson(const NoiseScale& n) {
  return {{"known", n.known},
          {"reason", n.reason},
          {"grad_sq", n.grad_sq},
          {"trace_sigma", n.trace_sigma},
          {"b_noise", n.b_noise},
          {"local_batch", n.local_batch},
          {"global_batch", n.global_batch},
          {"steps", n.steps},
          {"b_noise_low", n.b_noise_low},
          {"b_noise_high", n.b_noise_high},
          {"runs", n.runs},
          {"method", n.method},
          {"progress",
           {{"first_step", n.first_step},
            {"last_step", n.last_step},
            {"samples_seen", n.samples_seen}}}};
}

// ---- reading: every accessor names the full path of the field it failed on ----

// What a version-1 file wrote in words, as the version-2 enums.
Status V1Decision(const std::string& buy, const std::string& path, Binding binding, Decision* out) {
  if (buy == "yes") {
    *out = Decision::kBuyDevices;
  } else if (buy == "not yet") {
    *out = Decision::kPullLevers;
  } else if (buy == "no") {
    *out = binding == Binding::kCommunication ? Decision::kUpgradeInterconnect
           : binding == Binding::kCompute     ? Decision::kUpgradeDevices
                                              : Decision::kStay;
  } else {
    return Status::Error(
        fmt::format("diagnosis.json: field '{}' is '{}', expected yes, no or not yet", path, buy));
  }
  return Status::Ok();
}

Status ReadComponents(const json& j, const std::string& p, analysis::Components* c) {
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "step", &c->step));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "compute", &c->compute));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "input_wait", &c->input_wait));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "exposed_comm", &c->exposed_comm));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "sync_wait", &c->sync_wait));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "transfer", &c->transfer));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "overhead", &c->overhead));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "backward", &c->backward));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "comm_busy", &c->comm_busy));
  // Written since the helper recorded the script's own collectives; 0 in older files.
  if (!j.contains("script_comm")) return Status::Ok();
  return Get(j, p, "script_comm", &c->script_comm);
}

Status ReadSkew(const json& j, const std::string& p, int version, analysis::SkewReport* s) {
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "compute_spread", &s->compute_spread));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "compute_cv", &s->compute_cv));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "arrival_skew_mean", &s->arrival_skew_mean));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "arrival_skew_p90", &s->arrival_skew_p90));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "arrival_events", &s->arrival_events));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "by_steps", &s->by_steps));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "straggler_ranks", &s->straggler_ranks));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "evidence", &s->evidence));
  const json* ranks = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "ranks", &ranks));
  for (size_t i = 0; i < ranks->size(); ++i) {
    const std::string q = At(p, "ranks", i);
    analysis::RankSkew r;
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "rank", &r.rank));
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "compute_mean", &r.compute_mean));
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "last_arrivals", &r.last_arrivals));
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "last_fraction", &r.last_fraction));
    if ((*ranks)[i].contains("wait_share")) {  // absent in files written before it
      STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "wait_share", &r.wait_share));
    }
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "compute_excess", &r.compute_excess));
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "pre_arrival_mean", &r.pre_arrival_mean));
    STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "arrival_excess", &r.arrival_excess));
    if (version >= 2) {
      STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "input_wait_mean", &r.input_wait_mean));
      STEPSCOPE_RETURN_IF_ERROR(Get((*ranks)[i], q, "others_input_wait", &r.others_input_wait));
    }
    s->ranks.push_back(r);
  }
  const json* cols = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "collectives", &cols));
  for (size_t i = 0; i < cols->size(); ++i) {
    const std::string q = At(p, "collectives", i);
    analysis::CollectiveSkew c;
    STEPSCOPE_RETURN_IF_ERROR(Get((*cols)[i], q, "index", &c.index));
    STEPSCOPE_RETURN_IF_ERROR(Get((*cols)[i], q, "mean", &c.mean));
    STEPSCOPE_RETURN_IF_ERROR(Get((*cols)[i], q, "p90", &c.p90));
    s->collectives.push_back(c);
  }
  return Status::Ok();
}

Status ReadAblations(const json& j, const std::string& p, int version,
                     analysis::AblationReport* a) {
  auto agree = j.find("agree");
  if (agree != j.end() && !agree->is_null()) {
    bool value = false;
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "agree", &value));
    a->agree = value;
  } else if (agree == j.end()) {
    return Status::Error(fmt::format("diagnosis.json: missing field '{}'", Join(p, "agree")));
  }
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "sentence", &a->sentence));
  const json* checks = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "checks", &checks));
  for (size_t i = 0; i < checks->size(); ++i) {
    const std::string q = At(p, "checks", i);
    const json& e = (*checks)[i];
    analysis::AblationCheck c;
    STEPSCOPE_RETURN_IF_ERROR(GetEnum(e, q, version == 1 ? "name" : "check", &c.check));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "unit", &c.unit));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "measured", &c.measured));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "predicted_high", &c.predicted_high));
    if (version == 1) {
      STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "predicted", &c.predicted));
      STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "tolerance", &c.tolerance));
    } else {
      Estimate accepted;
      STEPSCOPE_RETURN_IF_ERROR(GetEstimate(e, q, "predicted", &accepted));
      c.predicted = accepted.value;
      c.tolerance = accepted.value - accepted.low;
      if (e.contains("noise")) STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "noise", &c.noise));
    }
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "agrees", &c.agrees));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "sentence", &c.sentence));
    a->checks.push_back(c);
  }
  if (a->checks.empty()) a->agree.reset();  // version 1 wrote true for no checks
  return Status::Ok();
}

Status ReadPoint(const json& j, const std::string& p, int version, DiagnosisPoint* out) {
  analysis::ScalingPoint& s = out->scaling;
  analysis::Decomposition& d = out->decomposition;
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "replicas", &s.replicas));
  d.replicas = s.replicas;
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "samples_per_s", &s.samples_per_s));
  d.samples_per_s = s.samples_per_s;
  if (version == 1) {
    d.throughput = Estimate::Exact(s.samples_per_s);
  } else {
    STEPSCOPE_RETURN_IF_ERROR(GetEstimate(j, p, "throughput", &d.throughput));
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "repeat_samples_per_s", &d.repeat_samples_per_s));
  }
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "speedup", &s.speedup));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "efficiency", &s.efficiency));
  auto m = j.find("marginal_device_value");
  if (m == j.end()) {
    return Status::Error(
        fmt::format("diagnosis.json: missing field '{}'", Join(p, "marginal_device_value")));
  }
  s.has_marginal = !m->is_null();
  if (s.has_marginal) {
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "marginal_device_value", &s.marginal_device_value));
  }
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "steps", &d.steps));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "samples_per_step", &d.samples_per_step));
  const json* st = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, p, "step_time", &st));
  STEPSCOPE_RETURN_IF_ERROR(Get(*st, Join(p, "step_time"), "p50", &d.step_p50));
  STEPSCOPE_RETURN_IF_ERROR(Get(*st, Join(p, "step_time"), "p90", &d.step_p90));
  const json* comp = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, p, "components", &comp));
  STEPSCOPE_RETURN_IF_ERROR(ReadComponents(*comp, Join(p, "components"), &d.job));
  if (j.contains("collectives")) {  // absent in files written before it was added
    const json* splits = nullptr;
    STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "collectives", &splits));
    for (size_t i = 0; i < splits->size(); ++i) {
      const std::string q = At(p, "collectives", i);
      analysis::CollectiveSplit c;
      STEPSCOPE_RETURN_IF_ERROR(Get((*splits)[i], q, "index", &c.index));
      STEPSCOPE_RETURN_IF_ERROR(Get((*splits)[i], q, "sync_wait", &c.sync_wait));
      STEPSCOPE_RETURN_IF_ERROR(Get((*splits)[i], q, "transfer", &c.transfer));
      d.job_collectives.push_back(c);
    }
  }
  const json* ranks = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "ranks", &ranks));
  for (size_t i = 0; i < ranks->size(); ++i) {
    const std::string q = At(p, "ranks", i);
    const json& e = (*ranks)[i];
    analysis::RankDecomposition r;
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "rank", &r.rank));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "samples_per_step", &r.samples_per_step));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "step_p50", &r.step_p50));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "step_p90", &r.step_p90));
    if (e.contains("work_lead")) {  // absent in files written before it: unknown
      STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "work_lead", &r.work_lead));
    }
    const json* rc = nullptr;
    STEPSCOPE_RETURN_IF_ERROR(GetObject(e, q, "components", &rc));
    STEPSCOPE_RETURN_IF_ERROR(ReadComponents(*rc, Join(q, "components"), &r.mean));
    d.ranks.push_back(r);
  }
  const json* skew = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, p, "skew", &skew));
  STEPSCOPE_RETURN_IF_ERROR(ReadSkew(*skew, Join(p, "skew"), version, &out->skew));
  out->skew.replicas = s.replicas;
  const json* abl = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, p, "ablations", &abl));
  STEPSCOPE_RETURN_IF_ERROR(ReadAblations(*abl, Join(p, "ablations"), version, &out->ablations));
  return Get(j, p, "warnings", &d.warnings);
}

Status ReadPoints(const json& j, const std::string& p, const char* key, int version,
                  std::vector<DiagnosisPoint>* out) {
  const json* arr = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, key, &arr));
  for (size_t i = 0; i < arr->size(); ++i) {
    DiagnosisPoint point;
    STEPSCOPE_RETURN_IF_ERROR(ReadPoint((*arr)[i], At(p, key, i), version, &point));
    out->push_back(std::move(point));
  }
  return Status::Ok();
}

Status ReadAttribution(const json& j, const std::string& p, analysis::Attribution* a) {
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "replicas", &a->replicas));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "ideal_devices", &a->ideal_devices));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "measured_speedup", &a->measured_speedup));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "lost_devices", &a->lost_devices));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "reference_estimated", &a->reference_estimated));
  const json* lines = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "lines", &lines));
  for (size_t i = 0; i < lines->size(); ++i) {
    const std::string q = At(p, "lines", i);
    analysis::WaterfallLine l;
    STEPSCOPE_RETURN_IF_ERROR(GetEnum((*lines)[i], q, "component", &l.component));
    STEPSCOPE_RETURN_IF_ERROR(Get((*lines)[i], q, "delta_seconds", &l.delta_seconds));
    STEPSCOPE_RETURN_IF_ERROR(Get((*lines)[i], q, "devices", &l.devices));
    a->lines.push_back(l);
  }
  return Status::Ok();
}

Status ReadWireCheck(const json& j, const std::string& p, Verdict* v) {
  WireCheck w;
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "dtype", &w.dtype));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "replicas", &w.replicas));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "steps", &w.steps));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "tail_steps", &w.tail_steps));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "loss_fp32", &w.loss_fp32));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "loss_reduced", &w.loss_reduced));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "loss_fp32_reseeded", &w.loss_fp32_reseeded));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "difference", &w.difference));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "spread", &w.spread));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "kept", &w.kept));
  if (const auto e = j.find("relative_error"); e != j.end()) {  // absent in older files
    if (!e->is_null()) {
      double relative = 0;
      STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "relative_error", &relative));
      w.relative_error = relative;
    }
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "relative_error_max", &w.relative_error_max));
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "error_steps", &w.error_steps));
  }
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "sentence", &w.sentence));
  v->wire_check = std::move(w);
  return Status::Ok();
}

Status ReadVerdict(const json& j, const std::string& p, int version, Verdict* v) {
  STEPSCOPE_RETURN_IF_ERROR(GetEnum(j, p, "binding", &v->binding));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "straggler_ranks", &v->straggler_ranks));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "evidence", &v->evidence));
  if (version == 1) {
    std::string buy, currency;
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "buy_more_devices", &buy));
    STEPSCOPE_RETURN_IF_ERROR(
        V1Decision(buy, Join(p, "buy_more_devices"), v->binding, &v->decision));
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "buy_reason", &v->decision_reason));
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "currency", &currency));
    v->currency = currency == "wall clock to a deadline" ? Currency::kTime : Currency::kCost;
  } else {
    if (version >= 3) {
      STEPSCOPE_RETURN_IF_ERROR(ReadPricedDecision(j, p, v));
      if (auto w = j.find("wire_check"); w != j.end() && !w->is_null()) {  // absent: not run
        STEPSCOPE_RETURN_IF_ERROR(ReadWireCheck(*w, Join(p, "wire_check"), v));
      }
    } else {
      STEPSCOPE_RETURN_IF_ERROR(GetEnum(j, p, "decision", &v->decision));
      STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "decision_reason", &v->decision_reason));
    }
    STEPSCOPE_RETURN_IF_ERROR(GetEnum(j, p, "currency", &v->currency));
    STEPSCOPE_RETURN_IF_ERROR(GetEnum(j, p, "throughput_constraint", &v->throughput_constraint));
    const json* losses = nullptr;
    STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "losses", &losses));
    for (size_t i = 0; i < losses->size(); ++i) {
      const std::string q = At(p, "losses", i);
      BindingLoss l;
      STEPSCOPE_RETURN_IF_ERROR(GetEnum((*losses)[i], q, "binding", &l.binding));
      STEPSCOPE_RETURN_IF_ERROR(Get((*losses)[i], q, "seconds_per_step", &l.seconds));
      STEPSCOPE_RETURN_IF_ERROR(Get((*losses)[i], q, "devices", &l.devices));
      v->losses.push_back(l);
    }
    if (j.contains("candidates")) {  // absent in version 2 files written before it was added
      const json* candidates = nullptr;
      STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "candidates", &candidates));
      for (size_t i = 0; i < candidates->size(); ++i) {
        const std::string q = At(p, "candidates", i);
        BindingCandidate c;
        STEPSCOPE_RETURN_IF_ERROR(GetEnum((*candidates)[i], q, "binding", &c.binding));
        STEPSCOPE_RETURN_IF_ERROR(GetEstimate((*candidates)[i], q, "seconds_per_step", &c.seconds));
        STEPSCOPE_RETURN_IF_ERROR(GetEstimate((*candidates)[i], q, "devices", &c.devices));
        v->candidates.push_back(c);
      }
    }
  }
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "quality_note", &v->quality_note));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "explanation", &v->explanation));
  const json* levers = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "levers", &levers));
  for (size_t i = 0; i < levers->size(); ++i) {
    const std::string q = At(p, "levers", i);
    const json& e = (*levers)[i];
    LeverAdvice l;
    STEPSCOPE_RETURN_IF_ERROR(GetEnum(e, q, version == 1 ? "name" : "lever", &l.lever));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "action", &l.action));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "expected_samples_per_s", &l.expected_samples_per_s));
    STEPSCOPE_RETURN_IF_ERROR(
        Get(e, q, "expected_gain_samples_per_s", &l.expected_gain_samples_per_s));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "expected_efficiency", &l.expected_efficiency));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "basis", &l.basis));
    if (auto g = e.find("expected_gain_goodput"); g != e.end() && !g->is_null()) {
      double gain = 0;
      STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "expected_gain_goodput", &gain));
      l.expected_gain_goodput = gain;
    }
    v->levers.push_back(l);
  }
  // Written since the verdict dropped the levers the model rules out; absent before.
  if (j.contains("levers_dropped")) {
    const json* dropped = nullptr;
    STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "levers_dropped", &dropped));
    for (size_t i = 0; i < dropped->size(); ++i) {
      const std::string q = At(p, "levers_dropped", i);
      const json& e = (*dropped)[i];
      DroppedLever l;
      STEPSCOPE_RETURN_IF_ERROR(GetEnum(e, q, "lever", &l.lever));
      STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "action", &l.action));
      STEPSCOPE_RETURN_IF_ERROR(
          Get(e, q, "expected_gain_samples_per_s", &l.expected_gain_samples_per_s));
      STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "reason", &l.reason));
      v->levers_dropped.push_back(l);
    }
  }
  const json* costs = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, p, "costs", &costs));
  for (size_t i = 0; i < costs->size(); ++i) {
    const std::string q = At(p, "costs", i);
    CostPoint c;
    STEPSCOPE_RETURN_IF_ERROR(Get((*costs)[i], q, "replicas", &c.replicas));
    STEPSCOPE_RETURN_IF_ERROR(
        Get((*costs)[i], q, "cost_per_million_samples", &c.cost_per_million_samples));
    STEPSCOPE_RETURN_IF_ERROR(Get((*costs)[i], q, "marginal_cost_per_million_samples",
                                  &c.marginal_cost_per_million_samples));
    v->costs.push_back(c);
  }
  return Status::Ok();
}

// Version 1 wrote "name (what changed)" strings (or bare names); version 2 writes objects.
Status ReadAppliedLevers(const json& after, int version, std::vector<AppliedLever>* out) {
  const json* arr = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(after, "after", "levers_applied", &arr));
  for (size_t i = 0; i < arr->size(); ++i) {
    const std::string q = At("after", "levers_applied", i);
    AppliedLever l;
    if (version == 1) {
      if (!(*arr)[i].is_string()) {
        return Status::Error(fmt::format("diagnosis.json: field '{}' is not a string", q));
      }
      const std::string text = PlainText((*arr)[i].get<std::string>());
      const size_t space = text.find(' ');
      const std::string name = text.substr(0, space);
      std::optional<Lever> lever = Parse<Lever>(name);
      if (!lever) {
        return Status::Error(
            fmt::format("diagnosis.json: field '{}' names lever '{}', expected "
                        "one of: {}",
                        q, name, ValueList<Lever>()));
      }
      l.lever = *lever;
      if (space != std::string::npos && text.size() > space + 2 && text[space + 1] == '(' &&
          text.back() == ')') {
        l.change = text.substr(space + 2, text.size() - space - 3);
      }
    } else {
      STEPSCOPE_RETURN_IF_ERROR(GetEnum((*arr)[i], q, "lever", &l.lever));
      STEPSCOPE_RETURN_IF_ERROR(Get((*arr)[i], q, "change", &l.change));
      STEPSCOPE_RETURN_IF_ERROR(Get((*arr)[i], q, "alone_replicas", &l.alone_replicas));
      STEPSCOPE_RETURN_IF_ERROR(Get((*arr)[i], q, "alone_samples_per_s", &l.alone_samples_per_s));
    }
    out->push_back(std::move(l));
  }
  return Status::Ok();
}

Status ReadNoise(const json& j, const std::string& p, NoiseScale* n) {
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "known", &n->known));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "reason", &n->reason));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "grad_sq", &n->grad_sq));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "trace_sigma", &n->trace_sigma));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "b_noise", &n->b_noise));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "local_batch", &n->local_batch));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "global_batch", &n->global_batch));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "steps", &n->steps));
  n->b_noise_low = n->b_noise_high = n->b_noise;  // older files: no band
  n->runs = n->known ? 1 : 0;
  if (j.contains("b_noise_low")) {
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "b_noise_low", &n->b_noise_low));
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "b_noise_high", &n->b_noise_high));
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "runs", &n->runs));
  }
  if (j.contains("method")) {  // absent in files written before it: pooled
    STEPSCOPE_RETURN_IF_ERROR(Get(j, p, "method", &n->method));
  }
  if (const auto progress = j.find("progress"); progress != j.end()) {  // absent: unknown
    const std::string q = Join(p, "progress");
    STEPSCOPE_RETURN_IF_ERROR(Get(*progress, q, "first_step", &n->first_step));
    STEPSCOPE_RETURN_IF_ERROR(Get(*progress, q, "last_step", &n->last_step));
    STEPSCOPE_RETURN_IF_ERROR(Get(*progress, q, "samples_seen", &n->samples_seen));
  }
  return Status::Ok();
}

}  // namespace

double AfterLevers::EfficiencyAgainstOriginal(const DiagnosisPoint& point) const {
  if (!(original_x1 > 0) || point.scaling.replicas < 1) return 0;
  return point.scaling.samples_per_s / (point.scaling.replicas * original_x1);
}

std::string AppliedLeversText(const std::vector<AppliedLever>& levers) {
  std::vector<std::string> parts;
  for (const AppliedLever& l : levers) {
    parts.push_back(l.change.empty() ? std::string(ToString(l.lever))
                                     : fmt::format("{} ({})", ToString(l.lever), l.change));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

nlohmann::json ToJson(const Diagnosis& d) {
  json j;
  j["schema_version"] = kDiagnosisSchemaVersion;  // the structure is always the current one
  j["source"] = {{"origin", d.source.origin},
                 {"workload", d.source.workload},
                 {"tool_version", d.source.tool_version},
                 {"throughput_unit", analysis::UnitText(d.source.throughput_unit)}};
  j["emulation"] = {{"emulated", d.emulation.emulated}, {"parameters", d.emulation.parameters}};
  j["points"] = PointsJson(d.points);
  j["attribution"] = d.attribution ? AttributionJson(*d.attribution) : json(nullptr);
  j["noise_scale"] = NoiseJson(d.noise_scale);
  j["verdict"] = VerdictJson(d.verdict, d.points.empty() ? 0 : d.points.back().scaling.replicas);
  if (d.after) {
    json applied = json::array();
    for (const AppliedLever& l : d.after->levers_applied) {
      applied.push_back({{"lever", ToString(l.lever)},
                         {"change", l.change},
                         {"alone_replicas", l.alone_replicas},
                         {"alone_samples_per_s", l.alone_samples_per_s}});
    }
    json efficiency = json::array();
    for (const DiagnosisPoint& p : d.after->points) {
      efficiency.push_back({{"replicas", p.scaling.replicas},
                            {"against_levered_x1", p.scaling.efficiency},
                            {"against_original_x1", d.after->EfficiencyAgainstOriginal(p)}});
    }
    const int largest = d.after->points.empty() ? 0 : d.after->points.back().scaling.replicas;
    j["after"] = {
        {"levers_applied", applied},
        {"points", PointsJson(d.after->points)},
        {"original_x1", d.after->original_x1},
        {"efficiency", efficiency},
        {"verdict", d.after->verdict ? VerdictJson(*d.after->verdict, largest) : json(nullptr)}};
  } else {
    j["after"] = nullptr;
  }
  json failed = json::array();
  for (const FailedRun& f : d.failed_runs) {
    failed.push_back({{"run", f.run},
                      {"replicas", f.replicas},
                      {"cause", f.cause},
                      {"exit_code", f.exit_code},
                      {"log", f.log}});
  }
  j["failed_runs"] = failed;
  j["warnings"] = d.warnings;
  return j;
}

namespace {

// failed_runs: absent in files written before it.
Status ReadFailedRuns(const json& j, std::vector<FailedRun>* out) {
  if (!j.contains("failed_runs")) return Status::Ok();
  const json* arr = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, "", "failed_runs", &arr));
  for (size_t i = 0; i < arr->size(); ++i) {
    const std::string q = At("", "failed_runs", i);
    const json& e = (*arr)[i];
    FailedRun f;
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "run", &f.run));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "replicas", &f.replicas));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "cause", &f.cause));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "exit_code", &f.exit_code));
    STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "log", &f.log));
    out->push_back(std::move(f));
  }
  return Status::Ok();
}

}  // namespace

Result<Diagnosis> DiagnosisFromJson(const nlohmann::json& j) {
  Diagnosis d;
  if (!j.is_object()) return Status::Error("diagnosis.json: the document is not a JSON object");
  STEPSCOPE_RETURN_IF_ERROR(Get(j, "", "schema_version", &d.schema_version));
  if (d.schema_version < 1 || d.schema_version > kDiagnosisSchemaVersion) {
    return Status::Error(fmt::format(
        "diagnosis.json: schema_version {} is not supported (this build reads 1 to {}; a newer "
        "stepscope wrote it?)",
        d.schema_version, kDiagnosisSchemaVersion));
  }
  const int version = d.schema_version;
  const json* source = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, "", "source", &source));
  STEPSCOPE_RETURN_IF_ERROR(Get(*source, "source", "origin", &d.source.origin));
  STEPSCOPE_RETURN_IF_ERROR(Get(*source, "source", "workload", &d.source.workload));
  STEPSCOPE_RETURN_IF_ERROR(Get(*source, "source", "tool_version", &d.source.tool_version));
  if (auto unit = source->find("throughput_unit"); unit != source->end()) {  // absent: samples/s
    auto parsed =
        unit->is_string() ? analysis::ParseThroughputUnit(unit->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return Status::Error(
          "diagnosis.json: field 'source.throughput_unit' must be \"samples/s\" or \"steps/s\"");
    }
    d.source.throughput_unit = *parsed;
  }
  const json* emu = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, "", "emulation", &emu));
  STEPSCOPE_RETURN_IF_ERROR(Get(*emu, "emulation", "emulated", &d.emulation.emulated));
  STEPSCOPE_RETURN_IF_ERROR(Get(*emu, "emulation", "parameters", &d.emulation.parameters));
  STEPSCOPE_RETURN_IF_ERROR(ReadPoints(j, "", "points", version, &d.points));
  auto attr = j.find("attribution");
  if (attr == j.end()) return Status::Error("diagnosis.json: missing field 'attribution'");
  if (!attr->is_null()) {
    analysis::Attribution a;
    STEPSCOPE_RETURN_IF_ERROR(ReadAttribution(*attr, "attribution", &a));
    d.attribution = a;
  }
  const json* noise = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, "", "noise_scale", &noise));
  STEPSCOPE_RETURN_IF_ERROR(ReadNoise(*noise, "noise_scale", &d.noise_scale));
  const json* verdict = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, "", "verdict", &verdict));
  STEPSCOPE_RETURN_IF_ERROR(ReadVerdict(*verdict, "verdict", version, &d.verdict));
  auto after = j.find("after");
  if (after != j.end() && !after->is_null()) {
    AfterLevers a;
    STEPSCOPE_RETURN_IF_ERROR(ReadAppliedLevers(*after, version, &a.levers_applied));
    STEPSCOPE_RETURN_IF_ERROR(ReadPoints(*after, "after", "points", version, &a.points));
    if (after->contains("original_x1")) {
      STEPSCOPE_RETURN_IF_ERROR(Get(*after, "after", "original_x1", &a.original_x1));
    }
    if (auto v = after->find("verdict"); version >= 3 && v != after->end() && !v->is_null()) {
      Verdict verdict;
      STEPSCOPE_RETURN_IF_ERROR(ReadVerdict(*v, "after.verdict", version, &verdict));
      a.verdict = std::move(verdict);
    }
    d.after = std::move(a);
  }
  STEPSCOPE_RETURN_IF_ERROR(ReadFailedRuns(j, &d.failed_runs));
  STEPSCOPE_RETURN_IF_ERROR(Get(j, "", "warnings", &d.warnings));
  return d;
}

std::string DiagnosisToString(const Diagnosis& d) { return ToJson(d).dump(2) + "\n"; }

Result<Diagnosis> DiagnosisFromString(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Error("diagnosis.json: not valid JSON (truncated or corrupt file?)");
  }
  return DiagnosisFromJson(j);
}

}  // namespace stepscope::decide
