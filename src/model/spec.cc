#include "model/spec.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/text_format.h"
#include "model/simulate.h"

namespace stepscope::model {
namespace {

using nlohmann::json;

// Bounds that keep every product of the model finite and every count an int.
constexpr double kMaxBytes = 1e15;
constexpr double kMaxCount = 1 << 24;

// Reads the fields of one JSON object, each at most once, and remembers which it read so that
// any other field is refused by name.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const json* Find(const std::string& field) {
    read_.insert(field);
    const auto it = object_.find(field);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  bool Has(const std::string& field) const { return object_.contains(field); }

  Status Error(const std::string& field, const std::string& what) const {
    return Status::Error(where_ + "field '" + field + "': " + what);
  }

  // A number in [min, max] (min excluded when `positive`); `fallback` when absent, or an
  // error saying it is required when there is none.
  Result<double> Number(const std::string& field, std::optional<double> fallback, double min,
                        bool positive, double max, const std::string& example) {
    const json* v = Find(field);
    if (!v) {
      if (fallback) return *fallback;
      return Error(field, "required (e.g. " + example + ")");
    }
    if (!v->is_number()) return Error(field, "must be a number (e.g. " + example + ")");
    const double x = v->get<double>();
    if (!std::isfinite(x) || (positive ? x <= min : x < min) || x > max) {
      return Error(field, "must be " + std::string(positive ? "> " : ">= ") + Number(min) +
                              " and at most " + Number(max) + ", not " + Number(x) + " (e.g. " +
                              example + ")");
    }
    return x;
  }
  Result<int64_t> Integer(const std::string& field, std::optional<int64_t> fallback, int64_t min,
                          double max, const std::string& example) {
    const json* v = Find(field);
    if (!v) {
      if (fallback) return *fallback;
      return Error(field, "required (e.g. " + example + ")");
    }
    const double x = v->is_number() ? v->get<double>() : 0.5;
    if (!v->is_number() || x != std::floor(x)) {
      return Error(field, "must be a whole number (e.g. " + example + ")");
    }
    if (x < static_cast<double>(min) || x > max) {
      return Error(field, "must be between " + std::to_string(min) + " and " + Number(max) +
                              ", not " + Number(x) + " (e.g. " + example + ")");
    }
    return static_cast<int64_t>(x);
  }
  Result<std::string> Text(const std::string& field, const std::string& fallback) {
    const json* v = Find(field);
    if (!v) return fallback;
    if (!v->is_string()) return Error(field, "must be a string (e.g. \"" + fallback + "\")");
    return v->get<std::string>();
  }
  Result<bool> Flag(const std::string& field, bool fallback) {
    const json* v = Find(field);
    if (!v) return fallback;
    if (!v->is_boolean()) return Error(field, "must be true or false");
    return v->get<bool>();
  }
  // After every field was read: the first one nobody asked for.
  Status Unknown() const {
    for (const auto& [key, value] : object_.items()) {
      if (!read_.count(key)) {
        std::string known;
        for (const std::string& k : read_) known += (known.empty() ? "" : ", ") + k;
        return Status::Error(where_ + "unknown field '" + key + "' (known: " + known + ")");
      }
    }
    return Status::Ok();
  }

 private:
  static std::string Number(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
  }

  const json& object_;
  std::string where_;
  std::set<std::string> read_;
};

// {"gbps": G, "latency_us": L}: a link as exact alpha-beta constants.
Result<std::optional<AlphaBeta>> Link(Fields& spec, const std::string& file,
                                      const std::string& field) {
  const json* v = spec.Find(field);
  if (!v) return std::optional<AlphaBeta>();
  const std::string example = "\"" + field + "\": {\"gbps\": 25, \"latency_us\": 10}";
  if (!v->is_object()) return spec.Error(field, "must be an object (e.g. " + example + ")");
  Fields link(*v, file + ": " + field + ": ");
  Result<double> gbps = link.Number("gbps", std::nullopt, 0, true, 1e6, example);
  if (!gbps.ok()) return gbps.status();
  Result<double> latency_us = link.Number("latency_us", 0.0, 0, false, 1e9, example);
  if (!latency_us.ok()) return latency_us.status();
  STEPSCOPE_RETURN_IF_ERROR(link.Unknown());
  AlphaBeta ab = LinkAlphaBeta(*gbps, *latency_us * 1e-6);
  ab.how = "given in " + file + " (" + field + ")";
  return std::optional<AlphaBeta>(ab);
}

Result<std::string> Precision(Fields& spec, const std::string& field, const std::string& fallback) {
  Result<std::string> dtype = spec.Text(field, fallback);
  if (!dtype.ok()) return dtype.status();
  if (WireWidth(*dtype) == 0) {
    return spec.Error(field, "'" + *dtype + "' is not fp32, bf16 or fp16");
  }
  return dtype;
}

}  // namespace

Result<StepModel> ModelFromSpec(std::string_view text, const std::string& file) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status::Error(file + ": not valid JSON (a spec is one object: docs/model.md)");
  }
  if (!doc.is_object()) {
    return Status::Error(file + ": a spec is one JSON object of fields (docs/model.md)");
  }
  Fields spec(doc, file + ": ");

  // The gradient: its bytes at its precision, or the parameter count.
  Result<std::string> dtype = Precision(spec, "dtype", "fp32");
  if (!dtype.ok()) return dtype.status();
  const int width = WireWidth(*dtype);
  const bool has_bytes = spec.Has("gradient_bytes"), has_parameters = spec.Has("parameters");
  if (has_bytes == has_parameters) {
    return spec.Error(has_bytes ? "parameters" : "gradient_bytes",
                      has_bytes ? "give gradient_bytes or parameters, not both"
                                : "required, or parameters (e.g. \"gradient_bytes\": 102760448)");
  }
  double parameters = 0;
  if (has_bytes) {
    Result<double> bytes = spec.Number("gradient_bytes", std::nullopt, 0, true, kMaxBytes,
                                       "\"gradient_bytes\": 102760448");
    if (!bytes.ok()) return bytes.status();
    parameters = std::ceil(*bytes / width);
  } else {
    Result<int64_t> n =
        spec.Integer("parameters", std::nullopt, 1, kMaxBytes / 4, "\"parameters\": 25690112");
    if (!n.ok()) return n.status();
    parameters = static_cast<double>(*n);
  }
  spec.Find(has_bytes ? "parameters" : "gradient_bytes");

  // Compute on one device at the micro-batch, forward + backward, and the rest of the step.
  Result<int64_t> batch =
      spec.Integer("micro_batch", std::nullopt, 1, kMaxCount, "\"micro_batch\": 32");
  if (!batch.ok()) return batch.status();
  Result<double> compute =
      spec.Number("compute_s", std::nullopt, 0, true, 1e6, "\"compute_s\": 0.12");
  if (!compute.ok()) return compute.status();
  Result<double> share =
      spec.Number("backward_share", 2.0 / 3, 0, true, 1, "\"backward_share\": 0.667");
  if (!share.ok()) return share.status();
  Result<double> optimizer =
      spec.Number("optimizer_s", 0.0, 0, false, 1e6, "\"optimizer_s\": 0.004");
  if (!optimizer.ok()) return optimizer.status();
  Result<double> input = spec.Number("input_wait_s", 0.0, 0, false, 1e6, "\"input_wait_s\": 0");
  if (!input.ok()) return input.status();
  Result<double> overhead = spec.Number("overhead_s", 0.0, 0, false, 1e6, "\"overhead_s\": 0.001");
  if (!overhead.ok()) return overhead.status();

  // Hosts and links.
  Result<int64_t> per_host =
      spec.Integer("devices_per_host", 1, 1, kMaxCount, "\"devices_per_host\": 8");
  if (!per_host.ok()) return per_host.status();
  Result<std::optional<AlphaBeta>> intra = Link(spec, file, "intra_host");
  if (!intra.ok()) return intra.status();
  Result<std::optional<AlphaBeta>> inter = Link(spec, file, "inter_host");
  if (!inter.ok()) return inter.status();
  if (*per_host > 1 && !*intra) {
    return spec.Error("intra_host",
                      "required with more than one device per host (e.g. "
                      "\"intra_host\": {\"gbps\": 100, \"latency_us\": 2})");
  }
  if (!*inter && !*intra) {
    return spec.Error("inter_host",
                      "required: a link between hosts (e.g. \"inter_host\": "
                      "{\"gbps\": 25, \"latency_us\": 10})");
  }
  Result<std::string> algorithm_name = spec.Text("algorithm", "hierarchical");
  if (!algorithm_name.ok()) return algorithm_name.status();
  Result<CrossHostAlgorithm> algorithm = ParseCrossHostAlgorithm(*algorithm_name);
  if (!algorithm.ok()) return spec.Error("algorithm", algorithm.status().message());

  // How the gradient is reduced.
  Result<double> bucket_mb = spec.Number("bucket_mb", 25.0, 0, true, 1e9, "\"bucket_mb\": 25");
  if (!bucket_mb.ok()) return bucket_mb.status();
  Result<bool> overlap = spec.Flag("overlap", true);
  if (!overlap.ok()) return overlap.status();
  Result<std::string> wire = Precision(spec, "wire_dtype", *dtype);
  if (!wire.ok()) return wire.status();

  // Memory.
  std::optional<double> memory_gb;
  if (spec.Has("device_memory_gb")) {
    Result<double> gb =
        spec.Number("device_memory_gb", std::nullopt, 0, true, 1e9, "\"device_memory_gb\": 80");
    if (!gb.ok()) return gb.status();
    memory_gb = *gb;
  } else {
    spec.Find("device_memory_gb");
  }
  Result<double> activations = spec.Number("activation_bytes_per_sample", 0.0, 0, false, kMaxBytes,
                                           "\"activation_bytes_per_sample\": 4194304");
  if (!activations.ok()) return activations.status();
  Result<int64_t> state =
      spec.Integer("optimizer_state_floats", 2, 0, 16, "\"optimizer_state_floats\": 2");
  if (!state.ok()) return state.status();
  STEPSCOPE_RETURN_IF_ERROR(spec.Unknown());

  StepModel m;
  m.reference.replicas = 1;
  m.reference.batch = static_cast<int>(*batch);
  m.reference.dtype = *wire;
  m.reference.algorithm = Name(*algorithm);
  m.reference.bucket_mb = *bucket_mb;
  m.reference.overlap = *overlap;
  const std::string given = "given in " + file;
  const double b = static_cast<double>(*batch);
  m.forward_c1 = {"forward_per_sample", Estimate::Exact(*compute * (1 - *share) / b),
                  "s per sample", given + ": compute_s x (1 - backward_share) / micro_batch"};
  m.backward_c1 = {"backward_per_sample", Estimate::Exact(*compute * *share / b), "s per sample",
                   given + ": compute_s x backward_share / micro_batch"};
  m.forward_c0 = {"forward_fixed", Estimate::Exact(0), "s per micro-batch",
                  "assumed 0: a spec's compute is proportional to the micro-batch", true};
  m.backward_c0 = {"backward_fixed", Estimate::Exact(0), "s per micro-batch",
                   "assumed 0: a spec's compute is proportional to the micro-batch", true};
  m.optimizer = {"optimizer", Estimate::Exact(*optimizer), "s per step", given};
  m.input_wait = {"input_wait", Estimate::Exact(*input), "s per step", given};
  m.overhead = {"overhead", Estimate::Exact(*overhead), "s per step", given};
  m.compute_jitter = {1.0};
  m.gradient_bytes = static_cast<Bytes>(parameters * 4);  // the model counts fp32 bytes
  m.readiness = {{0, 0}, {1, 1}};
  m.readiness_assumed = true;
  m.readiness_how = "assumed: gradients ready uniformly over backward (a spec gives no profile)";
  m.memory_fixed =
      static_cast<Bytes>(parameters * (2.0 * width + 4.0 * static_cast<double>(*state)));
  m.memory_per_sample = static_cast<Bytes>(*activations);
  m.memory_how = given +
                 ": parameters x (2 x the gradient width + 4 x optimizer_state_floats), "
                 "activation_bytes_per_sample";
  HostLayout hosts;
  hosts.devices_per_host = static_cast<int>(*per_host);
  hosts.intra = *intra;  // unset: one device per host, none needed
  hosts.inter = *inter;
  hosts.algorithm = *algorithm;
  m.hosts = hosts;
  m.device_memory_gb = memory_gb;
  m.notes.push_back("model from the spec " + file + ": nothing measured, so no check");
  m.notes.push_back(
      "no step-to-step variation given: no rank waits for a slower one (a lower bound)");
  m.notes.push_back("gradient readiness assumed uniform over backward");
  if (!memory_gb || *activations == 0) {
    m.notes.push_back("memory: " +
                      std::string(memory_gb ? "no activation_bytes_per_sample given, only "
                                              "parameters, gradients and optimizer state counted"
                                            : "no device_memory_gb given, not checked"));
  }
  return m;
}

}  // namespace stepscope::model
