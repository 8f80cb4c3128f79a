#include "normlab/train_config.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "normlab/errors.hpp"
#include "normlab/toml_reader.hpp"

namespace normlab {

nlohmann::json to_json(const TrainConfig& c) {
  nlohmann::json j{
      {"steps", c.steps},
      {"batch", c.batch},
      {"min_len", c.min_len},
      {"max_len", c.max_len},
      {"warmup", c.warmup},
      {"schedule", to_string(c.decay)},
      {"min_lr_ratio", c.min_lr_ratio},
      {"lr", c.adam.lr},
      {"beta1", c.adam.beta1},
      {"beta2", c.adam.beta2},
      {"eps", c.adam.eps},
      {"weight_decay", c.adam.weight_decay},
      {"clip", c.adam.clip_norm},
      {"averaging",
       {{"every", c.averaging.every},
        {"start", c.averaging.start},
        {"kappa", c.averaging.kappa},
        {"eta", c.averaging.eta},
        {"rho", c.averaging.rho},
        {"gamma", c.averaging.gamma}}},
      {"seed", c.seed},
      {"checkpoint_every", c.checkpoint_every},
      {"log_every", c.log_every},
      {"threads", c.threads},
  };
  // Written only for wsd, so run.json files of the other schedules stay as they were.
  if (c.decay == Decay::wsd) j["decay_fraction"] = c.decay_fraction;
  if (c.eval_every > 0) {
    j["eval_every"] = c.eval_every;
    j["eval_batches"] = c.eval_batches;
    j["eval_length"] = c.eval_length;
  }
  return j;
}

TrainConfig train_config_from_json(const nlohmann::json& j) {
  TrainConfig c;
  try {
    c.steps = j.at("steps").get<int64_t>();
    c.batch = j.at("batch").get<int64_t>();
    c.min_len = j.at("min_len").get<int64_t>();
    c.max_len = j.at("max_len").get<int64_t>();
    c.warmup = j.at("warmup").get<int64_t>();
    c.decay = parse_decay(j.at("schedule").get<std::string>());
    c.min_lr_ratio = j.at("min_lr_ratio").get<double>();
    c.decay_fraction = j.value("decay_fraction", c.decay_fraction);
    c.adam.lr = j.at("lr").get<double>();
    c.adam.beta1 = j.at("beta1").get<double>();
    c.adam.beta2 = j.at("beta2").get<double>();
    c.adam.eps = j.at("eps").get<double>();
    c.adam.weight_decay = j.at("weight_decay").get<double>();
    c.adam.clip_norm = j.at("clip").get<double>();
    const auto& a = j.at("averaging");
    c.averaging.every = a.at("every").get<int64_t>();
    c.averaging.start = a.at("start").get<int64_t>();
    c.averaging.kappa = a.at("kappa").get<double>();
    c.averaging.eta = a.at("eta").get<double>();
    c.averaging.rho = a.at("rho").get<double>();
    c.averaging.gamma = a.at("gamma").get<double>();
    c.seed = j.at("seed").get<uint64_t>();
    c.checkpoint_every = j.at("checkpoint_every").get<int64_t>();
    c.log_every = j.at("log_every").get<int64_t>();
    c.threads = j.at("threads").get<int>();
    c.eval_every = j.value("eval_every", c.eval_every);
    c.eval_batches = j.value("eval_batches", c.eval_batches);
    c.eval_length = j.value("eval_length", c.eval_length);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("training config: {}", e.what()));
  }
  return c;
}

TrainConfig read_train_config(TomlSection& s, TrainConfig c) {
  auto positive = [&](const char* key, int64_t v) {
    if (v < 1)
      throw UsageError(fmt::format("{}{} must be at least 1 (got {})", s.where(key), key, v));
    return v;
  };
  c.steps = positive("steps", s.get_int("steps", c.steps));
  c.batch = positive("batch", s.get_int("batch", c.batch));
  const std::vector<int64_t> lengths = s.get_int_list("lengths", {c.min_len, c.max_len});
  if (lengths.size() != 2 || lengths[0] < 1 || lengths[1] < lengths[0]) {
    throw UsageError(
        fmt::format("{}lengths must be [min, max] with 1 <= min <= max", s.where("lengths")));
  }
  c.min_len = lengths[0];
  c.max_len = lengths[1];
  c.warmup = s.get_int("warmup", c.warmup);
  if (c.warmup < 0) throw UsageError(s.where("warmup") + "warmup must be at least 0");
  c.decay = parse_decay(
      s.get_choice("schedule", to_string(c.decay), {"constant", "linear", "cosine", "wsd"}));
  c.min_lr_ratio = s.get_double("min_lr_ratio", c.min_lr_ratio);
  if (s.has("decay_fraction") && c.decay != Decay::wsd) {
    throw UsageError(s.where("decay_fraction") +
                     "decay_fraction applies only to schedule = \"wsd\"");
  }
  c.decay_fraction = s.get_double("decay_fraction", c.decay_fraction);
  if (!(c.decay_fraction > 0 && c.decay_fraction <= 1)) {
    throw UsageError(fmt::format("{}decay_fraction must be in (0, 1] (got {})",
                                 s.where("decay_fraction"), c.decay_fraction));
  }
  c.adam.lr = s.get_double("lr", c.adam.lr);
  if (c.adam.lr <= 0) throw UsageError(s.where("lr") + "lr must be positive");
  c.adam.beta1 = s.get_double("beta1", c.adam.beta1);
  c.adam.beta2 = s.get_double("beta2", c.adam.beta2);
  c.adam.eps = s.get_double("eps", c.adam.eps);
  c.adam.weight_decay = s.get_double("weight_decay", c.adam.weight_decay);
  c.adam.clip_norm = s.get_double("clip", c.adam.clip_norm);
  c.checkpoint_every =
      positive("checkpoint_every", s.get_int("checkpoint_every", c.checkpoint_every));
  c.log_every = positive("log_every", s.get_int("log_every", c.log_every));
  c.threads = static_cast<int>(positive("threads", s.get_int("threads", c.threads)));
  c.eval_every = s.get_int("eval_every", c.eval_every);
  if (c.eval_every < 0) {
    throw UsageError(fmt::format("{}eval_every must be at least 0 (0: no periodic validation)",
                                 s.where("eval_every")));
  }
  c.eval_batches = positive("eval_batches", s.get_int("eval_batches", c.eval_batches));
  c.eval_length = s.get_int("eval_length", c.eval_length);
  if (c.eval_length < 0) {
    throw UsageError(
        fmt::format("{}eval_length must be at least 0 (0: the longest training length)",
                    s.where("eval_length")));
  }
  TomlSection a = s.section("averaging");
  c.averaging.every = a.get_int("every", c.averaging.every);
  if (c.averaging.every < 1) throw UsageError(a.where("every") + "every must be at least 1");
  c.averaging.start = a.get_int("start", c.averaging.start);
  c.averaging.kappa = a.get_double("kappa", c.averaging.kappa);
  c.averaging.eta = a.get_double("eta", c.averaging.eta);
  c.averaging.rho = a.get_double("rho", c.averaging.rho);
  c.averaging.gamma = a.get_double("gamma", c.averaging.gamma);
  a.finish();
  return c;
}

}  // namespace normlab
