#include "tasks/task_list.hpp"

namespace normlab {

std::vector<TaskInfo> all_task_infos() {
  return {set_complement_info(),   max_retrieval_info(), dyck_info(),    tomita_info(),
          argmax_retrieval_info(), dict_lookup_info(),   char_lm_info(), mqar_info()};
}

}  // namespace normlab
