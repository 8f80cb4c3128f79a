#include "normlab/io/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace normlab {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}

double forward_cost(int64_t tokens, int64_t width) {
  return static_cast<double>(tokens) * static_cast<double>(tokens + 12 * width);
}

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

double progress_interval(bool terminal) {
  if (const char* text = std::getenv("NORMLAB_PROGRESS_SECONDS")) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds >= 0 && std::isfinite(seconds)) return seconds;
  }
  return terminal ? 1.0 : 10.0;
}

ItemProgress::ItemProgress(std::vector<double> costs)
    : costs_(std::move(costs)), start_(Clock::now()), last_(start_) {}

double ItemProgress::eta_seconds() const {
  if (done_ == 0) return NAN;
  const double done_cost = std::accumulate(costs_.begin(), costs_.begin() + done_, 0.0);
  const double left_cost = std::accumulate(costs_.begin() + done_, costs_.end(), 0.0);
  const double elapsed = std::chrono::duration<double>(last_ - start_).count();
  return done_cost > 0 ? elapsed * left_cost / done_cost : NAN;
}

void ItemProgress::item_done(const std::string& what) {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  if (done_ < costs_.size()) ++done_;
  const std::string eta =
      done_ < costs_.size() ? fmt::format(", ETA {}", format_duration(eta_seconds())) : "";
  std::fprintf(stderr, "  %s done in %.2f s (%zu of %zu%s)\n", what.c_str(), seconds, done_,
               costs_.size(), eta.c_str());
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void RecentRate::observe(double seconds, int64_t step) {
  if (!seen_.empty() && step == seen_.back().step) return;
  if (!seen_.empty() && step < seen_.back().step) seen_.clear();  // a run started again
  seen_.push_back({seconds, step});
  // Keeps one step from before the window, so that a slow run's two newest records still span.
  size_t first = 0;
  while (first + 2 < seen_.size() && seen_[first + 1].seconds < seconds - window_) ++first;
  seen_.erase(seen_.begin(), seen_.begin() + static_cast<std::ptrdiff_t>(first));
}

double RecentRate::steps_per_s(double fallback) const {
  if (seen_.size() < 2) return fallback;
  const Seen& a = seen_.front();
  const Seen& b = seen_.back();
  return b.seconds > a.seconds ? static_cast<double>(b.step - a.step) / (b.seconds - a.seconds)
                               : fallback;
}

}  // namespace normlab
