// extends, tiers and --set: changes applied to an experiment file's TOML document before the strict
// reader (experiment.hpp) sees it (docs/experiments.md, "Tiers and --set").
//
//   extends = "base.toml"            the file is merged over base.toml (a path relative to the
//                                    file's folder), which may extend another
//   [tier.quick] / [tier.full] ...   tables that mirror the top level; `--tier NAME` deep-merges
//                                    tier.NAME over the document and removes `tier`
//   --set KEY=VALUE                  a dotted key and a TOML value, merged after the tier
//   --set tier.NAME.KEY=VALUE        the same, at tier NAME alone (skipped at the others)
//
// Merging: tables merge key by key, recursively; any other value (numbers, strings, arrays,
// arrays of tables) replaces what was there. Merged nodes are moved, not copied, so they keep
// their source region and the reader's errors still name the file, line and key.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace toml {
inline namespace v3 {
class table;
}  // namespace v3
}  // namespace toml

namespace normlab {

// Parses `file` and, when it has `extends = "PATH"`, merges it over the file PATH names
// (relative to `file`'s folder; recursively, at most 16 deep) and removes `extends`; the files'
// [tier.NAME] tables merge like any other table. Nodes keep the file they came from, so errors
// name it. A cycle, a missing file or a non-string `extends` is a UsageError or InputError
// naming the file and line.
std::shared_ptr<toml::table> parse_experiment_file(const std::filesystem::path& file);

// The document `normlab run` reads: each file of the extends chain, the root base first,
// merged over the one it extends and followed by its own [tier.T] table (T = chosen_tier over
// the tiers of every file of the chain), then apply_set for each of `sets` in order; a set
// "tier.NAME.KEY=VALUE" applies KEY=VALUE when NAME is T and nothing otherwise (a NAME that is
// none of the tiers is a UsageError). A value a file
// writes wins over what it inherits, tiers included; a tier wins over its own file and those it
// extends. `applied_tier` receives T ("" without tiers).
std::shared_ptr<toml::table> load_experiment_document(const std::filesystem::path& file,
                                                      const std::string& tier,
                                                      const std::vector<std::string>& sets,
                                                      std::string* applied_tier = nullptr);

// The tier a file runs at when none is asked for.
inline constexpr const char* kDefaultTier = "quick";

// Deep-merges `overlay` into `base`, moving overlay's nodes (overlay is left empty).
void merge_toml(toml::table& base, toml::table&& overlay);

// The names under [tier], sorted; empty when the file has none. A `tier` key that is not a
// table of tables is a UsageError naming the file and line.
std::vector<std::string> tier_names(const toml::table& doc, const std::string& file);

// The tier to apply among `names` (a file's tiers, sorted): `requested`, or kDefaultTier when
// none is requested and there are tiers; "" when there are none. A requested tier not among
// them is a UsageError naming `file` and its tiers.
std::string chosen_tier(const std::vector<std::string>& names, const std::string& file,
                        const std::string& requested);

// Applies to one file (no extends) tier `requested` (chosen_tier over its tiers) and removes
// the `tier` table. Returns the tier that was applied, "" when the file has no tiers.
std::string apply_tier(toml::table& doc, const std::string& file, const std::string& requested);

// Parses "KEY=VALUE" (KEY dotted, VALUE a TOML value) and deep-merges it into `doc`. A
// malformed assignment is a UsageError starting "--set 'KEY=VALUE': ". Values keep the
// source "--set KEY=VALUE", which the reader shows instead of a line of the file.
void apply_set(toml::table& doc, const std::string& assignment);

// "KEY=VALUE" with the spaces around '=' removed: the form recorded and used in folder names.
std::string normalized_set(const std::string& assignment);

// The results folder name of a study: NAME, NAME-TIER, NAME[-TIER]__SET1__SET2 with each set
// reduced to file-name-safe characters, e.g. "resharpen_tomita-quick__task.language=3". A set
// "tier.T.KEY=VALUE" names the folder as "KEY=VALUE" at tier T and not at the other tiers: the
// name says what runs at its tier.
std::string study_folder_name(const std::string& name, const std::string& tier,
                              const std::vector<std::string>& sets);

}  // namespace normlab
