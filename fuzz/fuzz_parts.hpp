// The fuzz input of a harness that reads several files or arguments: parts separated by a line
// holding only "%%" (the bytes "\n%%\n"). fuzz/make_corpus.py writes seed inputs in this form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace normlab::fuzz {

inline constexpr std::string_view kPartSeparator = "\n%%\n";

// The parts of `data`, in order; one part (the whole input) when it holds no separator.
inline std::vector<std::string> split_parts(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t at = all.find(kPartSeparator); at != std::string_view::npos;
       at = all.find(kPartSeparator, begin)) {
    parts.emplace_back(all.substr(begin, at - begin));
    begin = at + kPartSeparator.size();
  }
  parts.emplace_back(all.substr(begin));
  return parts;
}

}  // namespace normlab::fuzz
