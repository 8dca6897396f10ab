// Interval arithmetic over half-open [begin, end) intervals (any unit): union of possibly
// nested and overlapping intervals, intersection of two unions, and measures within a window.
#pragma once

#include <cstddef>
#include <vector>

namespace stepscope::trace {

struct Interval {
  double begin = 0;
  double end = 0;
  double length() const { return end - begin; }
};

// Sorted, disjoint, non-empty intervals covering exactly the union of the inputs. Intervals
// with end <= begin are ignored. Touching intervals are merged.
std::vector<Interval> Union(std::vector<Interval> intervals);
// Intersection of two normalised (Union'ed) sets.
std::vector<Interval> Intersect(const std::vector<Interval>& a, const std::vector<Interval>& b);
// The part of normalised set `a` outside normalised set `b`.
std::vector<Interval> Subtract(const std::vector<Interval>& a, const std::vector<Interval>& b);
// Accumulates intervals as a stream delivers them and hands back their union. The raw list is
// compacted (Union'ed) whenever it doubles, so memory follows the number of disjoint intervals
// (nested host ops collapse into their outermost one), not the number of events.
class IntervalUnion {
 public:
  void Add(Interval iv) {
    raw_.push_back(iv);
    if (raw_.size() >= compact_at_) Compact();
  }
  bool empty() const { return raw_.empty(); }
  // The union of everything added; leaves this empty.
  std::vector<Interval> Take();

 private:
  void Compact();
  std::vector<Interval> raw_;
  size_t compact_at_ = 4096;
};

// Total length of a normalised set.
double Measure(const std::vector<Interval>& set);
// Length of the part of a normalised set that lies within [begin, end).
double MeasureWithin(const std::vector<Interval>& set, double begin, double end);

}  // namespace stepscope::trace
