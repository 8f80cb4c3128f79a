#include "tasks/task_list.hpp"

namespace normlab {

std::vector<TaskInfo> all_task_infos() {
  return {set_complement_info(),
          max_retrieval_info(),
          dyck_info(),
          tomita_info(),
          argmax_retrieval_info(),
          dict_lookup_info(),
          char_lm_info(),
          mqar_info(),
          even_pairs_info(),
          modular_arithmetic_info(),
          parity_check_info(),
          cycle_navigation_info(),
          stack_manipulation_info(),
          reverse_string_info(),
          modular_arithmetic_brackets_info(),
          solve_equation_info(),
          duplicate_string_info(),
          missing_duplicate_string_info(),
          odds_first_info(),
          binary_addition_info(),
          binary_multiplication_info(),
          compute_sqrt_info(),
          bucket_sort_info()};
}

}  // namespace normlab
