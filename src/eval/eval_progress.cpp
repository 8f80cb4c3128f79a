#include "normlab/eval/eval_progress.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "normlab/io/atomic_file.hpp"

namespace normlab {
namespace {

constexpr const char* kFile = "evaluating.json";

}  // namespace

void write_eval_progress(const std::filesystem::path& run_dir, const EvalProgress& p) {
  const nlohmann::json j{
      {"weights", p.weights}, {"lengths_done", p.lengths_done}, {"lengths", p.lengths}};
  write_file_atomic(run_dir / kFile, j.dump() + "\n");
}

void remove_eval_progress(const std::filesystem::path& run_dir) {
  std::error_code ec;
  std::filesystem::remove(run_dir / kFile, ec);
}

std::optional<EvalProgress> read_eval_progress(const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / kFile);
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("weights") || !j.contains("lengths_done") ||
      !j.contains("lengths") || !j["weights"].is_string() || !j["lengths_done"].is_number() ||
      !j["lengths"].is_number()) {
    return std::nullopt;
  }
  return EvalProgress{j["weights"].get<std::string>(), j["lengths_done"].get<int>(),
                      j["lengths"].get<int>()};
}

}  // namespace normlab
