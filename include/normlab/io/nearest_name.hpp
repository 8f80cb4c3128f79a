// "Did you mean": the allowed name a mistyped one most likely meant.
#pragma once

#include <string>
#include <vector>

namespace normlab {

// The name of `names` that `typed` most likely meant, "" if none is close: the one equal to it
// once case, '-', '_' and a trailing "norm" or "ln" are dropped (prenorm → pre, Post-LN → post),
// else the one at the smallest edit distance if that is at most 2 (and less than the typed
// name's length).
std::string nearest_name(const std::string& typed, const std::vector<std::string>& names);

}  // namespace normlab
