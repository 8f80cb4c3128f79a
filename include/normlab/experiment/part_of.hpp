// Whether one experiment's runs are runs of another: a pilot (docs/claims.md, design rules D3
// and D6) is the study's file with a --set that keeps the baseline arm alone, so its
// experiment.json differs from the study's in its variants, seeds and --set list, and in
// nothing a run trains or evaluates.
#pragma once

#include <nlohmann/json.hpp>

namespace normlab {

// True when every variant of `part` is one of `whole`'s, the same to the last field, and every
// other setting (name, task, train, eval, probe, tier, sweep) is the same; seeds, --set list,
// jobs and the file's path may differ. Both as `to_json(Experiment)` writes them (an older
// normlab's file through experiment_json_as_read first).
bool runs_are_part_of(const nlohmann::json& part, const nlohmann::json& whole);

}  // namespace normlab
