// What one run of an experiment contributes to the results store (normlab/store/results_store.hpp),
// read from its run folder: eval_WEIGHTS.json, metrics.jsonl, probe_*.csv|json, run.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "normlab/experiment/experiment.hpp"
#include "normlab/store/results_store.hpp"
#include "normlab/train/run_folder.hpp"

namespace normlab {

// A stable identity of the run: FNV-1a (64 bits, hex) of its run.json without the fields that
// do not change what is computed (status, label). The same config gives the same hash on any
// machine; any change of model, task, training or evaluation gives another.
std::string run_hash(const std::filesystem::path& run_dir);

// The run's rows; timings are left empty (the runner fills what it observed).
RunRows gather_run_rows(const Experiment& e, const Variant& v, uint64_t seed,
                        const std::filesystem::path& out);

// A run's rows as JSON and back (NaN as null), for MPI ranks sending them to rank 0.
nlohmann::json run_rows_to_json(const RunRows& rows);
RunRows run_rows_from_json(const nlohmann::json& j);

// The experiment's row: its config and the provenance of this process.
ExperimentRecord experiment_record(const Experiment& e);

// The config hash of an experiment's row, from its config as JSON (to_json, or a results
// folder's experiment.json read back): the study read from any path has the same hash.
std::string experiment_config_hash(nlohmann::json config);

}  // namespace normlab
