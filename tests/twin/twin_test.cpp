// Cross-check against the PyTorch twin (python/normlab/twin.py, docs/twin.md).
//
// For every scheme and a spread of norm kinds and options: `normlab init` writes a checkpoint,
// `normlab grads` writes normlab's logits, loss and every parameter gradient on a random batch,
// in float32 and (--double) in float64 from the same checkpoint, and `twin.py --check`
// recomputes them with PyTorch autograd from the checkpoint alone. The case passes iff every
// tensor of both files is within the bound of docs/twin.md ("The bound"): normlab's error
// against the twin in float64 at most sqrt(K) times PyTorch's own float32 error plus eps32 of the
// tensor's magnitude, K the roundings that accumulate into one of its elements, and the same
// scaled by eps64 / eps32 for the float64 file (which checks that the two compute the same
// function). Without python3-torch the cases are skipped, visibly.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "model/hyper_params.hpp"
#include "normlab/model/checkpoint.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;

// Debian's python3-torch is installed for the system interpreter only; the python3 first on
// PATH may be another one without torch.
constexpr const char* kPython = "/usr/bin/python3";

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult run(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string twin_script() {
  return (fs::path(NORMLAB_SOURCE_DIR) / "python" / "normlab" / "twin.py").string();
}

// twin.py exits with 77 when /usr/bin/python3 cannot import torch (and the shell with 127 when
// there is no /usr/bin/python3): the cross-check cannot run, and the test says so.
constexpr int kExitNoTorch = 77;
constexpr int kExitNoPython = 127;

#define SKIP_IF_NO_TORCH(result)                                                         \
  if ((result).exit_code == kExitNoTorch || (result).exit_code == kExitNoPython) {       \
    GTEST_SKIP() << "python3-torch is absent: " << kPython                               \
                 << " cannot import torch, so the PyTorch twin cross-check did not run " \
                 << "(install Debian's python3-torch). " << (result).output;             \
  }

// A scratch directory under the test temp dir, removed when the test ends.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(fs::path(::testing::TempDir()) /
              ("normlab_twin_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs `normlab init`, optionally `normlab train-steps` with train_args (into ckpt; the initial
// checkpoint goes to ckpt + ".init"), then `normlab grads` into grads and `normlab grads
// --double` into grads + ".f64"; returns "" or the failing command's output.
// With move_hyper, hyper-connections' weights are then moved off their inits
// (tests/model/hyper_params.hpp) and the checkpoint rewritten before `grads`.
std::string make_checkpoint_and_grads(const std::string& init_args, uint64_t init_seed,
                                      const fs::path& ckpt, const fs::path& grads, int batch,
                                      int len, uint64_t batch_seed,
                                      const std::string& train_args = "", bool move_hyper = false) {
  const std::string bin = quote(NORMLAB_BINARY);
  const fs::path first = train_args.empty() ? ckpt : fs::path(ckpt.string() + ".init");
  const CommandResult init = run(bin + " init " + init_args + " --seed " +
                                 std::to_string(init_seed) + " --out " + quote(first.string()));
  if (init.exit_code != 0) return "normlab init " + init_args + " failed:\n" + init.output;
  if (!train_args.empty()) {
    const CommandResult t = run(bin + " train-steps --checkpoint " + quote(first.string()) +
                                " --out " + quote(ckpt.string()) + " --seed 3 " + train_args);
    if (t.exit_code != 0) return "normlab train-steps " + train_args + " failed:\n" + t.output;
  }
  if (move_hyper) {
    std::unique_ptr<Model<float>> m = load_checkpoint(ckpt);
    randomize_hyper(*m, 23);
    save_checkpoint(ckpt, *m);
  }
  const std::string grads_args = " grads --checkpoint " + quote(ckpt.string()) + " --batch " +
                                 std::to_string(batch) + " --seq-len " + std::to_string(len) +
                                 " --seed " + std::to_string(batch_seed);
  const CommandResult g = run(bin + grads_args + " --out " + quote(grads.string()));
  if (g.exit_code != 0) return "normlab grads failed:\n" + g.output;
  const CommandResult g64 =
      run(bin + grads_args + " --double --out " + quote(grads.string() + ".f64"));
  if (g64.exit_code != 0) return "normlab grads --double failed:\n" + g64.output;
  return "";
}

// The twin on normlab's float32 and float64 files of one checkpoint.
CommandResult twin_check(const fs::path& ckpt, const fs::path& grads) {
  return run(std::string(kPython) + " " + quote(twin_script()) + " --check " +
             quote(ckpt.string()) + " " + quote(grads.string()) + " " + quote(ckpt.string()) + " " +
             quote(grads.string() + ".f64"));
}

// The "worst:" lines of the twin's output, for the log.
void print_worst(const std::string& name, const std::string& output) {
  for (size_t at = output.find("worst:"); at != std::string::npos;
       at = output.find("worst:", at + 1)) {
    std::printf("%s: %s\n", name.c_str(), output.substr(at, output.find('\n', at) - at).c_str());
  }
}

struct TwinCase {
  const char* name;
  const char* init_args;        // `normlab init` options
  const char* train_args = "";  // `normlab train-steps` options, run before `grads` when set
  bool move_hyper = false;      // hyper-connections' weights moved off their inits first
};

// AttnRes's pseudo-queries start at zero (uniform mixtures, no gain gradient); 20 small AdamW
// steps move them (|w_d| ≤ 0.1) so that the mixtures are not uniform and the key gains get
// gradients, without moving the other weights so far that attention saturates.
constexpr const char* kAttnResSteps = "--steps 20 --lr 0.005";

// The scalars of dyt and derf start at α = 0.5 and s = 0 and every gain at 1, where a formula
// that confuses α·(x + s) with α·x + s, or drops a gain, gives the right logits (only one
// gradient differs); 20 AdamW steps move them all.
constexpr const char* kMoveScalars = "--steps 20 --lr 0.01";

// Every scheme at least once; every norm kind; rope, ALiBi, relative, sinusoidal and learned
// positions; tied;
// bidirectional; relu; 2- and 3-layer models with MLP; several heads. Most use init std 0.3
// so that attention is far from uniform; a few keep the default 0.02 or less, where activations
// are small enough that the placement of eps inside the square root changes the numbers (for
// l2, whose sum of squares is D times larger, that takes init std 0.005).
const TwinCase kTwinCases[] = {
    {"pre_rmsnorm_rope_heads2",
     "--scheme pre --norm rmsnorm --pos rope --width 16 --heads 2 "
     "--layers 2 --init-std 0.3"},
    {"pre_rmsnorm_alibi_heads2",
     "--scheme pre --norm rmsnorm --pos alibi --width 16 --heads 2 --init-std 0.3"},
    {"post_layernorm_alibi_bidirectional_heads3",
     "--scheme post --norm layernorm --pos alibi --bidirectional --width 12 --heads 3 "
     "--init-std 0.3"},
    {"pre_rmsnorm_relative_heads2",
     "--scheme pre --norm rmsnorm --pos relative --width 16 --heads 2 --init-std 0.3"},
    {"post_layernorm_relative_bidirectional_heads3",
     "--scheme post --norm layernorm --pos relative --bidirectional --width 12 --heads 3 "
     "--init-std 0.3"},
    {"post_layernorm_sinusoid_from_end_bidirectional",
     "--scheme post --norm layernorm --pos sinusoidal --sinusoid-from-end --bidirectional "
     "--init-std 0.3"},
    {"post_layernorm_embed_scale_sinusoidal_bidirectional",
     "--scheme post --norm layernorm --embed-scale 4 --pos sinusoidal --bidirectional "
     "--init-std 0.3"},
    {"pre_none", "--scheme pre --norm none --init-std 0.2"},
    {"pre_l2_tied", "--scheme pre --norm l2 --tied --init-std 0.005"},
    {"pre_layernorm_embednorm_beta", "--scheme pre --norm layernorm --embed-norm --beta 2.5"},
    {"post_layernorm_sinusoidal", "--scheme post --norm layernorm --pos sinusoidal --init-std 0.3"},
    {"post_rmsnorm_minimal",
     "--scheme post --norm rmsnorm --vocab 16 --width 15 --layers 1 "
     "--no-mlp"},
    {"post_rmsnorm_finalnorm",
     "--scheme post --norm rmsnorm --final-norm --no-scaled-init "
     "--init-std 0.3"},
    {"peri_standardize_learned",
     "--scheme peri --norm standardize --pos learned --max-len 16 "
     "--init-std 0.3"},
    {"peri_init_rmsnorm_heads4",
     "--scheme peri_init --norm rmsnorm --width 16 --heads 4 "
     "--init-std 0.3"},
    {"post_attn_standardize", "--scheme post_attn --norm standardize --init-std 0.3"},
    {"post_attn_layernorm_bidirectional_rope",
     "--scheme post_attn --norm layernorm "
     "--bidirectional --pos rope --width 16 --heads 4 "
     "--init-std 0.3"},
    {"mix2_layernorm_relu",
     "--scheme mix --mix-layers 2 --layers 3 --norm layernorm "
     "--activation relu --init-std 0.3"},
    {"ngpt_l2_tied", "--scheme ngpt --norm l2 --tied --init-std 0.3"},
    {"ngpt_rmsnorm_rope", "--scheme ngpt --norm rmsnorm --pos rope --heads 2 --init-std 0.3"},
    {"sqrt_scaling_rmsnorm", "--scheme sqrt_scaling --norm rmsnorm --layers 3 --init-std 0.3"},
    {"sqrt_scaling_layernorm_default_init", "--scheme sqrt_scaling --norm layernorm --layers 2"},
    {"deepnorm_layernorm", "--scheme deepnorm --norm layernorm --layers 2 --init-std 0.3"},
    {"attnres_layernorm_at_init", "--scheme attnres --norm layernorm --layers 2"},
    {"attnres_rmsnorm_rope_heads2",
     "--scheme attnres --norm rmsnorm --pos rope --width 16 --heads 2 --layers 3 "
     "--init-std 0.3",
     kAttnResSteps},
    {"block_attnres1_l2_tied",
     "--scheme block_attnres --block-size 1 --norm l2 --tied --init-std 0.3", kAttnResSteps},
    {"block_attnres2_layernorm_learned",
     "--scheme block_attnres --block-size 2 --norm layernorm --pos learned --max-len 16 "
     "--layers 3 --init-std 0.3",
     kAttnResSteps},
    {"block_attnres2_bidirectional_relu",
     "--scheme block_attnres --block-size 2 --norm rmsnorm --bidirectional --activation relu "
     "--init-std 0.3",
     kAttnResSteps},
    // Deep enough for several backward chunks (res_mix.cpp: 8 points, blocks of 2: 13 points).
    {"block_attnres2_rmsnorm_layers6_chunks",
     "--scheme block_attnres --block-size 2 --norm rmsnorm --layers 6 --init-std 0.3",
     kAttnResSteps},
    {"block_attnres3_standardize_nomlp",
     "--scheme block_attnres --block-size 3 --norm standardize --layers 4 --no-mlp "
     "--init-std 0.3",
     kAttnResSteps},
    // Placement overrides (docs/schemes.md): the vanishing-variance baseline and proposals,
    // slots of mixed kinds, and an override on a residual-scaled and an AttnRes scheme.
    {"placement_vv_proposal_layernorm",
     "--scheme post --norm layernorm --attn-norms out --layers 1 --init-std 0.3"},
    {"placement_vv_ablation_standardize",
     "--scheme post --norm layernorm --attn-norms out:standardize --layers 1 --init-std 0.3"},
    {"placement_pre_mixed_kinds",
     "--scheme pre --norm rmsnorm --attn-norms in+out+post:layernorm --mlp-norms "
     "in:l2+post --init-std 0.3"},
    {"placement_sqrt_scaling_post_mlp_none",
     "--scheme sqrt_scaling --norm layernorm --attn-norms post --mlp-norms none --layers 3 "
     "--init-std 0.3"},
    {"placement_block_attnres_out",
     "--scheme block_attnres --block-size 2 --norm rmsnorm "
     "--attn-norms in+out:standardize --layers 2 --init-std 0.3",
     kAttnResSteps},
    // The rows added with the placement language, and written placements (docs/schemes.md).
    {"sandwich_layernorm", "--scheme sandwich --norm layernorm --layers 2 --init-std 0.3"},
    {"pre_and_post_rmsnorm", "--scheme pre_and_post --norm rmsnorm --layers 2 --init-std 0.3"},
    {"reordered_layernorm_rope",
     "--scheme reordered --norm layernorm --pos rope --heads 2 --layers 2 --init-std 0.3"},
    {"layernorm_scaling_rmsnorm",
     "--scheme layernorm_scaling --norm rmsnorm --layers 3 --init-std 0.3"},
    {"layerscale_layernorm_trained",
     "--scheme layerscale --norm layernorm --layers 2 --init-std 0.3", kAttnResSteps},
    // ReZero's factors start at 0: a few steps give its branches a gradient.
    {"rezero_trained", "--scheme rezero --layers 2 --init-std 0.3", kAttnResSteps},
    {"custom_every_setting",
     "--scheme custom --norm rmsnorm --layers 3 --init-std 0.3 --placement "
     "'all: in+post:layernorm, residual=scalar(0.9), branch=vector(0.5), input=1/sqrt(l+1); "
     "attn[1:]: out:standardize; final: on; embed: on'"},
    {"mix_with_layer_ranges",
     "--scheme mix --mix-layers 1 --norm layernorm --layers 3 --init-std 0.3 --placement "
     "'mlp[1:3]: in+out, branch=1/sqrt(l+1); attn[0:1]: post, residual=0.5'"},
    {"block_attnres4_rmsnorm_embednorm_sinusoidal_heads2",
     "--scheme block_attnres --block-size 4 --norm rmsnorm --embed-norm --pos sinusoidal "
     "--layers 3 --width 16 --heads 2 --init-std 0.3",
     kAttnResSteps},
    // The norm kinds with scalar parameters (dyt, derf, scalenorm): as the model's norm under
    // several schemes, at init and after steps that move their scalars, and on placement
    // slots. scalenorm at init std 0.005, like l2, so that eps's place shows.
    {"pre_dyt", "--scheme pre --norm dyt --init-std 0.3"},
    {"post_derf_rope_heads2", "--scheme post --norm derf --pos rope --heads 2 --init-std 0.3"},
    // peri with scalenorm everywhere: the attention's input scale acts only through the softmax
    // temperature (the output norm cancels its value path), its gradient a near-cancelling sum.
    {"peri_scalenorm", "--scheme peri --norm scalenorm --init-std 0.3"},
    {"sqrt_scaling_scalenorm_learned",
     "--scheme sqrt_scaling --norm scalenorm --pos learned --max-len 16 --init-std 0.3"},
    {"pre_scalenorm_tied_small_init", "--scheme pre --norm scalenorm --tied --init-std 0.005"},
    {"peri_init_derf_trained", "--scheme peri_init --norm derf --layers 2 --init-std 0.3",
     kMoveScalars},
    {"post_dyt_finalnorm_trained", "--scheme post --norm dyt --final-norm --init-std 0.3",
     kMoveScalars},
    // ngpt with scalenorm: the next layer's attention normalizes q and k, its output norm
    // cancels the value path's scale and the interpolation reads N(h), so an MLP post-norm's
    // scale acts only through eps (a gradient of ~1e-10 of the others, rounding noise in
    // float32).
    {"ngpt_scalenorm", "--scheme ngpt --norm scalenorm --init-std 0.3"},
    {"ngpt_dyt_trained", "--scheme ngpt --norm dyt --init-std 0.3", kMoveScalars},
    // nGPT's scales (alpha, s_qk, s_uv, s_z) after steps; q/k normalized after RoPE; N(x) of
    // an embedding plus learned positions.
    {"ngpt_l2_rope_heads4_trained",
     "--scheme ngpt --norm l2 --pos rope --width 16 --heads 4 --init-std 0.3", kMoveScalars},
    {"ngpt_l2_learned_heads2_trained",
     "--scheme ngpt --norm l2 --pos learned --max-len 16 --heads 2 --init-std 0.3", kMoveScalars},
    {"block_attnres2_derf_trained",
     "--scheme block_attnres --block-size 2 --norm derf --layers 2 --init-std 0.3", kAttnResSteps},
    {"placement_post_attn_out_dyt_mlp_derf_scalenorm",
     "--scheme post --norm layernorm --attn-norms out:dyt --mlp-norms in:derf+post:scalenorm "
     "--init-std 0.3",
     kMoveScalars},
    // QK-norm (docs/schemes.md) on several schemes, before RoPE; trained cases move the l2
    // variant's per-head scales s_h (init 10) and the rmsnorm variant's gains (init 1).
    {"qk_l2_pre_rope_heads2_trained",
     "--scheme pre --qk-norm l2 --pos rope --width 16 --heads 2 --init-std 0.3", kMoveScalars},
    {"qk_rmsnorm_post_layernorm_learned_trained",
     "--scheme post --norm layernorm --qk-norm rmsnorm --pos learned --max-len 16 "
     "--init-std 0.3",
     kMoveScalars},
    {"qk_rmsnorm_peri_rope_heads4",
     "--scheme peri --qk-norm rmsnorm --pos rope --width 16 --heads 4 --init-std 0.3"},
    {"qk_l2_block_attnres2_trained",
     "--scheme block_attnres --block-size 2 --qk-norm l2 --layers 2 --init-std 0.3", kAttnResSteps},
    // QK-norm alone, and beta as a factor of the l2 logits (beta · s_h · q̂·k̂); at beta = 1 the
    // logits reach ±10 there and the second layer's s_h gets a gradient of ~1e-6 out of
    // cancelling terms, which float32 rounds to 3e-4 of itself.
    {"qk_l2_pre_none_bidirectional_beta",
     "--scheme pre --norm none --qk-norm l2 --bidirectional --beta 0.3 --init-std 0.2"},
    // HybridNorm: q, k and v normed per head with the model's kind, N after the attention's
    // add; HybridNorm* (a pre-norm first layer) as a placement. The kinds with a bias under
    // RoPE: without it the key norm's bias shifts each query's logits by one number, which the
    // softmax ignores, and its gradient is 0 (rounding noise on both sides).
    {"hybridnorm_rmsnorm_rope_heads2_trained",
     "--scheme hybridnorm --norm rmsnorm --pos rope --width 16 --heads 2 --init-std 0.3",
     kMoveScalars},
    {"hybridnorm_layernorm_rope_layers3_trained",
     "--scheme hybridnorm --norm layernorm --pos rope --width 16 --heads 2 --layers 3 "
     "--init-std 0.3",
     kMoveScalars},
    {"hybridnorm_derf_rope_trained", "--scheme hybridnorm --norm derf --pos rope --init-std 0.3",
     kMoveScalars},
    {"hybridnorm_star_rmsnorm",
     "--scheme hybridnorm --norm rmsnorm --layers 2 --init-std 0.3 --placement 'all[0:1]: in'"},
    // Value residual: the values every attention after the first reads, (V_n + V_1) / 2.
    {"resformer_rmsnorm_rope_layers3_trained",
     "--scheme resformer --norm rmsnorm --pos rope --width 16 --heads 2 --layers 3 "
     "--init-std 0.3",
     kMoveScalars},
    {"resformer_layernorm_qk_l2_nomlp",
     "--scheme resformer --norm layernorm --qk-norm l2 "
     "--no-mlp --layers 3 --init-std 0.3"},
    // The two-stream schemes under the norm kinds they allow; the twin writes their blocks out
    // from the papers (TWO_STREAMS), not from normlab's slots. "trained": the gains, biases and
    // scalars of their many norms moved off their inits. siamesenorm with scalenorm: its first
    // attention reads N_in(N_x(e) + N_y(e)), where N_y's scale acts only through eps (a gradient
    // of ~1e-11, rounding noise in float32).
    {"siamesenorm_scalenorm", "--scheme siamesenorm --norm scalenorm --init-std 0.3"},
    {"resi_dual_layernorm", "--scheme resi_dual --norm layernorm --layers 2 --init-std 0.3"},
    {"resi_dual_rmsnorm_rope_heads2_trained",
     "--scheme resi_dual --norm rmsnorm --pos rope --width 16 --heads 2 --init-std 0.3",
     kMoveScalars},
    {"resi_dual_standardize_learned_layers3",
     "--scheme resi_dual --norm standardize --pos learned --max-len 16 --layers 3 "
     "--init-std 0.3"},
    {"resi_dual_l2_tied", "--scheme resi_dual --norm l2 --tied --init-std 0.3"},
    {"resi_dual_dyt_trained", "--scheme resi_dual --norm dyt --init-std 0.3", kMoveScalars},
    {"resi_dual_derf_nomlp_trained", "--scheme resi_dual --norm derf --no-mlp --init-std 0.3",
     kMoveScalars},
    {"resi_dual_scalenorm_finalnorm_trained",
     "--scheme resi_dual --norm scalenorm --final-norm --init-std 0.3", kMoveScalars},
    {"siamesenorm_layernorm_trained", "--scheme siamesenorm --norm layernorm --init-std 0.3",
     kMoveScalars},
    {"siamesenorm_rmsnorm_rope_heads2_layers3",
     "--scheme siamesenorm --norm rmsnorm --pos rope --width 16 --heads 2 --layers 3 "
     "--init-std 0.3"},
    {"siamesenorm_standardize_embednorm",
     "--scheme siamesenorm --norm standardize --embed-norm --init-std 0.3"},
    {"siamesenorm_l2_tied_small_init", "--scheme siamesenorm --norm l2 --tied --init-std 0.005"},
    {"siamesenorm_dyt_sinusoidal_trained",
     "--scheme siamesenorm --norm dyt --pos sinusoidal --init-std 0.3", kMoveScalars},
    {"siamesenorm_derf_nomlp_trained",
     "--scheme siamesenorm --norm derf --no-mlp --layers 3 --init-std 0.3", kMoveScalars},
    // Hyper-connections, HC and mHC, each written out from its paper (hyper_streams in twin.py).
    // At init every stream holds the same values (each the embedding plus every earlier branch
    // output) and the dynamic projections are 0; AdamW steps keep the streams close (its steps
    // move every bias alike). "moved": every hyper-connection weight is moved off its init
    // (tests/model/hyper_params.hpp) before `grads`, so that the streams differ. mHC's first
    // sublayer reads n equal streams, so its H_res and H_pre act only through how far H_res's
    // rows sum from 1 and through the input norm's eps, and its last sublayer's H_res gradient
    // is analytically 0 (the streams are summed, and H_res's columns sum to 1): near-cancelling
    // sums whose rounding the bound measures through PyTorch's own error.
    {"hc_layernorm", "--scheme hyper_connections --norm layernorm --init-std 0.3"},
    {"hc_rmsnorm_rope_heads2_trained",
     "--scheme hyper_connections --norm rmsnorm --pos rope --width 16 --heads 2 --init-std 0.3",
     kMoveScalars},
    {"hc_streams2_dyt_layers3_trained",
     "--scheme hyper_connections --streams 2 --norm dyt --layers 3 --init-std 0.3", kMoveScalars},
    {"hc_streams3_scalenorm_nomlp_trained",
     "--scheme hyper_connections --streams 3 --norm scalenorm --no-mlp --init-std 0.3",
     kMoveScalars},
    {"hc_standardize_learned_moved",
     "--scheme hyper_connections --norm standardize --pos learned --max-len 16 --init-std 0.3", "",
     true},
    {"mhc_rmsnorm_moved", "--scheme hyper_connections --sinkhorn --norm rmsnorm --init-std 0.3", "",
     true},
    {"mhc_layernorm_learned_trained_moved",
     "--scheme hyper_connections --sinkhorn --norm layernorm --pos learned --max-len 16 "
     "--init-std 0.3",
     kMoveScalars, true},
    {"mhc_streams3_derf_layers3_trained_moved",
     "--scheme hyper_connections --sinkhorn --streams 3 --norm derf --layers 3 --init-std 0.3",
     kMoveScalars, true},
    {"mhc_streams2_standardize_tied_bidirectional_moved",
     "--scheme hyper_connections --sinkhorn --streams 2 --norm standardize --tied "
     "--bidirectional --init-std 0.3",
     "", true},
    {"mhc_l2_rope_heads2_moved",
     "--scheme hyper_connections --sinkhorn --norm l2 --pos rope --width 16 --heads 2 "
     "--init-std 0.3",
     "", true},
    // The MLP and readout biases (zero at init; "trained": AdamW steps move them): Delétang et
    // al.'s encoder (post-LN, relu, bidirectional, ALiBi), and nGPT, where they sit inside the
    // projections, before its scales s_uv and s_z.
    {"biases_post_layernorm_relu_alibi_bidirectional_trained",
     "--scheme post --norm layernorm --mlp-bias --readout-bias --activation relu --pos alibi "
     "--bidirectional --width 16 --heads 2 --init-std 0.3",
     kMoveScalars},
    {"biases_ngpt_l2_trained", "--scheme ngpt --norm l2 --mlp-bias --readout-bias --init-std 0.3",
     kMoveScalars},
};

void PrintTo(const TwinCase& c, std::ostream* os) {
  *os << c.name << " (normlab init " << c.init_args << ")";
  if (*c.train_args != '\0') *os << " (train-steps " << c.train_args << ")";
}

class TwinCrossCheck : public ::testing::TestWithParam<TwinCase> {};

TEST_P(TwinCrossCheck, LogitsAndGradientsMatchPyTorch) {
  const TwinCase& c = GetParam();
  ScratchDir dir(c.name);
  const fs::path ckpt = dir.path() / "ckpt", grads = dir.path() / "grads.safetensors";
  const std::string error =
      make_checkpoint_and_grads(c.init_args, 7, ckpt, grads, 3, 9, 11, c.train_args, c.move_hyper);
  ASSERT_EQ(error, "");
  const CommandResult r = twin_check(ckpt, grads);
  SKIP_IF_NO_TORCH(r);
  EXPECT_EQ(r.exit_code, 0) << "twin.py --check failed for normlab init " << c.init_args << ":\n"
                            << r.output;
  // The twin compared the logits, the loss and at least one gradient of both files, and said OK.
  EXPECT_NE(r.output.find("normlab in float32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("normlab in float64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  logits "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  grad.embed.weight "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2/2 pairs OK\nOK\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
  print_worst(c.name, r.output);
}

INSTANTIATE_TEST_SUITE_P(EverySchemeAndOption, TwinCrossCheck, ::testing::ValuesIn(kTwinCases),
                         [](const ::testing::TestParamInfo<TwinCase>& info) {
                           return std::string(info.param.name);
                         });

// The cases above have 27 rows and width 16, so their linear layers run in one row shard, most
// on the small kernels. Here 16 × 32 = 512 rows (two row shards) of width 64 put every linear
// layer on OpenBLAS with its weight gradient summed in two lanes (src/core/kernels/gemm.cpp),
// in the 10 training steps and in the gradients compared.
TEST(TwinCheck, WideModelOverTwoRowShardsMatchesPyTorch) {
  ScratchDir dir("wide");
  const fs::path ckpt = dir.path() / "ckpt", grads = dir.path() / "grads.safetensors";
  ASSERT_EQ(make_checkpoint_and_grads(
                "--scheme pre --norm rmsnorm --pos rope --width 64 --heads 4 --layers 2 "
                "--init-std 0.3",
                7, ckpt, grads, 16, 32, 11, "--steps 10 --lr 0.003 --batch 16 --seq-len 32"),
            "");
  const CommandResult r = twin_check(ckpt, grads);
  SKIP_IF_NO_TORCH(r);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  grad.embed.weight "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2/2 pairs OK\nOK\n"), std::string::npos) << r.output;
  print_worst("wide", r.output);
}

// The biases' gradients summed over two row shards (gemm.cpp, bias_backward): Delétang et al.'s
// encoder with its MLP and readout biases, 512 rows of width 64, trained 10 steps first so that
// the biases are not zero.
TEST(TwinCheck, WideModelWithBiasesOverTwoRowShardsMatchesPyTorch) {
  ScratchDir dir("wide_biases");
  const fs::path ckpt = dir.path() / "ckpt", grads = dir.path() / "grads.safetensors";
  ASSERT_EQ(make_checkpoint_and_grads(
                "--scheme post --norm layernorm --mlp-bias --readout-bias --activation relu "
                "--pos alibi --bidirectional --width 64 --heads 4 --layers 2 --init-std 0.3",
                7, ckpt, grads, 16, 32, 11, "--steps 10 --lr 0.003 --batch 16 --seq-len 32"),
            "");
  const CommandResult r = twin_check(ckpt, grads);
  SKIP_IF_NO_TORCH(r);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* tensor :
       {"  grad.layers.0.mlp.up.bias ", "  grad.layers.1.mlp.down.bias ", "  grad.unembed.bias "}) {
    EXPECT_NE(r.output.find(tensor), std::string::npos) << tensor << r.output;
  }
  EXPECT_NE(r.output.find("2/2 pairs OK\nOK\n"), std::string::npos) << r.output;
  print_worst("wide with biases", r.output);
}

// Negative control: the check must fail when the gradients come from a different model
// (same config, another init seed), so a twin that always printed OK would not pass.
TEST(TwinCheck, FailsOnGradientsOfAnotherModel) {
  ScratchDir dir("mismatch");
  const fs::path a = dir.path() / "a", b = dir.path() / "b";
  const fs::path grads = dir.path() / "grads_a.safetensors";
  const std::string args = "--scheme pre --norm rmsnorm --layers 1 --init-std 0.3";
  ASSERT_EQ(make_checkpoint_and_grads(args, 1, a, grads, 2, 5, 3), "");
  ASSERT_EQ(make_checkpoint_and_grads(args, 2, b, dir.path() / "grads_b.safetensors", 2, 5, 3), "");
  const CommandResult r = twin_check(b, grads);
  SKIP_IF_NO_TORCH(r);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("0/2 pairs OK\nFAIL\n"), std::string::npos) << r.output;
}

// The float64 comparison resolves what float32 rounding hides: gradients of a model whose every
// parameter is one float32 ulp off the checkpoint the twin reads fail it.
TEST(TwinCheck, DoubleFailsOnAModelOneUlpAway) {
  ScratchDir dir("ulp");
  const fs::path ckpt = dir.path() / "ckpt", grads = dir.path() / "grads.safetensors";
  ASSERT_EQ(make_checkpoint_and_grads("--scheme pre --norm rmsnorm --layers 1 --init-std 0.3", 1,
                                      ckpt, grads, 2, 5, 3),
            "");
  std::unique_ptr<Model<float>> m = load_checkpoint(ckpt);
  for (float& v : m->params()) v = std::nextafter(v, std::numeric_limits<float>::infinity());
  save_checkpoint(ckpt, *m);
  const CommandResult r = twin_check(ckpt, grads);
  SKIP_IF_NO_TORCH(r);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const size_t f64 = r.output.find("normlab in float64");
  ASSERT_NE(f64, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nFAIL\n", f64), std::string::npos) << r.output;
  print_worst("one ulp away", r.output);
}

}  // namespace
}  // namespace normlab
