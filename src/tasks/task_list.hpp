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
// The Chomsky-hierarchy benchmark (arXiv 2207.02098), src/tasks/chomsky/.
TaskInfo even_pairs_info();                   // chomsky/even_pairs.cpp
TaskInfo modular_arithmetic_info();           // chomsky/modular_arithmetic.cpp
TaskInfo parity_check_info();                 // chomsky/parity_check.cpp
TaskInfo cycle_navigation_info();             // chomsky/cycle_navigation.cpp
TaskInfo stack_manipulation_info();           // chomsky/stack_manipulation.cpp
TaskInfo reverse_string_info();               // chomsky/reverse_string.cpp
TaskInfo modular_arithmetic_brackets_info();  // chomsky/modular_arithmetic_brackets.cpp
TaskInfo solve_equation_info();               // chomsky/solve_equation.cpp
TaskInfo duplicate_string_info();             // chomsky/duplicate_string.cpp
TaskInfo missing_duplicate_string_info();     // chomsky/missing_duplicate_string.cpp
TaskInfo odds_first_info();                   // chomsky/odds_first.cpp
TaskInfo binary_addition_info();              // chomsky/binary_addition.cpp
TaskInfo binary_multiplication_info();        // chomsky/binary_multiplication.cpp
TaskInfo compute_sqrt_info();                 // chomsky/compute_sqrt.cpp
TaskInfo bucket_sort_info();                  // chomsky/bucket_sort.cpp

// Every task, in the order `normlab tasks` lists them.
std::vector<TaskInfo> all_task_infos();

}  // namespace normlab
