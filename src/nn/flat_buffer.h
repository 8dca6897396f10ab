// FlatBuffer: a model's flat float buffer (its gradients), held in the model's own memory until
// it is relocated into memory someone else provides, such as a shared-memory window that an
// all-reduce can reduce in place. Callers always go through data() and size(), so the storage can
// move between steps without the layers noticing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace stepscope::nn {

class FlatBuffer {
 public:
  // Owned storage of `n` copies of `value` (drops any relocation).
  void assign(size_t n, float value) {
    owned_.assign(n, value);
    view_ = owned_;
  }
  // Copies the contents to the front of `storage` and uses it from now on; the owned memory is
  // released. `storage` must hold at least size() floats and outlive this buffer's use.
  // Returns false (and changes nothing) when it is too small.
  bool Relocate(std::span<float> storage) {
    if (storage.size() < view_.size()) return false;
    std::span<float> target = storage.first(view_.size());
    std::copy(view_.begin(), view_.end(), target.begin());
    view_ = target;
    owned_ = {};
    return true;
  }

  float* data() { return view_.data(); }
  const float* data() const { return view_.data(); }
  size_t size() const { return view_.size(); }
  operator std::span<float>() { return view_; }

 private:
  std::vector<float> owned_;
  std::span<float> view_;
};

}  // namespace stepscope::nn
