#include "normlab/probes/depth_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/parallel.hpp"
#include "normlab/io/number_text.hpp"
#include "normlab/probes/token_stats.hpp"
#include "train/batch_targets.hpp"
#include "train/class_loss.hpp"

namespace normlab {
namespace {

double sum_squares(const float* x, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += static_cast<double>(x[k]) * x[k];
  return s;
}

// "layers.12.attn.q.weight" → (12, "attn"); anything else → (-1, "").
std::pair<int, std::string> layer_of(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return {-1, ""};
  const size_t dot = name.find('.', 7);
  const size_t dot2 = name.find('.', dot + 1);
  return {std::stoi(name.substr(7, dot - 7)), name.substr(dot + 1, dot2 - dot - 1)};
}

}  // namespace

int64_t depth_bytes_per_token(const ModelConfig& c, int64_t T) {
  const int64_t D = c.width, M = c.mlp ? c.mlp_hidden() : 0, V = c.vocab, L = c.layers;
  const int64_t Tp = (T + 15) / 16 * 16;
  const int64_t S = L * c.sublayers_per_layer();
  // Floats per token: the streams; per attention sublayer u, q|k|v, probabilities, heads, y,
  // z, r and norm statistics; per MLP sublayer u, hidden before and after the activation, y,
  // z, r; the final norm and logits (raw and scaled); backward scratch (8 D, 3 D, 2 M, V); the
  // probe's dlogits, and a V that stood for the dense target row targets had before they were
  // sparse (include/normlab/base/batch.hpp), kept so the chunks, and so the results, stay as they
  // were.
  const int64_t floats = (S + 1) * D + L * (8 * D + c.heads * Tp + 6) +
                         (c.mlp ? L * (4 * D + 2 * M + 6) : 0) + (D + 2) + 2 * V + 11 * D + 2 * M +
                         V + V + V;
  return 4 * floats + 16;
}

DepthResult run_depth_probe(Model<float>& model, const Batch& batch, int64_t max_memory,
                            int block_size, const std::optional<TokenBlock>& over) {
  const ModelConfig& c = model.config();
  const int D = c.width, S = model.num_sublayers(), L = c.layers, spl = c.sublayers_per_layer();
  const int64_t B = batch.batch, T = batch.len, N = B * T, V = c.vocab;
  DepthResult r;
  r.batch = B;
  r.seq_len = T;
  r.layers = L;
  r.sublayers = S;
  const int64_t per_chunk =
      std::clamp<int64_t>(max_memory / (depth_bytes_per_token(c, T) * T), 1, B);
  const bool attnres = mixes_over_depth(model.scheme().residual_mode);
  r.block_size = attnres ? model.scheme().res_block : block_size > 0 ? block_size : c.block_size;
  for (int first = 0, n = 1; first < S; first += r.block_size, ++n) {
    r.blocks.push_back({n, first, std::min(first + r.block_size, S) - 1, 0.0});
  }
  std::vector<double> block_ss(r.blocks.size(), 0.0);
  std::vector<double> block_sum(D);

  // Per position: Σ_t ‖h_t‖, Σ_t ‖h_t‖², and per sequence cosine and rank; per sublayer the
  // block output's Σ ‖y_t‖² before and after its norm.
  std::vector<double> norm_sum(S + 1, 0.0), ss_sum(S + 1, 0.0);
  std::vector<double> cosine((S + 1) * B), erank((S + 1) * B);
  std::vector<double> branch_ss(S, 0.0), normed_ss(S, 0.0);
  double total_weight = 0;
  for (float w : batch.weight) total_weight += w;

  const auto t0 = std::chrono::steady_clock::now();
  double seconds_stats = 0;
  std::vector<float> dlogits;
  model.zero_grads();
  for (int64_t b0 = 0; b0 < B; b0 += per_chunk) {
    const int64_t Bc = std::min(per_chunk, B - b0), Nc = Bc * T;
    ++r.chunks;
    // The chunk's rows of the batch; target slots index the batch's own target rows.
    const float* logits =
        model.forward(batch.tokens.data() + b0 * T * batch.fields, Bc, T, batch.fields);
    dlogits.resize(Nc * V);
    const float* weight = batch.weight.data() + b0 * T;
    const double loss =
        cross_entropy_over(logits, sparse_targets(batch, batch.target_slot.data() + b0 * T), weight,
                           dlogits.data(), Nc, static_cast<int>(V), over);
    double chunk_weight = 0;
    for (int64_t n = 0; n < Nc; ++n) chunk_weight += weight[n];
    const double share = total_weight > 0 ? chunk_weight / total_weight : 0.0;
    r.loss += loss * share;
    if (std::isfinite(loss) && share > 0) {
      for (float& g : dlogits) g = static_cast<float>(g * share);
      model.backward(dlogits.data());
    }
    const auto ts = std::chrono::steady_clock::now();
    parallel_for((S + 1) * Bc, [&](int64_t task) {
      const int pos = static_cast<int>(task / Bc);
      const int64_t b = task % Bc;
      const float* x = model.stream(pos) + b * T * D;
      cosine[pos * B + b0 + b] = mean_pairwise_cosine(x, T, D);
      erank[pos * B + b0 + b] = effective_rank(x, T, D);
    });
    for (int pos = 0; pos <= S; ++pos) {
      const float* h = model.stream(pos);
      for (int64_t n = 0; n < Nc; ++n) {
        const double ss = sum_squares(h + n * D, D);
        norm_sum[pos] += std::sqrt(ss);
        ss_sum[pos] += ss;
      }
      if (pos == S) continue;
      branch_ss[pos] += sum_squares(model.branch_output(pos), Nc * D);
      if (model.scheme().sublayers[pos].norm_out) {
        normed_ss[pos] += sum_squares(model.branch_output_normed(pos), Nc * D);
      }
    }
    // Block sums b = Σ_{j ∈ block} z_j, row by row.
    for (size_t k = 0; k < r.blocks.size(); ++k) {
      for (int64_t n = 0; n < Nc; ++n) {
        std::fill(block_sum.begin(), block_sum.end(), 0.0);
        for (int j = r.blocks[k].first; j <= r.blocks[k].last; ++j) {
          const float* z = model.branch_output_normed(j) + n * D;
          for (int d = 0; d < D; ++d) block_sum[d] += z[d];
        }
        for (int d = 0; d < D; ++d) block_ss[k] += block_sum[d] * block_sum[d];
      }
    }
    seconds_stats += std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
  }
  if (!(total_weight > 0)) r.loss = kNaN;
  const auto t1 = std::chrono::steady_clock::now();
  r.seconds_forward_backward = std::chrono::duration<double>(t1 - t0).count() - seconds_stats;

  // Tensors and groups.
  const std::vector<float>& g = model.grads();
  const std::vector<float>& p = model.params();
  std::vector<double> sub_grad(S, 0.0), sub_param(S, 0.0);
  r.groups.push_back({"embedding", -1, 0, 0, 0});
  for (int l = 0; l < L; ++l) r.groups.push_back({fmt::format("layer {}", l), l, 0, 0, 0});
  r.groups.push_back({"output", -1, 0, 0, 0});
  double total = 0;
  for (const TensorSpec& t : model.layout().tensors()) {
    DepthTensor dt;
    dt.name = t.name;
    dt.size = t.size;
    const double gg = sum_squares(g.data() + t.offset, t.size);
    const double pp = sum_squares(p.data() + t.offset, t.size);
    dt.grad_norm = std::sqrt(gg);
    dt.param_norm = std::sqrt(pp);
    total += gg;
    const auto [layer, kind] = layer_of(t.name);
    DepthGroup* group = nullptr;
    if (layer >= 0) {
      dt.layer = layer;
      group = &r.groups[1 + layer];
      const int i = layer * spl + (kind == "mlp" ? 1 : 0);
      sub_grad[i] += gg;
      sub_param[i] += pp;
    } else if (t.name.rfind("embed", 0) == 0 || t.name.rfind("pos.", 0) == 0) {
      group = &r.groups.front();
    } else {
      group = &r.groups.back();
    }
    dt.group = group->name;
    group->size += t.size;
    group->grad_norm += gg;  // squared until the end
    group->param_norm += pp;
    r.tensors.push_back(dt);
  }
  for (DepthGroup& group : r.groups) {
    group.grad_norm = std::sqrt(group.grad_norm);
    group.param_norm = std::sqrt(group.param_norm);
  }
  r.grad_norm = std::sqrt(total);

  const double rows = static_cast<double>(N);
  for (int pos = 0; pos <= S; ++pos) {
    DepthPosition d;
    d.position = pos;
    d.hidden_norm = norm_sum[pos] / rows;
    d.hidden_rms = std::sqrt(ss_sum[pos] / (rows * D));
    double cs = 0, er = 0;
    for (int64_t b = 0; b < B; ++b) {
      cs += cosine[pos * B + b];
      er += erank[pos * B + b];
    }
    d.cosine = cs / B;
    d.erank = er / B;
    if (pos < S) {
      d.layer = pos / spl;
      d.kind = model.sublayer_params()[pos].is_attention ? "attn" : "mlp";
      d.branch_rms = std::sqrt(branch_ss[pos] / (rows * D));
      d.branch_normed_rms =
          model.scheme().sublayers[pos].norm_out ? std::sqrt(normed_ss[pos] / (rows * D)) : kNaN;
      d.grad_norm = std::sqrt(sub_grad[pos]);
      d.param_norm = std::sqrt(sub_param[pos]);
    } else {
      d.layer = L;
      d.kind = "final";
      d.branch_rms = d.branch_normed_rms = d.grad_norm = d.param_norm = kNaN;
    }
    r.positions.push_back(d);
  }
  for (size_t k = 0; k < r.blocks.size(); ++k) {
    r.blocks[k].rms = std::sqrt(block_ss[k] / (rows * D));
  }
  r.seconds_stats =
      seconds_stats + std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  return r;
}

std::string depth_csv(const DepthResult& r) {
  std::string s =
      "position,layer,kind,hidden_norm,hidden_rms,cosine,erank,branch_rms,branch_normed_rms,"
      "grad_norm,param_norm\n";
  for (const DepthPosition& d : r.positions) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", d.position, d.layer, d.kind,
                     number_text(d.hidden_norm), number_text(d.hidden_rms), number_text(d.cosine),
                     number_text(d.erank), number_text(d.branch_rms),
                     number_text(d.branch_normed_rms), number_text(d.grad_norm),
                     number_text(d.param_norm));
  }
  return s;
}

std::string depth_params_csv(const DepthResult& r) {
  std::string s = "name,group,layer,size,grad_norm,param_norm\n";
  for (const DepthTensor& t : r.tensors) {
    s += fmt::format("{},{},{},{},{},{}\n", t.name, t.group,
                     t.layer >= 0 ? std::to_string(t.layer) : "", t.size, number_text(t.grad_norm),
                     number_text(t.param_norm));
  }
  for (const DepthGroup& g : r.groups) {
    s += fmt::format("group:{},{},{},{},{},{}\n", g.name, g.name,
                     g.layer >= 0 ? std::to_string(g.layer) : "", g.size, number_text(g.grad_norm),
                     number_text(g.param_norm));
  }
  return s;
}

std::string depth_blocks_csv(const DepthResult& r) {
  std::string s = "block,first_sublayer,last_sublayer,block_size,block_rms\n";
  for (const DepthBlock& b : r.blocks) {
    s +=
        fmt::format("{},{},{},{},{}\n", b.block, b.first, b.last, r.block_size, number_text(b.rms));
  }
  return s;
}

nlohmann::json depth_json(const DepthResult& r) {
  nlohmann::json positions = nlohmann::json::array();
  for (const DepthPosition& d : r.positions) {
    positions.push_back({{"position", d.position},
                         {"layer", d.layer},
                         {"kind", d.kind},
                         {"hidden_norm", number_json(d.hidden_norm)},
                         {"hidden_rms", number_json(d.hidden_rms)},
                         {"cosine", number_json(d.cosine)},
                         {"erank", number_json(d.erank)},
                         {"branch_rms", number_json(d.branch_rms)},
                         {"branch_normed_rms", number_json(d.branch_normed_rms)},
                         {"grad_norm", number_json(d.grad_norm)},
                         {"param_norm", number_json(d.param_norm)}});
  }
  nlohmann::json tensors = nlohmann::json::array();
  for (const DepthTensor& t : r.tensors) {
    tensors.push_back({{"name", t.name},
                       {"group", t.group},
                       {"layer", t.layer >= 0 ? nlohmann::json(t.layer) : nlohmann::json(nullptr)},
                       {"size", t.size},
                       {"grad_norm", number_json(t.grad_norm)},
                       {"param_norm", number_json(t.param_norm)}});
  }
  nlohmann::json blocks = nlohmann::json::array();
  for (const DepthBlock& b : r.blocks) {
    blocks.push_back({{"block", b.block},
                      {"first_sublayer", b.first},
                      {"last_sublayer", b.last},
                      {"block_rms", number_json(b.rms)}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const DepthGroup& g : r.groups) {
    groups.push_back({{"name", g.name},
                      {"layer", g.layer >= 0 ? nlohmann::json(g.layer) : nlohmann::json(nullptr)},
                      {"size", g.size},
                      {"grad_norm", number_json(g.grad_norm)},
                      {"param_norm", number_json(g.param_norm)}});
  }
  return {{"loss", number_json(r.loss)},
          {"batch", r.batch},
          {"seq_len", r.seq_len},
          {"grad_norm", number_json(r.grad_norm)},
          {"chunks", r.chunks},
          {"seconds_forward_backward", r.seconds_forward_backward},
          {"seconds_stats", r.seconds_stats},
          {"positions", positions},
          {"block_size", r.block_size},
          {"blocks", blocks},
          {"tensors", tensors},
          {"groups", groups}};
}

std::string format_depth_table(const DepthResult& r) {
  const bool mlp = r.sublayers > r.layers;
  std::string s = fmt::format("{:>6}  {:>10}  {:>10}", "layer", "h rms in", "attn rms");
  if (mlp) s += fmt::format("  {:>10}", "mlp rms");
  s += fmt::format("  {:>10}  {:>8}  {:>8}\n", "grad norm", "cosine", "erank");
  const int spl = mlp ? 2 : 1;
  for (int l = 0; l < r.layers; ++l) {
    const DepthPosition& a = r.positions[l * spl];
    s += fmt::format("{:>6}  {:>10}  {:>10}", l, number_text(a.hidden_rms),
                     number_text(a.branch_rms));
    if (mlp) s += fmt::format("  {:>10}", number_text(r.positions[l * spl + 1].branch_rms));
    s += fmt::format("  {:>10}  {:>8}  {:>8}\n", number_text(r.groups[1 + l].grad_norm),
                     number_text(a.cosine), number_text(a.erank));
  }
  const DepthPosition& f = r.positions.back();
  s += fmt::format("{:>6}  {:>10}  {:>10}", "final", number_text(f.hidden_rms), "");
  if (mlp) s += fmt::format("  {:>10}", "");
  s += fmt::format("  {:>10}  {:>8}  {:>8}\n", "", number_text(f.cosine), number_text(f.erank));
  s += fmt::format("loss {}, gradient norm {} (embedding {}, output {})\n", number_text(r.loss),
                   number_text(r.grad_norm), number_text(r.groups.front().grad_norm),
                   number_text(r.groups.back().grad_norm));
  return s;
}

}  // namespace normlab
