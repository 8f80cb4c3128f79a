#include "normlab/experiment/sweep_progress.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "normlab/bench/flops.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

RunSnapshot read_run_snapshot(const std::filesystem::path& metrics_file) {
  RunSnapshot s;
  std::ifstream in(metrics_file, std::ios::binary);
  if (!in) return s;
  // Only the tail: the newest record is within the last few lines.
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > 4096 ? size - 4096 : 0;
  in.seekg(from);
  std::string line;
  if (from > 0) std::getline(in, line);  // a partial first line
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no '\n' yet: a line still being written
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("loss") || !j.contains("step")) continue;
    s.step = j["step"].get<int64_t>();
    s.loss = j["loss"].is_number() ? j["loss"].get<double>() : NAN;
    s.steps_per_s = j.value("steps_per_s", 0.0);
  }
  return s;
}

std::string format_active_run(const ActiveRun& run, size_t width) {
  if (run.evaluation) {
    return fmt::format("{:<{}}  evaluating {}: {} of {} lengths done", run.label, width,
                       run.evaluation->weights, run.evaluation->lengths_done,
                       run.evaluation->lengths);
  }
  if (run.now.step == 0) return fmt::format("{:<{}}  starting", run.label, width);
  return fmt::format("{:<{}}  step {:>{}}/{}  loss {:.4f}  {:6.1f} steps/s", run.label, width,
                     run.now.step, std::to_string(run.steps).size(), run.steps, run.now.loss,
                     run.now.steps_per_s);
}

double step_cost(const Variant& v) {
  return train_step_flops(v.model, v.train.batch, mean_training_length(v.train),
                          param_layout_of(v.model).total());
}

double sweep_eta_seconds(const std::vector<ActiveRun>& active, double waiting_work) {
  double rate = 0;  // work per second
  double left = waiting_work;
  for (const ActiveRun& r : active) {
    rate += r.now.steps_per_s * r.step_cost;
    left += static_cast<double>(std::max<int64_t>(r.steps - r.now.step, 0)) * r.step_cost;
  }
  if (left == 0) return 0;
  return rate > 0 ? left / rate : NAN;
}

std::string format_sweep_total(int done, int total, size_t training, size_t evaluating,
                               double eta_seconds) {
  const std::string eta = std::isfinite(eta_seconds) ? format_duration(eta_seconds) : "-";
  if (evaluating == 0) {
    return fmt::format("runs {} of {} done, {} training; ETA {}", done, total, training, eta);
  }
  // While runs evaluate, the ETA is only that of the training left: said so.
  return fmt::format("runs {} of {} done, {} training, {} evaluating; training ETA {}", done, total,
                     training, evaluating, eta);
}

SweepProgress::SweepProgress(std::FILE* out, bool terminal, double interval)
    : out_(out), terminal_(terminal), interval_(interval) {}

void SweepProgress::clear() {
  if (!terminal_ || drawn_lines_ == 0) return;
  // Up to the block's first line, then erase to the end of the screen.
  std::fprintf(out_, "\x1b[%dF\x1b[J", drawn_lines_);
  drawn_lines_ = 0;
  std::fflush(out_);
}

void SweepProgress::message(const std::string& line) {
  clear();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  if (terminal_) last_draw_ = -1e300;  // redraw the block at the next update
}

void SweepProgress::update(const std::vector<ActiveRun>& active, const std::string& total_line) {
  const double now = steady_seconds();
  if (now - last_draw_ < interval_) return;
  last_draw_ = now;
  size_t width = 0;
  for (const ActiveRun& r : active) width = std::max(width, r.label.size());
  clear();
  if (!terminal_) std::fprintf(out_, "%s\n", total_line.c_str());
  for (const ActiveRun& r : active) {
    std::fprintf(out_, "  %s\n", format_active_run(r, width).c_str());
  }
  if (terminal_) {
    std::fprintf(out_, "%s\n", total_line.c_str());
    drawn_lines_ = static_cast<int>(active.size()) + 1;
  }
  std::fflush(out_);
}

}  // namespace normlab
