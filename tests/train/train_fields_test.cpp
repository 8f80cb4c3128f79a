// TrainConfig's fields (train_fields.hpp) drive run.json and the [train] reader: the keys
// run.json has are exactly those it had before the field list (so old run.json files and
// result hashes stay valid), the optional keys appear only when they matter, and a config
// survives the round trip through JSON (loss_over too: written only as "classes").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "normlab/train/train_config.hpp"

namespace normlab {
namespace {

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> out;
  for (const auto& [key, value] : j.items()) out.insert(key);
  return out;
}

TEST(TrainFields, RunJsonKeysAreTheEstablishedOnes) {
  const nlohmann::json j = to_json(TrainConfig{});
  EXPECT_EQ(keys(j), (std::set<std::string>{"steps", "batch", "min_len", "max_len", "warmup",
                                            "schedule", "min_lr_ratio", "lr", "beta1", "beta2",
                                            "eps", "weight_decay", "clip", "averaging", "seed",
                                            "checkpoint_every", "log_every", "threads"}));
  EXPECT_EQ(keys(j["averaging"]),
            (std::set<std::string>{"every", "start", "kappa", "eta", "rho", "gamma"}));
  EXPECT_EQ(j["schedule"], "linear");
  EXPECT_EQ(j["clip"], TrainConfig{}.adam.clip_norm);
}

TEST(TrainFields, OptionalKeysOnlyWhenTheyMatter) {
  TrainConfig c;
  c.decay = Decay::wsd;
  EXPECT_TRUE(to_json(c).contains("decay_fraction"));
  EXPECT_FALSE(to_json(c).contains("eval_every"));
  c.eval_every = 100;
  const nlohmann::json j = to_json(c);
  EXPECT_TRUE(j.contains("eval_every") && j.contains("eval_batches") && j.contains("eval_length"));
  EXPECT_FALSE(j.contains("stop_accuracy"));
  c.stop_accuracy = 0.99;
  EXPECT_EQ(to_json(c)["stop_accuracy"], 0.99);
  EXPECT_FALSE(to_json(c).contains("loss_over"));
  c.loss_over = LossOver::classes;
  EXPECT_EQ(to_json(c)["loss_over"], "classes");
}

TEST(TrainFields, RoundTripThroughJson) {
  TrainConfig c;
  c.steps = 1234;
  c.batch = 7;
  c.min_len = 3;
  c.max_len = 9;
  c.warmup = 11;
  c.decay = Decay::wsd;
  c.decay_fraction = 0.3;
  c.min_lr_ratio = 0.1;
  c.adam.lr = 3e-4;
  c.adam.beta1 = 0.8;
  c.adam.beta2 = 0.95;
  c.adam.eps = 1e-7;
  c.adam.weight_decay = 0.05;
  c.adam.clip_norm = 0.5;
  c.averaging.every = 40;
  c.averaging.start = 5;
  c.averaging.kappa = 0.4;
  c.averaging.eta = 0.3;
  c.averaging.rho = 7;
  c.averaging.gamma = 2;
  c.seed = 1ull << 63;
  c.checkpoint_every = 13;
  c.log_every = 17;
  c.threads = 2;
  c.eval_every = 19;
  c.eval_batches = 3;
  c.eval_length = 21;
  c.stop_accuracy = 0.5;
  c.loss_over = LossOver::classes;
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(to_json(train_config_from_json(j)), j);
  // And a run.json written before the optional keys existed reads with their defaults.
  nlohmann::json old = j;
  old.erase("decay_fraction");
  old.erase("eval_every");
  old.erase("eval_batches");
  old.erase("eval_length");
  old.erase("stop_accuracy");
  old.erase("loss_over");
  const TrainConfig back = train_config_from_json(old);
  EXPECT_EQ(back.eval_every, 0);
  EXPECT_EQ(back.stop_accuracy, 0.0);
  EXPECT_EQ(back.loss_over, LossOver::vocabulary);
  EXPECT_EQ(back.decay_fraction, TrainConfig{}.decay_fraction);
}

}  // namespace
}  // namespace normlab
