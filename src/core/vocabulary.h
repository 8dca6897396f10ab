// The diagnosis vocabulary: every categorical answer stepscope gives (binding constraint, lever,
// decision, currency, ablation check, step component) as an enum. Code compares enums; text
// appears only at the JSON and report edges, through ToString / Parse below. The value sets
// are fixed (docs/diagnosis.md): a new value may be added, none is renamed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

// What holds the job's scaling (or throughput) back.
enum class Binding {
  kCommunication,
  kInput,
  kStragglers,
  kImbalance,  // a different rank is slowest each step (variable work per step)
  kCompute,
  kOverhead,
  kNone,          // near-linear: nothing binds
  kInconclusive,  // the evidence disagrees or is too noisy to name one
};

// A free lever: a change to the job that costs no hardware.
enum class Lever {
  kLoaderWorkersPrefetch,
  kBiggerMicroBatch,
  kGradientAccumulation,
  kOverlapBucketing,
  kLowPrecisionReduction,
  kBalanceLengths,
  kRemoveStraggler,  // a hardware or scheduling action, not a flag
};

// The answer to "do we buy more devices?".
enum class Decision {
  kBuyDevices,
  kUpgradeInterconnect,
  kUpgradeDevices,
  kPullLevers,
  kStay,
  kReduceDevices,
};

// What the user optimises: cost to the target quality (within a deadline), or wall-clock time to
// it (within a budget).
enum class Currency { kCost, kTime };

// One ablation's comparison against the decomposition's prediction.
enum class AblationCheckKind { kNoReduce, kSyntheticInput, kDoubleBatch, kRankSpread };

// A part of the step (docs/metrics.md). kResidual is the attribution's unexplained remainder.
enum class Component { kCompute, kInputWait, kSyncWait, kTransfer, kOverhead, kResidual };

std::string_view ToString(Binding v);
std::string_view ToString(Lever v);
std::string_view ToString(Decision v);
std::string_view ToString(Currency v);
std::string_view ToString(AblationCheckKind v);
std::string_view ToString(Component v);

// Text to enum; nullopt for a word outside the value set.
template <typename Enum>
std::optional<Enum> Parse(std::string_view text);
template <>
std::optional<Binding> Parse<Binding>(std::string_view text);
template <>
std::optional<Lever> Parse<Lever>(std::string_view text);
template <>
std::optional<Decision> Parse<Decision>(std::string_view text);
template <>
std::optional<Currency> Parse<Currency>(std::string_view text);
template <>
std::optional<AblationCheckKind> Parse<AblationCheckKind>(std::string_view text);
template <>
std::optional<Component> Parse<Component>(std::string_view text);

// Every value of an enum, in declaration order (for tests, help texts and error messages).
template <typename Enum>
const std::vector<Enum>& AllValues();

// "a, b, c": the value set as text, for an error message that says what is accepted.
template <typename Enum>
std::string ValueList() {
  std::string out;
  for (Enum v : AllValues<Enum>()) {
    if (!out.empty()) out += ", ";
    out += ToString(v);
  }
  return out;
}

}  // namespace stepscope
