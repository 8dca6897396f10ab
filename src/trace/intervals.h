// Interval arithmetic over half-open [begin, end) intervals (any unit): union of possibly
// nested and overlapping intervals, intersection of two unions, and measures within a window.
#pragma once

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
// Total length of a normalised set.
double Measure(const std::vector<Interval>& set);
// Length of the part of a normalised set that lies within [begin, end).
double MeasureWithin(const std::vector<Interval>& set, double begin, double end);

}  // namespace stepscope::trace
