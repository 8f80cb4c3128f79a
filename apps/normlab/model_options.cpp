#include "model_options.hpp"

#include <fmt/format.h>

#include <tuple>

#include "normlab/base/errors.hpp"
#include "normlab/model/model_fields.hpp"
#include "normlab/model/scheme_table.hpp"
#include "validators.hpp"

namespace normlab::cli {
namespace {

// "--mlp-mult" for the key "mlp_mult".
std::string flag_of(const FieldInfo& f) {
  std::string flag = std::string("--") + f.toml_key();
  for (char& ch : flag) {
    if (ch == '_') ch = '-';
  }
  return flag;
}

// One option per field (model_fields.hpp). Numbers are checked for their syntax here (integers
// also for their range), reals' ranges and combinations by validate() in resolve.
struct CliRegistrar {
  CLI::App* cmd;
  ModelOptions& o;
  void operator()(const FieldInfo& f, int& value, IntRange range) {
    o.given[f.name] =
        cmd->add_option(flag_of(f), value, f.help)->check(integer_in(range))->capture_default_str();
  }
  void operator()(const FieldInfo& f, double& value, RealRange) {
    o.given[f.name] =
        cmd->add_option(flag_of(f), value, f.help)->check(real_number())->capture_default_str();
  }
  void operator()(const FieldInfo& f, bool& value) {
    const std::string flag =
        f.flag != nullptr ? f.flag : fmt::format("{0},!--no-{1}", flag_of(f), flag_of(f).substr(2));
    o.given[f.name] = cmd->add_flag(flag, value, f.help);
  }
  // Toggles are a flag pair: --key turns the norm on, --no-key off; neither leaves "auto".
  void operator()(const FieldInfo& f, Toggle& value) {
    o.given[f.name] = cmd->add_flag_function(
        f.flag, [&value](int64_t count) { value = count > 0 ? Toggle::on : Toggle::off; }, f.help);
  }
  template <typename E>
  void operator()(const FieldInfo& f, E& value) {
    const std::string flag = flag_of(f);
    ModelOptions& opts = o;
    CLI::Option* opt = cmd->add_option_function<std::string>(
        flag,
        [&value, &opts, flag](const std::string& text) {
          try {
            parse_field(text, value);
          } catch (const UsageError& e) {
            opts.error = fmt::format("{}: {}", flag, e.what());
          }
        },
        f.help);
    opt->default_str(to_string(value));
    if (const std::vector<std::string> choices = field_choices(value); !choices.empty()) {
      opt->check(one_of(choices));
    }
    o.given[f.name] = opt;
  }
};

}  // namespace

bool ModelOptions::was_given(const std::string& field) const {
  const auto it = given.find(field);
  return it != given.end() && it->second->count() > 0;
}

void add_model_options(CLI::App* cmd, ModelOptions& o) {
  visit_model_fields(o.config, CliRegistrar{cmd, o});
}

ModelConfig resolve_model_options(ModelOptions& o) {
  if (!o.error.empty()) throw UsageError(o.error);
  ModelConfig c = o.config;
  if (!o.was_given("norm")) c.norm = default_norm_kind(c.scheme);
  // A scheme's number (mix(k), block_attnres(S), hyper_connections(n)) only with its scheme,
  // and hyper-connections' --sinkhorn only with them.
  const SchemeRow& row = scheme_row(c.scheme);
  for (const SchemeRow& owner : scheme_table()) {
    if (owner.number && &owner != &row && o.was_given(owner.number.key)) {
      throw UsageError(fmt::format("{} applies only to --scheme {} (got --scheme {})",
                                   owner.number.flag, owner.name, row.name));
    }
  }
  if (o.was_given("sinkhorn") && row.residual_mode != ResidualMode::hyper) {
    throw UsageError(fmt::format(
        "--sinkhorn applies only to --scheme hyper_connections (got --scheme {})", row.name));
  }
  validate(c);
  return c;
}

}  // namespace normlab::cli
