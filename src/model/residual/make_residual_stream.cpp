// The two switches on the residual mode: each mode's stream in training (residual_stream.hpp)
// and in inference (inference_stream.hpp); and the hook inside attention (qkv_hook.hpp).
#include "model/residual/inference_stream.hpp"
#include "model/residual/qkv_hook.hpp"
#include "model/residual/residual_stream.hpp"

#include "normlab/model/model.hpp"

namespace normlab {

template <typename T>
std::unique_ptr<ResidualStream<T>> make_residual_stream(Model<T>& model) {
  switch (model.scheme().residual_mode) {
    case ResidualMode::additive:
      return make_additive_stream(model);
    case ResidualMode::attnres:
    case ResidualMode::block_attnres:
      return make_attnres_stream(model);
    case ResidualMode::two_stream:
      return make_two_streams(model);
    case ResidualMode::hyper:
      return make_hyper_streams(model);
  }
  return nullptr;
}

template <typename T>
std::unique_ptr<InferenceStream<T>> make_inference_stream(Model<T>& model) {
  switch (model.scheme().residual_mode) {
    case ResidualMode::additive:
      return make_additive_inference(model);
    case ResidualMode::attnres:
    case ResidualMode::block_attnres:
      return make_attnres_inference(model);
    case ResidualMode::two_stream:
      return make_two_streams_inference(model);
    case ResidualMode::hyper:
      return make_hyper_inference(model);
  }
  return nullptr;
}

template <typename T>
std::unique_ptr<QkvHook<T>> make_qkv_hook(const Model<T>& model, bool backward) {
  if (model.scheme().value_residual) return make_value_residual(model, backward);
  return std::make_unique<QkvHook<T>>();
}

template std::unique_ptr<ResidualStream<float>> make_residual_stream(Model<float>&);
template std::unique_ptr<ResidualStream<double>> make_residual_stream(Model<double>&);
template std::unique_ptr<InferenceStream<float>> make_inference_stream(Model<float>&);
template std::unique_ptr<InferenceStream<double>> make_inference_stream(Model<double>&);
template std::unique_ptr<QkvHook<float>> make_qkv_hook(const Model<float>&, bool);
template std::unique_ptr<QkvHook<double>> make_qkv_hook(const Model<double>&, bool);

}  // namespace normlab
