#include "tidy_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "sqlite_db.hpp"

namespace normlab {

namespace {

// The main settings of a run: (column, path in run.json).
const std::vector<std::pair<std::string, std::string>> kMainSettings = {
    {"task", "task.name"},    {"layers", "model.layers"}, {"width", "model.width"},
    {"heads", "model.heads"}, {"pos", "model.pos"},       {"steps", "train.steps"},
    {"batch", "train.batch"}, {"lr", "train.lr"},         {"train_max_len", "train.max_len"},
};

// Every column of the results table and of runs: a swept key may not take their names.
const std::set<std::string> kStoreColumns = {
    "run_hash",   "experiment_id", "variant", "scheme",       "norm",        "seed",
    "weights",    "length",        "seq_len", "metric",       "value",       "ci_low",
    "ci_high",    "count",         "hash",    "values_json",  "status",      "run_dir",
    "started_at", "finished_at",   "seconds", "base_variant", "config_json",
};

std::string quoted_identifier(const std::string& name) {
  std::string q = "\"";
  for (const char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string quoted_text(const std::string& text) {
  std::string q = "'";
  for (const char c : text) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string last_part(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

// The columns both views add: "json_extract(runs.config_json, '$.model.width') AS width, ...".
std::string setting_columns(const std::vector<std::string>& sweep_keys) {
  std::set<std::string> taken = kStoreColumns;
  std::set<std::string> main_paths;
  std::vector<std::pair<std::string, std::string>> columns = kMainSettings;
  for (const auto& [name, path] : kMainSettings) {
    taken.insert(name);
    main_paths.insert(path);
  }
  for (const std::string& key : sweep_keys) {
    if (main_paths.count(key) > 0) continue;  // already a main column
    const std::string part = last_part(key);
    const auto same_part =
        std::count_if(sweep_keys.begin(), sweep_keys.end(),
                      [&](const std::string& k) { return last_part(k) == part; });
    columns.emplace_back(taken.count(part) == 0 && same_part == 1 ? part : key, key);
  }
  std::string sql;
  for (const auto& [name, path] : columns) {
    sql += fmt::format(", json_extract(runs.config_json, {}) AS {}", quoted_text("$." + path),
                       quoted_identifier(name));
  }
  return sql;
}

std::string view_sql(SqliteDb& db, const char* name) {
  SqliteStatement st(db, "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?");
  st.text(1, name);
  return st.step() ? st.column_text(0).value_or("") : "";
}

}  // namespace

std::vector<std::string> stored_sweep_keys(SqliteDb& db) {
  SqliteStatement st(db,
                     "SELECT DISTINCT j.key FROM runs, json_each(runs.values_json) AS j WHERE "
                     "j.key NOT IN ('variant', 'seed') ORDER BY j.key");
  std::vector<std::string> keys;
  while (st.step()) keys.push_back(st.column_text(0).value_or(""));
  return keys;
}

std::string tidy_views_sql(const std::vector<std::string>& sweep_keys) {
  const std::string columns = setting_columns(sweep_keys);
  return fmt::format(
      "CREATE VIEW tidy_runs AS SELECT runs.*{0} FROM runs;\n"
      "CREATE VIEW tidy AS SELECT results.*, runs.base_variant{0} FROM results JOIN runs ON "
      "runs.hash = results.run_hash;\n",
      columns);
}

void refresh_tidy_views(SqliteDb& db) {
  const std::string wanted = tidy_views_sql(stored_sweep_keys(db));
  // sqlite_master keeps each CREATE statement as written, without its semicolon.
  const std::string stored = view_sql(db, "tidy_runs") + ";\n" + view_sql(db, "tidy") + ";\n";
  if (stored == wanted) return;
  db.exec("DROP VIEW IF EXISTS tidy_runs; DROP VIEW IF EXISTS tidy;" + wanted);
}

}  // namespace normlab
