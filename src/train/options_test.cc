#include "train/options.h"

#include <gtest/gtest.h>

namespace stepscope::train {
namespace {

TEST(Options, DefaultsAreValid) {
  const TrainOptions defaults;
  EXPECT_TRUE(Validate(defaults, 4).ok());
}

TEST(Options, ErrorsNameTheFlag) {
  const TrainOptions defaults;
  TrainOptions o = defaults;
  o.batch = 0;
  Status st = Validate(o, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--batch"), std::string::npos);

  o = defaults;
  o.injection.stragglers = {{4, 2.0}};
  st = Validate(o, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--inject-straggler"), std::string::npos);

  o = defaults;
  o.injection.stragglers = {{1, 2.0}, {1, 1.5}};
  st = Validate(o, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("named twice"), std::string::npos);

  o = defaults;
  o.injection.noise_rank = 1;
  o.injection.noise_share = 0.95;
  st = Validate(o, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--inject-noise"), std::string::npos);

  o = defaults;
  o.balance_lengths = true;
  st = Validate(o, 2);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--balance-lengths"), std::string::npos);

  o = defaults;
  o.model.kind = nn::ModelKind::kGpt;
  o.model.gpt_width = 130;
  o.model.gpt_heads = 4;
  st = Validate(o, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--heads"), std::string::npos);

  o = defaults;
  o.emulation.device_speed = 1.5;
  EXPECT_FALSE(Validate(o, 1).ok());

  // A sweep's device file is given to every run; one without an emulated device ignores it.
  o = defaults;
  o.emulation.device_file = "device.json";
  EXPECT_TRUE(Validate(o, 1).ok());
  EXPECT_FALSE(o.emulation.active());
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
