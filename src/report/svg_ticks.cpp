// Axis ticks and tick labels of the SVG figures (normlab/report/svg_plot.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "normlab/report/svg_plot.hpp"

namespace normlab::svg {
namespace {

constexpr double kEps = 1e-9;

// "-" → "−" (U+2212) at the front of a formatted number.
std::string with_minus(std::string s) {
  if (!s.empty() && s[0] == '-') s.replace(0, 1, "\u2212");
  return s;
}

// `value` with at most `digits` significant digits, in fixed notation, trailing zeros cut.
std::string fixed(double value, int digits) {
  const int magnitude = value == 0 ? 0 : static_cast<int>(std::floor(std::log10(std::abs(value))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return with_minus(s);
}

// Linear ticks: the step from 1, 2, 5 × 10^k giving closest to six ticks (at most ten).
std::vector<Tick> linear_ticks(double lo, double hi, bool integer) {
  const double span = hi - lo;
  const int top = static_cast<int>(std::floor(std::log10(span)));
  double step = 0, best = std::numeric_limits<double>::infinity();
  for (int k = top - 2; k <= top + 1; ++k) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double c = m * std::pow(10.0, k);
      if (integer && c < 1) continue;
      const double count = span / c;
      if (count > 10) continue;
      if (std::abs(count - 6) < best) {
        best = std::abs(count - 6);
        step = c;
      }
    }
  }
  if (step == 0) step = integer ? std::max(1.0, std::ceil(span / 6)) : span / 6;
  std::vector<Tick> ticks;
  const double first = std::ceil(lo / step - kEps), last = std::floor(hi / step + kEps);
  for (double k = first; k <= last; ++k) {
    double v = std::stod(fmt::format("{:.12g}", k * step));  // 2.8, not 2.8000000000000003
    if (std::abs(v) < step * kEps) v = 0;
    ticks.push_back(tick_label(v));
  }
  return ticks;
}

// The values m × 10^k (m in `mantissas`) inside [lo, hi].
std::vector<double> log_values(double lo, double hi, const std::vector<int>& mantissas) {
  std::vector<double> out;
  const int k0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int k1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  for (int k = k0; k <= k1; ++k) {
    for (int m : mantissas) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - kEps) && v <= hi * (1 + kEps)) out.push_back(v);
    }
  }
  return out;
}

std::vector<Tick> log_ticks(double lo, double hi) {
  const int k0 = static_cast<int>(std::ceil(std::log10(lo) - kEps));
  const int k1 = static_cast<int>(std::floor(std::log10(hi) + kEps));
  const int decades = k1 - k0 + 1;  // powers of ten in range
  std::vector<Tick> ticks;
  auto minor = [&](double v) {
    Tick t;
    t.value = v;
    t.major = false;
    ticks.push_back(t);
  };
  if (decades >= 3) {
    // Every decade up to 8 of them; beyond, every 2nd, 5th, 10th, ... at multiples of it.
    int stride = 1;
    for (int m = 1; decades / stride > 8; m *= 10) {
      for (int c : {2 * m, 5 * m, 10 * m}) {
        stride = c;
        if (decades / stride <= 8) break;
      }
    }
    for (int k = k0; k <= k1; ++k) {
      const double v = std::pow(10.0, k);
      if (k % stride == 0) {
        ticks.push_back(tick_label(v));
      } else {
        minor(v);
      }
    }
    if (std::log10(hi) - std::log10(lo) <= 6) {
      for (double v : log_values(lo, hi, {2, 3, 4, 5, 6, 7, 8, 9})) minor(v);
    }
    return ticks;
  }
  // Within about a decade every m × 10^k is far enough apart to label; over two, 1, 2, 5.
  const bool narrow = std::log10(hi) - std::log10(lo) <= 1;
  std::vector<double> majors =
      narrow ? log_values(lo, hi, {1, 2, 3, 4, 5, 6, 7, 8, 9}) : log_values(lo, hi, {1, 2, 5});
  if (majors.size() < 3) {
    std::vector<Tick> linear;
    for (const Tick& t : linear_ticks(lo, hi, false)) {
      if (t.value > 0) linear.push_back(t);
    }
    if (linear.size() > majors.size()) return linear;
  }
  for (double v : majors) ticks.push_back(tick_label(v));
  for (double v : log_values(lo, hi, {1, 2, 3, 4, 5, 6, 7, 8, 9})) {
    if (std::none_of(majors.begin(), majors.end(),
                     [&](double m) { return std::abs(m - v) <= kEps * v; })) {
      minor(v);
    }
  }
  return ticks;
}

}  // namespace

Tick tick_label(double value) {
  Tick t;
  t.value = value;
  const double a = std::abs(value);
  if (a == 0 || (a >= 1e-3 && a < 1e5)) {
    t.label = fixed(value, 4);
    return t;
  }
  int e = static_cast<int>(std::floor(std::log10(a)));
  double m = value / std::pow(10.0, e);
  if (std::abs(std::abs(m) - 10) < 1e-9) {  // rounding put the mantissa at 10
    m /= 10;
    ++e;
  }
  t.exponent = with_minus(std::to_string(e));
  if (std::abs(m - 1) < 1e-9) {
    t.label = "10";
  } else if (std::abs(m + 1) < 1e-9) {
    t.label = "\u221210";
  } else {
    t.label = fixed(m, 3) + "\u00d710";
  }
  return t;
}

std::vector<Tick> axis_ticks(double lo, double hi, bool log, bool integer) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (log) return lo > 0 ? log_ticks(lo, hi) : std::vector<Tick>{};
  return linear_ticks(lo, hi, integer);
}

}  // namespace normlab::svg
