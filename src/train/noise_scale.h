// Gradient noise scale (McCandlish et al. 2018) from the gradient norms the trainer records.
#pragma once

namespace stepscope::train {

// With local batch b and global batch B: |G|^2 ~ (B|G_B|^2 - b|G_b|^2)/(B - b),
// tr(S) ~ (|G_b|^2 - |G_B|^2)/(1/b - 1/B), B_noise = tr(S)/|G|^2. The inputs are the means over
// steps (and ranks) of |G_b|^2 and |G_B|^2, so numerators and denominators are averaged before
// dividing. Returns -1 when the estimate is undefined (B <= b, or a non-positive estimate).
double EstimateNoiseScale(double mean_local_sq, double mean_global_sq, double b, double B);

}  // namespace stepscope::train
