#include "train/recorder.h"

#include <filesystem>

namespace stepscope::train {
namespace {

// Track ids within a rank's process in the Chrome trace.
constexpr int kMainTrack = 1;
constexpr int kCommTrack = 2;
constexpr int kLoaderTrack = 3;

}  // namespace

std::string RankRecorder::StepsPath(const std::string& dir, int rank) {
  return dir + "/rank-" + std::to_string(rank) + ".steps.jsonl";
}

std::string RankRecorder::TracePath(const std::string& dir, int rank) {
  return dir + "/rank-" + std::to_string(rank) + ".trace.json";
}

Result<std::unique_ptr<RankRecorder>> RankRecorder::Open(const std::string& dir, int rank) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Error(dir + ": cannot create output directory (" + ec.message() + ")");
  std::unique_ptr<RankRecorder> r(new RankRecorder());
  r->rank_ = rank;
  r->steps_path_ = StepsPath(dir, rank);
  r->steps_.open(r->steps_path_, std::ios::trunc);
  if (!r->steps_) return Status::Error(r->steps_path_ + ": cannot open for writing");
  auto writer = trace::ChromeTraceWriter::Open(TracePath(dir, rank));
  if (!writer.ok()) return writer.status();
  r->trace_ = std::move(writer.value());
  r->trace_->ProcessName(rank, "rank " + std::to_string(rank));
  r->trace_->ThreadName(rank, kMainTrack, "main (compute)");
  r->trace_->ThreadName(rank, kCommTrack, "communication");
  r->trace_->ThreadName(rank, kLoaderTrack, "loader");
  return r;
}

Status RankRecorder::Append(const StepRecord& rec, const StepTimeline& t) {
  steps_ << StepRecordToJson(rec) << '\n';
  steps_.flush();
  if (!steps_) return Status::Error(steps_path_ + ": write failed (disk full?)");

  const int pid = rank_;
  auto span = [&](int tid, const char* name, const char* cat, const Interval& i) {
    if (i.end > i.begin) trace_->Complete(pid, tid, name, cat, i.begin, i.end - i.begin);
  };
  trace_->Complete(pid, kMainTrack, "step " + std::to_string(rec.step), "step", rec.start,
                   rec.end - rec.start,
                   {{"loss", rec.loss}, {"warmup", rec.warmup}, {"samples", rec.samples}});
  for (const auto& i : t.input_waits) span(kMainTrack, "input wait", "input", i);
  for (const auto& i : t.forwards) span(kMainTrack, "forward", "compute", i);
  for (const auto& i : t.backwards) span(kMainTrack, "backward", "compute", i);
  for (const auto& i : t.loads) span(kLoaderTrack, "load batch", "loader", i);
  span(kMainTrack, "exposed comm wait", "comm_wait", t.exposed_wait);
  span(kMainTrack, "optimizer", "compute", t.optimizer);
  for (const auto& c : rec.collectives) {
    trace_->Instant(pid, kMainTrack, "bucket " + std::to_string(c.index) + " ready", c.ready);
    trace_->Complete(pid, kCommTrack, "all-reduce bucket " + std::to_string(c.index), "comm",
                     c.start, c.end - c.start,
                     {{"bytes", c.bytes}, {"busbw_gbps", c.busbw_gbps}, {"step", rec.step}});
  }
  return Status::Ok();
}

Status RankRecorder::Close() {
  steps_.close();
  return trace_ ? trace_->Close() : Status::Ok();
}

}  // namespace stepscope::train
