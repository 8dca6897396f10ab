#include "train/device_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <system_error>

namespace stepscope::train {
namespace {

using nlohmann::json;
constexpr const char* kSchema = "stepscope.device/1";

// A shape as files written before the bucket size left it hold it, without its "; bucket N MiB"
// part; the shape itself when it has none.
std::string WithoutBucket(const std::string& shape) {
  static const std::regex kBucket("; bucket [0-9.e+-]+ MiB");
  return std::regex_replace(shape, kBucket, "");
}

// The file's devices, or an empty list when it does not exist.
Result<json> ReadDevices(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return json::array();
  std::ifstream in(path);
  if (!in) return Status::Error(fmt::format("{}: cannot open the emulated device file", path));
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const std::string fix = "delete it to calibrate the device anew";
  if (j.is_discarded() || !j.is_object()) {
    return Status::Error(fmt::format("{}: not a JSON object; {}", path, fix));
  }
  if (j.value("schema", "") != kSchema) {
    return Status::Error(fmt::format("{}: field 'schema' is not \"{}\"; {}", path, kSchema, fix));
  }
  if (!j.contains("devices") || !j["devices"].is_array()) {
    return Status::Error(fmt::format("{}: field 'devices' is not an array; {}", path, fix));
  }
  for (size_t i = 0; i < j["devices"].size(); ++i) {
    const json& d = j["devices"][i];
    const bool costs_ok = d.is_object() && d.contains("cost_per_work_s") &&
                          d["cost_per_work_s"].is_array() && !d["cost_per_work_s"].empty();
    bool positive = costs_ok;
    if (costs_ok) {
      for (const json& c : d["cost_per_work_s"]) positive = positive && c.is_number() && c > 0;
    }
    if (!d.is_object() || !d.contains("shape") || !d["shape"].is_string() || !positive) {
      return Status::Error(fmt::format(
          "{}: devices[{}] needs a string 'shape' and a non-empty array 'cost_per_work_s' of "
          "positive seconds; {}",
          path, i, fix));
    }
  }
  return j["devices"];
}

}  // namespace

std::string ComputeShape(const TrainOptions& o, const std::string& model_description) {
  return fmt::format("{}; optimizer {}; batch {}; accum {}{}", model_description,
                     o.optimizer.kind == nn::OptimizerKind::kAdamW ? "adamw" : "sgd", o.batch,
                     o.accum, o.variable_length ? "; variable length" : "");
}

Result<std::optional<DeviceCalibration>> FindDevice(const std::string& path,
                                                    const std::string& shape) {
  Result<json> devices = ReadDevices(path);
  if (!devices.ok()) return devices.status();
  // Files written while the shape held the bucket size ("...; accum 1; bucket 25 MiB"): their
  // first device of the same shape but for it, which a resumed sweep's baselines paced to.
  const json* legacy = nullptr;
  for (const json& d : devices.value()) {
    const std::string recorded = d["shape"].get<std::string>();
    if (recorded != shape) {
      if (legacy == nullptr && WithoutBucket(recorded) == shape) legacy = &d;
      continue;
    }
    legacy = &d;
    break;
  }
  if (legacy == nullptr) return std::optional<DeviceCalibration>();
  DeviceCalibration c;
  c.shape = shape;
  c.cost_per_work = (*legacy)["cost_per_work_s"].get<std::vector<Seconds>>();
  c.calibrated_by = legacy->value("calibrated_by", "");
  return std::optional<DeviceCalibration>(std::move(c));
}

Status RecordDevice(const std::string& path, const DeviceCalibration& c) {
  Result<json> read = ReadDevices(path);
  if (!read.ok()) return read.status();
  json devices = json::array();
  for (const json& d : read.value()) {
    if (d["shape"] != c.shape) devices.push_back(d);
  }
  devices.push_back({{"shape", c.shape},
                     {"cost_per_work_s", c.cost_per_work},
                     {"calibrated_by", c.calibrated_by}});
  const json j{{"schema", kSchema}, {"devices", devices}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << '\n';
    if (!out) return Status::Error(fmt::format("{}: cannot write the emulated device file", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::Error(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
  return Status::Ok();
}

}  // namespace stepscope::train
