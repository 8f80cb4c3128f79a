#include "normlab/train_config.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "normlab/errors.hpp"
#include "normlab/json_fields.hpp"
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
  namespace L = train_limits;
  TrainConfig c;
  const JsonFields f(j, "training config");
  // A real in its range, or InputError naming the field.
  auto real = [](const JsonFields& fields, const char* key, const RealRange& range) {
    const double v = fields.real(key);
    if (!range.contains(v)) {
      throw InputError(fmt::format("training config field '{}' must be a number in {} (got {})",
                                   key, range.describe(), v));
    }
    return v;
  };
  c.steps = f.integer("steps", L::steps);
  c.batch = f.integer("batch", L::batch);
  c.min_len = f.integer("min_len", L::length);
  c.max_len = f.integer("max_len", L::length);
  c.warmup = f.integer("warmup", L::warmup);
  try {
    c.decay = parse_decay(f.string("schedule"));
  } catch (const UsageError& e) {
    throw InputError(fmt::format("training config: {}", e.what()));
  }
  c.min_lr_ratio = real(f, "min_lr_ratio", L::ratio);
  if (f.has("decay_fraction")) c.decay_fraction = real(f, "decay_fraction", L::decay_fraction);
  c.adam.lr = real(f, "lr", L::positive);
  c.adam.beta1 = real(f, "beta1", L::adam_beta);
  c.adam.beta2 = real(f, "beta2", L::adam_beta);
  c.adam.eps = real(f, "eps", L::positive);
  c.adam.weight_decay = real(f, "weight_decay", L::nonnegative);
  c.adam.clip_norm = real(f, "clip", L::nonnegative);
  const JsonFields a = f.object("averaging");
  c.averaging.every = a.integer("every", L::period);
  c.averaging.start = a.integer("start", L::start);
  c.averaging.kappa = real(a, "kappa", L::nonnegative);
  c.averaging.eta = real(a, "eta", L::nonnegative);
  c.averaging.rho = real(a, "rho", L::positive);
  c.averaging.gamma = real(a, "gamma", L::nonnegative);
  c.seed = f.unsigned_integer("seed");
  c.checkpoint_every = f.integer("checkpoint_every", L::period);
  c.log_every = f.integer("log_every", L::period);
  c.threads = static_cast<int>(f.integer("threads", L::threads));
  if (f.has("eval_every")) c.eval_every = f.integer("eval_every", L::start);
  if (f.has("eval_batches")) c.eval_batches = f.integer("eval_batches", L::eval_batches);
  if (f.has("eval_length")) c.eval_length = f.integer("eval_length", L::eval_length);
  if (c.min_len > c.max_len) {
    throw InputError(
        fmt::format("training config: min_len {} is above max_len {}", c.min_len, c.max_len));
  }
  return c;
}

TrainConfig read_train_config(TomlSection& s, TrainConfig c) {
  namespace L = train_limits;
  c.steps = s.get_int("steps", c.steps, L::steps);
  c.batch = s.get_int("batch", c.batch, L::batch);
  const std::vector<int64_t> lengths = s.get_int_list("lengths", {c.min_len, c.max_len});
  if (lengths.size() != 2 || !L::length.contains(lengths[0]) || !L::length.contains(lengths[1]) ||
      lengths[1] < lengths[0]) {
    throw UsageError(fmt::format("{}lengths must be [min, max] with 1 <= min <= max <= {}",
                                 s.where("lengths"), L::length.max));
  }
  c.min_len = lengths[0];
  c.max_len = lengths[1];
  c.warmup = s.get_int("warmup", c.warmup, L::warmup);
  c.decay = parse_decay(
      s.get_choice("schedule", to_string(c.decay), {"constant", "linear", "cosine", "wsd"}));
  c.min_lr_ratio = s.get_double("min_lr_ratio", c.min_lr_ratio, L::ratio);
  if (s.has("decay_fraction") && c.decay != Decay::wsd) {
    throw UsageError(s.where("decay_fraction") +
                     "decay_fraction applies only to schedule = \"wsd\"");
  }
  c.decay_fraction = s.get_double("decay_fraction", c.decay_fraction, L::decay_fraction);
  c.adam.lr = s.get_double("lr", c.adam.lr, L::positive);
  c.adam.beta1 = s.get_double("beta1", c.adam.beta1, L::adam_beta);
  c.adam.beta2 = s.get_double("beta2", c.adam.beta2, L::adam_beta);
  c.adam.eps = s.get_double("eps", c.adam.eps, L::positive);
  c.adam.weight_decay = s.get_double("weight_decay", c.adam.weight_decay, L::nonnegative);
  c.adam.clip_norm = s.get_double("clip", c.adam.clip_norm, L::nonnegative);
  c.checkpoint_every = s.get_int("checkpoint_every", c.checkpoint_every, L::period);
  c.log_every = s.get_int("log_every", c.log_every, L::period);
  c.threads = static_cast<int>(s.get_int("threads", c.threads, L::threads));
  c.eval_every = s.get_int("eval_every", c.eval_every, L::start);
  c.eval_batches = s.get_int("eval_batches", c.eval_batches, L::eval_batches);
  c.eval_length = s.get_int("eval_length", c.eval_length, L::eval_length);
  TomlSection a = s.section("averaging");
  c.averaging.every = a.get_int("every", c.averaging.every, L::period);
  c.averaging.start = a.get_int("start", c.averaging.start, L::start);
  c.averaging.kappa = a.get_double("kappa", c.averaging.kappa, L::nonnegative);
  c.averaging.eta = a.get_double("eta", c.averaging.eta, L::nonnegative);
  c.averaging.rho = a.get_double("rho", c.averaging.rho, L::positive);
  c.averaging.gamma = a.get_double("gamma", c.averaging.gamma, L::nonnegative);
  a.finish();
  return c;
}

}  // namespace normlab
