#include "report/rank_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/text_format.h"

namespace stepscope::report {

RankTable RankTableOf(const decide::DiagnosisPoint& p) {
  const auto ms = [](double seconds) { return Fixed(1e3 * seconds, 3); };
  std::map<int, const analysis::Components*> means;
  bool own = false;
  for (const analysis::RankDecomposition& r : p.decomposition.ranks) {
    means[r.rank] = &r.mean;
    own |= r.mean.script_comm > 0;
  }
  RankTable t;
  t.header = {"rank", "compute ms", "overhead ms"};
  if (own) t.header.push_back("of it own collectives ms");
  for (const char* h : {"excess", "arrived last", ""}) t.header.push_back(h);
  const analysis::SkewReport& s = p.skew;
  for (const analysis::RankSkew& r : s.ranks) {
    const auto mean = means.find(r.rank);
    const bool known = mean != means.end();
    RankTable::Row row;
    row.straggler = std::find(s.straggler_ranks.begin(), s.straggler_ranks.end(), r.rank) !=
                    s.straggler_ranks.end();
    row.cells = {std::to_string(r.rank), ms(r.compute_mean),
                 known ? ms(mean->second->overhead) : "-"};
    if (own) row.cells.push_back(known ? ms(mean->second->script_comm) : "-");
    row.cells.push_back(fmt::format("{:+.0f}%", 100 * r.compute_excess));
    row.cells.push_back(Fixed(100 * r.last_fraction, 0) + "%");
    row.cells.push_back(row.straggler ? "straggler" : "");
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace stepscope::report
