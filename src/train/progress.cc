#include "train/progress.h"

#include <unistd.h>

namespace stepscope::train {

Progress::Progress(bool enabled, int64_t total_steps, FILE* out)
    : enabled_(enabled), tty_(isatty(fileno(out)) != 0), total_(total_steps), out_(out) {}

void Progress::Update(int64_t step, double loss, double samples_per_s, Seconds now) {
  if (!enabled_) return;
  if (start_ < 0) start_ = now;
  const bool last = step + 1 >= total_;
  if (!last && now - last_print_ < (tty_ ? kTtyInterval : kPlainInterval)) return;
  last_print_ = now;
  const double done = static_cast<double>(step + 1) / static_cast<double>(total_);
  const double eta = done > 0 ? (now - start_) * (1 - done) / done : 0;
  std::fprintf(out_, "%sstep %lld/%lld  loss %.4f  %.0f samples/s  ETA %.0fs%s",
               tty_ ? "\r\033[K" : "", static_cast<long long>(step + 1),
               static_cast<long long>(total_), loss, samples_per_s, eta, tty_ ? "" : "\n");
  std::fflush(out_);
}

void Progress::Finish() {
  if (enabled_ && tty_) std::fputc('\n', out_);
}

}  // namespace stepscope::train
