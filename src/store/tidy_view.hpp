// The tidy views of the results store: its runs and results with the run's main settings and
// every swept key as typed columns, so a study's table reads like a tidy data frame
// (docs/store.md, "Tidy views"):
//
//   tidy_runs = runs.*                + task, layers, width, heads, pos, steps, batch, lr,
//                                       train_max_len, one column per other [sweep] key
//   tidy      = results.*, base_variant + the same columns, from the result's run
//
// A column's value is read from the run's settings (runs.config_json, the run.json the run hash
// covers), so it has the type the setting has: 0.003 is a REAL, 31 an INTEGER, "cosine" TEXT. A
// swept key is named by its last part ("warmup" for train.warmup) unless another column has that
// name, then by its dotted key ("model.norm"). The views are rewritten whenever the swept keys
// of the stored runs change, inside the transaction that changed them.
#pragma once

#include <string>
#include <vector>

namespace normlab {

class SqliteDb;

// The swept keys of the stored runs (the keys of runs.values_json other than variant and seed).
std::vector<std::string> stored_sweep_keys(SqliteDb& db);

// The CREATE VIEW statements of both views for these swept keys.
std::string tidy_views_sql(const std::vector<std::string>& sweep_keys);

// Rewrites both views when their definitions differ from tidy_views_sql of the stored keys. Runs
// inside the caller's transaction.
void refresh_tidy_views(SqliteDb& db);

}  // namespace normlab
