#include "normlab/probes/depth_probe.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/parallel.hpp"
#include "normlab/probes/token_stats.hpp"
#include "normlab/train_step.hpp"

namespace normlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "nan";
}

nlohmann::json num_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

double sum_squares(const float* x, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += static_cast<double>(x[k]) * x[k];
  return s;
}

// mean_t ‖x_t‖ and sqrt(mean_t ‖x_t‖² / D) over N rows.
std::pair<double, double> norms(const float* x, int64_t N, int D) {
  double norm_sum = 0, ss_sum = 0;
  for (int64_t n = 0; n < N; ++n) {
    const double ss = sum_squares(x + n * D, D);
    norm_sum += std::sqrt(ss);
    ss_sum += ss;
  }
  return {norm_sum / N, std::sqrt(ss_sum / (static_cast<double>(N) * D))};
}

// "layers.12.attn.q.weight" → (12, "attn"); anything else → (-1, "").
std::pair<int, std::string> layer_of(const std::string& name) {
  if (name.rfind("layers.", 0) != 0) return {-1, ""};
  const size_t dot = name.find('.', 7);
  const size_t dot2 = name.find('.', dot + 1);
  return {std::stoi(name.substr(7, dot - 7)), name.substr(dot + 1, dot2 - dot - 1)};
}

}  // namespace

DepthResult run_depth_probe(Model<float>& model, const Batch& batch) {
  const ModelConfig& c = model.config();
  const int D = c.width, S = model.num_sublayers(), L = c.layers, spl = c.sublayers_per_layer();
  const int64_t B = batch.batch, T = batch.len, N = B * T;
  DepthResult r;
  r.batch = B;
  r.seq_len = T;
  r.layers = L;
  r.sublayers = S;

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> dlogits;
  r.loss = loss_and_grads(model, batch, dlogits);
  const auto t1 = std::chrono::steady_clock::now();
  r.seconds_forward_backward = std::chrono::duration<double>(t1 - t0).count();

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

  // Collapse statistics: one task per (stream position, sequence).
  std::vector<double> cosine((S + 1) * B), erank((S + 1) * B);
  parallel_for((S + 1) * B, [&](int64_t task) {
    const int pos = static_cast<int>(task / B);
    const int64_t b = task % B;
    const float* x = model.stream(pos) + b * T * D;
    cosine[task] = mean_pairwise_cosine(x, T, D);
    erank[task] = effective_rank(x, T, D);
  });
  for (int pos = 0; pos <= S; ++pos) {
    DepthPosition d;
    d.position = pos;
    const auto [norm, rms] = norms(model.stream(pos), N, D);
    d.hidden_norm = norm;
    d.hidden_rms = rms;
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
      d.branch_rms = norms(model.branch_output(pos), N, D).second;
      d.branch_normed_rms = model.scheme().sublayers[pos].norm_out
                                ? norms(model.branch_output_normed(pos), N, D).second
                                : kNaN;
      d.grad_norm = std::sqrt(sub_grad[pos]);
      d.param_norm = std::sqrt(sub_param[pos]);
    } else {
      d.layer = L;
      d.kind = "final";
      d.branch_rms = d.branch_normed_rms = d.grad_norm = d.param_norm = kNaN;
    }
    r.positions.push_back(d);
  }
  r.seconds_stats = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  return r;
}

std::string depth_csv(const DepthResult& r) {
  std::string s =
      "position,layer,kind,hidden_norm,hidden_rms,cosine,erank,branch_rms,branch_normed_rms,"
      "grad_norm,param_norm\n";
  for (const DepthPosition& d : r.positions) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", d.position, d.layer, d.kind,
                     num(d.hidden_norm), num(d.hidden_rms), num(d.cosine), num(d.erank),
                     num(d.branch_rms), num(d.branch_normed_rms), num(d.grad_norm),
                     num(d.param_norm));
  }
  return s;
}

std::string depth_params_csv(const DepthResult& r) {
  std::string s = "name,group,layer,size,grad_norm,param_norm\n";
  for (const DepthTensor& t : r.tensors) {
    s += fmt::format("{},{},{},{},{},{}\n", t.name, t.group,
                     t.layer >= 0 ? std::to_string(t.layer) : "", t.size, num(t.grad_norm),
                     num(t.param_norm));
  }
  for (const DepthGroup& g : r.groups) {
    s += fmt::format("group:{},{},{},{},{},{}\n", g.name, g.name,
                     g.layer >= 0 ? std::to_string(g.layer) : "", g.size, num(g.grad_norm),
                     num(g.param_norm));
  }
  return s;
}

nlohmann::json depth_json(const DepthResult& r) {
  nlohmann::json positions = nlohmann::json::array();
  for (const DepthPosition& d : r.positions) {
    positions.push_back({{"position", d.position},
                         {"layer", d.layer},
                         {"kind", d.kind},
                         {"hidden_norm", num_json(d.hidden_norm)},
                         {"hidden_rms", num_json(d.hidden_rms)},
                         {"cosine", num_json(d.cosine)},
                         {"erank", num_json(d.erank)},
                         {"branch_rms", num_json(d.branch_rms)},
                         {"branch_normed_rms", num_json(d.branch_normed_rms)},
                         {"grad_norm", num_json(d.grad_norm)},
                         {"param_norm", num_json(d.param_norm)}});
  }
  nlohmann::json tensors = nlohmann::json::array();
  for (const DepthTensor& t : r.tensors) {
    tensors.push_back({{"name", t.name},
                       {"group", t.group},
                       {"layer", t.layer >= 0 ? nlohmann::json(t.layer) : nlohmann::json(nullptr)},
                       {"size", t.size},
                       {"grad_norm", num_json(t.grad_norm)},
                       {"param_norm", num_json(t.param_norm)}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const DepthGroup& g : r.groups) {
    groups.push_back({{"name", g.name},
                      {"layer", g.layer >= 0 ? nlohmann::json(g.layer) : nlohmann::json(nullptr)},
                      {"size", g.size},
                      {"grad_norm", num_json(g.grad_norm)},
                      {"param_norm", num_json(g.param_norm)}});
  }
  return {{"loss", num_json(r.loss)},
          {"batch", r.batch},
          {"seq_len", r.seq_len},
          {"grad_norm", num_json(r.grad_norm)},
          {"seconds_forward_backward", r.seconds_forward_backward},
          {"seconds_stats", r.seconds_stats},
          {"positions", positions},
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
    s += fmt::format("{:>6}  {:>10}  {:>10}", l, num(a.hidden_rms), num(a.branch_rms));
    if (mlp) s += fmt::format("  {:>10}", num(r.positions[l * spl + 1].branch_rms));
    s += fmt::format("  {:>10}  {:>8}  {:>8}\n", num(r.groups[1 + l].grad_norm), num(a.cosine),
                     num(a.erank));
  }
  const DepthPosition& f = r.positions.back();
  s += fmt::format("{:>6}  {:>10}  {:>10}", "final", num(f.hidden_rms), "");
  if (mlp) s += fmt::format("  {:>10}", "");
  s += fmt::format("  {:>10}  {:>8}  {:>8}\n", "", num(f.cosine), num(f.erank));
  s += fmt::format("loss {}, gradient norm {} (embedding {}, output {})\n", num(r.loss),
                   num(r.grad_norm), num(r.groups.front().grad_norm),
                   num(r.groups.back().grad_norm));
  return s;
}

}  // namespace normlab
