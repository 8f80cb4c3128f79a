#include "tasks/task_list.hpp"

namespace normlab {

std::vector<TaskInfo> all_task_infos() {
  return {};
}

}  // namespace normlab
