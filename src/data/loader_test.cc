#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "data/fashion_mnist.h"
#include "data/sampler.h"
#include "data/source.h"

namespace stepscope::data {
namespace {

// A dataset whose example i decodes to targets {i}: batches reveal the indices they hold.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  std::string Describe() const override { return "index dataset"; }
  void Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
            Batch* out) const override {
    out->size = static_cast<int>(indices.size());
    out->targets.assign(indices.begin(), indices.end());
    out->tokens.clear();
    out->inputs.clear();
  }

 private:
  int64_t n_;
};

const ImageDataset& FashionTrain() {
  static const Split* split = [] {
    auto s = LoadFashionMnist("/usr/share/datasets/fashion-mnist");
    EXPECT_TRUE(s.ok()) << s.status().message();
    return new Split(std::move(s.value()));
  }();
  return *dynamic_cast<const ImageDataset*>(split->train.get());
}

std::vector<Batch> Take(const Dataset& d, const LoaderOptions& o, int n) {
  auto loader = Loader::Create(d, o);
  EXPECT_TRUE(loader.ok()) << loader.status().message();
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i) out.push_back((*loader)->Next());
  return out;
}

TEST(Loader, BatchesComeInOrderAndMatchTheSampler) {
  IndexDataset d(103);
  LoaderOptions o;
  o.batch = 5;
  o.world = 3;
  o.rank = 2;
  o.workers = 3;
  o.prefetch = 2;
  o.seed = 11;
  auto loader = Loader::Create(d, o);
  ASSERT_TRUE(loader.ok()) << loader.status().message();
  const int64_t per_epoch = (*loader)->batches_per_epoch();
  ASSERT_EQ(per_epoch, 103 / 15);
  ShardedSampler sampler(103, 5, 2, 3, 11, true);
  std::vector<int64_t> want;
  for (int64_t s = 0; s < 3 * per_epoch; ++s) {
    Batch b = (*loader)->Next();
    ASSERT_EQ(b.epoch, s / per_epoch);
    ASSERT_EQ(b.index, s % per_epoch);
    sampler.BatchIndices(b.epoch, b.index, &want);
    ASSERT_EQ(std::vector<int64_t>(b.targets.begin(), b.targets.end()), want);
    (*loader)->Recycle(std::move(b));
  }
}

TEST(Loader, WorkerCountDoesNotChangeTheBatches) {
  const auto& d = FashionTrain();
  LoaderOptions o;
  o.batch = 16;
  o.augment = true;
  o.seed = 3;
  o.workers = 1;
  const auto one = Take(d, o, 12);
  o.workers = 3;
  o.prefetch = 2;
  const auto three = Take(d, o, 12);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].inputs, three[i].inputs) << i;
    EXPECT_EQ(one[i].targets, three[i].targets) << i;
  }
  o.augment = false;
  const auto plain = Take(d, o, 1);
  EXPECT_EQ(plain[0].targets, one[0].targets);
  EXPECT_NE(plain[0].inputs, one[0].inputs);  // augmentation did something
}

TEST(Loader, TwoReplicasAtBSeeWhatOneReplicaSeesAt2B) {
  const auto& d = FashionTrain();
  LoaderOptions o;
  o.batch = 8;
  o.world = 2;
  o.augment = true;
  o.seed = 5;
  o.workers = 2;
  o.rank = 0;
  const auto r0 = Take(d, o, 4);
  o.rank = 1;
  const auto r1 = Take(d, o, 4);
  o.world = 1;
  o.rank = 0;
  o.batch = 16;
  const auto single = Take(d, o, 4);
  for (int j = 0; j < 4; ++j) {
    std::vector<float> inputs = r0[j].inputs;
    inputs.insert(inputs.end(), r1[j].inputs.begin(), r1[j].inputs.end());
    std::vector<int32_t> targets = r0[j].targets;
    targets.insert(targets.end(), r1[j].targets.begin(), r1[j].targets.end());
    EXPECT_EQ(inputs, single[j].inputs) << "step " << j;
    EXPECT_EQ(targets, single[j].targets) << "step " << j;
  }
}

TEST(Loader, EpochsRollOverWithANewPermutation) {
  IndexDataset d(40);
  LoaderOptions o;
  o.batch = 10;
  const auto batches = Take(d, o, 8);
  std::vector<int32_t> e0, e1;
  for (const auto& b : batches) {
    auto& dst = b.epoch == 0 ? e0 : e1;
    dst.insert(dst.end(), b.targets.begin(), b.targets.end());
  }
  ASSERT_EQ(e0.size(), 40u);
  ASSERT_EQ(e1.size(), 40u);
  EXPECT_EQ(std::set<int32_t>(e0.begin(), e0.end()).size(), 40u);  // each example once
  EXPECT_EQ(std::set<int32_t>(e1.begin(), e1.end()).size(), 40u);
  EXPECT_NE(e0, e1);
  EXPECT_EQ(batches[4].epoch, 1);
  EXPECT_EQ(batches[4].index, 0);
}

TEST(Loader, InputDelayKeepsBatchesCorrectAndInOrder) {
  IndexDataset d(64);
  LoaderOptions o;
  o.batch = 4;
  o.seed = 9;
  o.workers = 1;
  const auto reference = Take(d, o, 20);
  o.workers = 4;
  o.prefetch = 3;
  o.input_delay_ms = 2;
  const auto delayed = Take(d, o, 20);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(delayed[i].targets, reference[i].targets) << i;
    EXPECT_EQ(delayed[i].epoch, reference[i].epoch);
    EXPECT_EQ(delayed[i].index, reference[i].index);
  }
}

TEST(Loader, DestructionWhileWorkersAreBlockedDoesNotHang) {
  IndexDataset d(1000);
  LoaderOptions o;
  o.batch = 2;
  o.workers = 4;
  o.prefetch = 1;
  for (int round = 0; round < 20; ++round) {
    auto loader = Loader::Create(d, o);
    ASSERT_TRUE(loader.ok());
    if (round % 2 == 1) (*loader)->Next();
    // Workers have filled the one slot and now wait on a full queue; the loader goes away.
  }
  o.input_delay_ms = 60000;  // a worker asleep in an injected delay must also stop promptly
  auto loader = Loader::Create(d, o);
  ASSERT_TRUE(loader.ok());
}

// With a lookahead of one the workers claim batch k+1 only once batch k was asked for, however
// long the consumer takes; raised to the prefetch, they run ahead again.
TEST(Loader, LookaheadHoldsTheWorkersToTheConsumer) {
  IndexDataset d(1000);
  LoaderOptions o;
  o.batch = 2;
  o.workers = 2;
  o.prefetch = 4;
  o.lookahead = 1;
  auto made = Loader::Create(d, o);
  ASSERT_TRUE(made.ok());
  Loader& loader = **made;
  std::vector<Batch> got;
  std::vector<Seconds> asked;
  for (int k = 0; k < 4; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    asked.push_back(SteadySeconds());
    got.push_back(loader.Next());
    // Batch k cannot have been begun before batch k-1 was asked for (with the prefetch as the
    // lookahead, it is made during the consumer's sleep).
    if (k > 0) {
      EXPECT_GE(got[k].load_begin, asked[k - 1]) << k;
    }
  }
  loader.SetLookahead(4);
  for (int k = 0; k < 12; ++k) got.push_back(loader.Next());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k].index, static_cast<int64_t>(k));
}

TEST(Loader, SyntheticServesOneBatchAgainAndAgain) {
  IndexDataset d(100);
  LoaderOptions o;
  o.batch = 10;
  o.synthetic = true;
  o.seed = 4;
  auto loader = Loader::Create(d, o);
  ASSERT_TRUE(loader.ok());
  ASSERT_EQ((*loader)->batches_per_epoch(), 10);
  std::vector<int64_t> first;
  ShardedSampler(100, 10, 0, 1, 4, true).BatchIndices(0, 0, &first);
  for (int i = 0; i < 25; ++i) {
    Batch b = (*loader)->Next();
    EXPECT_EQ(std::vector<int64_t>(b.targets.begin(), b.targets.end()), first);
    EXPECT_EQ(b.epoch, i / 10);
    EXPECT_EQ(b.index, i % 10);
    // Every other batch goes back: the recycled one is served again, the same contents.
    if (i % 2 == 0) (*loader)->Recycle(std::move(b));
  }
}

TEST(Loader, InvalidOptionsNameTheOption) {
  IndexDataset d(10);
  auto error = [&](LoaderOptions o) {
    auto l = Loader::Create(d, o);
    EXPECT_FALSE(l.ok());
    return l.ok() ? std::string() : l.status().message();
  };
  LoaderOptions o;
  o.batch = 0;
  EXPECT_EQ(error(o), "--batch 0: must be positive");
  o = {};
  o.batch = 4;
  o.world = 3;
  EXPECT_NE(error(o).find("--batch 4"), std::string::npos);
  EXPECT_NE(error(o).find("12"), std::string::npos);
  o = {};
  o.batch = 2;
  o.workers = 0;
  EXPECT_EQ(error(o), "--loader-workers 0: must be at least 1");
  o = {};
  o.batch = 2;
  o.prefetch = 0;
  EXPECT_EQ(error(o), "--prefetch 0: must be at least 1");
  o = {};
  o.batch = 2;
  o.world = 2;
  o.rank = 2;
  EXPECT_NE(error(o).find("--rank 2"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::data
