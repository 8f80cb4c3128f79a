#include "normlab/experiment/experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "normlab/base/errors.hpp"
#include "normlab/core/memory_budget.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/model/model.hpp"
#include "normlab/model/model_fields.hpp"
#include "normlab/model/scheme_table.hpp"
#include "normlab/tasks/task.hpp"
#include "normlab/train/run_folder.hpp"
#include "normlab/train/trainer.hpp"

namespace normlab {
namespace {

// A name safe to use as one path component: no separators, no "..", no hidden files.
bool is_plain_file_name(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
  });
}

std::string slug_of(const std::string& label) {
  std::string out;
  for (char ch : label) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
      out.push_back(ch);
    } else if (ch == '/') {
      out += "-";
    } else if (ch == '(') {
      out += "_";
    }
  }
  return out;
}

// Reads the model keys of one table (model_fields.hpp: every field with in_toml, under its
// TOML key). Keys present overwrite the config; absent keys keep its values.
struct TomlModelReader {
  TomlSection& s;
  void operator()(const FieldInfo& f, int& value, IntRange range) {
    if (f.in_toml) value = static_cast<int>(s.get_int(f.toml_key(), value, range));
  }
  void operator()(const FieldInfo& f, double& value, RealRange range) {
    if (f.in_toml) value = s.get_double(f.toml_key(), value, range);
  }
  void operator()(const FieldInfo& f, bool& value) {
    if (f.in_toml) value = s.get_bool(f.toml_key(), value);
  }
  // "auto", "on" or "off"; a boolean too (true = on, false = off), the natural spelling.
  void operator()(const FieldInfo& f, Toggle& value) {
    const char* key = f.toml_key();
    if (s.holds_bool(key)) {
      value = s.get_bool(key, false) ? Toggle::on : Toggle::off;
      return;
    }
    parse_field(s.get_choice(key, to_string(value), field_choices(value)), value);
  }
  template <typename E>
  void operator()(const FieldInfo& f, E& value) {
    if (!f.in_toml) return;
    const char* key = f.toml_key();
    const std::vector<std::string> choices = field_choices(value);
    if (!choices.empty()) {
      parse_field(s.get_choice(key, to_string(value), choices), value);
      return;
    }
    try {
      parse_field(s.get_string(key, to_string(value)), value);
    } catch (const UsageError& err) {
      throw UsageError(s.where(key) + err.what());
    }
  }
};

void read_model_keys(TomlSection& s, ModelConfig& c) {
  visit_model_fields(c, TomlModelReader{s});
}

// One [[variant]] table: a label, a scheme written as in `schemes`, and any model keys that
// differ from [model] for this variant (e.g. attn_norms, final_norm).
Variant read_variant_table(TomlSection& s, const ModelConfig& base) {
  const std::string label = s.get_string("label", "");
  const std::string scheme = s.get_string("scheme", "");
  if (label.empty()) throw UsageError(s.where("label") + "a [[variant]] needs a label");
  if (scheme.empty()) throw UsageError(s.where("scheme") + "a [[variant]] needs a scheme");
  ModelConfig model = base;
  read_model_keys(s, model);
  s.finish();
  Variant v;
  try {
    v = parse_variant(scheme, model);
  } catch (const UsageError& err) {
    throw UsageError(s.where("scheme") + err.what());
  }
  v.label = label;
  v.base_label = label;
  v.slug = slug_of(label);
  if (v.slug.empty()) {
    throw UsageError(s.where("label") + "a variant label needs a letter, digit or '_'");
  }
  return v;
}

}  // namespace

Variant parse_variant(const std::string& text, const ModelConfig& base) {
  Variant v;
  v.label = text;
  v.base_label = text;
  v.slug = slug_of(text);
  v.model = base;
  std::string scheme = text, norm;
  if (const size_t slash = text.find('/'); slash != std::string::npos) {
    scheme = text.substr(0, slash);
    norm = text.substr(slash + 1);
  }
  if (const size_t open = scheme.find('('); open != std::string::npos) {
    const size_t close = scheme.find(')', open);
    if (close == std::string::npos || close != scheme.size() - 1) {
      throw UsageError(fmt::format("scheme '{}': expected NAME(K), e.g. mix(2)", text));
    }
    const std::string arg = scheme.substr(open + 1, close - open - 1);
    scheme = scheme.substr(0, open);
    int k = 0;
    try {
      size_t used = 0;
      k = std::stoi(arg, &used);
      if (used != arg.size()) throw std::invalid_argument(arg);
    } catch (const std::exception&) {
      throw UsageError(fmt::format("scheme '{}': '{}' is not an integer", text, arg));
    }
    const SchemeRow& row = scheme_row(parse_scheme(scheme));
    if (row.number) {
      v.model.*row.number.field = k;
    } else {
      std::vector<std::string> with_number;
      for (const SchemeRow& r : scheme_table()) {
        if (r.number) with_number.push_back(fmt::format("{}({})", r.name, r.number.letter));
      }
      throw UsageError(
          fmt::format("scheme '{}': only {} take a number", text, fmt::join(with_number, ", ")));
    }
  }
  v.model.scheme = parse_scheme(scheme);
  v.model.norm =
      norm.empty() ? default_norm_kind(v.model.scheme, v.model.norm) : parse_norm_kind(norm);
  validate(v.model);
  return v;
}

Experiment read_experiment(TomlSection& top, const std::string& file) {
  Experiment e;
  e.file = file;
  e.name = top.get_string("name", std::filesystem::path(file).stem().string());
  if (!is_plain_file_name(e.name)) {
    throw UsageError(
        fmt::format("{}name '{}' must be a plain file name: letters, digits, '_', "
                    "'-', '.', not starting with '.', at most 100 characters",
                    top.where("name"), printable(e.name)));
  }
  top.get_string("description", "");
  top.get_choice("kind", "train", {"train", "particles"});
  const std::vector<std::string> variants = top.get_string_list("schemes", {});
  std::vector<TomlSection> variant_tables = top.table_list("variant");
  if (variants.empty() && variant_tables.empty()) {
    throw UsageError(top.where("schemes") +
                     "schemes must list at least one scheme, e.g. [\"pre\", \"post\"], or "
                     "the file must have [[variant]] tables");
  }
  const std::vector<int64_t> seeds = top.get_int_list("seeds", {0});
  if (seeds.empty()) throw UsageError(top.where("seeds") + "seeds must list at least one seed");
  for (int64_t s : seeds) {
    if (s < 0) throw UsageError(top.where("seeds") + "seeds must be non-negative");
    if (std::count(seeds.begin(), seeds.end(), s) > 1) {
      throw UsageError(
          fmt::format("{}seed {} is listed twice; each seed runs once", top.where("seeds"), s));
    }
    e.seeds.push_back(static_cast<uint64_t>(s));
  }
  e.jobs = static_cast<int>(top.get_int("jobs", 1, {1, 256}));

  TomlSection task_section = top.section("task");
  TaskParams params;
  std::unique_ptr<Task> task = make_task(task_section, &params);
  e.task = task_to_json(task_section.get_string("name", ""), params);

  TomlSection model_section = top.section("model");
  ModelConfig base;
  read_model_keys(model_section, base);
  base.vocab = task->vocab();
  if (model_section.has("vocab")) {
    const int64_t vocab = model_section.get_int("vocab", base.vocab);
    if (vocab != task->vocab()) {
      throw UsageError(fmt::format("{}vocab {} does not match task {}, which needs {}",
                                   model_section.where("vocab"), vocab, task->label(),
                                   task->vocab()));
    }
  }
  model_section.finish();
  for (const std::string& text : variants) {
    try {
      e.variants.push_back(parse_variant(text, base));
    } catch (const UsageError& err) {
      throw UsageError(top.where("schemes") + err.what());
    }
  }
  for (TomlSection& table : variant_tables) e.variants.push_back(read_variant_table(table, base));
  for (size_t i = 0; i < e.variants.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (e.variants[i].slug == e.variants[j].slug) {
        throw UsageError(fmt::format("{}variants '{}' and '{}' have the same name on disk '{}'",
                                     top.where(variant_tables.empty() ? "schemes" : "variant"),
                                     e.variants[j].label, e.variants[i].label, e.variants[i].slug));
      }
    }
  }

  TomlSection train_section = top.section("train");
  e.train = read_train_config(train_section);
  train_section.finish();
  {  // every training length must exist for the task
    const LengthRange r = task->length_range();
    if (e.train.max_len < r.min || e.train.min_len > r.max) {
      throw UsageError(fmt::format("{}training lengths [{}, {}] hold no valid length of task {}",
                                   train_section.where("lengths"), e.train.min_len, e.train.max_len,
                                   task->label()));
    }
    try {  // loss_over = "classes" needs a task with output classes
      loss_logits(e.train, *task);
    } catch (const UsageError& err) {
      throw UsageError(train_section.where("loss_over") + err.what());
    }
    if (e.train.eval_every > 0 && e.train.eval_length > 0) {
      try {
        task->check_length(e.train.eval_length);
      } catch (const UsageError& err) {
        throw UsageError(train_section.where("eval_length") + "eval_length: " + err.what());
      }
      if (base.pos == PosEncoding::learned &&
          task->sequence_length(e.train.eval_length) > base.max_len) {
        throw UsageError(fmt::format(
            "{}eval_length {} needs sequences of {} tokens, beyond the learned positions' "
            "max_len {}",
            train_section.where("eval_length"), e.train.eval_length,
            task->sequence_length(e.train.eval_length), base.max_len));
      }
    }
  }

  // Every variant must fit in memory when trained, checked before any run starts: parameters,
  // gradients, two AdamW moments and up to three averaged copies (EMA, BEMA and its start),
  // and the activations of one batch at the longest training length.
  for (const Variant& v : e.variants) {
    const double params = static_cast<double>(param_layout_of(v.model).total());
    const int64_t tokens = task->sequence_length(e.train.max_len);
    const double bytes = 7.0 * params * sizeof(float) +
                         activation_bytes_estimate(v.model, e.train.batch, tokens, sizeof(float));
    try {
      check_fits_in_memory(bytes, fmt::format("the parameters, optimizer state and activations "
                                              "of variant '{}' (batch {}, {} tokens)",
                                              v.label, e.train.batch, tokens));
    } catch (const UsageError& err) {
      throw UsageError(train_section.where("batch") + err.what());
    }
  }

  for (Variant& v : e.variants) v.train = e.train;

  TomlSection eval_section = top.section("eval");
  e.eval.lengths = eval_section.get_int_list("lengths", e.eval.lengths);
  if (e.eval.lengths.empty()) {
    throw UsageError(eval_section.where("lengths") + "lengths must list at least one length");
  }
  for (int64_t n : e.eval.lengths) {
    if (std::count(e.eval.lengths.begin(), e.eval.lengths.end(), n) > 1) {
      throw UsageError(
          fmt::format("{}length {} is listed twice", eval_section.where("lengths"), n));
    }
  }
  e.eval.samples = eval_section.get_int("samples", e.eval.samples, {1, 1 << 24});
  e.eval.seed =
      static_cast<uint64_t>(eval_section.get_int("seed", static_cast<int64_t>(e.eval.seed)));
  e.eval.max_rows = eval_section.get_int("max_rows", e.eval.max_rows);
  e.weights = eval_section.get_string_list("weights", e.weights);
  if (e.weights.empty()) {
    throw UsageError(fmt::format("{}key 'weights' is empty; list at least one of raw, ema, bema",
                                 eval_section.where("weights")));
  }
  std::set<std::string> listed;
  for (const std::string& w : e.weights) {
    if (!listed.insert(w).second) {
      throw UsageError(
          fmt::format("{}weights '{}' is listed twice", eval_section.where("weights"), w));
    }
    if (w != "raw" && w != "ema" && w != "bema") {
      throw UsageError(fmt::format("{}weights '{}' is not one of raw, ema, bema",
                                   eval_section.where("weights"), w));
    }
  }
  for (int64_t n : e.eval.lengths) {
    try {
      task->check_length(n);
    } catch (const UsageError& err) {
      throw UsageError(eval_section.where("lengths") + err.what());
    }
    if (base.pos == PosEncoding::learned && task->sequence_length(n) > base.max_len) {
      throw UsageError(fmt::format(
          "{}evaluation length {} needs sequences of {} tokens, beyond the learned positions' "
          "max_len {}",
          eval_section.where("lengths"), n, task->sequence_length(n), base.max_len));
    }
  }
  eval_section.finish();

  TomlSection probe_section = top.section("probe");
  e.probe_depth = probe_section.get_bool("depth", false);
  e.probe_batch = probe_section.get_int("batch", e.probe_batch, {1, 1 << 20});
  e.probe_length = probe_section.get_int("length", 0);
  if (e.probe_length != 0) {
    try {
      task->check_length(e.probe_length);
    } catch (const UsageError& err) {
      throw UsageError(probe_section.where("length") + err.what());
    }
  }
  read_probe_settings(probe_section, *task, e);
  probe_section.finish();
  top.finish();
  return e;
}

nlohmann::json to_json(const Experiment& e) {
  nlohmann::json variants = nlohmann::json::array();
  for (const Variant& v : e.variants) {
    nlohmann::json j{{"label", v.label}, {"slug", v.slug}, {"model", to_json(v.model)}};
    if (!e.sweep_keys.empty()) {  // (without a sweep every variant trains as `train` says)
      j["train"] = to_json(v.train);
      j["base_label"] = v.base_label;
      j["point"] = nlohmann::json::object();
      for (const auto& [key, value] : v.point) j["point"][key] = value;
    }
    variants.push_back(j);
  }
  nlohmann::json out{{"name", e.name},
                     {"file", e.file},
                     {"task", e.task},
                     {"variants", variants},
                     {"seeds", e.seeds},
                     {"train", to_json(e.train)},
                     {"eval",
                      {{"lengths", e.eval.lengths},
                       {"samples", e.eval.samples},
                       {"seed", e.eval.seed},
                       {"max_rows", e.eval.max_rows},
                       {"weights", e.weights}}},
                     {"jobs", e.jobs},
                     {"probe", probe_settings_json(e)},
                     {"tier", e.tier},
                     {"sets", e.sets}};
  if (!e.sweep_keys.empty()) out["sweep"] = e.sweep_keys;
  return out;
}

nlohmann::json experiment_json_as_read(nlohmann::json j) {
  j = settings_as_read(std::move(j));
  if (j.contains("variants") && j["variants"].is_array()) {
    for (nlohmann::json& v : j["variants"]) v = settings_as_read(std::move(v));
  }
  return j;
}

std::filesystem::path run_directory(const std::filesystem::path& out, const Variant& v,
                                    uint64_t seed) {
  return out / "runs" / run_folder_name(v.slug, seed);
}

}  // namespace normlab
