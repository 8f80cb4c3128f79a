// `normlab merge OUT`: joins the stores of a Slurm array's shards
// (OUT/results-shard-K-of-N.sqlite, written by `normlab run` in each array task) into
// OUT/results.sqlite (docs/cluster.md). Merging again changes nothing.
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/run_rows.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/store/results_store.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace fs = std::filesystem;

void add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "merge",
      "Join the shard stores of a Slurm array run into OUT/results.sqlite (docs/cluster.md)");
  auto out = std::make_shared<std::string>();
  cmd->add_option("OUT", *out, "Results folder (holding results-shard-K-of-N.sqlite)")
      ->required()
      ->check(non_empty_path());
  cmd->callback([out] {
    const fs::path folder(*out);
    if (!fs::is_directory(folder)) {
      throw InputError(fmt::format("{}: no such results folder", folder.string()));
    }
    // shard index → file, for the one shard count found.
    const std::regex name(R"(results-shard-(\d+)-of-(\d+)\.sqlite)");
    std::map<int, fs::path> shards;
    int count = 0;
    for (const fs::directory_entry& f : fs::directory_iterator(folder)) {
      std::smatch m;
      const std::string file = f.path().filename().string();
      if (!std::regex_match(file, m, name)) continue;
      // At most 6 digits each (an array of 10^6 tasks), so the numbers cannot overflow.
      if (m[1].length() > 6 || m[2].length() > 6) continue;
      const int n = std::stoi(m[2].str()), k = std::stoi(m[1].str());
      if (n < 1 || k >= n) {
        throw InputError(fmt::format("{}: shard {} of an array of {} tasks cannot be", file, k, n));
      }
      if (count != 0 && n != count) {
        throw InputError(
            fmt::format("{} holds shard stores of arrays of {} and of {} tasks; keep one array's",
                        *out, count, n));
      }
      count = n;
      shards[k] = f.path();
    }
    if (shards.empty()) {
      throw InputError(fmt::format(
          "{} holds no shard stores (results-shard-K-of-N.sqlite); `normlab run` writes them "
          "in the tasks of a Slurm array",
          *out));
    }
    lock_results_folder(folder, Shard{});
    // Every shard is checked before any is merged: the folder's experiment, read back from the
    // experiment.json `normlab run` wrote, is the only one a shard may hold.
    const nlohmann::json experiment =
        nlohmann::json::parse(read_file(folder / "experiment.json"), nullptr, false);
    if (experiment.is_discarded() || !experiment.is_object()) {
      throw InputError(
          fmt::format("{}: not an experiment's JSON", (folder / "experiment.json").string()));
    }
    const std::string config_hash = experiment_config_hash(experiment);
    for (const auto& [index, file] : shards) {
      ResultsStore::check_shard(file, config_hash, index, count);
    }
    ResultsStore store(results_store_file(folder, Shard{}));
    std::vector<fs::path> files;
    for (const auto& [index, file] : shards) files.push_back(file);
    const std::vector<int64_t> per_shard = store.merge_shards(files);
    int64_t runs = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      std::printf("merged %s: %lld runs\n", files[i].filename().string().c_str(),
                  static_cast<long long>(per_shard[i]));
      runs += per_shard[i];
    }
    std::printf("%lld runs from %zu of %d shard stores in %s\n", static_cast<long long>(runs),
                shards.size(), count, results_store_file(folder, Shard{}).string().c_str());
    if (static_cast<int>(shards.size()) < count) {
      std::string missing;
      for (int k = 0; k < count; ++k) {
        if (shards.count(k) == 0) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", k);
      }
      throw InputError(fmt::format(
          "shard(s) {} of {} have no store yet: their array tasks did not run or did not start; "
          "run them, then merge again",
          missing, count));
    }
  });
}

}  // namespace normlab::cli
