#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "normlab/base/errors.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/tasks/task.hpp"
#include "tasks/task_list.hpp"

namespace normlab {

void Task::check_length(int64_t n) const {
  const LengthRange r = length_range();
  if (n < r.min || n > r.max || (n - r.min) % r.step != 0) {
    // A range without a real upper bound reads "at least MIN".
    std::string allowed = r.max == LengthRange{}.max ? fmt::format("at least {}", r.min)
                                                     : fmt::format("{} to {}", r.min, r.max);
    if (r.step > 1) allowed += fmt::format(" in steps of {}", r.step);
    const std::string rule = length_rule();
    if (!rule.empty()) allowed += fmt::format(" ({})", rule);
    throw UsageError(
        fmt::format("task {}: length {} is outside its range; allowed: {}", label(), n, allowed));
  }
}

Batch Task::make_batch(int64_t n, int64_t batch, Rng& rng, bool validation) const {
  check_length(n);
  Batch out;
  out.resize(batch, sequence_length(n), vocab(), fields());
  for (int64_t b = 0; b < batch; ++b) {
    if (validation) {
      generate_validation(n, rng, out, b);
    } else {
      generate(n, rng, out, b);
    }
  }
  return out;
}

const std::vector<TaskInfo>& task_registry() {
  static const std::vector<TaskInfo> registry = all_task_infos();
  return registry;
}

const TaskInfo& find_task(const std::string& name) {
  std::vector<std::string> names;
  for (const TaskInfo& info : task_registry()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  throw UsageError(fmt::format("unknown task '{}'; allowed: {}", name, fmt::join(names, ", ")));
}

namespace {

void check_choice(const TaskParamDef& def, const std::string& value, const std::string& where) {
  if (def.choices.empty()) return;
  for (const std::string& c : def.choices) {
    if (c == value) return;
  }
  throw UsageError(fmt::format("{}task parameter '{}' is '{}'; allowed: {}", where, def.name, value,
                               fmt::join(def.choices, ", ")));
}

}  // namespace

std::unique_ptr<Task> make_task(TomlSection& section, TaskParams* resolved) {
  std::vector<std::string> names;
  for (const TaskInfo& info : task_registry()) names.push_back(info.name);
  const std::string name = section.get_choice("name", "", names);
  const TaskInfo& info = find_task(name);
  TaskParams params;
  for (const TaskParamDef& def : info.params) {
    if (std::holds_alternative<int64_t>(def.fallback)) {
      params[def.name] = section.get_int(def.name, std::get<int64_t>(def.fallback));
    } else if (std::holds_alternative<double>(def.fallback)) {
      params[def.name] = section.get_double(def.name, std::get<double>(def.fallback));
    } else {
      const std::string v = section.get_string(def.name, std::get<std::string>(def.fallback));
      check_choice(def, v, section.where(def.name));
      params[def.name] = v;
    }
  }
  section.finish();
  try {
    auto task = info.make(params);
    if (resolved != nullptr) *resolved = params;
    return task;
  } catch (const UsageError& e) {
    throw UsageError(section.where("name") + e.what());
  }
}

std::unique_ptr<Task> make_task_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    throw InputError("task description has no name");
  }
  const TaskInfo& info = find_task(j["name"].get<std::string>());
  TaskParams params;
  for (const TaskParamDef& def : info.params) {
    if (!j.contains(def.name)) {
      params[def.name] = def.fallback;
      continue;
    }
    const nlohmann::json& v = j[def.name];
    if (std::holds_alternative<int64_t>(def.fallback) && v.is_number_integer()) {
      params[def.name] = v.get<int64_t>();
    } else if (std::holds_alternative<double>(def.fallback) && v.is_number()) {
      params[def.name] = v.get<double>();
    } else if (std::holds_alternative<std::string>(def.fallback) && v.is_string()) {
      check_choice(def, v.get<std::string>(), "");
      params[def.name] = v.get<std::string>();
    } else {
      throw InputError(fmt::format("task parameter '{}' has the wrong type", def.name));
    }
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "name") continue;
    bool known = false;
    for (const TaskParamDef& def : info.params) known = known || def.name == key;
    if (!known) throw InputError(fmt::format("task {} has no parameter '{}'", info.name, key));
  }
  return info.make(params);
}

nlohmann::json task_to_json(const std::string& name, const TaskParams& params) {
  nlohmann::json j{{"name", name}};
  for (const auto& entry : params) {
    const std::string& key = entry.first;  // clang 14 cannot capture a structured binding
    std::visit([&](const auto& v) { j[key] = v; }, entry.second);
  }
  return j;
}

int64_t param_int(const TaskParams& p, const std::string& name) {
  return std::get<int64_t>(p.at(name));
}
double param_double(const TaskParams& p, const std::string& name) {
  return std::get<double>(p.at(name));
}
const std::string& param_string(const TaskParams& p, const std::string& name) {
  return std::get<std::string>(p.at(name));
}

}  // namespace normlab
