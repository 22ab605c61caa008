#pragma once
// A line diff in unified format (diff -u), for `paictl plan --dry-run`.

#include <string>
#include <string_view>

namespace pai::planner {

// "" when the texts are equal. `old_name`/`new_name` label the ---/+++ lines.
// Myers' O(ND) algorithm after trimming the common prefix and suffix.
std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_name, std::string_view new_name, int context = 3);

}  // namespace pai::planner
