#include "data/fashion_mnist.h"

#include <utility>

#include "data/augment.h"
#include "data/idx_file.h"
#include "data/prng.h"

namespace stepscope::data {

ImageDataset::ImageDataset(std::string description, std::vector<uint8_t> pixels,
                           std::vector<uint8_t> labels)
    : description_(std::move(description)), pixels_(std::move(pixels)), labels_(std::move(labels)) {
  for (int v = 0; v < 256; ++v) lut_[v] = (static_cast<float>(v) / 255.0f - kPixelMean) / kPixelStd;
}

void ImageDataset::Fill(const std::vector<int64_t>& indices, bool augment, uint64_t rng_seed,
                        Batch* out) const {
  constexpr int kPixels = kImageSide * kImageSide;
  const int batch = static_cast<int>(indices.size());
  out->size = batch;
  out->inputs.resize(static_cast<size_t>(batch) * kPixels);
  out->tokens.clear();
  out->targets.resize(batch);
  uint8_t scratch[kPixels];
  for (int b = 0; b < batch; ++b) {
    const int64_t i = indices[b];
    const uint8_t* src = image(i);
    if (augment) {
      const CropFlip op = DrawCropFlip(MixSeed(rng_seed, static_cast<uint64_t>(i)), kAugmentPad);
      ApplyCropFlip(src, kImageSide, kImageSide, op, scratch);
      src = scratch;
    }
    float* dst = out->inputs.data() + static_cast<size_t>(b) * kPixels;
    for (int p = 0; p < kPixels; ++p) dst[p] = lut_[src[p]];
    out->targets[b] = labels_[i];
  }
}

Result<std::unique_ptr<ImageDataset>> LoadIdxImageSplit(const std::string& images_path,
                                                        const std::string& labels_path,
                                                        const std::string& split_name) {
  auto images = ReadIdxFile(images_path, kIdxImagesMagic);
  if (!images.ok()) return images.status();
  auto labels = ReadIdxFile(labels_path, kIdxLabelsMagic);
  if (!labels.ok()) return labels.status();
  const auto& dims = images->dims;
  for (int d = 1; d <= 2; ++d) {
    if (dims[d] != kImageSide) {
      return Status::Error(images_path + ": field 'dim" + std::to_string(d) + "' is " +
                           std::to_string(dims[d]) + ", expected " + std::to_string(kImageSide) +
                           " (Fashion-MNIST images are 28x28); is this the right file?");
    }
  }
  if (dims[0] != labels->dims[0]) {
    return Status::Error(images_path + ": field 'count' is " + std::to_string(dims[0]) +
                         " images but " + labels_path + " field 'count' is " +
                         std::to_string(labels->dims[0]) +
                         " labels; the files must come from the same split and release");
  }
  for (size_t i = 0; i < labels->data.size(); ++i) {
    if (labels->data[i] >= kNumClasses) {
      return Status::Error(labels_path + ": field 'data': label " + std::to_string(i) + " is " +
                           std::to_string(labels->data[i]) + ", expected 0..9; the file is " +
                           "corrupt or not a Fashion-MNIST label file");
    }
  }
  std::string description = "Fashion-MNIST " + split_name + ": " + std::to_string(dims[0]) +
                            " images 1x28x28 from " + images_path;
  return std::make_unique<ImageDataset>(std::move(description), std::move(images->data),
                                        std::move(labels->data));
}

Result<Split> LoadFashionMnist(const std::string& dir) {
  const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  auto train = LoadIdxImageSplit(base + "train-images-idx3-ubyte.gz",
                                 base + "train-labels-idx1-ubyte.gz", "train");
  if (!train.ok()) return train.status();
  auto test = LoadIdxImageSplit(base + "t10k-images-idx3-ubyte.gz",
                                base + "t10k-labels-idx1-ubyte.gz", "test");
  if (!test.ok()) return test.status();
  Split split;
  split.train = std::move(train.value());
  split.test = std::move(test.value());
  return split;
}

}  // namespace stepscope::data
