#include "core/vocabulary.h"

#include <array>
#include <utility>

namespace stepscope {
namespace {

// One table per enum: the single place where a value meets its text.
template <typename Enum, size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<Binding, 8> kBindings = {{
    {Binding::kCommunication, "communication"},
    {Binding::kInput, "input"},
    {Binding::kStragglers, "stragglers"},
    {Binding::kImbalance, "imbalance"},
    {Binding::kCompute, "compute"},
    {Binding::kOverhead, "overhead"},
    {Binding::kNone, "none"},
    {Binding::kInconclusive, "inconclusive"},
}};

constexpr Names<Lever, 7> kLevers = {{
    {Lever::kLoaderWorkersPrefetch, "loader_workers_prefetch"},
    {Lever::kBiggerMicroBatch, "bigger_micro_batch"},
    {Lever::kGradientAccumulation, "gradient_accumulation"},
    {Lever::kOverlapBucketing, "overlap_bucketing"},
    {Lever::kLowPrecisionReduction, "low_precision_reduction"},
    {Lever::kBalanceLengths, "balance_lengths"},
    {Lever::kRemoveStraggler, "remove_straggler"},
}};

constexpr Names<Decision, 6> kDecisions = {{
    {Decision::kBuyDevices, "buy_devices"},
    {Decision::kUpgradeInterconnect, "upgrade_interconnect"},
    {Decision::kUpgradeDevices, "upgrade_devices"},
    {Decision::kPullLevers, "pull_levers"},
    {Decision::kStay, "stay"},
    {Decision::kReduceDevices, "reduce_devices"},
}};

constexpr Names<Currency, 2> kCurrencies = {{
    {Currency::kCost, "cost"},
    {Currency::kTime, "time"},
}};

constexpr Names<AblationCheckKind, 4> kChecks = {{
    {AblationCheckKind::kNoReduce, "no_reduce"},
    {AblationCheckKind::kSyntheticInput, "synthetic_input"},
    {AblationCheckKind::kDoubleBatch, "double_batch"},
    {AblationCheckKind::kRankSpread, "rank_spread"},
}};

constexpr Names<Component, 6> kComponents = {{
    {Component::kCompute, "compute"},
    {Component::kInputWait, "input_wait"},
    {Component::kSyncWait, "sync_wait"},
    {Component::kTransfer, "transfer"},
    {Component::kOverhead, "overhead"},
    {Component::kResidual, "residual"},
}};

template <typename Enum, size_t N>
std::string_view NameOf(const Names<Enum, N>& names, Enum v) {
  for (const auto& [value, name] : names) {
    if (value == v) return name;
  }
  return "?";
}

template <typename Enum, size_t N>
std::optional<Enum> ValueOf(const Names<Enum, N>& names, std::string_view text) {
  for (const auto& [value, name] : names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
std::vector<Enum> ValuesOf(const Names<Enum, N>& names) {
  std::vector<Enum> out;
  for (const auto& entry : names) out.push_back(entry.first);
  return out;
}

}  // namespace

#define STEPSCOPE_VOCABULARY(Enum, table)                        \
  std::string_view ToString(Enum v) { return NameOf(table, v); } \
  template <>                                                    \
  std::optional<Enum> Parse<Enum>(std::string_view text) {       \
    return ValueOf(table, text);                                 \
  }                                                              \
  template <>                                                    \
  const std::vector<Enum>& AllValues<Enum>() {                   \
    static const std::vector<Enum> values = ValuesOf(table);     \
    return values;                                               \
  }

STEPSCOPE_VOCABULARY(Binding, kBindings)
STEPSCOPE_VOCABULARY(Lever, kLevers)
STEPSCOPE_VOCABULARY(Decision, kDecisions)
STEPSCOPE_VOCABULARY(Currency, kCurrencies)
STEPSCOPE_VOCABULARY(AblationCheckKind, kChecks)
STEPSCOPE_VOCABULARY(Component, kComponents)

#undef STEPSCOPE_VOCABULARY

}  // namespace stepscope
