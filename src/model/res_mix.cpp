// AttnRes's mixing points (docs/attnres.md): the input of sublayer l is a softmax mixture of
// the sources written so far (the embedding stream and the sublayers' records), with the
// pseudo-query and key-norm gain of point l. Forward over the training workspace, and the
// backward that adds into the blocks' gradients.
//
// Letters: N rows, D width, K_l sources of point l, S sublayers.
#include <algorithm>
#include <stdexcept>

#include "core/kernels/attnres.hpp"
#include "model/residual/residual_stream.hpp"
#include "model/workspace.hpp"
#include "normlab/model.hpp"

namespace normlab {

template <typename T>
int64_t Model<T>::res_query_offset(int l) const {
  return residual_->res_query_offset(l);
}

template <typename T>
int64_t Model<T>::res_gain_offset(int l) const {
  return residual_->res_gain_offset(l);
}

// The backward goes by chunks of consecutive mixing points (docs/attnres.md, "Backward by
// chunks"): the sources every point of a chunk attends over, the blocks finished at its first
// point, are read and their gradients updated once per chunk, in one res_mix_backward call for
// all its points, instead of once per group. Their gradients are first read by the sublayers
// below the chunk, so they can wait for its first point. Each point's other sources (blocks
// finished inside the chunk, its partial sum) are done at the point, because the sublayers inside
// the chunk read their gradients next. About 8 points: the shared sources' traffic falls with the
// chunk, the per-point sources' traffic grows with it.
constexpr int kChunkPoints = 8;

template <typename T>
int Model<T>::res_chunk() const {
  const int B = scheme_.res_block;
  return B * std::max(1, kChunkPoints / B);
}

template <typename T>
void Model<T>::res_queries() {
  Workspace& w = *ws_;
  const int D = config_.width;
  for (int l = 0; l <= num_sublayers(); ++l) {
    const T* query = params_.data() + res_query_offset(l);
    const T* gain = params_.data() + res_gain_offset(l);
    for (int d = 0; d < D; ++d) w.res_q[l * D + d] = query[d] * gain[d];
  }
}

// Source j is read once for the logits of all the points that mix it (instead of once per
// point, in the point's own pass before its mixture): docs/attnres.md, "Forward".
template <typename T>
void Model<T>::res_source_logits(int j, int64_t rows) {
  Workspace& w = *ws_;
  const int D = config_.width;
  w.logit_q.clear();
  w.logit_out.clear();
  for (int l = 0; l <= num_sublayers(); ++l) {
    const std::vector<int>& ids = scheme_.res_sources[l];  // ascending
    const auto it = std::lower_bound(ids.begin(), ids.end(), j);
    if (it == ids.end() || *it != j) continue;
    w.logit_q.push_back(w.res_q.data() + l * D);
    w.logit_out.push_back(w.mix_logits[l].data() + (it - ids.begin()) * rows);
  }
  res_logits(w.sources[j], w.source_rstd[j].data(), w.logit_q.data(), w.logit_out.data(),
             static_cast<int>(w.logit_q.size()), rows, D);
}

template <typename T>
void Model<T>::res_mix_forward_point(int l, int64_t rows) {
  Workspace& w = *ws_;
  const std::vector<int>& ids = scheme_.res_sources[l];
  const int K = static_cast<int>(ids.size());
  for (int k = 0; k < K; ++k) w.mix_src[k] = w.sources[ids[k]];
  res_mix_from_logits(w.mix_src.data(), K, w.mix_logits[l].data(), w.stream[l].data(),
                      w.mix_alpha[l].data(), rows, config_.width);
}

template <typename T>
void Model<T>::res_mix_backward_point(int l, const T* dx, int64_t rows) {
  Workspace& w = *ws_;
  const int C = res_chunk();
  const int first = l / C * C;  // the chunk's first point
  w.chunk_dx[l - first] = dx;
  auto point = [&](int p) {
    ResMixPoint<T> pt;
    pt.alpha = w.mix_alpha[p].data();
    pt.alpha_stride = static_cast<int64_t>(scheme_.res_sources[p].size());
    pt.x = w.stream[p].data();
    pt.dx = w.chunk_dx[p - first];
    pt.w = params_.data() + res_query_offset(p);
    pt.g = params_.data() + res_gain_offset(p);
    pt.dw = grads_.data() + res_query_offset(p);
    pt.dg = grads_.data() + res_gain_offset(p);
    return pt;
  };
  // Sources ids[k0 .. k1) of point l (their columns in α), for the given points.
  auto run = [&](const std::vector<int>& ids, int k0, int k1, const ResMixPoint<T>* pts, int P) {
    for (int k = k0; k < k1; ++k) {
      w.mix_src[k - k0] = w.sources[ids[k]];
      w.mix_rstd[k - k0] = w.source_rstd[ids[k]].data();
      w.mix_dsrc[k - k0] = w.d_block[scheme_.res_source_block[ids[k]]].data();
    }
    res_mix_backward(w.mix_src.data(), w.mix_rstd.data(), w.mix_dsrc.data(), k1 - k0, pts, P, rows,
                     config_.width);
  };
  // The chunk's first point starts a block, so all its sources are finished blocks, and they
  // are the leading sources of every later point of the chunk.
  const std::vector<int>& ids = scheme_.res_sources[l];
  const int K = static_cast<int>(ids.size());
  const int shared = static_cast<int>(scheme_.res_sources[first].size());
  if (shared < K) {  // this point's own sources: needed by the sublayers before l in the chunk
    ResMixPoint<T> pt = point(l);
    pt.alpha_col = shared;
    run(ids, shared, K, &pt, 1);
  }
  if (l != first) return;
  // The chunk's shared sources, read once for all its points.
  const int last = std::min(first + C - 1, num_sublayers());
  w.chunk_points.clear();
  for (int p = first; p <= last; ++p) w.chunk_points.push_back(point(p));
  run(ids, 0, shared, w.chunk_points.data(), static_cast<int>(w.chunk_points.size()));
}

// This file's members for both scalar types (the class itself is instantiated in model.cpp).
template int Model<float>::res_chunk() const;
template int Model<double>::res_chunk() const;
template int64_t Model<float>::res_query_offset(int) const;
template int64_t Model<double>::res_query_offset(int) const;
template int64_t Model<float>::res_gain_offset(int) const;
template int64_t Model<double>::res_gain_offset(int) const;
template void Model<float>::res_queries();
template void Model<double>::res_queries();
template void Model<float>::res_source_logits(int, int64_t);
template void Model<double>::res_source_logits(int, int64_t);
template void Model<float>::res_mix_forward_point(int, int64_t);
template void Model<double>::res_mix_forward_point(int, int64_t);
template void Model<float>::res_mix_backward_point(int, const float*, int64_t);
template void Model<double>::res_mix_backward_point(int, const double*, int64_t);

}  // namespace normlab
