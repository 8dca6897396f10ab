#include "train/options.h"

#include <gtest/gtest.h>

namespace stepscope::train {
namespace {

TEST(Options, DefaultsAreValid) { EXPECT_TRUE(Validate(TrainOptions{}, 4).ok()); }

TEST(Options, ErrorsNameTheFlag) {
  TrainOptions o;
  o.batch = 0;
  Status st = Validate(o, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--batch"), std::string::npos);

  o = TrainOptions{};
  o.injection.straggler_rank = 4;
  st = Validate(o, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--inject-straggler"), std::string::npos);

  o = TrainOptions{};
  o.model.kind = nn::ModelKind::kGpt;
  o.model.gpt_width = 130;
  o.model.gpt_heads = 4;
  st = Validate(o, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--heads"), std::string::npos);

  o = TrainOptions{};
  o.emulation.device_speed = 1.5;
  EXPECT_FALSE(Validate(o, 1).ok());
}

TEST(Options, ParsesNames) {
  EXPECT_EQ(ParseModelKind("cnn").value(), nn::ModelKind::kCnn);
  EXPECT_FALSE(ParseModelKind("resnet").ok());
  EXPECT_EQ(ParseAllreduceChoice("ring").value(), AllreduceChoice::kRing);
  EXPECT_FALSE(ParseAllreduceChoice("tree").ok());
  EXPECT_EQ(ToString(AllreduceChoice::kShm), "shm");
}

}  // namespace
}  // namespace stepscope::train
