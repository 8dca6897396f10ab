// One emulated device per sweep. Each run calibrates its emulated device at the end of its
// warm-up (train/pacer.h); runs calibrated apart measure their host at different moments (a
// busier sibling core, a colder cache) and so emulate slightly different devices, which a
// scaling curve reads as lost or gained efficiency that is not there. A device file fixes the
// device once: the first run of each compute shape records its calibrated cost per unit of work,
// and every later run of that shape paces to it, so the 1-replica run and the N-replica runs of a
// sweep emulate the same device. `stepscope diagnose` gives its runs DIR/device.json.
//
// File format (JSON): {"schema": "stepscope.device/1", "devices": [{"shape": "...",
//   "cost_per_work_s": [segment 0, segment 1, ...], "calibrated_by": "RUN_DIR"}]}
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"
#include "train/options.h"

namespace stepscope::train {

// The compute a device is calibrated on: what fixes the segments of a step and the meaning of a
// unit of work (the model, whose layers split backward where it reports their gradients ready;
// the per-rank micro-batch and accumulation; variable-length batches). Runs that differ only in
// replicas, reduction, bucket size, overlap, wire precision, loader or injected faults share a
// device: a lever that changes the buckets is measured on the device of its baseline.
std::string ComputeShape(const TrainOptions& o, const std::string& model_description);

struct DeviceCalibration {
  std::string shape;
  std::vector<Seconds> cost_per_work;  // per compute segment of a step
  std::string calibrated_by;           // the run directory that measured it
};

// The calibration recorded for `shape` in `path`; nullopt when the file does not exist yet or
// holds no device of that shape. A file that exists but cannot be read is an error naming it.
Result<std::optional<DeviceCalibration>> FindDevice(const std::string& path,
                                                    const std::string& shape);

// Adds (or replaces) the device of `c.shape` in `path`, written whole to a temporary file and
// renamed, so a reader never sees half a file.
Status RecordDevice(const std::string& path, const DeviceCalibration& c);

}  // namespace stepscope::train
