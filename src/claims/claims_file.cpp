// Strict reading of claims/<paper>.toml (docs/claims.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/claims/claims_file.hpp"
#include "normlab/io/toml_reader.hpp"

namespace normlab::claims {
namespace fs = std::filesystem;

namespace {

std::string at(const fs::path& file, const toml::node& node) {
  return fmt::format("{}:{}", file.string(), node.source().begin.line);
}

// Rejects keys of `table` outside `allowed`.
void check_keys(const fs::path& file, const toml::table& table, const std::string& what,
                const std::vector<std::string>& allowed) {
  for (const auto& [key, node] : table) {
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) {
      throw InputError(fmt::format("{}: unknown key '{}' in {}; allowed: {}", at(file, node),
                                   key.str(), what, fmt::join(allowed, ", ")));
    }
  }
}

const toml::node* required(const fs::path& file, const toml::table& table, const std::string& key,
                           const std::string& what) {
  const toml::node* node = table.get(key);
  if (node == nullptr) {
    throw InputError(fmt::format("{}: {} has no '{}' (required)", at(file, table), what, key));
  }
  return node;
}

std::string string_of(const fs::path& file, const toml::node& node, const std::string& key,
                      const std::string& what) {
  if (!node.is_string()) {
    throw InputError(fmt::format("{}: key '{}' in {} must be a string", at(file, node), key, what));
  }
  return std::string(*node.value<std::string>());
}

std::string optional_string(const fs::path& file, const toml::table& table, const std::string& key,
                            const std::string& what, const std::string& fallback) {
  const toml::node* node = table.get(key);
  return node == nullptr ? fallback : string_of(file, *node, key, what);
}

FilterValue scalar_filter(const fs::path& file, const toml::node& node, const std::string& column,
                          const std::string& what) {
  FilterValue f;
  const std::optional<double> number = exact_double(node);
  if (node.is_string()) {
    f.text = *node.value<std::string>();
    if (f.text == "beyond_training") f.kind = FilterValue::Kind::beyond_training;
    if (f.text == "within_training") f.kind = FilterValue::Kind::within_training;
    if (f.text == "last_step") f.kind = FilterValue::Kind::last_step;
    if (f.text == "decay_start") f.kind = FilterValue::Kind::decay_start;
    if (f.text == "second_half") f.kind = FilterValue::Kind::second_half;
  } else if (number && std::isfinite(*number)) {
    f.kind = FilterValue::Kind::number;
    f.number = *number;
  } else {
    throw InputError(
        fmt::format("{}: filter '{}' in {} must be a string, a number, a list of them, "
                    "\"beyond_training\", \"within_training\", \"last_step\", "
                    "\"decay_start\" or \"second_half\"",
                    at(file, node), column, what));
  }
  return f;
}

FilterValue filter_value(const fs::path& file, const toml::node& node, const std::string& column,
                         const std::string& what) {
  const toml::array* list = node.as_array();
  if (list == nullptr) return scalar_filter(file, node, column, what);
  FilterValue f;
  f.kind = FilterValue::Kind::one_of;
  for (const toml::node& item : *list) {
    FilterValue choice = scalar_filter(file, item, column, what);
    if (choice.kind != FilterValue::Kind::text && choice.kind != FilterValue::Kind::number) {
      throw InputError(fmt::format("{}: filter '{}' in {}: a list holds strings and numbers only",
                                   at(file, item), column, what));
    }
    f.choices.push_back(choice);
  }
  if (f.choices.empty()) {
    throw InputError(
        fmt::format("{}: filter '{}' in {} is an empty list", at(file, node), column, what));
  }
  return f;
}

std::string describe_value(const FilterValue& f) {
  switch (f.kind) {
    case FilterValue::Kind::number:
      return fmt::format("{:g}", f.number);
    case FilterValue::Kind::one_of: {
      std::vector<std::string> parts;
      for (const FilterValue& c : f.choices) parts.push_back(describe_value(c));
      return fmt::format("[{}]", fmt::join(parts, ", "));
    }
    default:
      return f.text;
  }
}

Term read_term(const fs::path& file, const toml::node& node, const std::string& what) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    throw InputError(fmt::format(
        "{}: each entry of 'terms' in {} must be a table {{ weight = ..., filter = {{...}} }}",
        at(file, node), what));
  }
  const std::string term_what = what + " terms";
  check_keys(file, *table, term_what, {"weight", "filter", "reduce", "value", "x", "by"});
  Term t;
  if (const toml::node* w = table->get("weight")) {
    const std::optional<double> weight = exact_double(*w);
    if (!weight || !std::isfinite(*weight) || *weight == 0) {
      throw InputError(fmt::format(
          "{}: key 'weight' in {} must be a finite number other than 0 (held exactly by a "
          "double)",
          at(file, *w), term_what));
    }
    t.weight = *weight;
  }
  if (const toml::node* f = table->get("filter")) {
    const toml::table* filter = f->as_table();
    if (filter == nullptr) {
      throw InputError(fmt::format("{}: key 'filter' in {} must be a table {{ COLUMN = VALUE }}",
                                   at(file, *f), term_what));
    }
    for (const auto& [column, value] : *filter) {
      t.filter[std::string(column.str())] =
          filter_value(file, value, std::string(column.str()), term_what);
    }
  }
  const std::string reduce = optional_string(file, *table, "reduce", term_what, "mean");
  if (reduce == "mean") {
    t.reduce = Reduce::mean;
  } else if (reduce == "cv") {
    t.reduce = Reduce::cv;
  } else if (reduce == "max_over_min") {
    t.reduce = Reduce::max_over_min;
  } else if (reduce == "loglog_slope") {
    t.reduce = Reduce::loglog_slope;
  } else if (reduce == "best_mean") {
    t.reduce = Reduce::best_mean;
  } else {
    throw InputError(fmt::format(
        "{}: key 'reduce' in {} is '{}'; allowed: mean, cv, max_over_min, loglog_slope, best_mean",
        at(file, *table->get("reduce")), term_what, reduce));
  }
  t.value = optional_string(file, *table, "value", term_what, "value");
  // A column key that one reduction needs and no other takes: x (loglog_slope), by (best_mean).
  const auto column_key = [&](const char* key, Reduce owner) {
    std::string column = optional_string(file, *table, key, term_what, "");
    if (t.reduce == owner && column.empty()) {
      throw InputError(fmt::format("{}: reduce = \"{}\" in {} needs {} = \"COLUMN\"",
                                   at(file, *table), to_string(owner), term_what, key));
    }
    if (t.reduce != owner && !column.empty()) {
      throw InputError(fmt::format("{}: key '{}' in {} is for reduce = \"{}\" only",
                                   at(file, *table->get(key)), key, term_what, to_string(owner)));
    }
    return column;
  };
  t.x = column_key("x", Reduce::loglog_slope);
  t.by = column_key("by", Reduce::best_mean);
  std::vector<std::string> parts;
  for (const auto& [column, value] : t.filter) {
    parts.push_back(column + "=" + describe_value(value));
  }
  t.description = fmt::format("{:+g} × {}({}) of {{{}}}", t.weight, to_string(t.reduce), t.value,
                              fmt::join(parts, ", "));
  return t;
}

Expectation read_expect(const fs::path& file, const toml::node& node, const std::string& what) {
  const std::string allowed =
      "allowed: \"negative\", \"positive\", \"measure\" (a finding) or { band = [lo, hi] } "
      "with lo < hi, at most one of them infinite (-inf or inf)";
  Expectation e;
  if (node.is_string()) {
    const std::string s = *node.value<std::string>();
    if (s == "negative") return e;
    if (s == "positive") {
      e.kind = Expectation::Kind::positive;
      return e;
    }
    if (s == "measure") {
      e.kind = Expectation::Kind::measure;
      return e;
    }
  } else if (const toml::table* t = node.as_table(); t != nullptr && t->size() == 1) {
    const toml::array* band = t->get_as<toml::array>("band");
    if (band != nullptr && band->size() == 2) {
      const std::optional<double> low = exact_double((*band)[0]), high = exact_double((*band)[1]);
      // One bound may be infinite (a one-sided band, "at least lo"); both would hold every
      // interval, and decide nothing.
      if (low && high && *low < *high && (std::isfinite(*low) || std::isfinite(*high))) {
        e.kind = Expectation::Kind::band;
        e.low = *low;
        e.high = *high;
        return e;
      }
    }
  }
  throw InputError(
      fmt::format("{}: key 'expect' in {} is not valid; {}", at(file, node), what, allowed));
}

Claim read_claim(const fs::path& file, const fs::path& root, const std::string& arxiv,
                 const toml::node& node) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    throw InputError(
        fmt::format("{}: 'claim' must be an array of tables, [[claim]]", at(file, node)));
  }
  const std::string what = "[[claim]]";
  check_keys(
      file, *table, what,
      {"id", "sentence", "study", "set", "source", "pair_by", "terms", "expect", "min_pairs",
       "deterministic", "share", "negative_control", "drop_incomplete_pairs", "choice", "grid"});
  Claim c;
  c.paper = arxiv;
  c.where = at(file, *table);
  c.id = string_of(file, *required(file, *table, "id", what), "id", what);
  const std::string claim_what = fmt::format("claim '{}'", c.id);
  c.sentence =
      string_of(file, *required(file, *table, "sentence", claim_what), "sentence", claim_what);
  c.study_text = string_of(file, *required(file, *table, "study", claim_what), "study", claim_what);
  c.study = fs::path(c.study_text).is_absolute() ? fs::path(c.study_text) : root / c.study_text;
  if (const toml::node* sets = table->get("set")) {
    const toml::array* list = sets->as_array();
    if (list == nullptr) {
      throw InputError(fmt::format("{}: key 'set' in {} must be a list of \"KEY=VALUE\" strings",
                                   at(file, *sets), claim_what));
    }
    for (const toml::node& s : *list) c.sets.push_back(string_of(file, s, "set", claim_what));
  }
  c.source = optional_string(file, *table, "source", claim_what, c.source);
  c.pair_by = optional_string(file, *table, "pair_by", claim_what, c.pair_by);
  const toml::node* terms = required(file, *table, "terms", claim_what);
  const toml::array* term_list = terms->as_array();
  if (term_list == nullptr || term_list->empty()) {
    throw InputError(fmt::format("{}: key 'terms' in {} must be a non-empty list of tables",
                                 at(file, *terms), claim_what));
  }
  for (const toml::node& t : *term_list) c.terms.push_back(read_term(file, t, claim_what));
  c.expect = read_expect(file, *required(file, *table, "expect", claim_what), claim_what);
  if (const toml::node* m = table->get("min_pairs")) {
    constexpr int64_t kMaxPairs = 1000000;
    if (!m->is_integer() || *m->value<int64_t>() < 1 || *m->value<int64_t>() > kMaxPairs) {
      throw InputError(
          fmt::format("{}: key 'min_pairs' in {} must be an integer from 1 to {} (≥ 2 "
                      "unless the claim is deterministic)",
                      at(file, *m), claim_what, kMaxPairs));
    }
    c.min_pairs = static_cast<int>(*m->value<int64_t>());
  }
  if (c.min_pairs < 2 &&
      !(table->get("deterministic") && table->get("deterministic")->value_or(false))) {
    throw InputError(
        fmt::format("{}: key 'min_pairs' in {} must be at least 2: an interval "
                    "across pairs needs two (or mark the claim deterministic)",
                    at(file, *table->get("min_pairs")), claim_what));
  }
  if (const toml::node* d = table->get("deterministic")) {
    if (!d->is_boolean()) {
      throw InputError(fmt::format("{}: key 'deterministic' in {} must be true or false",
                                   at(file, *d), claim_what));
    }
    c.deterministic = *d->value<bool>();
    if (c.deterministic && table->get("min_pairs") == nullptr) c.min_pairs = 1;
  }
  if (const toml::node* sh = table->get("share")) {
    if (!sh->is_boolean()) {
      throw InputError(
          fmt::format("{}: key 'share' in {} must be true or false", at(file, *sh), claim_what));
    }
    c.share = *sh->value<bool>();
    if (c.share && c.deterministic) {
      throw InputError(
          fmt::format("{}: {} cannot be both a share and deterministic: a share's "
                      "interval is the binomial one, a deterministic claim's the "
                      "range of its values",
                      at(file, *sh), claim_what));
    }
  }
  if (const toml::node* d = table->get("drop_incomplete_pairs")) {
    if (!d->is_boolean()) {
      throw InputError(fmt::format("{}: key 'drop_incomplete_pairs' in {} must be true or false",
                                   at(file, *d), claim_what));
    }
    c.drop_incomplete_pairs = *d->value<bool>();
  }
  if (const toml::node* n = table->get("negative_control")) {
    if (!n->is_boolean()) {
      throw InputError(fmt::format("{}: key 'negative_control' in {} must be true or false",
                                   at(file, *n), claim_what));
    }
    c.negative_control = *n->value<bool>();
  }
  c.choice = optional_string(file, *table, "choice", claim_what, "");
  if (const toml::node* g = table->get("grid")) {
    const std::string grid_what = claim_what + " grid";
    const toml::table* grid = g->as_table();
    if (grid == nullptr) {
      throw InputError(
          fmt::format("{}: key 'grid' in {} must be a table {{ row = \"...\", column "
                      "= \"...\" }}",
                      at(file, *g), claim_what));
    }
    check_keys(file, *grid, grid_what, {"row", "column"});
    c.grid_row = string_of(file, *required(file, *grid, "row", grid_what), "row", grid_what);
    c.grid_column =
        string_of(file, *required(file, *grid, "column", grid_what), "column", grid_what);
    if (!c.finding()) {
      throw InputError(
          fmt::format("{}: key 'grid' in {} is for findings (expect = \"measure\") "
                      "only",
                      at(file, *g), claim_what));
    }
  }
  return c;
}

// One [[question]] table; its findings must be findings of `claims` (the same paper's).
Question read_question(const fs::path& file, const toml::node& node,
                       const std::vector<Claim>& claims) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    throw InputError(
        fmt::format("{}: each 'question' must be a table, [[question]]", at(file, node)));
  }
  const std::string what = "a question";
  check_keys(file, *table, what, {"asks", "source", "part"});
  Question q;
  q.where = at(file, *table);
  q.asks = string_of(file, *required(file, *table, "asks", what), "asks", what);
  q.source = string_of(file, *required(file, *table, "source", what), "source", what);
  const toml::node* parts = required(file, *table, "part", what);
  const toml::array* part_list = parts->as_array();
  if (part_list == nullptr || part_list->empty()) {
    throw InputError(
        fmt::format("{}: 'part' in {} must be a non-empty array of tables, [[question.part]]",
                    at(file, *parts), what));
  }
  for (const toml::node& p : *part_list) {
    const std::string part_what = "a question's part";
    const toml::table* part = p.as_table();
    if (part == nullptr) {
      throw InputError(fmt::format("{}: each 'part' of {} must be a table, [[question.part]]",
                                   at(file, p), what));
    }
    check_keys(file, *part, part_what, {"subject", "findings"});
    QuestionPart qp;
    qp.subject =
        string_of(file, *required(file, *part, "subject", part_what), "subject", part_what);
    const toml::node* findings = required(file, *part, "findings", part_what);
    const toml::array* list = findings->as_array();
    if (list == nullptr || list->empty()) {
      throw InputError(
          fmt::format("{}: key 'findings' in {} must be a non-empty list of tables "
                      "{{ place = \"...\", id = \"...\" }}",
                      at(file, *findings), part_what));
    }
    for (const toml::node& f : *list) {
      const std::string finding_what = "a part's finding";
      const toml::table* finding = f.as_table();
      if (finding == nullptr) {
        throw InputError(fmt::format(
            "{}: each of {}'s findings must be a table {{ place = \"...\", id = \"...\" }}",
            at(file, f), part_what));
      }
      check_keys(file, *finding, finding_what, {"place", "id"});
      const std::string id =
          string_of(file, *required(file, *finding, "id", finding_what), "id", finding_what);
      const auto claim =
          std::find_if(claims.begin(), claims.end(), [&](const Claim& c) { return c.id == id; });
      if (claim == claims.end() || !claim->finding()) {
        throw InputError(fmt::format(
            "{}: '{}' in {} is {} of this file; a question is answered by its paper's "
            "findings (expect = \"measure\")",
            at(file, f), id, what, claim == claims.end() ? "not an id" : "not a finding"));
      }
      qp.findings.push_back(id);
      qp.places.push_back(optional_string(file, *finding, "place", finding_what, ""));
    }
    q.parts.push_back(qp);
  }
  return q;
}

}  // namespace

std::string to_string(Reduce r) {
  switch (r) {
    case Reduce::mean:
      return "mean";
    case Reduce::cv:
      return "cv";
    case Reduce::max_over_min:
      return "max_over_min";
    case Reduce::loglog_slope:
      return "loglog_slope";
    case Reduce::best_mean:
      return "best_mean";
  }
  return "?";
}

std::string to_string(const Expectation& e) {
  switch (e.kind) {
    case Expectation::Kind::negative:
      return "negative";
    case Expectation::Kind::positive:
      return "positive";
    case Expectation::Kind::band:
      return fmt::format("band [{:g}, {:g}]", e.low, e.high);
    case Expectation::Kind::measure:
      return "measure";
  }
  return "?";
}

Paper read_paper(const fs::path& file, const fs::path& root) {
  std::shared_ptr<toml::table> doc = parse_toml_file(file);
  check_keys(file, *doc, "top level", {"paper", "title", "claim", "question"});
  Paper p;
  p.arxiv = string_of(file, *required(file, *doc, "paper", "the file"), "paper", "top level");
  p.title = optional_string(file, *doc, "title", "top level", "");
  const toml::node* claims = required(file, *doc, "claim", "the file");
  const toml::array* list = claims->as_array();
  if (list == nullptr || list->empty()) {
    throw InputError(fmt::format("{}: 'claim' must be a non-empty array of tables, [[claim]]",
                                 at(file, *claims)));
  }
  for (const toml::node& node : *list) {
    p.claims.push_back(read_claim(file, root, p.arxiv, node));
    p.claims.back().paper_title = p.title;
  }
  if (const toml::node* questions = doc->get("question")) {
    const toml::array* list = questions->as_array();
    if (list == nullptr) {
      throw InputError(fmt::format("{}: 'question' must be an array of tables, [[question]]",
                                   at(file, *questions)));
    }
    for (const toml::node& node : *list) {
      p.questions.push_back(read_question(file, node, p.claims));
      p.questions.back().paper = p.arxiv;
    }
  }
  return p;
}

std::vector<Paper> read_ledger(const fs::path& claims_dir) {
  if (!fs::is_directory(claims_dir)) {
    throw InputError(fmt::format("{}: no such folder of claims files", claims_dir.string()));
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(claims_dir)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  // Study paths are relative to the folder that holds claims/ (the repository root); "claims"
  // gives "", so the paths stay as written, relative to the working directory.
  fs::path dir = claims_dir.lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  const fs::path root = dir.parent_path();
  std::vector<Paper> papers;
  std::set<std::string> ids;
  for (const fs::path& file : files) {
    papers.push_back(read_paper(file, root));
    for (const Claim& c : papers.back().claims) {
      if (!ids.insert(c.id).second) {
        throw InputError(
            fmt::format("{}: claim id '{}' is used twice; ids are unique across "
                        "the ledger",
                        c.where, c.id));
      }
    }
  }
  return papers;
}

std::string Claim::kind() const {
  if (finding()) return "finding";
  return negative_control ? "negative control" : "claim";
}

}  // namespace normlab::claims
