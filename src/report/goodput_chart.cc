#include "report/goodput_chart.h"

#include <algorithm>
#include <map>

namespace stepscope::report {

using nlohmann::json;

const decide::Verdict* PricedVerdict(const decide::Diagnosis& d) {
  if (d.after && d.after->verdict && !d.after->verdict->options.empty()) {
    return &*d.after->verdict;
  }
  return d.verdict.options.empty() ? nullptr : &d.verdict;
}

namespace {

// The first more- or fewer-devices option: its levers are the configuration the curve follows
// (with the free levers, if any); nullptr when there is none.
const decide::PricedOption* DevicesOption(const decide::Verdict& v) {
  for (const decide::PricedOption& o : v.options) {
    if (o.kind == decide::OptionKind::kMoreDevices || o.kind == decide::OptionKind::kFewerDevices) {
      return &o;
    }
  }
  return nullptr;
}

}  // namespace

json GoodputRows(const decide::Diagnosis& d) {
  json rows = json::array();
  const decide::Verdict* v = PricedVerdict(d);
  const decide::PricedOption* devices = v != nullptr ? DevicesOption(*v) : nullptr;
  if (devices == nullptr) return rows;
  const std::vector<Lever>& levers = devices->levers;
  std::map<int, const decide::PricedOption*> by_replicas;
  for (const decide::PricedOption& o : v->options) {
    const bool same_config =
        o.levers == levers && o.link.empty() && o.device_speed == 1 &&
        (o.kind == decide::OptionKind::kMoreDevices ||
         o.kind == decide::OptionKind::kFewerDevices || o.kind == decide::OptionKind::kStay ||
         o.kind == decide::OptionKind::kLever || o.kind == decide::OptionKind::kAllLevers);
    if (same_config && !by_replicas.contains(o.replicas)) by_replicas[o.replicas] = &o;
  }
  for (const auto& [n, o] : by_replicas) {
    rows.push_back(
        {{"series", "model samples/s"}, {"replicas", n}, {"rate", o->samples_per_s.value}});
    rows.push_back({{"series", "model goodput"}, {"replicas", n}, {"rate", o->goodput}});
  }
  const std::vector<decide::DiagnosisPoint>& measured =
      v == &d.verdict ? d.points : d.after->points;
  for (const decide::DiagnosisPoint& p : measured) {
    rows.push_back({{"series", "measured"},
                    {"replicas", p.scaling.replicas},
                    {"rate", p.scaling.samples_per_s}});
  }
  return rows;
}

json GoodputChart(const decide::Diagnosis& d, const std::string& schema) {
  json rows = GoodputRows(d);
  if (rows.empty()) return nullptr;
  const bool levered = !DevicesOption(*PricedVerdict(d))->levers.empty();
  const std::string unit(UnitText(d.source.throughput_unit));
  const json x = {{"field", "replicas"},
                  {"type", "quantitative"},
                  {"title", "replicas (N)"},
                  {"scale", {{"type", "log"}, {"base", 2}}},
                  {"axis", {{"format", "d"}}}};
  return {{"$schema", schema},
          {"title", levered ? "Throughput and goodput on the step-time model, with the free levers"
                            : "Throughput and goodput on the step-time model"},
          {"width", 380},
          {"height", 240},
          {"datasets", {{"goodput", std::move(rows)}}},
          {"data", {{"name", "goodput"}}},
          {"mark", {{"type", "line"}, {"point", true}}},
          {"encoding",
           {{"x", x},
            {"y", {{"field", "rate"}, {"type", "quantitative"}, {"title", unit}}},
            {"color",
             {{"field", "series"},
              {"type", "nominal"},
              {"title", nullptr},
              {"scale",
               {{"domain", {"model samples/s", "model goodput", "measured"}},
                {"range", {"#4c78a8", "#54a24b", "#f58518"}}}}}},
            {"tooltip", json::array({{{"field", "series"}},
                                     {{"field", "replicas"}},
                                     {{"field", "rate"}, {"format", ".1f"}}})}}}};
}

}  // namespace stepscope::report
