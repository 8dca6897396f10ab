// A straggler must be the same rank across the repeats of a point. Ranks are placed afresh on
// the host's cores in every run, and a loader's phase or a disturbed stretch of steps falls on a
// rank by chance; a slow device, an injected slowdown or a co-tenant pinned beside one rank
// stays with its rank from run to run. Definitions: docs/metrics.md, "Persistent across repeats".
#pragma once

#include <vector>

#include "analysis/skew.h"

namespace stepscope::analysis {

// Keeps in `baseline.straggler_ranks` only the ranks that are stragglers in a strict majority of
// the point's runs (the baseline and `repeats`, each analysed alone), and adds a sentence of
// evidence for each rank it keeps or drops. Without repeats it changes nothing.
void KeepPersistentStragglers(const std::vector<SkewReport>& repeats, SkewReport* baseline);

}  // namespace stepscope::analysis
