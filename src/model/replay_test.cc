#include "model/replay.h"

#include <gtest/gtest.h>

namespace stepscope::model {
namespace {

TEST(ReplayReductions, FullOverlapHidesEverything) {
  // Backward of 10: buckets ready at 2, 4, 6 each taking 1 finish at 7.
  const ReplayResult r = ReplayReductions({{2, 1}, {4, 1}, {6, 1}}, 10, true);
  EXPECT_DOUBLE_EQ(r.comm_end, 7);
  EXPECT_DOUBLE_EQ(r.exposed, 0);
  EXPECT_DOUBLE_EQ(r.busy, 3);
}

TEST(ReplayReductions, WithoutOverlapEverythingIsExposed) {
  const ReplayResult r = ReplayReductions({{2, 1}, {4, 1}, {6, 1}}, 10, false);
  EXPECT_DOUBLE_EQ(r.comm_end, 13);
  EXPECT_DOUBLE_EQ(r.exposed, 3);
}

TEST(ReplayReductions, TheLastBucketCannotHide) {
  // The last bucket is ready when backward ends: its whole cost is exposed.
  const ReplayResult r = ReplayReductions({{3, 1}, {10, 2.5}}, 10, true);
  EXPECT_DOUBLE_EQ(r.exposed, 2.5);
}

TEST(ReplayReductions, BucketsQueueOnOneChannel) {
  // Ready at 1 and 2, each taking 5: the second starts at 6 and ends at 11, 1 after backward.
  const ReplayResult r = ReplayReductions({{1, 5}, {2, 5}}, 10, true);
  EXPECT_DOUBLE_EQ(r.comm_end, 11);
  EXPECT_DOUBLE_EQ(r.exposed, 1);
}

TEST(ReplayReductions, ReductionsBesideBackwardCanRunSlower) {
  // Ready at 2, cost 4, backward 10: at half speed it ends at 10 instead of 6: still hidden.
  EXPECT_DOUBLE_EQ(ReplayReductions({{2, 4}}, 10, true, 0.5).exposed, 0);
  // Ready at 8, cost 4: 2 of it beside backward at half speed (1 done), 3 after: exposed 3.
  EXPECT_DOUBLE_EQ(ReplayReductions({{8, 4}}, 10, true, 0.5).exposed, 3);
  // Rate 0: nothing is hidden, as without overlap.
  EXPECT_DOUBLE_EQ(ReplayReductions({{2, 1}, {4, 1}}, 10, true, 0.0).exposed,
                   ReplayReductions({{2, 1}, {4, 1}}, 10, false).exposed);
}

TEST(ReplayReductions, NoBuckets) {
  const ReplayResult r = ReplayReductions({}, 10, true);
  EXPECT_EQ(r.exposed, 0);
  EXPECT_EQ(r.comm_end, 0);
}

}  // namespace
}  // namespace stepscope::model
