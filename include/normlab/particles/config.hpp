// Configuration of one particle-dynamics simulation (docs/particles.md, "normalized attention"
// dynamics): n tokens x_j = r_j θ_j with θ_j on the unit sphere S^{d-1}, moving by
//
//     dθ_j/dt = P_{θ_j}(A_j) / s_j(t),   A_j = Σ_k softmax_k(β ⟨Q θ_j, K θ_k⟩) V θ_k,
//
// where the normalization scheme fixes the speed factor s_j and the radial law dr_j/dt.
// One struct holds every knob; validate() rejects invalid values with one clear message
// (UsageError, exit code 2). The command line (`normlab particles`) and the study files
// (`normlab run`) both fill this struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab {
class TomlSection;
}

namespace normlab::particles {

// Normalization scheme = speed regulator (docs/particles.md, "The system").
enum class SpeedLaw { post, pre, mix, peri, ngpt, sqrt_scaling };
// Initial directions θ_j(0).
enum class InitKind { symmetric, random, cone, file };
// Source of the per-head matrices Q, K, V (each d × d).
enum class QkvKind { identity, kaiming, gaussian, file };
enum class IntegratorKind { rk4, dopri5 };
// Whether Q, K, V change with depth. A randomly initialized deep transformer draws each layer's
// matrices afresh: layer k (the unit of depth t ∈ [k, k+1)) has its own Q_k, K_k, V_k.
//   automatic  per_layer for kaiming and gaussian, tied for identity and file
//   per_layer  layer k = floor(t) uses its own matrices (random: drawn from a stream derived from
//              the seed and k; file: shape (layers, heads, 3, d, d)); steps stop at every integer
//   tied       one Q, K, V for all t (the weight-tied dynamics of the paper's theory)
enum class QkvDepth { automatic, per_layer, tied };

struct ParticlesConfig {
  SpeedLaw scheme = SpeedLaw::post;     // speed factor s_j(t) and radial law dr_j/dt
  InitKind init = InitKind::symmetric;  // how θ_j(0) is drawn
  int n = 32;                           // number of tokens (particles), ≥ 2
  int d = 32;                           // dimension of the sphere's ambient space, ≥ 2
  double beta = 1.0;                    // inverse temperature β > 0 of the softmax
  double dt = 0.01;                     // RK4: fixed step; dopri5: first trial step. > 0
  double t_end = 10.0;                  // final time (depth), > 0
  double tau = 1.0;                 // mix(τ): post-norm speed for t ≤ τ, pre-norm after. ≥ 0
  double alpha = 1.0;               // ngpt(α): constant step scale α_t = α > 0
  double r0 = 1.0;                  // initial radius of every token, > 0
  double delta = 0.5;               // cone: half-angle in radians, 0 < δ ≤ π
  uint64_t seed = 0;                // seeds the initial state and the random Q, K, V
  QkvKind qkv = QkvKind::identity;  // Q = K = V = I, random, or read from qkv_file
  std::string qkv_file;             // text array of shape (heads, 3, d, d): Q, K, V per head
  int heads = 1;                    // number of heads; A_j is the mean of the heads' mixtures
  QkvDepth qkv_depth = QkvDepth::automatic;  // per-layer or depth-tied Q, K, V (see QkvDepth)
  bool causal = false;  // token j attends only to tokens k ≤ j (a causal mask), else to all
  // Rotary positions (RoPE, docs/particles.md "Bridge"): with rope_base > 0, token j sits at
  // position j and Q θ_j, K θ_j are rotated by it, pairs (2p, 2p+1) of each block of
  // rope_head_dim features by angle j · rope_base^(−2p/rope_head_dim), as the model's attention
  // does. 0: no positions (the paper's ODE).
  double rope_base = 0;
  int rope_head_dim = 0;  // the head dimension the pairs live in (even, divides d)
  std::string init_file;  // text array of shape (n, d): initial directions
  IntegratorKind integrator = IntegratorKind::rk4;
  double rtol = 1e-9;         // dopri5 relative tolerance, > 0
  double atol = 1e-12;        // dopri5 absolute tolerance, > 0
  double record_every = 0.1;  // time between recorded rows (observables), > 0
};

// Names as written on the command line and in experiment files.
const std::vector<std::string>& speed_law_names();
const std::vector<std::string>& init_names();
const std::vector<std::string>& qkv_names();
const std::vector<std::string>& integrator_names();
const std::vector<std::string>& qkv_depth_names();  // "auto", "per_layer", "tied"

std::string to_string(SpeedLaw s);
std::string to_string(InitKind k);
std::string to_string(QkvKind k);
std::string to_string(IntegratorKind k);
std::string to_string(QkvDepth k);

// Parse a name; throws UsageError listing the allowed names.
SpeedLaw parse_speed_law(const std::string& name);
InitKind parse_init(const std::string& name);
QkvKind parse_qkv(const std::string& name);
IntegratorKind parse_integrator(const std::string& name);
QkvDepth parse_qkv_depth(const std::string& name);

// per_layer or tied: `automatic` resolved by the Q/K/V source (per_layer for kaiming and
// gaussian, tied for identity and file).
QkvDepth resolved_qkv_depth(const ParticlesConfig& config);
// True when layer k = floor(t) has its own Q, K, V (and steps stop at every integer time).
inline bool per_layer_qkv(const ParticlesConfig& config) {
  return resolved_qkv_depth(config) == QkvDepth::per_layer;
}

// Throws UsageError with one line naming the option, its value and what is allowed.
void validate(const ParticlesConfig& config);

// Overwrites the fields whose keys appear in `section` (same names as the command-line options,
// with '_' for '-': scheme, init, n, d, beta, dt, t_end, tau, alpha, r0, delta, seed, qkv,
// qkv_file, qkv_depth, heads, causal, init_file, integrator, rtol, atol, record_every). Absent keys
// keep their current value. Does not call finish(): the caller may read further keys first.
void read_config_keys(TomlSection& section, ParticlesConfig& config);

// One line per field, "key = value", for printing at the start of a run and storing with results.
std::string describe(const ParticlesConfig& config);

// True when the whole system reduces to the scalar ODE of docs/particles.md: symmetric
// initialization with Q = K = V = I.
inline bool has_scalar_reduction(const ParticlesConfig& c) {
  return c.init == InitKind::symmetric && c.qkv == QkvKind::identity;
}

}  // namespace normlab::particles
