// The MLP's activation functions (src/core/kernels/activation.hpp computes them; the model's
// config names one, normlab/model/model_config.hpp).
#pragma once

namespace normlab {

enum class Activation { gelu, relu };

}  // namespace normlab
