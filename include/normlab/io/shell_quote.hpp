// Words for a POSIX shell command line that a user copies (a resume command, a recorded study
// command) or that normlab runs through /bin/sh.
#pragma once

#include <string>

namespace normlab {

// `s` as one shell word: as it is when it holds only characters no shell treats specially,
// else single-quoted (a ' inside written '\'').
std::string shell_quoted(const std::string& s);

}  // namespace normlab
