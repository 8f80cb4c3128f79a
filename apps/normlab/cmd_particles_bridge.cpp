#include <fmt/format.h>

#include <cstdio>

#include "checkpoint_source.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/base/rng.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/particles/bridge.hpp"
#include "normlab/particles/model_weights.hpp"
#include "normlab/probes/probe_input.hpp"
#include "particles_bridge.hpp"

namespace normlab::cli {

void run_particles_bridge(const ParticlesBridgeOptions& o) {
  if (o.input != "random" && o.input != "task") {
    throw UsageError(fmt::format("--input '{}': allowed: random, task", o.input));
  }
  const bool task_input = o.input == "task";
  if (!task_input && (!o.task.empty() || !o.task_params.empty())) {
    throw UsageError("--task and --task-param choose the inputs of --input task");
  }
  if (o.batch < 1 || o.batch > 4096) {
    throw UsageError(fmt::format("--batch must be between 1 and 4096, got {}", o.batch));
  }
  if (o.seq_len < 2 || o.seq_len > 4096) {
    throw UsageError(fmt::format("--seq-len must be between 2 and 4096, got {}", o.seq_len));
  }
  const CheckpointSource source = resolve_checkpoint(o.checkpoint, "raw");
  std::unique_ptr<Model<float>> model = load_source_model(source);
  particles::check_model_has_particle_law(model->config());
  SourceTask task;
  if (task_input) {
    task = resolve_task(source, o.checkpoint, o.task, o.task_params, true);
    check_task_vocab(*task.task, model->config().vocab);
  }
  const ProbeInput input =
      task_input ? ProbeInput::from_task(*task.task) : ProbeInput::random(model->config().vocab);
  input.check_length(o.seq_len);
  Rng rng(o.seed);
  // Task input: the task's validation sequences (what evaluation uses); else random tokens with
  // next-token targets (the depth probe needs targets).
  const Batch batch = task_input ? task.task->make_batch(o.seq_len, o.batch, rng, true)
                                 : input.make_batch(o.seq_len, o.batch, rng, true);

  particles::BridgeOptions ode;
  ode.integrator = o.integrator;
  ode.dt = o.dt;
  ode.rtol = o.rtol;
  ode.atol = o.atol;
  const particles::BridgeResult r = particles::run_bridge(*model, batch, ode);
  std::printf(
      "particles bridge: %s, scheme %s -> particle %s, L %d, D %d, H %d, beta %.6g, %s, "
      "%lld sequences of %lld tokens (%s)\n",
      source.file.string().c_str(), scheme_label(model->config()).c_str(),
      particles::to_string(r.config.scheme).c_str(), model->config().layers, model->config().width,
      model->config().heads, r.config.beta, r.config.causal ? "causal" : "bidirectional",
      static_cast<long long>(r.batch), static_cast<long long>(r.seq_len), input.label().c_str());
  for (const std::string& note : r.notes) std::printf("note: %s\n", note.c_str());
  std::fputs(particles::format_bridge_table(r).c_str(), stdout);
  if (!o.csv.empty()) {
    write_file_atomic(o.csv, particles::bridge_csv(r));
    std::printf("wrote %s\n", o.csv.c_str());
  }
}

}  // namespace normlab::cli
