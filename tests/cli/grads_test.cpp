// `normlab grads` is deterministic in a fresh process whatever the BLAS library's own thread
// setting: the file of logits and gradients is byte-identical with OPENBLAS_NUM_THREADS=1 and 2.
// (The library-level determinism test pins the thread counts first; this covers the command
// line, which runs with the defaults of the machine.) The matrices are large enough (1024 rows,
// width 256) for OpenBLAS to use its threads when allowed to.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normlab/io/safetensors.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

using testing::RunResult;
using testing::TempDir;

TEST(Grads, IdenticalBytesWithOneAndTwoBlasThreads) {
  TempDir dir;
  const RunResult init =
      testing::run_normlab({"init", "--out", (dir / "m").string(), "--width", "256", "--heads", "4",
                            "--layers", "1", "--vocab", "64", "--mlp-mult", "2", "--seed", "1"});
  ASSERT_TRUE(init.exited && init.exit_code == 0) << init.describe();
  std::string bytes[2];
  for (int threads : {1, 2}) {
    const std::string out = (dir / ("g" + std::to_string(threads) + ".safetensors")).string();
    const RunResult r =
        testing::run_normlab({"grads", "--checkpoint", (dir / "m").string(), "--out", out,
                              "--batch", "16", "--seq-len", "64", "--seed", "3"},
                             {"OPENBLAS_NUM_THREADS=" + std::to_string(threads),
                              "OMP_NUM_THREADS=" + std::to_string(threads)});
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();
    bytes[threads - 1] = testing::slurp(out);
  }
  ASSERT_GT(bytes[0].size(), 1000000u);
  if (bytes[0] != bytes[1]) {
    // Name the first tensor that differs.
    const SafetensorsFile a = read_safetensors(dir / "g1.safetensors");
    const SafetensorsFile b = read_safetensors(dir / "g2.safetensors");
    for (size_t i = 0; i < a.tensors.size(); ++i) {
      if (a.tensors[i].data != b.tensors[i].data) {
        ADD_FAILURE() << "with 1 vs 2 BLAS threads, tensor '" << a.tensors[i].name << "' differs";
        return;
      }
    }
    ADD_FAILURE() << "the files differ";
  }
}

// --double: the same tensors (names, shapes) in float64, from Model<double>
// on the float32 checkpoint. Their values are checked against the PyTorch twin in float64
// (tests/twin/twin_test.cpp).
TEST(Grads, DoubleWritesTheSameTensorsInFloat64) {
  TempDir dir;
  const RunResult init = testing::run_normlab(
      {"init", "--out", (dir / "m").string(), "--init-std", "0.3", "--seed", "1"});
  ASSERT_TRUE(init.exited && init.exit_code == 0) << init.describe();
  const std::vector<std::string> grads = {
      "grads", "--checkpoint", (dir / "m").string(), "--batch", "2", "--seq-len", "5", "--seed",
      "3"};
  std::vector<std::string> args = grads;
  args.insert(args.end(), {"--out", (dir / "g32").string()});
  ASSERT_EQ(testing::run_normlab(args).exit_code, 0);
  args = grads;
  args.insert(args.end(), {"--double", "--out", (dir / "g64").string()});
  const RunResult r = testing::run_normlab(args);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.describe();

  const SafetensorsFile f32 = read_safetensors(dir / "g32");
  const std::string bytes = testing::slurp(dir / "g64");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
  ASSERT_EQ(header.size(), f32.tensors.size());
  for (const SafeTensor& t : f32.tensors) {
    SCOPED_TRACE(t.name);
    ASSERT_TRUE(header.contains(t.name));
    const nlohmann::json& h = header[t.name];
    EXPECT_EQ(h["dtype"], "F64");
    EXPECT_EQ(h["shape"].get<std::vector<int64_t>>(), t.shape);
    const uint64_t begin = h["data_offsets"][0], end = h["data_offsets"][1];
    ASSERT_EQ(end - begin, t.data.size() * sizeof(double));
  }
}

}  // namespace
}  // namespace normlab
