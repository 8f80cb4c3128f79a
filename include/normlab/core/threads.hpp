// The number of threads normlab's kernels use (src/core/parallel.hpp shares work among them;
// results do not depend on it, docs/design.md principle 8).
#pragma once

namespace normlab {

void set_num_threads(int n);
int num_threads();

}  // namespace normlab
