// run.json: what a run was (configuration, model, hosts, software) and what it measured
// (throughput, loss, evaluation, noise scale, emulation). Schema: docs/train-output.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "comm/communicator.h"
#include "train/options.h"
#include "train/trainer.h"

namespace stepscope::train {

nlohmann::json OptionsToJson(const TrainOptions& options);

// Collective (gathers every rank's host name); rank 0 writes `dir`/run.json.
Status WriteRunJson(const std::string& dir, const TrainOptions& options, const RunSummary& summary,
                    const comm::Communicator& comm);

// Software versions: stepscope, compiler, MPI library, OpenBLAS.
nlohmann::json SoftwareVersions();

}  // namespace stepscope::train
