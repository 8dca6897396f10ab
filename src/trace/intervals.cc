#include "trace/intervals.h"

#include <algorithm>

namespace stepscope::trace {

std::vector<Interval> Union(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return !(i.end > i.begin); });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

void IntervalUnion::Compact() {
  raw_ = Union(std::move(raw_));
  compact_at_ = std::max<size_t>(4096, 2 * raw_.size());
}

std::vector<Interval> IntervalUnion::Take() {
  std::vector<Interval> out = Union(std::move(raw_));
  raw_.clear();
  compact_at_ = 4096;
  return out;
}

std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    double lo = std::max(a[i].begin, b[j].begin);
    double hi = std::min(a[i].end, b[j].end);
    if (hi > lo) out.push_back({lo, hi});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

double Measure(const std::vector<Interval>& set) {
  double total = 0;
  for (const Interval& i : set) total += i.length();
  return total;
}

double MeasureWithin(const std::vector<Interval>& set, double begin, double end) {
  auto it = std::lower_bound(set.begin(), set.end(), begin,
                             [](const Interval& i, double t) { return i.end <= t; });
  double total = 0;
  for (; it != set.end() && it->begin < end; ++it) {
    total += std::max(0.0, std::min(it->end, end) - std::max(it->begin, begin));
  }
  return total;
}

std::vector<Interval> Subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& iv : a) {
    double begin = iv.begin;
    while (j < b.size() && b[j].end <= begin) ++j;
    for (size_t k = j; k < b.size() && b[k].begin < iv.end; ++k) {
      if (b[k].begin > begin) out.push_back({begin, b[k].begin});
      begin = std::max(begin, b[k].end);
      if (begin >= iv.end) break;
    }
    if (begin < iv.end) out.push_back({begin, iv.end});
  }
  return out;
}

}  // namespace stepscope::trace
