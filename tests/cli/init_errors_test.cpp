// Usage errors of `normlab init`: each invalid option, value or combination exits with 2 (not a
// signal), prints nothing on stdout, prints exactly one line on stderr that names the problem and
// what is allowed, and writes nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;
using testing::TempDir;

struct UsageCase {
  std::string name;
  std::vector<std::string> args;      // after `init --out DIR`
  std::vector<std::string> keywords;  // all must appear in the message
};

void PrintTo(const UsageCase& c, std::ostream* os) {
  *os << c.name;
}

class InitUsageError : public ::testing::TestWithParam<UsageCase> {};

TEST_P(InitUsageError, ExitsWithTwoAndOneLineSayingWhatIsAllowed) {
  const UsageCase& c = GetParam();
  TempDir dir;
  const std::filesystem::path out = dir / "ckpt";
  std::vector<std::string> args = {"init", "--out", out.string()};
  args.insert(args.end(), c.args.begin(), c.args.end());
  const RunResult r = testing::run_normlab(args);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_EQ(r.out, "") << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_EQ(r.err.rfind("normlab: ", 0), 0u) << r.describe();
  for (const std::string& k : c.keywords) {
    EXPECT_NE(r.err.find(k), std::string::npos) << "message lacks '" << k << "'\n" << r.describe();
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "a failed init wrote " << out;
}

const std::vector<UsageCase> kUsageCases = {
    {"unknown_option", {"--bogus", "1"}, {"--bogus", "normlab init --help", "allowed options"}},
    {"unknown_scheme",
     {"--scheme", "prenorm"},
     {"--scheme", "prenorm", "pre", "post", "peri", "ngpt", "deepnorm"}},
    {"unknown_norm",
     {"--norm", "batchnorm"},
     {"--norm", "batchnorm", "layernorm", "rmsnorm", "standardize", "l2", "dyt", "derf",
      "scalenorm"}},
    {"norm_none_with_post",
     {"--scheme", "post", "--norm", "none"},
     {"scheme post", "--norm none", "only with scheme pre", "layernorm"}},
    {"norm_none_with_ngpt", {"--scheme", "ngpt", "--norm", "none"}, {"only with scheme pre"}},
    {"mix_k_above_layers",
     {"--scheme", "mix", "--layers", "3", "--mix-layers", "4"},
     {"mix(k)", "0 <= k <= layers", "k = 4", "3 layers"}},
    {"mix_k_negative",
     {"--scheme", "mix", "--mix-layers", "-1"},
     {"--mix-layers", "-1", "0", "4096"}},
    {"mix_layers_without_mix",
     {"--scheme", "pre", "--mix-layers", "1"},
     {"--mix-layers", "only to --scheme mix", "pre"}},
    {"mix_layers_with_default_scheme", {"--mix-layers", "1"}, {"--mix-layers", "--scheme mix"}},
    {"block_size_without_block_attnres",
     {"--block-size", "2"},
     {"--block-size", "--scheme block_attnres"}},
    {"heads_not_dividing_width",
     {"--width", "32", "--heads", "3"},
     {"heads must divide width", "32", "3"}},
    {"heads_zero", {"--heads", "0"}, {"--heads", "0", "1"}},
    {"rope_odd_head_dim",
     {"--pos", "rope", "--width", "6", "--heads", "2"},
     {"rope", "even head dimension", "6 / heads 2 = 3"}},
    {"beta_zero", {"--beta", "0"}, {"beta must be a finite number above 0", "0"}},
    {"beta_negative", {"--beta", "-0.5"}, {"beta must be a finite number above 0", "-0.5"}},
    {"beta_not_a_number", {"--beta", "warm"}, {"--beta", "warm", "number"}},
    {"width_not_an_integer", {"--width", "3.5"}, {"--width", "3.5", "integer"}},
    {"width_a_word", {"--width", "wide"}, {"--width", "wide", "integer"}},
    {"width_zero", {"--width", "0"}, {"--width", "0", "1", "65536"}},
    {"layers_not_an_integer", {"--layers", "2x"}, {"--layers", "2x", "integer"}},
    {"unknown_positional", {"extra"}, {"extra"}},
    {"unknown_pos_encoding",
     {"--pos", "xpos"},
     {"--pos", "xpos", "rope", "sinusoidal", "alibi", "relative"}},
    {"relative_odd_width",
     {"--pos", "relative", "--width", "9", "--heads", "1"},
     {"relative needs an even width", "9"}},
    {"unknown_activation", {"--activation", "swish"}, {"--activation", "swish", "gelu", "relu"}},
    {"block_size_zero",
     {"--scheme", "block_attnres", "--block-size", "0"},
     {"--block-size", "0", "1", "8192"}},
    {"unknown_qk_norm", {"--qk-norm", "layernorm"}, {"--qk-norm", "layernorm", "l2", "rmsnorm"}},
    {"qk_norm_without_kind", {"--qk-norm"}, {"--qk-norm"}},
    {"qk_norm_with_hybridnorm",
     {"--scheme", "hybridnorm", "--qk-norm", "rmsnorm"},
     {"qk_norm = rmsnorm cannot change scheme hybridnorm",
      "allowed with hybridnorm: qk_norm = "
      "none"}},
    {"qk_norm_with_ngpt",
     {"--scheme", "ngpt", "--qk-norm", "l2"},
     {"qk_norm = l2 cannot change scheme ngpt", "allowed with ngpt: qk_norm = none"}},
    {"streams_without_hyper_connections",
     {"--streams", "3"},
     {"--streams applies only to --scheme hyper_connections", "got --scheme pre"}},
    {"sinkhorn_without_hyper_connections",
     {"--scheme", "post", "--sinkhorn"},
     {"--sinkhorn applies only to --scheme hyper_connections", "got --scheme post"}},
    {"streams_out_of_range",
     {"--scheme", "hyper_connections", "--streams", "65"},
     {"--streams", "65", "from 2 to 64"}},
    {"hyper_connections_without_norm",
     {"--scheme", "hyper_connections", "--norm", "none"},
     {"scheme hyper_connections needs a norm", "allowed norms: layernorm"}},
    {"qk_norm_with_hyper_connections",
     {"--scheme", "hyper_connections", "--qk-norm", "l2"},
     {"qk_norm = l2 cannot change scheme hyper_connections",
      "allowed with hyper_connections: qk_norm = none"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, InitUsageError, ::testing::ValuesIn(kUsageCases),
                         [](const ::testing::TestParamInfo<UsageCase>& info) {
                           return info.param.name;
                         });

TEST(InitUsage, MissingOut) {
  const RunResult r = testing::run_normlab({"init"});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("--out is required"), std::string::npos) << r.describe();
}

TEST(RootUsage, NoOrUnknownSubcommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, {"bogus"}, {"--bogus"}}) {
    const RunResult r = testing::run_normlab(args);
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    EXPECT_NE(r.err.find("subcommand"), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find("init"), std::string::npos) << "lists the subcommands\n" << r.describe();
    if (!args.empty()) {
      EXPECT_NE(r.err.find("'" + args[0] + "'"), std::string::npos) << r.describe();
    }
  }
}

}  // namespace
}  // namespace normlab
