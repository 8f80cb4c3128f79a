// Value residual (ResFormer, arXiv 2410.17897; x-transformers' add_value_residual with the mix
// fixed at ½): every attention sublayer after the first reads the values
//   V'_n = ½(V_n + V_1),
// V_1 the first attention's values (after its head norms, when any). Backward: dL/dV_n = ½ dL/dV'_n
// and dL/dV_1 gathers ½ dL/dV'_n from every later attention, added to the first attention's own
// once its backward comes (it is the last attention backward reaches).
//
// Letters: N = B·T rows, D width; q|k|v rows are 3D wide, v their last D.
#include <algorithm>

#include "core/parallel.hpp"
#include "model/buffers.hpp"
#include "model/residual/qkv_hook.hpp"
#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
class ValueResidual final : public QkvHook<T> {
 public:
  ValueResidual(int width, int first_attention, bool backward)
      : D_(width), first_(first_attention), backward_(backward) {}

  void declare_buffers(Arena<T>& a, int64_t N) override {
    a.declare(v1_, N * D_);
    a.declare(d_v1_, backward_ ? N * D_ : 0);
  }

  void forward(int i, T* qkv, int64_t N) override {
    const int64_t D = D_;
    if (i == first_) {  // V_1 (N, D), and dL/dV_1 from 0
      T* v1 = v1_;
      for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) {
          std::copy(qkv + n * 3 * D + 2 * D, qkv + n * 3 * D + 3 * D, v1 + n * D);
        }
      });
      if (backward_) parallel_zero(d_v1_, N * D);
      return;
    }
    const T* v1 = v1_;
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        T* v = qkv + n * 3 * D + 2 * D;
        for (int64_t d = 0; d < D; ++d) v[d] = T(0.5) * (v[d] + v1[n * D + d]);
      }
    });
  }

  void backward(int i, T* d_qkv, int64_t N) override {
    const int64_t D = D_;
    T* d_v1 = d_v1_;
    const bool first = i == first_;
    for_row_shards(N, [&](int64_t, int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        T* dv = d_qkv + n * 3 * D + 2 * D;
        for (int64_t d = 0; d < D; ++d) {
          if (first) {
            dv[d] += d_v1[n * D + d];
          } else {
            d_v1[n * D + d] += T(0.5) * dv[d];
            dv[d] = T(0.5) * dv[d];
          }
        }
      }
    });
  }

 private:
  int64_t D_;
  int first_;                          // the first attention sublayer
  bool backward_;                      // keeps dL/dV_1
  T *v1_ = nullptr, *d_v1_ = nullptr;  // (N, D) V_1 and dL/dV_1
};

template <typename T>
std::unique_ptr<QkvHook<T>> make_value_residual(const Model<T>& model, bool backward) {
  const std::vector<SublayerParams>& subs = model.sublayer_params();
  const int first =
      static_cast<int>(std::find_if(subs.begin(), subs.end(),
                                    [](const SublayerParams& p) { return p.is_attention; }) -
                       subs.begin());
  return std::make_unique<ValueResidual<T>>(model.config().width, first, backward);
}

template std::unique_ptr<QkvHook<float>> make_value_residual(const Model<float>&, bool);
template std::unique_ptr<QkvHook<double>> make_value_residual(const Model<double>&, bool);

}  // namespace normlab
