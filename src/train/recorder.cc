#include "train/recorder.h"

#include <chrono>
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
  r->writer_ = std::thread([raw = r.get()] { raw->WriterLoop(); });
  return r;
}

RankRecorder::~RankRecorder() { (void)Close(); }

Status RankRecorder::Append(StepRecord record, StepTimeline timeline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  if (queue_.size() >= kMaxQueued) {
    cv_.notify_all();
    cv_.wait(lock, [&] { return queue_.size() < kMaxQueued || !error_.ok(); });
    if (!error_.ok()) return error_;
  }
  queue_.push_back({std::move(record), std::move(timeline)});
  return Status::Ok();
}

void RankRecorder::WriterLoop() {
  std::vector<Entry> batch;
  for (;;) {
    bool stopping;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::duration<double>(kWriteInterval),
                   [&] { return stop_ || queue_.size() >= kMaxQueued; });
      batch.swap(queue_);
      stopping = stop_;
    }
    cv_.notify_all();  // room in the queue again
    Status st = Status::Ok();
    for (const Entry& e : batch) {
      if (st.ok()) st = Write(e);
    }
    if (!batch.empty() && st.ok()) {
      steps_.flush();
      if (!steps_) st = Status::Error(steps_path_ + ": write failed (disk full?)");
    }
    batch.clear();
    if (!st.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_.ok()) error_ = st;
      }
      cv_.notify_all();  // an Append waiting for room returns the error
    }
    if (stopping) return;
  }
}

Status RankRecorder::Write(const Entry& entry) {
  const StepRecord& rec = entry.record;
  const StepTimeline& t = entry.timeline;
  steps_ << StepRecordToJson(rec) << '\n';
  if (!steps_) return Status::Error(steps_path_ + ": write failed (disk full?)");

  const int pid = rank_;
  auto span = [&](int tid, const char* name, const char* cat, const Interval& i) {
    if (i.end > i.begin) trace_->Complete(pid, tid, name, cat, i.begin, i.end - i.begin);
  };
  trace_->Complete(
      pid, kMainTrack, "step " + std::to_string(rec.step), "step", rec.start, rec.end - rec.start,
      {{"loss", rec.loss.value_or(0)}, {"warmup", rec.warmup}, {"samples", rec.samples}});
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
  if (closed_) return close_status_;
  closed_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();  // its last pass writes what was still queued
  {
    std::lock_guard<std::mutex> lock(mu_);
    close_status_ = error_;
  }
  steps_.close();
  Status trace_status = trace_ ? trace_->Close() : Status::Ok();
  if (close_status_.ok()) close_status_ = trace_status;
  return close_status_;
}

}  // namespace stepscope::train
