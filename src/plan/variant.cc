#include "plan/variant.h"

#include <fmt/format.h>

namespace stepscope::plan {

std::string VariantName(const Variant& variant) {
  switch (variant.kind) {
    case VariantKind::kBaseline:
      return "baseline";
    case VariantKind::kNoReduce:
      return "no_reduce";
    case VariantKind::kSyntheticInput:
      return "synthetic_input";
    case VariantKind::kDoubleBatch:
      return "double_batch";
    case VariantKind::kOneLever:
      return fmt::format("lever_{}", ToString(variant.lever));
    case VariantKind::kAllLevers:
      return "levers";
    case VariantKind::kWireFp32:
      return "wire_fp32";
    case VariantKind::kWireReduced:
      return "wire_reduced";
    case VariantKind::kWireReseeded:
      return "wire_fp32_seed2";
    case VariantKind::kNoiseScale:
      return "noise_scale";
  }
  return "?";
}

std::string RunName(const RunId& run) {
  std::string name = fmt::format("{}-n{}", VariantName(run.variant), run.replicas);
  if (run.repeat >= 2) name += fmt::format("-r{}", run.repeat);
  return name;
}

bool IsNumericsRun(const std::string& run_name) {
  for (VariantKind kind : {VariantKind::kWireFp32, VariantKind::kWireReduced,
                           VariantKind::kWireReseeded, VariantKind::kNoiseScale}) {
    const std::string prefix = VariantName(Variant::Of(kind)) + "-n";
    if (run_name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool IsAblation(VariantKind kind) {
  return kind == VariantKind::kNoReduce || kind == VariantKind::kSyntheticInput ||
         kind == VariantKind::kDoubleBatch;
}

}  // namespace stepscope::plan
