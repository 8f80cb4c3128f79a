// Two claims ledgers side by side (claims/ledger_diff.hpp).
#include "normlab/claims/ledger_diff.hpp"

#include <fmt/format.h>

#include <map>

#include "normlab/base/errors.hpp"
#include "normlab/claims/ledger.hpp"
#include "normlab/io/printable.hpp"

namespace normlab::claims {
namespace {

struct Claimed {
  std::string paper;
  LedgerEntry entry;
};

// id → entry of a claims.json, and the ids in its order.
std::pair<std::map<std::string, Claimed>, std::vector<std::string>> entries(
    const nlohmann::json& ledger, const std::string& name) {
  std::map<std::string, Claimed> by_id;
  std::vector<std::string> order;
  try {
    for (const nlohmann::json& c : ledger.at("claims")) {
      Claimed e;
      e.paper = c.at("paper").get<std::string>();
      e.entry.verdict = c.at("verdict").get<std::string>();
      e.entry.n = c.value("n", 0);
      // effect, low and high are null where the claim has no pairs (not run, study failed).
      const bool have = c.contains("effect") && c.at("effect").is_number() &&
                        c.at("low").is_number() && c.at("high").is_number();
      e.entry.effect = have ? effect_text(c.at("effect").get<double>(), c.at("low").get<double>(),
                                          c.at("high").get<double>())
                            : "–";
      const std::string id = c.at("id").get<std::string>();
      if (by_id.emplace(id, e).second) order.push_back(id);
    }
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format(
        "{}: not a claims ledger (a claims list with id, paper and verdict strings); expected "
        "the claims.json that `normlab claims run` writes",
        name));
  }
  return {by_id, order};
}

std::string cell(const std::optional<LedgerEntry>& e) {
  if (!e) return "–";
  return fmt::format("{}, {} (n {})", markdown_cell(e->verdict), e->effect, e->n);
}

}  // namespace

std::string to_string(Moved m) {
  switch (m) {
    case Moved::none:
      return "";
    case Moved::effect:
      return "effect";
    case Moved::verdict:
      return "verdict";
    case Moved::added:
      return "added";
    case Moved::removed:
      return "removed";
  }
  return "";
}

std::vector<ClaimChange> diff_ledgers(const nlohmann::json& before, const nlohmann::json& after,
                                      const std::string& before_name,
                                      const std::string& after_name) {
  const auto [old_by_id, old_order] = entries(before, before_name);
  const auto [new_by_id, new_order] = entries(after, after_name);
  std::vector<ClaimChange> out;
  for (const std::string& id : new_order) {
    const Claimed& now = new_by_id.at(id);
    ClaimChange c{id, now.paper, std::nullopt, now.entry, Moved::added};
    const auto it = old_by_id.find(id);
    if (it != old_by_id.end()) {
      c.before = it->second.entry;
      const LedgerEntry& was = it->second.entry;
      c.moved = was.verdict != now.entry.verdict                         ? Moved::verdict
                : was.effect != now.entry.effect || was.n != now.entry.n ? Moved::effect
                                                                         : Moved::none;
    }
    out.push_back(c);
  }
  for (const std::string& id : old_order) {
    if (new_by_id.count(id) != 0) continue;
    const Claimed& was = old_by_id.at(id);
    out.push_back({id, was.paper, was.entry, std::nullopt, Moved::removed});
  }
  return out;
}

std::string diff_markdown(const std::vector<ClaimChange>& changes) {
  std::map<Moved, int> count;
  for (const ClaimChange& c : changes) ++count[c.moved];
  std::string out = fmt::format(
      "{} claims: {} with another verdict, {} with the same verdict and another effect, {} "
      "added, {} removed, {} unchanged\n\n",
      changes.size(), count[Moved::verdict], count[Moved::effect], count[Moved::added],
      count[Moved::removed], count[Moved::none]);
  out += "| claim | paper | before: verdict, effect [95% interval] (n) | after | moved |\n";
  out += "| --- | --- | --- | --- | --- |\n";
  for (const ClaimChange& c : changes) {
    out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(c.id), markdown_cell(c.paper),
                       cell(c.before), cell(c.after), to_string(c.moved));
  }
  return out;
}

}  // namespace normlab::claims
