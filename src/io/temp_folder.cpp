#include "normlab/io/temp_folder.hpp"

#include <cstdlib>
#include <system_error>

namespace normlab {

namespace fs = std::filesystem;

TempFolder::TempFolder(const std::string& prefix) {
  std::error_code ec;
  const fs::path root = fs::temp_directory_path(ec);
  if (ec) return;
  std::string templ = (root / (prefix + "_XXXXXX")).string();
  if (::mkdtemp(templ.data()) != nullptr) path_ = templ;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

}  // namespace normlab
