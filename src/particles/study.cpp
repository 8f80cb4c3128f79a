#include "normlab/particles/study.hpp"

#include "normlab/errors.hpp"
#include "normlab/toml_reader.hpp"

namespace normlab::particles {

void run_study(TomlSection& top, const std::filesystem::path& out_dir) {
  throw UsageError("not yet");
}

}  // namespace normlab::particles
