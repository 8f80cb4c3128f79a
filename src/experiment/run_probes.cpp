// probe_finished_run: every probe an experiment turns on, on one run.
#include "normlab/experiment/experiment.hpp"

namespace normlab {

void probe_finished_run(const Experiment& e, const Variant& v, uint64_t seed,
                        const std::filesystem::path& dir) {
  if (e.probe_depth) ensure_depth_probe(e, v, seed, dir);
  if (e.probe_variance) ensure_variance_probe(e, v, seed, dir);
  if (e.probe_dilution) ensure_dilution_probe(e, v, seed, dir);
  if (e.probe_bridge) ensure_bridge_probe(e, v, seed, dir);
}

}  // namespace normlab
