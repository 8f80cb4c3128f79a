// Where a result came from: the program's version, the commit it was built from, the host and
// the time, recorded with every experiment in the results store.
#pragma once

#include <string>

namespace normlab {

// The project version, e.g. "0.1.0".
std::string normlab_version();
// The git commit of the source tree at build time, "+dirty" appended when it had uncommitted
// changes; "" when the source was not a git checkout.
std::string build_git_commit();
std::string host_name();
// The current UTC time, ISO 8601 to the second: "2026-11-23T14:31:48Z".
std::string utc_now();

}  // namespace normlab
