// A particle-dynamics study: one experiment file, several runs (typically one per scheme), a
// results folder and a printed comparison with the paper's predictions. Format in
// docs/particles.md ("Study files").
#pragma once

#include <filesystem>

namespace normlab {
class TomlSection;
}

namespace normlab::particles {

// Reads the rest of an experiment file whose `kind` is "particles" (the caller has read `kind`),
// runs every listed scheme, `jobs` runs at a time (0: the file's `jobs`, default 1), writes
// `out_dir` and prints the summary table to stdout; progress goes to stderr.
void run_study(TomlSection& top, const std::filesystem::path& out_dir, int jobs);

}  // namespace normlab::particles
