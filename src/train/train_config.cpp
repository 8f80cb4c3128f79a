#include "normlab/train/train_config.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "normlab/base/errors.hpp"
#include "normlab/io/json_fields.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/train/train_fields.hpp"

namespace normlab {
namespace {

// The object a field lives in: the top, or its section's sub-object.
nlohmann::json& json_home(nlohmann::json& j, const TrainFieldInfo& f) {
  return f.section != nullptr ? j[f.section] : j;
}

struct JsonWriter {
  nlohmann::json& j;
  template <typename V, typename Range>
  void operator()(const TrainFieldInfo& f, const V& value, Range) {
    if (f.written) json_home(j, f)[f.name] = value;
  }
  void operator()(const TrainFieldInfo& f, const uint64_t& value) {
    if (f.written) json_home(j, f)[f.name] = value;
  }
  void operator()(const TrainFieldInfo& f, const Decay& value) {
    if (f.written) json_home(j, f)[f.name] = to_string(value);
  }
  void operator()(const TrainFieldInfo& f, const LossOver& value) {
    if (f.written) json_home(j, f)[f.name] = to_string(value);
  }
};

// Exact reads (JsonFields); reals checked against their ranges here, naming the field.
struct JsonReader {
  const JsonFields& top;
  std::map<std::string, JsonFields> sections;
  const JsonFields& home(const TrainFieldInfo& f) {
    if (f.section == nullptr) return top;
    auto it = sections.find(f.section);
    if (it == sections.end()) it = sections.emplace(f.section, top.object(f.section)).first;
    return it->second;
  }
  bool skip(const TrainFieldInfo& f) { return f.optional_json && !home(f).has(f.name); }
  template <typename I>
  void operator()(const TrainFieldInfo& f, I& value, IntRange range) {
    if (!skip(f)) value = static_cast<I>(home(f).integer(f.name, range));
  }
  void operator()(const TrainFieldInfo& f, double& value, RealRange range) {
    if (skip(f)) return;
    value = home(f).real(f.name);
    if (!range.contains(value)) {
      throw InputError(fmt::format("training config field '{}' must be a number in {} (got {})",
                                   f.name, range.describe(), value));
    }
  }
  void operator()(const TrainFieldInfo& f, uint64_t& value) {
    value = home(f).unsigned_integer(f.name);
  }
  void operator()(const TrainFieldInfo& f, Decay& value) {
    try {
      value = parse_decay(home(f).string(f.name));
    } catch (const UsageError& e) {
      throw InputError(fmt::format("training config: {}", e.what()));
    }
  }
  void operator()(const TrainFieldInfo& f, LossOver& value) {
    if (skip(f)) return;
    try {
      value = parse_loss_over(home(f).string(f.name));
    } catch (const UsageError& e) {
      throw InputError(fmt::format("training config: {}", e.what()));
    }
  }
};

// Strict TOML reads: keys present overwrite, absent keep; a section's keys are read from its
// sub-table, which is finished (unknown keys refused) by the caller.
struct TomlReader {
  TomlSection& top;
  std::map<std::string, TomlSection> sections;
  TomlSection& home(const TrainFieldInfo& f) {
    if (f.section == nullptr) return top;
    auto it = sections.find(f.section);
    if (it == sections.end()) it = sections.emplace(f.section, top.section(f.section)).first;
    return it->second;
  }
  void operator()(const TrainFieldInfo& f, int64_t& value, IntRange range) {
    if (f.in_toml) value = home(f).get_int(f.name, value, range);
  }
  void operator()(const TrainFieldInfo& f, int& value, IntRange range) {
    if (f.in_toml) value = static_cast<int>(home(f).get_int(f.name, value, range));
  }
  void operator()(const TrainFieldInfo& f, double& value, RealRange range) {
    if (f.in_toml) value = home(f).get_double(f.name, value, range);
  }
  void operator()(const TrainFieldInfo&, uint64_t&) {}  // the seed: never in TOML
  void operator()(const TrainFieldInfo& f, Decay& value) {
    value = parse_decay(
        home(f).get_choice(f.name, to_string(value), {"constant", "linear", "cosine", "wsd"}));
  }
  void operator()(const TrainFieldInfo& f, LossOver& value) {
    value =
        parse_loss_over(home(f).get_choice(f.name, to_string(value), {"vocabulary", "classes"}));
  }
};

}  // namespace

std::string to_string(LossOver l) {
  return l == LossOver::classes ? "classes" : "vocabulary";
}

LossOver parse_loss_over(const std::string& s) {
  if (s == "vocabulary") return LossOver::vocabulary;
  if (s == "classes") return LossOver::classes;
  throw UsageError(fmt::format("unknown loss_over '{}'; allowed: vocabulary, classes", s));
}

nlohmann::json to_json(const TrainConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  visit_train_fields(c, JsonWriter{j});
  return j;
}

TrainConfig train_config_from_json(const nlohmann::json& j) {
  TrainConfig c;
  const JsonFields f(j, "training config");
  visit_train_fields(c, JsonReader{f, {}});
  if (c.min_len > c.max_len) {
    throw InputError(
        fmt::format("training config: min_len {} is above max_len {}", c.min_len, c.max_len));
  }
  return c;
}

TrainConfig read_train_config(TomlSection& s, TrainConfig c) {
  namespace L = train_limits;
  // TOML writes the two training lengths as one pair.
  const std::vector<int64_t> lengths = s.get_int_list("lengths", {c.min_len, c.max_len});
  if (lengths.size() != 2 || !L::length.contains(lengths[0]) || !L::length.contains(lengths[1]) ||
      lengths[1] < lengths[0]) {
    throw UsageError(fmt::format("{}lengths must be [min, max] with 1 <= min <= max <= {}",
                                 s.where("lengths"), L::length.max));
  }
  c.min_len = lengths[0];
  c.max_len = lengths[1];
  TomlReader reader{s, {}};
  visit_train_fields(c, reader);
  if (s.has("decay_fraction") && c.decay != Decay::wsd) {
    throw UsageError(s.where("decay_fraction") +
                     "decay_fraction applies only to schedule = \"wsd\"");
  }
  if (c.stop_accuracy > 0 && c.eval_every == 0) {
    throw UsageError(s.where("stop_accuracy") +
                     "stop_accuracy is checked at each validation: it needs eval_every > 0");
  }
  // [train.averaging] is read even when it has none of the keys, so that a misspelled one is
  // refused.
  if (!reader.sections.contains("averaging"))
    reader.sections.emplace("averaging", s.section("averaging"));
  for (const auto& [name, section] : reader.sections) section.finish();
  return c;
}

}  // namespace normlab
