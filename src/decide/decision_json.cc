#include "decide/decision_json.h"

#include "decide/json_fields.h"

namespace stepscope::decide {
namespace {

using nlohmann::json;
using namespace json_fields;  // NOLINT: the strict field readers

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

Status GetOptional(const json& j, const std::string& path, const char* key,
                   std::optional<double>* out) {
  auto it = j.find(key);
  if (it == j.end()) {
    return Status::Error(fmt::format("diagnosis.json: missing field '{}'", Join(path, key)));
  }
  if (it->is_null()) {
    out->reset();
    return Status::Ok();
  }
  double v = 0;
  STEPSCOPE_RETURN_IF_ERROR(Get(j, path, key, &v));
  *out = v;
  return Status::Ok();
}

json LeversJson(const std::vector<Lever>& levers) {
  json out = json::array();
  for (Lever l : levers) out.push_back(ToString(l));
  return out;
}

Status ReadLevers(const json& j, const std::string& path, const char* key,
                  std::vector<Lever>* out) {
  const json* arr = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, path, key, &arr));
  for (size_t i = 0; i < arr->size(); ++i) {
    const std::string q = At(path, key, i);
    std::optional<Lever> l =
        (*arr)[i].is_string() ? Parse<Lever>((*arr)[i].get<std::string>()) : std::nullopt;
    if (!l) {
      return Status::Error(
          fmt::format("diagnosis.json: field '{}' must be one of: {}", q, ValueList<Lever>()));
    }
    out->push_back(*l);
  }
  return Status::Ok();
}

Status ReadOption(const json& e, const std::string& q, PricedOption* o) {
  std::string kind;
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "kind", &kind));
  std::optional<OptionKind> k = ParseOptionKind(kind);
  if (!k) {
    return Status::Error(fmt::format("diagnosis.json: field '{}' is '{}', not an option kind",
                                     Join(q, "kind"), kind));
  }
  o->kind = *k;
  STEPSCOPE_RETURN_IF_ERROR(GetEnum(e, q, "action", &o->action));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "label", &o->label));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "replicas", &o->replicas));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "global_batch", &o->global_batch));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "link", &o->link));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "device_speed", &o->device_speed));
  STEPSCOPE_RETURN_IF_ERROR(ReadLevers(e, q, "levers", &o->levers));
  STEPSCOPE_RETURN_IF_ERROR(GetEstimate(e, q, "samples_per_s", &o->samples_per_s));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "statistical_efficiency", &o->statistical_efficiency));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "goodput", &o->goodput));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "price_per_hour", &o->price_per_hour));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "hours_per_million", &o->hours_per_million));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "cost_per_million", &o->cost_per_million));
  STEPSCOPE_RETURN_IF_ERROR(GetOptional(e, q, "time_to_target_hours", &o->time_to_target_hours));
  STEPSCOPE_RETURN_IF_ERROR(GetOptional(e, q, "cost_to_target", &o->cost_to_target));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "meets_deadline", &o->meets_deadline));
  STEPSCOPE_RETURN_IF_ERROR(Get(e, q, "within_budget", &o->within_budget));
  return Get(e, q, "note", &o->note);
}

}  // namespace

json DecisionJson(const Verdict& v, int largest_replicas) {
  const PricedDecision plain;
  const PricedDecision& p = v.priced ? *v.priced : plain;
  return {{"action", ToString(v.decision)},
          {"reason", v.decision_reason},
          {"priced", v.priced.has_value()},
          {"option", p.option},
          {"replicas", v.priced ? p.replicas : largest_replicas},
          {"link", p.link},
          {"device_speed", p.device_speed},
          {"levers", LeversJson(p.levers)},
          {"runner_up", p.runner_up},
          {"margin", p.margin}};
}

json OptionsJson(const std::vector<PricedOption>& options) {
  json out = json::array();
  for (const PricedOption& o : options) {
    out.push_back({{"kind", ToString(o.kind)},
                   {"action", ToString(o.action)},
                   {"label", o.label},
                   {"replicas", o.replicas},
                   {"global_batch", o.global_batch},
                   {"link", o.link},
                   {"device_speed", o.device_speed},
                   {"levers", LeversJson(o.levers)},
                   {"samples_per_s", ToJson(o.samples_per_s)},
                   {"statistical_efficiency", o.statistical_efficiency},
                   {"goodput", o.goodput},
                   {"price_per_hour", o.price_per_hour},
                   {"hours_per_million", o.hours_per_million},
                   {"cost_per_million", o.cost_per_million},
                   {"time_to_target_hours", Optional(o.time_to_target_hours)},
                   {"cost_to_target", Optional(o.cost_to_target)},
                   {"meets_deadline", o.meets_deadline},
                   {"within_budget", o.within_budget},
                   {"note", o.note}});
  }
  return out;
}

json TimeToQualityJson(const std::optional<TimeToQuality>& t) {
  if (!t) return nullptr;
  return {{"noise_scale_known", t->scale.known},
          {"b_noise", t->scale.b_noise},
          {"reference_batch", t->scale.reference_batch},
          {"noise_scale_how", t->scale.how},
          {"samples_to_target", Optional(t->samples_to_target)},
          {"samples_to_target_batch", t->samples_to_target_batch},
          {"deadline_hours", Optional(t->deadline_hours)},
          {"budget", Optional(t->budget)},
          {"fixed_hours", t->fixed_hours},
          {"fixed_how", t->fixed_how},
          {"cost_unit", t->cost_unit}};
}

Status ReadPricedDecision(const json& j, const std::string& path, Verdict* v) {
  const json* d = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetObject(j, path, "decision", &d));
  const std::string p = Join(path, "decision");
  STEPSCOPE_RETURN_IF_ERROR(GetEnum(*d, p, "action", &v->decision));
  STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "reason", &v->decision_reason));
  bool priced = false;
  STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "priced", &priced));
  if (priced) {
    PricedDecision x;
    x.action = v->decision;
    x.reason = v->decision_reason;
    STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "option", &x.option));
    STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "replicas", &x.replicas));
    STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "link", &x.link));
    STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "device_speed", &x.device_speed));
    STEPSCOPE_RETURN_IF_ERROR(ReadLevers(*d, p, "levers", &x.levers));
    STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "runner_up", &x.runner_up));
    STEPSCOPE_RETURN_IF_ERROR(Get(*d, p, "margin", &x.margin));
    v->priced = x;
  }
  const json* options = nullptr;
  STEPSCOPE_RETURN_IF_ERROR(GetArray(j, path, "options", &options));
  for (size_t i = 0; i < options->size(); ++i) {
    PricedOption o;
    STEPSCOPE_RETURN_IF_ERROR(ReadOption((*options)[i], At(path, "options", i), &o));
    v->options.push_back(std::move(o));
  }
  auto t = j.find("time_to_quality");
  if (t == j.end()) {
    return Status::Error(
        fmt::format("diagnosis.json: missing field '{}'", Join(path, "time_to_quality")));
  }
  if (!t->is_null()) {
    const std::string q = Join(path, "time_to_quality");
    TimeToQuality x;
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "noise_scale_known", &x.scale.known));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "b_noise", &x.scale.b_noise));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "reference_batch", &x.scale.reference_batch));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "noise_scale_how", &x.scale.how));
    STEPSCOPE_RETURN_IF_ERROR(GetOptional(*t, q, "samples_to_target", &x.samples_to_target));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "samples_to_target_batch", &x.samples_to_target_batch));
    STEPSCOPE_RETURN_IF_ERROR(GetOptional(*t, q, "deadline_hours", &x.deadline_hours));
    STEPSCOPE_RETURN_IF_ERROR(GetOptional(*t, q, "budget", &x.budget));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "fixed_hours", &x.fixed_hours));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "fixed_how", &x.fixed_how));
    STEPSCOPE_RETURN_IF_ERROR(Get(*t, q, "cost_unit", &x.cost_unit));
    v->time_to_quality = x;
  }
  return Status::Ok();
}

}  // namespace stepscope::decide
