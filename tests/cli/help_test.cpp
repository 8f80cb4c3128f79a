// `--help` on the root and on every subcommand (as listed by the root's help, so subcommands
// added later are covered too): exit 0, usage on stdout naming the command, nothing on stderr.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;

// Names under "Subcommands:" in the root help.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty() || line[0] != ' ') break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

TEST(Help, RootAndEverySubcommand) {
  const RunResult root = testing::run_normlab({"--help"});
  ASSERT_TRUE(root.exited) << root.describe();
  EXPECT_EQ(root.exit_code, 0) << root.describe();
  EXPECT_EQ(root.err, "");
  EXPECT_NE(root.out.find("Usage:"), std::string::npos) << root.out;

  const std::vector<std::string> subs = subcommands_in(root.out);
  const std::set<std::string> listed(subs.begin(), subs.end());
  for (const char* required : {"version", "init", "forward", "grads"}) {
    EXPECT_TRUE(listed.count(required)) << "root help does not list " << required << "\n"
                                        << root.out;
  }
  for (const std::string& sub : subs) {
    for (const char* flag : {"--help", "-h"}) {
      SCOPED_TRACE(sub + " " + flag);
      const RunResult r = testing::run_normlab({sub, flag});
      ASSERT_TRUE(r.exited) << r.describe();
      EXPECT_EQ(r.exit_code, 0) << r.describe();
      EXPECT_EQ(r.err, "") << r.describe();
      EXPECT_NE(r.out.find("Usage:"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(" " + sub + " [OPTIONS]"), std::string::npos) << r.out;
    }
  }
}

// Help lists the options users need to know about.
TEST(Help, InitListsTheModelOptions) {
  const RunResult r = testing::run_normlab({"init", "--help"});
  for (const char* option : {"--scheme", "--norm", "--width", "--heads", "--layers", "--pos",
                             "--beta", "--mix-layers", "--seed", "--out"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << "\n" << r.out;
  }
}

}  // namespace
}  // namespace normlab
