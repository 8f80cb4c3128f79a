// Experiment files a careless user or an attacker writes (issue 14): every value that cannot
// work is refused while reading, with "FILE:LINE: " and the key, before any run starts or any
// memory the size of a model is allocated.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "normlab/base/errors.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/io/toml_reader.hpp"
#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab {
namespace {

using testing::TempDir;

using testing::kTinyExperiment;
const std::string kValidFile = kTinyExperiment;

// kValidFile with the first occurrence of `from` replaced by `to`.
std::string edited(const std::string& from, const std::string& to) {
  std::string text = kValidFile;
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("no '" + from + "' in kValidFile");
  return text.replace(at, from.size(), to);
}

// The error message of reading `text` as an experiment file (with its path), "" when valid.
std::string read_error_with_path(const std::string& text) {
  return testing::experiment_error(text, nullptr, true);
}

struct HostileFileCase {
  const char* name;
  const char* from;
  const char* to;
  std::vector<std::string> keywords;  // all in the message
};

class HostileExperimentFile : public ::testing::TestWithParam<HostileFileCase> {};

TEST_P(HostileExperimentFile, IsRefusedWithFileLineAndKey) {
  ASSERT_EQ(read_error_with_path(kValidFile), "");
  const HostileFileCase& c = GetParam();
  const std::string message = read_error_with_path(edited(c.from, c.to));
  ASSERT_NE(message, "") << "accepted: " << c.to;
  EXPECT_NE(message.find("e.toml:"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& k : c.keywords) {
    EXPECT_NE(message.find(k), std::string::npos) << "lacks '" << k << "': " << message;
  }
}

const HostileFileCase kHostileFileCases[] = {
    {"lr_inf", "lr = 0.01", "lr = inf", {"'lr'", "finite"}},
    {"lr_nan", "lr = 0.01", "lr = nan", {"'lr'", "finite"}},
    {"lr_zero", "lr = 0.01", "lr = 0.0", {"'lr'", "(0, inf)", "got 0"}},
    {"beta1_negative", "lr = 0.01", "beta1 = -1.0", {"'beta1'", "[0, 1)", "-1"}},
    {"beta2_two", "lr = 0.01", "beta2 = 2.0", {"'beta2'", "[0, 1)", "2"}},
    {"eps_zero", "lr = 0.01", "eps = 0.0", {"'eps'", "(0, inf)"}},
    {"weight_decay_negative", "lr = 0.01", "weight_decay = -1.0", {"'weight_decay'", "[0, inf)"}},
    {"gamma_negative", "gamma = 1.0", "gamma = -1.0", {"'gamma'", "[0, inf)"}},
    {"batch_huge", "batch = 8", "batch = 100000000", {"'batch'", "from 1 to 1048576"}},
    {"width_huge", "width = 5", "width = 100000", {"'width'", "from 1 to 65536", "100000"}},
    {"layers_wrapping", "layers = 1", "layers = 4294967298", {"'layers'", "4294967298"}},
    {"steps_zero", "steps = 40", "steps = 0", {"'steps'", "from 1"}},
    {"seeds_repeated", "seeds = [1, 2]", "seeds = [1, 1]", {"seed 1 is listed twice"}},
    {"seeds_empty", "seeds = [1, 2]", "seeds = []", {"at least one seed"}},
    {"scheme_repeated", "[\"pre\", \"post\"]", "[\"pre\", \"pre\"]", {"same name"}},
    {"eval_lengths_empty", "lengths = [2, 5]", "lengths = []", {"at least one length"}},
    {"eval_lengths_repeated", "lengths = [2, 5]", "lengths = [2, 2]", {"length 2 is listed twice"}},
    {"eval_weights_empty", "samples = 32", "samples = 32\nweights = []", {"'weights'", "empty"}},
    {"eval_weights_repeated",
     "samples = 32",
     "samples = 32\nweights = [\"raw\", \"raw\"]",
     {"weights 'raw' is listed twice"}},
    {"name_escapes", "name = \"tiny\"", "name = \"../../../x\"", {"plain file name"}},
    {"name_empty", "name = \"tiny\"", "name = \"\"", {"plain file name"}},
    {"name_hidden", "name = \"tiny\"", "name = \".x\"", {"plain file name"}},
    {"jobs_zero", "seeds = [1, 2]", "seeds = [1, 2]\njobs = 0", {"'jobs'", "from 1 to 256"}},
    // Within every range, but a model no machine holds: refused with the estimate.
    {"beyond_memory",
     "width = 5\nlayers = 1",
     "width = 65536\nheads = 1\nlayers = 4096",
     {"variant 'pre'", "need about", "available"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, HostileExperimentFile, ::testing::ValuesIn(kHostileFileCases),
                         [](const ::testing::TestParamInfo<HostileFileCase>& info) {
                           return info.param.name;
                         });

TEST(HostileExperimentFileText, LongValuesAreCutInMessages) {
  const std::string long_name(300000, 'a');
  const std::string message =
      read_error_with_path(edited("name = \"set_complement\"", "name = \"" + long_name + "\""));
  ASSERT_NE(message, "");
  EXPECT_LT(message.size(), 1000u) << message.substr(0, 200);
}

// Through the command line: exit 2, one line, and nothing written.
TEST(HostileExperimentFileCli, RunRefusesBeforeCreatingTheFolder) {
  TempDir tmp;
  std::ofstream(tmp / "e.toml") << edited("lr = 0.01", "lr = nan");
  const testing::RunResult r =
      testing::run_normlab({"run", (tmp / "e.toml").string(), "--out", (tmp / "out").string()}, {},
                           testing::kHostileInputLimits);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_FALSE(std::filesystem::exists(tmp / "out")) << r.describe();
}

TEST(HostileExperimentFileCli, FifoIsRefusedNotRead) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "e.toml").c_str(), 0600), 0);
  const testing::RunResult r =
      testing::run_normlab({"run", (tmp / "e.toml").string()}, {}, testing::kHostileInputLimits);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.describe();
}

// A folder that cannot be made (its parent is a file): the path and the system's reason, in
// normlab's words, not the filesystem library's ("filesystem error: cannot create ...").
TEST(HostileExperimentFileCli, AnOutputUnderAFileSaysWhyInOneLine) {
  TempDir tmp;
  std::ofstream(tmp / "e.toml") << kTinyExperiment;
  std::ofstream(tmp / "file") << "x";
  const testing::RunResult r = testing::run_normlab(
      {"run", (tmp / "e.toml").string(), "--out", (tmp / "file" / "out").string()}, {},
      testing::kHostileInputLimits);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_EQ(r.err.rfind("normlab: " + (tmp / "file" / "out").string(), 0), 0u) << r.describe();
  EXPECT_NE(r.err.find(": Not a directory"), std::string::npos) << r.describe();
  EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.describe();
}

TEST(HostileCommandLine, SeedsOutsideTheUnsignedRangeAreRefused) {
  TempDir tmp;
  for (const std::string seed : {"-1", "18446744073709551616", "1.5", "+3"}) {
    SCOPED_TRACE(seed);
    const testing::RunResult r = testing::run_normlab(
        {"init", "--scheme", "pre", "--seed", seed, "--out", (tmp / "m").string()});
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    EXPECT_NE(r.err.find("18446744073709551615"), std::string::npos) << r.describe();
    EXPECT_FALSE(std::filesystem::exists(tmp / "m")) << r.describe();
  }
}

TEST(HostileCommandLine, EmptyOutIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"init", "--scheme", "pre", "--out", ""},
        {"train-steps", "--checkpoint", "x", "--steps", "1", "--out", ""}}) {
    SCOPED_TRACE(args[0]);
    const testing::RunResult r = testing::run_normlab(args);
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    EXPECT_NE(r.err.find("empty path"), std::string::npos) << r.describe();
  }
}

// A 100 KB argument quoted back by a parse error is cut, so the message stays one short line.
TEST(HostileCommandLine, LongArgumentsAreCutInMessages) {
  const std::string huge(100000, 'a');
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"init", "--scheme", huge, "--out", "m"},
        {"train-steps", "--checkpoint", "x", "--out", "y", "--lr", huge}}) {
    SCOPED_TRACE(args[0]);
    const testing::RunResult r = testing::run_normlab(args);
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u);
    EXPECT_LT(r.err.size(), 1000u);
    EXPECT_NE(r.err.find("(100000 bytes)"), std::string::npos) << r.err.substr(0, 500);
  }
}

// Real-valued options refuse non-finite and out-of-range values in one short line: the range is
// written "(0, inf)", not as CLI11's 309-digit fixed-point DBL_MAX.
TEST(HostileCommandLine, RealOptionsRefuseNonFiniteAndOutOfRangeInShortForm) {
  for (const std::string lr : {"1e400", "nan", "inf", "-1", "0"}) {
    SCOPED_TRACE(lr);
    const testing::RunResult r = testing::run_normlab(
        {"train-steps", "--checkpoint", "x", "--out", "y", "--steps", "1", "--lr", lr});
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
    EXPECT_NE(r.err.find("--lr"), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find("(0, inf)"), std::string::npos) << r.describe();
    EXPECT_LT(r.err.size(), 200u) << r.describe();
  }
}

// Within every range, but parameters and gradients no machine holds: refused before any
// allocation, with the estimate, under a 2 GB address space.
TEST(HostileCommandLine, ModelBeyondMemoryIsRefusedWithTheEstimate) {
  TempDir tmp;
  const testing::RunResult r =
      testing::run_normlab({"init", "--scheme", "pre", "--vocab", "1048576", "--width", "65536",
                            "--heads", "1", "--layers", "4096", "--out", (tmp / "m").string()},
                           {}, testing::kHostileInputLimits);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("need about"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("PB"), std::string::npos) << r.describe();
}

// A second `normlab run` on a folder another process is working in refuses at once with one
// line saying so (the lock is held here by the test, as a running study would hold it).
TEST(HostileExperimentFileCli, SecondRunOnTheSameFolderRefuses) {
  TempDir tmp;
  std::ofstream(tmp / "e.toml") << kValidFile;
  std::filesystem::create_directories(tmp / "out");
  const int fd = ::open((tmp / "out" / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const testing::RunResult r =
      testing::run_normlab({"run", (tmp / "e.toml").string(), "--out", (tmp / "out").string()});
  ::close(fd);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  ASSERT_EQ(r.err_lines().size(), 1u) << r.describe();
  EXPECT_NE(r.err.find("another normlab process is working in this folder"), std::string::npos)
      << r.describe();
  EXPECT_FALSE(std::filesystem::exists(tmp / "out" / "runs" / "pre__seed1" / "final"))
      << r.describe();
}

}  // namespace
}  // namespace normlab
