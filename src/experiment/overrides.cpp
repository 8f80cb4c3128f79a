#include "normlab/experiment/overrides.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/io/printable.hpp"
#include "normlab/io/toml_reader.hpp"

namespace normlab {
namespace {

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// A dotted path of bare TOML keys: letters, digits, '_' and '-' between the dots.
bool is_dotted_key(const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.') return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '.' && key[i - 1] == '.') return false;
    if (c != '.' && c != '_' && c != '-' && !std::isalnum(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

constexpr int kMaxExtendsDepth = 16;

// The files of `file`'s extends chain, the root base first and `file` last, each with its
// path; `extends` removed. `chain` holds the canonical paths already read (cycle check).
struct ChainFile {
  std::filesystem::path file;
  std::shared_ptr<toml::table> doc;
};

void read_chain(const std::filesystem::path& file, std::vector<std::filesystem::path>& chain,
                std::vector<ChainFile>& out) {
  std::shared_ptr<toml::table> doc = parse_toml_file(file);
  const toml::node* extends = doc->get("extends");
  if (extends != nullptr) {
    const std::string at = node_location(file.string(), *extends);
    const auto* name = extends->as_string();
    if (name == nullptr || name->get().empty()) {
      throw UsageError(at +
                       "key 'extends' must be the path of a TOML file, e.g. extends = "
                       "\"base.toml\" (relative to this file's folder)");
    }
    const std::filesystem::path base_file = file.parent_path() / name->get();
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(base_file, ec);
    for (const std::filesystem::path& earlier : chain) {
      if (earlier == canonical) {
        throw UsageError(fmt::format("{}extends {}, which extends this file again (a cycle)", at,
                                     base_file.string()));
      }
    }
    if (static_cast<int>(chain.size()) >= kMaxExtendsDepth) {
      throw UsageError(
          fmt::format("{}more than {} files extend one another", at, kMaxExtendsDepth));
    }
    std::error_code unreadable;  // a name too long for the file system, a folder not searchable
    if (!std::filesystem::exists(base_file, unreadable)) {
      throw InputError(fmt::format(
          "{}extends {}, which {}", at, printable(base_file.string(), 200),
          unreadable ? "cannot be read: " + unreadable.message() : std::string("does not exist")));
    }
    chain.push_back(canonical);
    read_chain(base_file, chain, out);
    doc->erase("extends");
  }
  out.push_back({file, doc});
}

// Removes `doc`'s [tier] table and returns its table `tier`, if it has one.
std::optional<toml::table> take_tier(toml::table& doc, const std::string& tier) {
  toml::node* tiers = doc.get("tier");
  if (tiers == nullptr) return std::nullopt;
  std::optional<toml::table> own;
  if (toml::node* t = tiers->as_table()->get(tier); t != nullptr) own = std::move(*t->as_table());
  doc.erase("tier");
  return own;
}

std::vector<ChainFile> read_chain(const std::filesystem::path& file) {
  std::error_code ec;
  std::vector<std::filesystem::path> chain{std::filesystem::weakly_canonical(file, ec)};
  std::vector<ChainFile> out;
  read_chain(file, chain, out);
  return out;
}

}  // namespace

std::shared_ptr<toml::table> parse_experiment_file(const std::filesystem::path& file) {
  std::vector<ChainFile> files = read_chain(file);
  auto doc = std::make_shared<toml::table>();
  for (ChainFile& f : files) merge_toml(*doc, std::move(*f.doc));
  return doc;
}

// Each file of the chain, root first, merged over the one it extends, and right after it its
// own tier: a value a file writes wins over every file it extends and their tiers, and a tier
// only over its own file and those it extends.
std::shared_ptr<toml::table> load_experiment_document(const std::filesystem::path& file,
                                                      const std::string& tier,
                                                      const std::vector<std::string>& sets,
                                                      std::string* applied_tier) {
  std::vector<ChainFile> files = read_chain(file);
  std::vector<std::string> names;
  for (const ChainFile& f : files) {
    for (const std::string& name : tier_names(*f.doc, f.file.string())) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const std::string applied = chosen_tier(names, file.string(), tier);
  auto doc = std::make_shared<toml::table>();
  for (ChainFile& f : files) {
    std::optional<toml::table> overlay = take_tier(*f.doc, applied);
    merge_toml(*doc, std::move(*f.doc));
    if (overlay) merge_toml(*doc, std::move(*overlay));
  }
  if (applied_tier != nullptr) *applied_tier = applied;
  for (const std::string& set : sets) {
    // "tier.NAME.KEY=VALUE" sets KEY at tier NAME alone: applied when NAME is the tier run,
    // skipped at the others; NAME must be one of the file's tiers.
    const std::string assignment = normalized_set(set);
    if (assignment.rfind("tier.", 0) != 0) {
      apply_set(*doc, set);
      continue;
    }
    const size_t dot = assignment.find('.', 5);
    const size_t eq = assignment.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq) {
      throw UsageError(
          fmt::format("--set '{}': a tier's value is set as tier.NAME.KEY=VALUE, e.g. "
                      "tier.full.train.steps=6256",
                      set));
    }
    const std::string name = assignment.substr(5, dot - 5);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw UsageError(fmt::format("--set '{}': {} has no tier '{}'; its tiers: {}", set,
                                   file.string(), name, fmt::join(names, ", ")));
    }
    if (name == applied) apply_set(*doc, assignment.substr(dot + 1));
  }
  return doc;
}

void merge_toml(toml::table& base, toml::table&& overlay) {
  for (auto& [key, node] : overlay) {
    toml::node* existing = base.get(key.str());
    if (existing != nullptr && existing->is_table() && node.is_table()) {
      merge_toml(*existing->as_table(), std::move(*node.as_table()));
    } else {
      // Moved, so that the node keeps its source region (a copy would lose it).
      base.insert_or_assign(key, std::move(node));
    }
  }
  overlay.clear();
}

std::vector<std::string> tier_names(const toml::table& doc, const std::string& file) {
  const toml::node* tiers = doc.get("tier");
  if (tiers == nullptr) return {};
  if (!tiers->is_table()) {
    throw UsageError(fmt::format("{}:{}: key 'tier' must be a table of tiers, e.g. [tier.quick]",
                                 file, tiers->source().begin.line));
  }
  std::vector<std::string> names;
  for (const auto& [name, node] : *tiers->as_table()) {
    if (!node.is_table()) {
      throw UsageError(fmt::format("{}:{}: tier '{}' must be a table, e.g. [tier.{}]", file,
                                   node.source().begin.line, name.str(), name.str()));
    }
    names.emplace_back(name.str());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string chosen_tier(const std::vector<std::string>& names, const std::string& file,
                        const std::string& requested) {
  if (names.empty()) {
    if (!requested.empty()) {
      throw UsageError(
          fmt::format("--tier {}: {} has no tiers (no [tier.NAME] tables)", requested, file));
    }
    return "";
  }
  const std::string tier = requested.empty() ? kDefaultTier : requested;
  if (std::find(names.begin(), names.end(), tier) == names.end()) {
    throw UsageError(fmt::format("--tier {}: {} has no tier '{}'; its tiers: {}", tier, file, tier,
                                 fmt::join(names, ", ")));
  }
  return tier;
}

std::string apply_tier(toml::table& doc, const std::string& file, const std::string& requested) {
  const std::string tier = chosen_tier(tier_names(doc, file), file, requested);
  if (std::optional<toml::table> overlay = take_tier(doc, tier)) {
    merge_toml(doc, std::move(*overlay));
  }
  return tier;
}

std::string normalized_set(const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) return trim(assignment);
  return trim(assignment.substr(0, eq)) + "=" + trim(assignment.substr(eq + 1));
}

void apply_set(toml::table& doc, const std::string& assignment) {
  const std::string allowed =
      "expected KEY=VALUE with KEY a dotted key (train.lr, task.language, seeds) and VALUE a "
      "TOML value (3e-3, \"cosine\", [1, 2], true)";
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    throw UsageError(fmt::format("--set '{}': no '='; {}", assignment, allowed));
  }
  const std::string key = trim(assignment.substr(0, eq));
  const std::string value = trim(assignment.substr(eq + 1));
  if (!is_dotted_key(key)) {
    throw UsageError(
        fmt::format("--set '{}': '{}' is not a dotted key; {}", assignment, key, allowed));
  }
  if (value.empty()) {
    throw UsageError(fmt::format("--set '{}': no value; {}", assignment, allowed));
  }
  toml::table snippet;
  try {
    // The source path is what the reader shows for these values instead of FILE:LINE.
    snippet = toml::parse(key + " = " + value, "--set " + key + "=" + value);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("--set '{}': '{}' is not a TOML value ({}); {}", assignment, value,
                                 e.description(), allowed));
  }
  // The snippet must set KEY alone: a value spanning lines could add keys or tables of its own.
  const toml::table* level = &snippet;
  std::string rest = key;
  bool alone = true;
  for (size_t dot = rest.find('.'); alone; dot = rest.find('.')) {
    const std::string part = rest.substr(0, dot);
    alone = level->size() == 1 && level->contains(part);
    if (dot == std::string::npos || !alone) break;
    level = (*level)[part].as_table();
    alone = level != nullptr;
    rest = rest.substr(dot + 1);
  }
  if (!alone) {
    throw UsageError(
        fmt::format("--set '{}': the value sets other keys than '{}' (one value, on "
                    "one line); {}",
                    assignment, key, allowed));
  }
  merge_toml(doc, std::move(snippet));
}

std::string study_folder_name(const std::string& name, const std::string& tier,
                              const std::vector<std::string>& sets) {
  std::string out = tier.empty() ? name : name + "-" + tier;
  for (const std::string& set : sets) {
    std::string assignment = normalized_set(set);
    if (assignment.rfind("tier.", 0) == 0) {
      const std::string prefix = "tier." + tier + ".";
      if (tier.empty() || assignment.rfind(prefix, 0) != 0) continue;
      assignment = assignment.substr(prefix.size());
    }
    out += "__";
    for (const char c : assignment) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '=' || c == '_' ||
          c == '-' || c == '+') {
        out.push_back(c);
      } else if (c == ',') {
        out.push_back('-');
      }  // quotes, brackets, braces and spaces are dropped
    }
  }
  return out;
}

}  // namespace normlab
