// A folder of its own under the system's temporary directory, removed with everything in it
// when the object ends.
#pragma once

#include <filesystem>
#include <string>

namespace normlab {

class TempFolder {
 public:
  // Creates <temp>/<prefix>_XXXXXX; path() is empty where that failed.
  explicit TempFolder(const std::string& prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace normlab
