// `normlab tasks`: the registered tasks, their parameters with defaults, and their lengths.
#include <cstdio>
#include <exception>
#include <memory>
#include <variant>

#include <fmt/format.h>

#include "commands.hpp"
#include "normlab/tasks/task.hpp"

namespace normlab::cli {

void add_tasks_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tasks", "List the tasks and their parameters");
  cmd->callback([] {
    for (const TaskInfo& info : task_registry()) {
      std::printf("%s: %s\n", info.name.c_str(), info.summary.c_str());
      TaskParams defaults;
      for (const TaskParamDef& p : info.params) {
        defaults[p.name] = p.fallback;
        const std::string value =
            std::visit([](const auto& v) { return fmt::format("{}", v); }, p.fallback);
        std::string line = fmt::format("    {} = {}", p.name, value);
        if (!p.choices.empty()) line += fmt::format(" ({})", fmt::join(p.choices, " | "));
        std::printf("%-44s %s\n", line.c_str(), p.help.c_str());
      }
      std::unique_ptr<Task> task;
      try {
        task = info.make(defaults);
      } catch (const std::exception& e) {  // e.g. char_lm without its corpus: list the rest
        std::printf("    not available: %s\n\n", e.what());
        continue;
      }
      const LengthRange r = task->length_range();
      const std::string lengths = r.max == kNoLongestLength ? fmt::format("{} and up", r.min)
                                                            : fmt::format("{} to {}", r.min, r.max);
      const std::string steps = r.step > 1 ? fmt::format(" in steps of {}", r.step) : "";
      std::printf("    lengths: %s%s; vocabulary %d; metrics: %s\n\n", lengths.c_str(),
                  steps.c_str(), task->vocab(),
                  fmt::format("{}", fmt::join(task->metric_names(), ", ")).c_str());
    }
  });
}

}  // namespace normlab::cli
