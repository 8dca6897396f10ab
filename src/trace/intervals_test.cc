#include "trace/intervals.h"

#include <gtest/gtest.h>

namespace stepscope::trace {
namespace {

TEST(Intervals, UnionMergesNestedOverlappingAndTouching) {
  // [0,10) contains [2,3); [8,12) overlaps; [12,15) touches; [20,21) separate; [5,5) empty.
  auto u = Union({{8, 12}, {0, 10}, {2, 3}, {12, 15}, {20, 21}, {5, 5}, {7, 6}});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_DOUBLE_EQ(u[0].begin, 0);
  EXPECT_DOUBLE_EQ(u[0].end, 15);
  EXPECT_DOUBLE_EQ(u[1].begin, 20);
  EXPECT_DOUBLE_EQ(Measure(u), 16);
}

TEST(Intervals, IntersectionOfUnions) {
  auto a = Union({{0, 4}, {6, 10}});
  auto b = Union({{3, 7}, {9, 20}});
  auto c = Intersect(a, b);  // [3,4) [6,7) [9,10)
  ASSERT_EQ(c.size(), 3u);
  EXPECT_DOUBLE_EQ(Measure(c), 3);
  EXPECT_TRUE(Intersect(a, {}).empty());
}

TEST(Intervals, MeasureWithinWindow) {
  auto a = Union({{0, 4}, {6, 10}, {12, 13}});
  EXPECT_DOUBLE_EQ(MeasureWithin(a, 2, 7), 3);  // [2,4) + [6,7)
  EXPECT_DOUBLE_EQ(MeasureWithin(a, 4, 6), 0);
  EXPECT_DOUBLE_EQ(MeasureWithin(a, -5, 100), 9);
  EXPECT_DOUBLE_EQ(MeasureWithin(a, 12.5, 12.75), 0.25);
}

TEST(Intervals, SubtractRemovesCoveredParts) {
  auto a = Union({{0, 10}, {12, 14}});
  auto b = Union({{2, 3}, {5, 6}, {9, 13}});
  auto c = Subtract(a, b);  // [0,2) [3,5) [6,9) [13,14)
  ASSERT_EQ(c.size(), 4u);
  EXPECT_DOUBLE_EQ(Measure(c), 2 + 2 + 3 + 1);
  EXPECT_DOUBLE_EQ(c[3].begin, 13);
  EXPECT_DOUBLE_EQ(Measure(Subtract(a, {})), 12);
  EXPECT_TRUE(Subtract(a, Union({{-1, 20}})).empty());
}

TEST(Intervals, StreamingUnionEqualsTheUnionOfEverything) {
  // 20000 intervals, unsorted, nested and overlapping, with gaps: the streaming union (which
  // compacts several times on the way) equals the one-shot union.
  std::vector<Interval> all;
  IntervalUnion stream;
  for (int i = 0; i < 20000; ++i) {
    const double t = (i * 7919) % 20000;                        // a permutation of 0..19999
    const Interval iv{t * 10, t * 10 + (i % 3 == 0 ? 12 : 4)};  // some overlap the next one
    all.push_back(iv);
    stream.Add(iv);
  }
  const std::vector<Interval> want = Union(all);
  const std::vector<Interval> got = stream.Take();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_DOUBLE_EQ(got[i].begin, want[i].begin);
    EXPECT_DOUBLE_EQ(got[i].end, want[i].end);
  }
  EXPECT_LT(want.size(), all.size());
  EXPECT_TRUE(stream.empty());
  EXPECT_TRUE(stream.Take().empty());
}

}  // namespace
}  // namespace stepscope::trace
