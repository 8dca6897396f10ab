// The all-reduce across hosts: devices grouped D per host, an intra-host link between the
// devices of a host and an inter-host link between hosts, each with its own alpha-beta cost
// (docs/model.md, "Across hosts").
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "core/units.h"
#include "model/collective_fit.h"

namespace stepscope::model {

// How an all-reduce over several hosts runs.
enum class CrossHostAlgorithm {
  // Reduce-scatter inside each host, an all-reduce of each host's 1/D shard between the hosts
  // (one ring per shard, all in parallel), an all-gather inside each host.
  kHierarchical,
  // One flat ring through every device: each of its 2(N-1) steps waits for the slowest link on
  // the ring, the inter-host one as soon as the ring leaves a host.
  kRing,
};

// "hierarchical" or "ring"; an error names the text.
Result<CrossHostAlgorithm> ParseCrossHostAlgorithm(const std::string& text);
std::string Name(CrossHostAlgorithm algorithm);

struct HostLayout {
  int devices_per_host = 1;
  // Between the devices of one host. Unset: the all-reduce cost fitted on the measured host.
  std::optional<AlphaBeta> intra;
  std::optional<AlphaBeta> inter;  // between hosts; unset: the layout holds one host
  CrossHostAlgorithm algorithm = CrossHostAlgorithm::kHierarchical;
};

// One all-reduce of `bytes` (per device, at wire precision) over N devices laid out D per host
// (the last host may hold fewer), with each constant at `side`. With H = ceil(N / D) hosts and
// d = min(N, D) devices in a host:
//   hierarchical: intra(d, S) + inter(H, S / d), where intra(d, S) is the one-host ring cost
//     (its reduce-scatter and all-gather move 2(d-1)/d S over 2(d-1) latency steps) and
//     inter(H, S/d) the ring all-reduce of a shard between hosts;
//   ring: N <= D: intra(N, S); otherwise a ring of N whose every step pays the slower link's
//     latency and bandwidth (and the larger fixed cost).
Seconds CrossHostAllreduceSeconds(const AlphaBeta& intra, const AlphaBeta& inter,
                                  CrossHostAlgorithm algorithm, int devices_per_host, int replicas,
                                  Bytes bytes, Side side = Side::kValue);

}  // namespace stepscope::model
