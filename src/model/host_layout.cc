#include "model/host_layout.h"

#include <algorithm>

namespace stepscope::model {
namespace {

// Per side, the larger of two estimates (the slower link's constant).
Estimate Slower(const Estimate& a, const Estimate& b) {
  return {std::max(a.value, b.value), std::max(a.low, b.low), std::max(a.high, b.high)};
}

}  // namespace

Result<CrossHostAlgorithm> ParseCrossHostAlgorithm(const std::string& text) {
  if (text == "hierarchical") return CrossHostAlgorithm::kHierarchical;
  if (text == "ring") return CrossHostAlgorithm::kRing;
  return Status::Error("algorithm '" + text + "' is not hierarchical or ring");
}

std::string Name(CrossHostAlgorithm algorithm) {
  return algorithm == CrossHostAlgorithm::kRing ? "ring" : "hierarchical";
}

Seconds CrossHostAllreduceSeconds(const AlphaBeta& intra, const AlphaBeta& inter,
                                  CrossHostAlgorithm algorithm, int devices_per_host, int replicas,
                                  Bytes bytes, Side side) {
  if (replicas <= 1) return 0.0;
  const int per_host = std::max(1, devices_per_host);
  if (replicas <= per_host) return AllreduceSeconds(intra, replicas, bytes, side);
  if (algorithm == CrossHostAlgorithm::kRing) {
    AlphaBeta slower;
    slower.fixed_s = Slower(intra.fixed_s, inter.fixed_s);
    slower.alpha_s = Slower(intra.alpha_s, inter.alpha_s);
    slower.seconds_per_byte = Slower(intra.seconds_per_byte, inter.seconds_per_byte);
    return AllreduceSeconds(slower, replicas, bytes, side);
  }
  const int hosts = (replicas + per_host - 1) / per_host;
  const Bytes shard = bytes / per_host;
  return AllreduceSeconds(intra, per_host, bytes, side) +
         AllreduceSeconds(inter, hosts, shard, side);
}

}  // namespace stepscope::model
