// Fashion-MNIST (Xiao, Rasul, Vollgraf 2017): 28x28 grey-scale images in 10 classes, read from
// the four gzip'd IDX files. Pixels are kept as raw uint8 (47 MB for the training set) and
// decoded per batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/source.h"

namespace stepscope::data {

inline constexpr int kImageSide = 28;
inline constexpr int kNumClasses = 10;
inline constexpr int kAugmentPad = 2;
// Normalisation: x_norm = (x / 255 - kPixelMean) / kPixelStd, the training set's statistics.
inline constexpr float kPixelMean = 0.2860f;
inline constexpr float kPixelStd = 0.3530f;

// Images (N, 28, 28) uint8 and labels (N) in [0, 10).
class ImageDataset : public Dataset {
 public:
  ImageDataset(std::string description, std::vector<uint8_t> pixels, std::vector<uint8_t> labels);

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  std::string Describe() const override { return description_; }
  // inputs (B, 1, 28, 28) normalised; targets (B) labels. With `augment`, each example gets
  // DrawCropFlip(MixSeed(rng_seed, index), 2) applied before normalisation.
  void Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
            Batch* out) const override;

  const uint8_t* image(int64_t i) const { return pixels_.data() + i * kImageSide * kImageSide; }
  int label(int64_t i) const { return labels_[i]; }

 private:
  std::string description_;
  std::vector<uint8_t> pixels_;
  std::vector<uint8_t> labels_;
  float lut_[256];  // normalised value of each pixel byte
};

// Reads one split: `images_path` (IDX magic 2051, N x 28 x 28) and `labels_path` (IDX magic
// 2049, N labels in [0, 10)); the counts must agree.
Result<std::unique_ptr<ImageDataset>> LoadIdxImageSplit(const std::string& images_path,
                                                        const std::string& labels_path,
                                                        const std::string& split_name);

}  // namespace stepscope::data
