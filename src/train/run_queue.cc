#include "train/run_queue.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace stepscope::train {

std::optional<Seconds> ParseRunQueueDelay(std::string_view schedstat) {
  auto skip_spaces = [&](size_t i) {
    while (i < schedstat.size() && schedstat[i] == ' ') ++i;
    return i;
  };
  const char* end = schedstat.data() + schedstat.size();
  uint64_t on_cpu = 0;
  uint64_t waiting = 0;
  size_t i = skip_spaces(0);
  auto first = std::from_chars(schedstat.data() + i, end, on_cpu);
  if (first.ec != std::errc() || first.ptr == end || *first.ptr != ' ') return std::nullopt;
  i = skip_spaces(static_cast<size_t>(first.ptr - schedstat.data()));
  auto second = std::from_chars(schedstat.data() + i, end, waiting);
  if (second.ec != std::errc() ||
      (second.ptr != end && *second.ptr != ' ' && *second.ptr != '\n')) {
    return std::nullopt;
  }
  return static_cast<Seconds>(waiting) * 1e-9;
}

RunQueueClock RunQueueClock::ForThisThread() {
  return RunQueueClock(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC));
}

RunQueueClock::~RunQueueClock() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<Seconds> RunQueueClock::Read() const {
  if (fd_ < 0) return std::nullopt;
  char line[96];
  const ssize_t n = ::pread(fd_, line, sizeof(line), 0);
  if (n <= 0) return std::nullopt;
  return ParseRunQueueDelay(std::string_view(line, static_cast<size_t>(n)));
}

void CpuWait::End(const RunQueueClock& clock) {
  const std::optional<Seconds> end = clock.Read();
  if (!begin_ || !end) {
    known_ = false;
    return;
  }
  sum_ += *end - *begin_;
  measured_ = true;
  begin_.reset();
}

std::optional<Seconds> CpuWait::Total(Seconds compute) const {
  if (!known_ || !measured_) return std::nullopt;
  return std::clamp(sum_, 0.0, std::max(0.0, compute));
}

}  // namespace stepscope::train
