#include "model/model_json.h"

#include <algorithm>

#include "model/order_statistics.h"

namespace stepscope::model {
namespace {

nlohmann::json ConstantJson(const Constant& c) {
  return {{"name", c.name},
          {"estimate", stepscope::ToJson(c.estimate)},
          {"unit", c.unit},
          {"how", c.how},
          {"assumed", c.assumed}};
}

nlohmann::json AlphaBetaJson(const AlphaBeta& ab) {
  return {{"fixed_s", stepscope::ToJson(ab.fixed_s)},
          {"alpha_s", stepscope::ToJson(ab.alpha_s)},
          {"seconds_per_byte", stepscope::ToJson(ab.seconds_per_byte)},
          {"alpha_assumed", ab.alpha_assumed},
          {"beta_assumed", ab.beta_assumed},
          {"samples", ab.samples},
          {"residual_rms_s", ab.residual_rms_s},
          {"how", ab.how}};
}

}  // namespace

nlohmann::json ToJson(const StepModel& m) {
  nlohmann::json constants = nlohmann::json::array();
  for (const Constant* c : {&m.forward_c0, &m.forward_c1, &m.backward_c0, &m.backward_c1,
                            &m.optimizer, &m.input_wait, &m.overhead, &m.overlap_rate}) {
    constants.push_back(ConstantJson(*c));
  }
  if (m.loader_service) constants.push_back(ConstantJson(*m.loader_service));
  if (m.loader_batch_share) constants.push_back(ConstantJson(*m.loader_batch_share));
  nlohmann::json collectives = nlohmann::json::object();
  for (const auto& [dtype, ab] : m.collectives) collectives[dtype] = AlphaBetaJson(ab);
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& [rank, factor] : m.stragglers) {
    stragglers.push_back(
        {{"rank", rank},
         {"compute_factor", factor},
         {"unit", "times the typical rank's compute"},
         {"how",
          "the rank's mean compute over the steady steps of the largest baseline, over "
          "the median of the other ranks' means; named when at least the straggler "
          "margin above and 1 % of the step (no band: one run's means)"}});
  }
  nlohmann::json compute_ratio = nlohmann::json::object();
  for (const auto& [n, ratio] : m.compute_ratio) compute_ratio[std::to_string(n)] = ratio;
  nlohmann::json service_at = nlohmann::json::object();
  for (const auto& [n, service] : m.loader_service_at)
    service_at[std::to_string(n)] = ToJson(service);
  nlohmann::json readiness = nlohmann::json::array();
  for (const ReadinessPoint& p : m.readiness) {
    readiness.push_back({{"backward_share", p.backward_share}, {"bytes_share", p.bytes_share}});
  }
  nlohmann::json j = {{"reference",
                       {{"replicas", m.reference.replicas},
                        {"batch", m.reference.batch},
                        {"accum", m.reference.accum},
                        {"reduce_dtype", m.reference.dtype},
                        {"allreduce", m.reference.algorithm},
                        {"bucket_mb", m.reference.bucket_mb},
                        {"first_bucket_mb", m.reference.first_bucket_mb},
                        {"overlap", m.reference.overlap},
                        {"loader_workers", m.reference.loader_workers}}},
                      {"fitted_replicas", m.fitted_replicas},
                      {"constants", constants},
                      {"collectives", collectives},
                      {"cost_runs", m.cost_runs},
                      {"gradient_bytes", m.gradient_bytes},
                      {"readiness", readiness},
                      {"readiness_assumed", m.readiness_assumed},
                      {"bucket_shares", m.bucket_shares},
                      {"slice_shares", m.slice_shares},
                      {"compute_jitter_samples", m.compute_jitter.size()},
                      {"stragglers", stragglers},
                      {"memory_fixed_bytes", m.memory_fixed},
                      {"memory_per_sample_bytes", m.memory_per_sample},
                      {"memory_how", m.memory_how},
                      {"memory",
                       {{"fixed_bytes", m.memory_fixed},
                        {"per_sample_bytes", m.memory_per_sample},
                        {"unit", "bytes per replica: fixed + per sample x micro-batch"},
                        {"how", m.memory_how}}},
                      {"compute_ratio",
                       {{"by_replicas", compute_ratio},
                        {"unit", "a baseline's mean compute over the pooled compute"},
                        {"how",
                         "at a measured replica count its own ratio; at another, the "
                         "crowding lines where they were fitted, else 1"}}},
                      {"loader_service_at",
                       {{"by_replicas", service_at},
                        {"unit", "s per batch per worker"},
                        {"how",
                         "at a measured replica count its own (band: 90 % bootstrap over "
                         "steps); at another, loader_service (the mean, its band the "
                         "baselines' range)"}}},
                      {"readiness_how", m.readiness_how},
                      {"notes", m.notes}};
  if (!m.reference.comm_hook.empty()) {
    // Only where the script reduced through a hook of its own, whose precision no what-if
    // changes (docs/torch.md, "Your own communication hook").
    j["reference"]["comm_hook"] = m.reference.comm_hook;
  }
  if (m.measured_link) {
    j["measured_link"] = {{"nominal_gbps", m.measured_link->nominal_gbps},
                          {"delivered_gbps", m.measured_link->delivered_gbps},
                          {"link_binds", m.measured_link->link_binds},
                          {"how",
                           "the link the runs were measured on (--measured-link) against the "
                           "all-reduce cost fitted on them; link_binds false: the fit delivers "
                           "more than its nominal rate, so the link did not set the "
                           "reductions' time"}};
  }
  if (m.length_buckets) {
    const LengthBuckets& l = *m.length_buckets;
    j["length_buckets"] = {
        {"applied", l.applied},
        {"work_ratio", l.work_ratio},
        {"spread_max_of_4", ExpectedMaximum(l.spread, 4)},
        {"token_share", l.token_share},
        {"positions", l.positions},
        {"noise", l.noise},
        {"unit",
         "a rank's forward and backward work bucketed over as drawn; the expected "
         "slowest of 4 bucketed ranks over the mean one; positions per rank and step "
         "(token_share holds there)"},
        {"how",
         "the job's own sampler (run.json lengths): the largest baseline's steady "
         "batches drawn again bucketed, for the work; 256 bucketed steps of 32 ranks, "
         "for the spread"}};
  }
  if (m.crowding) {
    const HostCrowding& h = *m.crowding;
    j["crowding"] = {{"cores_per_host", h.cores_per_host},
                     {"max_ranks_per_host", h.max_ranks_per_host},
                     {"constants",
                      {ConstantJson(h.compute_ratio_a), ConstantJson(h.compute_ratio_b),
                       ConstantJson(h.overhead_a), ConstantJson(h.overhead_b)}}};
    if (h.queue_a && h.queue_b) {
      j["crowding"]["constants"].push_back(ConstantJson(*h.queue_a));
      j["crowding"]["constants"].push_back(ConstantJson(*h.queue_b));
      j["crowding"]["cpu_per_rank_step_s"] = h.cpu_per_rank_step;
      j["crowding"]["queue_load"] = h.queue_load;
    }
    if (h.residual_a && h.residual_b) {
      j["crowding"]["constants"].push_back(ConstantJson(*h.residual_a));
      j["crowding"]["constants"].push_back(ConstantJson(*h.residual_b));
    }
  } else {
    j["crowding"] = nullptr;
  }
  if (m.host_cpu) {
    const HostCpu& h = *m.host_cpu;
    j["host_cpu"] = {{"cores_per_host", h.cores_per_host},
                     {"max_ranks_per_host", h.max_ranks_per_host},
                     {"reference_samples_per_rank_step", h.reference_samples},
                     {"constants", {ConstantJson(h.per_step), ConstantJson(h.per_sample)}}};
    if (h.reduction_per_byte)
      j["host_cpu"]["constants"].push_back(ConstantJson(*h.reduction_per_byte));
  } else {
    j["host_cpu"] = nullptr;
  }
  if (m.hosts) {
    j["hosts"] = {{"devices_per_host", m.hosts->devices_per_host},
                  {"algorithm", Name(m.hosts->algorithm)},
                  {"intra_host", m.hosts->intra ? AlphaBetaJson(*m.hosts->intra) : nullptr},
                  {"inter_host", m.hosts->inter ? AlphaBetaJson(*m.hosts->inter) : nullptr}};
  }
  if (m.device_memory_gb) j["device_memory_gb"] = *m.device_memory_gb;
  return j;
}

nlohmann::json ToJson(const Prediction& p) {
  nlohmann::json j = {{"replicas", p.replicas},
                      {"batch", p.batch},
                      {"accum", p.accum},
                      {"step_s", stepscope::ToJson(p.step_s)},
                      {"samples_per_s", stepscope::ToJson(p.samples_per_s)},
                      {"efficiency", stepscope::ToJson(p.efficiency)},
                      {"components",
                       {{"input_wait_s", p.parts.input_wait},
                        {"compute_s", p.parts.compute},
                        {"straggler_wait_s", p.parts.straggler_wait},
                        {"exposed_comm_s", p.parts.exposed_comm},
                        {"overhead_s", p.parts.overhead}}},
                      {"fits_memory", p.fits_memory}};
  // Each component at the point value, between its values at the fast and the slow end.
  const auto band = [&](double StepParts::*part) {
    const double v = p.parts.*part, a = p.parts_fast.*part, b = p.parts_slow.*part;
    return stepscope::ToJson(Estimate{v, std::min({v, a, b}), std::max({v, a, b})});
  };
  j["component_bands"] = {{"input_wait_s", band(&StepParts::input_wait)},
                          {"compute_s", band(&StepParts::compute)},
                          {"straggler_wait_s", band(&StepParts::straggler_wait)},
                          {"exposed_comm_s", band(&StepParts::exposed_comm)},
                          {"overhead_s", band(&StepParts::overhead)}};
  if (!p.memory_note.empty()) j["memory_note"] = p.memory_note;
  if (!p.wire_note.empty()) j["wire_note"] = p.wire_note;
  if (!p.bucket_note.empty()) j["bucket_note"] = p.bucket_note;
  return j;
}

nlohmann::json ToJson(const ModelCheck& c) {
  nlohmann::json j = {{"run", c.run},
                      {"replicas", c.replicas},
                      {"predicted_samples_per_s", stepscope::ToJson(c.predicted_samples_per_s)},
                      {"measured_samples_per_s", c.measured_samples_per_s},
                      {"error", c.error},
                      {"within_band", c.within_band},
                      {"partly_fitted", c.partly_fitted}};
  if (c.as_drawn) {
    j["as_drawn"] = {{"predicted_samples_per_s", stepscope::ToJson(c.as_drawn->predicted)},
                     {"error", c.as_drawn->error},
                     {"how",
                      "predicted for the positions each rank drew in each step of the run (its "
                      "records' tokens), not the sampler's expectation"}};
  }
  if (c.predicted_before) {
    j["predicted_before"] = true;
    j["predicted_from"] = c.predicted_from;
  }
  return j;
}

}  // namespace stepscope::model
