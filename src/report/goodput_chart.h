// The goodput curve of the HTML report: for each replica count the decision priced, the model's
// samples/s and its goodput (samples/s x statistical efficiency against the one-replica batch),
// next to the measured throughput. Where the two model lines part, a bigger global batch buys
// samples but not progress (docs/decide.md).
#pragma once

#include <nlohmann/json.hpp>

#include "decide/diagnosis.h"

namespace stepscope::report {

// The verdict whose options draw the curve: the one after the levers when it was priced, else
// the first; nullptr when neither has priced options.
const decide::Verdict* PricedVerdict(const decide::Diagnosis& d);

// One row per replica count and series ("model samples/s", "model goodput", "measured"), from
// the options that share one configuration (more and fewer devices, and today's count in that
// configuration). Empty when nothing was priced.
nlohmann::json GoodputRows(const decide::Diagnosis& d);

// The Vega-Lite specification of the curve (chart name "goodput"); null without rows.
nlohmann::json GoodputChart(const decide::Diagnosis& d, const std::string& schema);

}  // namespace stepscope::report
