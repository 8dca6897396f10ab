#include "data/length_balancing.h"

#include <algorithm>
#include <numeric>

#include "core/statistics.h"

namespace stepscope::data {
namespace {

// A batch's computed positions: its examples padded to the longest.
double Work(const std::vector<int>& lengths) {
  return lengths.empty() ? 0.0
                         : static_cast<double>(lengths.size()) *
                               *std::max_element(lengths.begin(), lengths.end());
}

}  // namespace

void LengthTally::Add(const LengthOptions& options, const BatchPlace& place) {
  if (!options.variable) return;
  const std::vector<int> drawn = ExampleLengths({.variable = true}, place);
  drawn_work += Work(drawn);
  drawn_tokens += std::accumulate(drawn.begin(), drawn.end(), 0.0);
  bucketed_work += Work(ExampleLengths({.variable = true, .balanced = true}, place));
}

void LengthTally::Add(const LengthTally& other) {
  drawn_work += other.drawn_work;
  drawn_tokens += other.drawn_tokens;
  bucketed_work += other.bucketed_work;
}

double LengthTally::PaddedShare() const {
  return drawn_work > 0 ? 1 - drawn_tokens / drawn_work : 0.0;
}

double LengthTally::WorkRatio() const { return drawn_work > 0 ? bucketed_work / drawn_work : 1.0; }

std::vector<double> StepSpread(const LengthOptions& options, uint64_t seed, int batch, int context,
                               int steps, int ranks, int quantiles) {
  if (!options.variable || batch <= 0 || context <= 1 || steps <= 0 || ranks <= 0) return {1.0};
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(steps) * static_cast<size_t>(ranks));
  std::vector<double> work(static_cast<size_t>(ranks));
  for (int step = 0; step < steps; ++step) {
    for (int rank = 0; rank < ranks; ++rank) {
      const BatchPlace place{.seed = seed,
                             .epoch = 0,
                             .index = step,
                             .rank = rank,
                             .batch = batch,
                             .context = context};
      work[static_cast<size_t>(rank)] = Work(ExampleLengths(options, place));
    }
    const double mean = std::accumulate(work.begin(), work.end(), 0.0) / ranks;
    for (double w : work) ratios.push_back(w / mean);
  }
  std::sort(ratios.begin(), ratios.end());
  return EvenQuantiles(ratios, quantiles);
}

}  // namespace stepscope::data
