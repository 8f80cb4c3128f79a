// The registered tasks; each *_info() lives in the task's own file in src/tasks/.
#pragma once

#include <vector>

#include "normlab/tasks/task.hpp"

namespace normlab {

TaskInfo set_complement_info();    // set_complement.cpp
TaskInfo max_retrieval_info();     // max_retrieval.cpp
TaskInfo dyck_info();              // dyck.cpp
TaskInfo tomita_info();            // tomita.cpp
TaskInfo argmax_retrieval_info();  // argmax_retrieval.cpp
TaskInfo dict_lookup_info();       // dict_lookup.cpp
TaskInfo char_lm_info();           // char_lm.cpp
TaskInfo mqar_info();              // mqar.cpp

// Every task, in the order `normlab tasks` lists them.
std::vector<TaskInfo> all_task_infos();

}  // namespace normlab
