// The same bits on every machine (docs/design.md principle 8): `normlab train-steps` writes
// byte-identical checkpoints whichever kernels OpenBLAS picks for the CPU, for every scheme of
// the scheme table, causal and bidirectional. OPENBLAS_CORETYPE stands in for other CPUs:
// Prescott is what Debian 12's OpenBLAS runs on a CPU it does not know (SSE3 kernels), Haswell
// its AVX2 kernels. Training calls no OpenBLAS (its products are gemm.cpp's), so this fails as
// soon as anything whose bits depend on the CPU's BLAS enters a training step. The width of 64
// puts every linear layer on gemm.cpp's register tiles, not the small kernels. Two threads on
// one side: the bits are the same at any thread count too. Across builds (-march, AVX-512 or
// AVX2): bench/bits_everywhere.sh (docs/training.md, "Determinism").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::run_normlab;
using testing::slurp;
using testing::TempDir;

struct BitsCase {
  std::string name;
  std::vector<std::string> scheme;  // --scheme and its options
  bool causal;
};

// Every file of a checkpoint folder, by name, with its bytes.
std::vector<std::pair<std::string, std::string>> files_of(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files.emplace_back(entry.path().filename().string(), slurp(entry.path()));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class BitsEverywhere : public ::testing::TestWithParam<BitsCase> {};

TEST_P(BitsEverywhere, CheckpointsDoNotDependOnOpenBlasKernels) {
  const BitsCase& c = GetParam();
  TempDir dir;
  std::vector<std::string> init = {"init"};
  init.insert(init.end(), c.scheme.begin(), c.scheme.end());
  for (const char* a : {"--norm", "layernorm", "--vocab", "40", "--width", "64", "--heads", "4",
                        "--layers", "3", "--untied", "--pos", "rope", "--seed", "5"}) {
    init.push_back(a);
  }
  init.push_back(c.causal ? "--causal" : "--bidirectional");
  init.push_back("--out");
  init.push_back((dir.path() / "init").string());
  const auto made = run_normlab(init);
  ASSERT_EQ(made.exit_code, 0) << made.describe();

  struct Side {
    const char* name;
    std::vector<std::string> env;
    const char* threads;
  };
  const Side sides[] = {{"default", {}, "1"},
                        {"prescott", {"OPENBLAS_CORETYPE=Prescott"}, "2"},
                        {"haswell", {"OPENBLAS_CORETYPE=Haswell"}, "1"}};
  std::vector<std::vector<std::pair<std::string, std::string>>> checkpoints;
  for (const Side& side : sides) {
    const fs::path out = dir.path() / side.name;
    const auto trained = run_normlab({"train-steps", "--checkpoint", (dir.path() / "init").string(),
                                      "--out", out.string(), "--steps", "3", "--batch", "5",
                                      "--seq-len", "70", "--seed", "8", "--threads", side.threads},
                                     side.env);
    ASSERT_EQ(trained.exit_code, 0) << side.name << ": " << trained.describe();
    checkpoints.push_back(files_of(out));
  }
  ASSERT_FALSE(checkpoints[0].empty());
  for (size_t s = 1; s < checkpoints.size(); ++s) {
    ASSERT_EQ(checkpoints[s].size(), checkpoints[0].size()) << sides[s].name;
    for (size_t f = 0; f < checkpoints[0].size(); ++f) {
      EXPECT_EQ(checkpoints[s][f].first, checkpoints[0][f].first);
      EXPECT_TRUE(checkpoints[s][f].second == checkpoints[0][f].second)
          << checkpoints[0][f].first << " differs between " << sides[0].name << " and "
          << sides[s].name;
    }
  }
}

std::vector<BitsCase> bits_cases() {
  // Every row of the scheme table (src/model/scheme_table.cpp), with its parameter where it
  // has one, and custom as a placement.
  const std::vector<std::vector<std::string>> schemes = {
      {"--scheme", "pre"},
      {"--scheme", "post"},
      {"--scheme", "peri"},
      {"--scheme", "peri_init"},
      {"--scheme", "post_attn"},
      {"--scheme", "mix", "--mix-layers", "2"},
      {"--scheme", "ngpt"},
      {"--scheme", "sqrt_scaling"},
      {"--scheme", "deepnorm"},
      {"--scheme", "attnres"},
      {"--scheme", "block_attnres", "--block-size", "2"},
      {"--scheme", "sandwich"},
      {"--scheme", "pre_and_post"},
      {"--scheme", "reordered"},
      {"--scheme", "layernorm_scaling"},
      {"--scheme", "layerscale"},
      {"--scheme", "rezero"},
      {"--scheme", "hybridnorm"},
      {"--scheme", "resi_dual"},
      {"--scheme", "siamesenorm"},
      {"--scheme", "hyper_connections"},
      {"--scheme", "hyper_connections", "--sinkhorn"},
      {"--scheme", "custom", "--placement", "attn: in+out; mlp: post"},
  };
  std::vector<BitsCase> cases;
  for (const auto& s : schemes) {
    for (bool causal : {true, false}) {
      // The scheme, then its parameter's value or flag: mix_2, hyper_connections_sinkhorn.
      std::string name = s[1];
      if (s.size() > 2 && s[2] == "--placement") {
        name += "_placement";
      } else if (s.size() > 2) {
        name += "_" + (s.back().rfind("--", 0) == 0 ? s.back().substr(2) : s.back());
      }
      cases.push_back({name + (causal ? "_causal" : "_bidirectional"), s, causal});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryScheme, BitsEverywhere, ::testing::ValuesIn(bits_cases()),
                         [](const ::testing::TestParamInfo<BitsCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace normlab
