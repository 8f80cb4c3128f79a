// The registered tasks; each *_info() lives in the task's own file in src/tasks/.
#pragma once

#include <vector>

#include "normlab/task.hpp"

namespace normlab {

// Every task, in the order `normlab tasks` lists them.
std::vector<TaskInfo> all_task_infos();

}  // namespace normlab
