#include "normlab/experiment/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/io/toml_reader.hpp"

namespace normlab {
namespace {

// The parts of an experiment that may differ between its runs. Everything else (task,
// evaluation, probes, schemes, seeds) is one per study: sweep those with --set, one results
// folder each. train.lengths is one per study too: the summaries mark lengths beyond it.
bool may_sweep(const std::string& key) {
  const bool model_or_train = key.rfind("model.", 0) == 0 || key.rfind("train.", 0) == 0;
  return model_or_train && key != "train.lengths";
}

std::string where(const toml::node& node, const std::string& file) {
  return node_location(file, node);
}

// A value as it appears in labels and folder names: 0.003, 31, cosine, true.
std::string value_text(const toml::node& v) {
  if (const auto* x = v.as_integer()) return std::to_string(x->get());
  if (const auto* x = v.as_floating_point()) return fmt::format("{}", x->get());
  if (const auto* x = v.as_string()) return x->get();
  if (const auto* x = v.as_boolean()) return x->get() ? "true" : "false";
  return "";
}

// Collects the leaves of the [sweep] table as dotted keys ("train.lr"), in key order.
void collect_axes(const toml::table& table, const std::string& prefix, const std::string& file,
                  std::vector<SweepAxis>& axes) {
  for (const auto& [k, node] : table) {
    // A quoted key may hold any text; the dotted key below is split at its dots again when the
    // point is applied, so each part must be a bare key (letters, digits, _ and -).
    const std::string part(k.str());
    const bool bare = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!bare) {
      throw UsageError(where(node, file) + "sweep key '" + part +
                       "': a key of [sweep] is a bare name such as lr or train.lr (unquoted); "
                       "a quoted key holding a dot or other characters names no setting");
    }
    const std::string key = prefix.empty() ? part : prefix + "." + part;
    if (const toml::table* inner = node.as_table()) {
      collect_axes(*inner, key, file, axes);
      continue;
    }
    const std::string at = where(node, file) + "sweep key '" + key + "': ";
    if (!may_sweep(key)) {
      throw UsageError(at +
                       "only keys of [model] and [train] (except train.lengths) can be swept; "
                       "for the task, evaluation, probes or lengths run one study per value "
                       "with --set");
    }
    const toml::array* list = node.as_array();
    if (list == nullptr || list->empty()) {
      throw UsageError(at + "must be a non-empty list of values, e.g. " + key + " = [1e-3, 3e-3]");
    }
    SweepAxis axis{key, std::string(k.str()), {}};
    for (const toml::node& v : *list) {
      const std::string text = value_text(v);
      if (text.empty()) {
        throw UsageError(where(v, file) + "sweep key '" + key +
                         "': each value must be a number, a non-empty string or a boolean");
      }
      if (std::find(axis.values.begin(), axis.values.end(), text) != axis.values.end()) {
        throw UsageError(where(v, file) + "sweep key '" + key + "' lists " + text + " twice");
      }
      axis.values.push_back(text);
    }
    axes.push_back(std::move(axis));
  }
}

// "lr=0.003 width=31" (labels) or "lr=0.003__width=31" (folder names).
std::string point_text(const std::vector<SweepAxis>& axes, const std::vector<size_t>& point,
                       const std::string& separator) {
  std::string out;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (a > 0) out += separator;
    out += axes[a].name + "=" + axes[a].values[point[a]];
  }
  return out;
}

// The value text with only file-name-safe characters (letters, digits, . _ - + =).
std::string file_safe(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
        c == '+' || c == '=') {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::vector<SweepAxis> read_sweep_axes(const toml::table& doc, const std::string& file) {
  const toml::node* sweep = doc.get("sweep");
  if (sweep == nullptr) return {};
  const toml::table* table = sweep->as_table();
  if (table == nullptr) {
    throw UsageError(where(*sweep, file) +
                     "key 'sweep' must be a table of lists, e.g. [sweep] train.lr = [1e-3, 3e-3]");
  }
  std::vector<SweepAxis> axes;
  collect_axes(*table, "", file, axes);
  if (axes.empty()) {
    throw UsageError(where(*sweep, file) + "[sweep] lists no keys");
  }
  // The grid's size before anything is expanded: each point is a study document in memory and
  // a run folder per scheme and seed.
  uint64_t points = 1;
  std::string product;
  for (const SweepAxis& a : axes) {
    points = std::min<uint64_t>(points * a.values.size(), kMaxSweepPoints + 1);
    product += fmt::format("{}{}", product.empty() ? "" : " × ", a.values.size());
  }
  if (points > kMaxSweepPoints) {
    throw UsageError(
        fmt::format("{}[sweep] has {} values per key, more than {} points in all; "
                    "split it into several studies",
                    where(*sweep, file), product, kMaxSweepPoints));
  }
  for (SweepAxis& a : axes) {  // a name shared by two axes is spelled out in full
    if (std::count_if(axes.begin(), axes.end(), [&](const SweepAxis& b) {
          return b.key.substr(b.key.rfind('.') + 1) == a.key.substr(a.key.rfind('.') + 1);
        }) > 1) {
      a.name = a.key;
    }
  }
  return axes;
}

std::vector<std::vector<size_t>> sweep_points(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<size_t>> points{{}};
  for (const SweepAxis& axis : axes) {
    std::vector<std::vector<size_t>> longer;
    for (const std::vector<size_t>& p : points) {
      for (size_t i = 0; i < axis.values.size(); ++i) {
        longer.push_back(p);
        longer.back().push_back(i);
      }
    }
    points = std::move(longer);
  }
  return points;
}

void apply_sweep_point(toml::table& doc, const std::vector<SweepAxis>& axes,
                       const std::vector<size_t>& point) {
  toml::table sweep = std::move(*doc.get("sweep")->as_table());
  doc.erase("sweep");
  for (size_t a = 0; a < axes.size(); ++a) {
    // Walk both the sweep table and the document down the dotted key.
    toml::table* from = &sweep;
    toml::table* to = &doc;
    std::string rest = axes[a].key;
    for (size_t dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      const std::string part = rest.substr(0, dot);
      from = from->get(part)->as_table();
      if (to->get(part) == nullptr || !to->get(part)->is_table()) {
        to->insert_or_assign(part, toml::table{});
      }
      to = to->get(part)->as_table();
      rest = rest.substr(dot + 1);
    }
    toml::array& values = *from->get(rest)->as_array();
    // Moved, so that the value keeps its source line for the reader's messages.
    to->insert_or_assign(rest, std::move(*values.get(point[a])));
  }
}

Experiment read_swept_experiment(const std::function<std::shared_ptr<toml::table>()>& load,
                                 const std::string& file) {
  const std::shared_ptr<toml::table> first = load();
  const std::vector<SweepAxis> axes = read_sweep_axes(*first, file);
  if (axes.empty()) {
    TomlSection top(first.get(), file, "top level");
    return read_experiment(top, file);
  }
  Experiment study;
  bool have_study = false;
  for (const std::vector<size_t>& point : sweep_points(axes)) {
    const std::shared_ptr<toml::table> doc = load();
    apply_sweep_point(*doc, axes, point);
    TomlSection top(doc.get(), file, "top level");
    Experiment e = read_experiment(top, file);
    std::vector<Variant> variants = std::move(e.variants);
    if (!have_study) {
      study = std::move(e);
      study.variants.clear();
      for (const SweepAxis& a : axes) study.sweep_keys.push_back(a.key);
      have_study = true;
    }
    const std::string label = point_text(axes, point, " ");
    const std::string slug = file_safe(point_text(axes, point, "__"));
    for (Variant& v : variants) {
      v.label += " " + label;
      v.slug += "__" + slug;
      for (size_t a = 0; a < axes.size(); ++a) {
        v.point.emplace_back(axes[a].key, axes[a].values[point[a]]);
      }
      study.variants.push_back(std::move(v));
    }
  }
  for (size_t i = 0; i < study.variants.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (study.variants[i].slug == study.variants[j].slug) {
        throw UsageError(fmt::format(
            "{}: [sweep]: variants '{}' and '{}' have the same name on "
            "disk '{}'; use values that differ in letters or digits",
            file, study.variants[j].label, study.variants[i].label, study.variants[i].slug));
      }
    }
  }
  return study;
}

}  // namespace normlab
