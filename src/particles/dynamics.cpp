#include "normlab/particles/dynamics.hpp"

#include "normlab/particles/speed_law.hpp"

#include "core/kernels/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "particles/kernels.hpp"
#include "particles/products.hpp"
#include "particles/schur.hpp"

namespace normlab::particles {

namespace {

// x[i] *= s for i < count.
void scale(double* x, size_t count, double s) {
  for (size_t i = 0; i < count; ++i) x[i] *= s;
}

// In place: each row of g (n, n) becomes the softmax of the row; causal: of its entries k ≤ j,
// the others set to 0.
void softmax_rows(double* g, int n_cols, bool causal) {
  using kernels::kLanes;
  for (int j = 0; j < n_cols; ++j) {
    double* row = g + static_cast<size_t>(j) * n_cols;
    const int n = causal ? j + 1 : n_cols;
    for (int k = n; k < n_cols; ++k) row[k] = 0.0;
    double max = row[0];
    for (int k = 1; k < n; ++k) max = row[k] > max ? row[k] : max;
    double part[kLanes] = {};
    int k = 0;
    for (; k + kLanes <= n; k += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        row[k + l] = kernels::exp_nonpositive(row[k + l] - max);
        part[l] += row[k + l];
      }
    }
    for (int l = 0; k < n; ++k, ++l) {
      row[k] = kernels::exp_nonpositive(row[k] - max);
      part[l] += row[k];
    }
    double sum = 0;
    for (int l = 0; l < kLanes; ++l) sum += part[l];
    const double inv = 1.0 / sum;
    for (k = 0; k < n; ++k) row[k] *= inv;
  }
}

}  // namespace

ParticleSystem::ParticleSystem(const ParticlesConfig& config, Weights weights,
                               bool fast_coordinates)
    : ParticleSystem(config, LayerWeights::tied(std::move(weights)), fast_coordinates) {}

ParticleSystem::ParticleSystem(const ParticlesConfig& config, LayerWeights layers,
                               bool fast_coordinates)
    : config_(config),
      layers_(std::move(layers)),
      n_(config.n),
      d_(config.d),
      dim_(config.d),
      fast_(fast_coordinates) {
  // The products below are normlab's own (core/kernels/gemm.hpp): the same bits on every
  // x86-64 CPU and at any core count, and at the CPU's speed whether or not OpenBLAS knows it.
  const int d = d_;
  const size_t nd = static_cast<size_t>(n_) * d;
  const size_t dd = static_cast<size_t>(d) * d;
  g_.resize(static_cast<size_t>(n_) * n_);
  a_.resize(nd);
  if (config_.scheme == SpeedLaw::mix) breaks_.push_back(config_.tau);
  if (layers_.per_layer()) {
    for (double k = 1; k < config_.t_end; k += 1) breaks_.push_back(k);
  }
  std::sort(breaks_.begin(), breaks_.end());
  breaks_.erase(std::unique(breaks_.begin(), breaks_.end()), breaks_.end());
  loaded_layer_ = -1;
  load_layer(0);
  if (weights_.identity) return;
  z_.resize(nd);
  u_.resize(nd);
  if (config_.rope_base > 0) {
    // Angle of token j (position j) for pair p: j · base^(−2p / dh), as src/core/kernels/rope.hpp.
    const int half = config_.rope_head_dim / 2;
    k_.resize(nd);
    rope_cos_.resize(static_cast<size_t>(n_) * half);
    rope_sin_.resize(static_cast<size_t>(n_) * half);
    for (int j = 0; j < n_; ++j) {
      for (int p = 0; p < half; ++p) {
        const double angle = j * std::pow(config_.rope_base, -2.0 * p / config_.rope_head_dim);
        rope_cos_[static_cast<size_t>(j) * half + p] = std::cos(angle);
        rope_sin_[static_cast<size_t>(j) * half + p] = std::sin(angle);
      }
    }
  }
  // Per-layer weights with t_end ≤ 1 never leave layer 0 (no integer breakpoint inside the
  // run): the tied dynamics, so the Schur coordinates of layer 0's V apply.
  const bool one_layer = !layers_.per_layer() || config_.t_end <= 1.0;
  schur_ = fast_ && one_layer && weights_.heads.size() == 1 && config_.rope_base == 0;
  if (!schur_) return;
  RealSchur schur = real_schur(weights_.heads[0].v, d);
  rotation_ = std::move(schur.o);
  // M̃ = Oᵀ M O.
  std::vector<double> tmp(dd);
  gemm(true, false, d, d, d, rotation_.data(), d, qk_[0].data(), d, false, tmp.data(), d);
  gemm(false, false, d, d, d, tmp.data(), d, rotation_.data(), d, false, qk_[0].data(), d);
  t_upper_ = std::move(schur.t);
  t_sub_.assign(static_cast<size_t>(d - 1), 0.0);
  for (int i = 0; i + 1 < d; ++i) {
    double& below = t_upper_[static_cast<size_t>(i + 1) * d + i];
    t_sub_[i] = below;
    if (below != 0.0) t_sub_index_.push_back(i);
    below = 0.0;
  }
}

void ParticleSystem::load_layer(int k) {
  if (k == loaded_layer_) return;
  if (schur_) throw std::logic_error("ParticleSystem: Schur coordinates hold layer 0 only");
  loaded_layer_ = k;
  weights_ = layers_.layer(k);
  qk_.clear();
  const int d = d_;
  for (const HeadWeights& head : weights_.heads) {
    // M = Qᵀ K, so that ⟨Q θ_j, K θ_k⟩ = θ_jᵀ M θ_k.
    std::vector<double> m(static_cast<size_t>(d) * d);
    gemm(true, false, d, d, d, head.q.data(), d, head.k.data(), d, false, m.data(), d);
    qk_.push_back(std::move(m));
  }
}

std::vector<double> ParticleSystem::breakpoints() const {
  return breaks_;
}

std::vector<double> ParticleSystem::initial_state(const std::vector<double>& theta) {
  span_ = false;
  dim_ = d_;
  if (fast_ && weights_.identity && d_ > n_) {
    // Orthonormal basis of the rows' span: Gram–Schmidt, each row orthogonalized twice; a row
    // whose remainder is below 1e-13 already lies in the span and adds nothing.
    std::vector<double> basis;
    std::vector<double> row(static_cast<size_t>(d_));
    int r = 0;
    for (int j = 0; j < n_; ++j) {
      std::copy(theta.begin() + static_cast<std::ptrdiff_t>(j) * d_,
                theta.begin() + static_cast<std::ptrdiff_t>(j + 1) * d_, row.begin());
      const double norm0 = std::sqrt(kernels::dot(row.data(), row.data(), d_));
      for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < r; ++k) {
          const double* b = &basis[static_cast<size_t>(k) * d_];
          const double proj = kernels::dot(row.data(), b, d_);
          for (int i = 0; i < d_; ++i) row[i] -= proj * b[i];
        }
      }
      const double norm = std::sqrt(kernels::dot(row.data(), row.data(), d_));
      if (norm <= 1e-13 * norm0) continue;
      for (double& x : row) x /= norm;
      basis.insert(basis.end(), row.begin(), row.end());
      ++r;
    }
    basis_ = std::move(basis);
    dim_ = r;
    span_ = true;
    a_.assign(static_cast<size_t>(n_) * dim_, 0.0);
  }
  std::vector<double> y(size());
  if (span_) {
    // Θ̃ = Θ Bᵀ (n, r).
    gemm(false, true, n_, dim_, d_, theta.data(), d_, basis_.data(), d_, false, y.data(), dim_);
    project(y.data());
  } else if (schur_) {
    // Θ̃ = Θ O (row j = (Oᵀ θ_j)ᵀ).
    gemm(false, false, n_, d_, d_, theta.data(), d_, rotation_.data(), d_, false, y.data(), d_);
    project(y.data());
  } else {
    std::copy(theta.begin(), theta.end(), y.begin());
  }
  std::fill(y.begin() + static_cast<std::ptrdiff_t>(n_) * dim_, y.end(), config_.r0);
  return y;
}

std::vector<double> ParticleSystem::to_original(const std::vector<double>& y) const {
  if (span_) {
    // Θ = Θ̃ B.
    std::vector<double> out(static_cast<size_t>(n_) * d_ + n_);
    gemm(false, false, n_, d_, dim_, y.data(), dim_, basis_.data(), d_, false, out.data(), d_);
    std::copy(y.begin() + static_cast<std::ptrdiff_t>(n_) * dim_, y.end(),
              out.begin() + static_cast<std::ptrdiff_t>(n_) * d_);
    return out;
  }
  if (!schur_) return y;
  std::vector<double> out(y);
  // Θ = Θ̃ Oᵀ.
  gemm(false, true, n_, d_, d_, y.data(), d_, rotation_.data(), d_, false, out.data(), d_);
  return out;
}

// Rows of x (n, d): row j's pairs (2p, 2p+1) of every block of rope_head_dim features rotated
// by token j's angle: (x0, x1) → (x0 cos − x1 sin, x0 sin + x1 cos).
void ParticleSystem::rotate_by_position(double* x) const {
  const int dh = config_.rope_head_dim, half = dh / 2;
  for (int j = 0; j < n_; ++j) {
    double* row = x + static_cast<size_t>(j) * d_;
    const double* cs = &rope_cos_[static_cast<size_t>(j) * half];
    const double* sn = &rope_sin_[static_cast<size_t>(j) * half];
    for (int block = 0; block < d_; block += dh) {
      for (int p = 0; p < half; ++p) {
        const double x0 = row[block + 2 * p], x1 = row[block + 2 * p + 1];
        row[block + 2 * p] = x0 * cs[p] - x1 * sn[p];
        row[block + 2 * p + 1] = x0 * sn[p] + x1 * cs[p];
      }
    }
  }
}

void ParticleSystem::project(double* y) const {
  for (int j = 0; j < n_; ++j) {
    double* row = y + static_cast<size_t>(j) * dim_;
    const double inv = 1.0 / std::sqrt(kernels::dot(row, row, dim_));
    for (int i = 0; i < dim_; ++i) row[i] *= inv;
  }
}

void ParticleSystem::rhs(double t, int segment, const double* y, double* dy) {
  const int n = n_, d = dim_;
  const double* theta = y;  // (n, d)
  const double* r = y + static_cast<size_t>(n) * d;
  double* dtheta = dy;
  double* dr = dy + static_cast<size_t>(n) * d;
  const double beta = config_.beta;
  double* g = g_.data();
  double* a = a_.data();
  const double start = segment_start(segment);
  if (layers_.per_layer()) load_layer(static_cast<int>(std::floor(start)));
  const bool causal = config_.causal;

  if (weights_.identity) {
    // G = β Θ Θᵀ; W = softmax; A = W Θ.
    gram(theta, n, d, g);
    scale(g, static_cast<size_t>(n) * n, beta);
    softmax_rows(g, n, causal);
    gemm(false, false, n, d, n, g, n, theta, d, false, a, d);
  } else {
    const int heads = static_cast<int>(weights_.heads.size());
    const double mix = 1.0 / heads;
    for (int h = 0; h < heads; ++h) {
      if (config_.rope_base > 0) {
        // RoPE: Z = Θ Qᵀ, K = Θ Kᵀ (n, d), row j rotated by position j; G = β Z Kᵀ (n, n).
        const HeadWeights& head = weights_.heads[h];
        gemm(false, true, n, d, d, theta, d, head.q.data(), d, false, z_.data(), d);
        gemm(false, true, n, d, d, theta, d, head.k.data(), d, false, k_.data(), d);
        rotate_by_position(z_.data());
        rotate_by_position(k_.data());
        gemm(false, true, n, n, d, z_.data(), d, k_.data(), d, false, g, n);
      } else {
        // Z = Θ M (n, d); G = β Z Θᵀ (n, n).
        gemm(false, false, n, d, d, theta, d, qk_[h].data(), d, false, z_.data(), d);
        gemm(false, true, n, n, d, z_.data(), d, theta, d, false, g, n);
      }
      scale(g, static_cast<size_t>(n) * n, beta);
      // U = Θ Vᵀ (n, d); A += (1/H) W U, with the 1/H on W.
      softmax_rows(g, n, causal);
      if (heads > 1) scale(g, static_cast<size_t>(n) * n, mix);
      if (schur_) {
        // U = Θ̃ Tᵀ: the upper triangle, then the subdiagonal entries.
        times_upper_transposed(theta, t_upper_.data(), n, d, u_.data());
        for (int k = 0; k < n; ++k) {
          const double* th = theta + static_cast<size_t>(k) * d;
          double* uk = u_.data() + static_cast<size_t>(k) * d;
          for (int i : t_sub_index_) uk[i + 1] += t_sub_[i] * th[i];
        }
      } else {
        gemm(false, true, n, d, d, theta, d, weights_.heads[h].v.data(), d, false, u_.data(), d);
      }
      gemm(false, false, n, d, n, g, n, u_.data(), d, h > 0, a, d);
    }
  }

  // Speed factor and radial law per token.
  SpeedLaw law = config_.scheme;
  // mix(τ): the post law in segments that start before τ (segment 0 when τ > 0), pre after.
  if (law == SpeedLaw::mix)
    law = segment > 0 && start >= config_.tau ? SpeedLaw::pre : SpeedLaw::post;
  const SpeedLawRow& row = speed_law_row(law);
  for (int j = 0; j < n; ++j) {
    const double* th = theta + static_cast<size_t>(j) * d;
    const double* aj = a + static_cast<size_t>(j) * d;
    double* out = dtheta + static_cast<size_t>(j) * d;
    const double dot = kernels::dot(th, aj, d);
    const double norm2 = kernels::dot(aj, aj, d);
    const TokenSpeed speed = row.speed(
        {.r = r[j], .dot = dot, .norm = std::sqrt(norm2), .t = t, .alpha = config_.alpha});
    for (int i = 0; i < d; ++i) out[i] = speed.inv_s * (aj[i] - dot * th[i]);
    dr[j] = speed.radial;
  }
}

}  // namespace normlab::particles
