// The tiny study's report.html in a real browser: headless Chromium (Debian package
// `chromium`, installed by scripts/bootstrap.sh for this test only) loads it from file://,
// takes a screenshot into the test's folder and logs nothing from the page's console.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "report/tiny_study.hpp"

namespace normlab {
namespace {

namespace fs = std::filesystem;
using testing::shell_quote;
using testing::slurp;
using testing::TempDir;
using testing::tiny_study;

struct Browser {
  int status = -1;
  std::string log;  // Chromium's stderr with --enable-logging=stderr
};

// Opens `page` in headless Chromium and writes a 1200 × 3000 screenshot to `png`. The profile
// and HOME live in `dir`; `timeout` only guards against a hung browser.
Browser screenshot(const fs::path& page, const fs::path& png, const fs::path& dir) {
  const fs::path log = dir / "chromium.log";
  const std::string command =
      "HOME=" + shell_quote(dir.string()) + " timeout -s KILL 300 chromium --headless=new " +
      "--no-sandbox --disable-gpu --user-data-dir=" + shell_quote((dir / "profile").string()) +
      " --window-size=1200,3000 --enable-logging=stderr --v=0 --screenshot=" +
      shell_quote(png.string()) + " " + shell_quote("file://" + fs::absolute(page).string()) +
      " > /dev/null 2> " + shell_quote(log.string()) + " < /dev/null";
  Browser b;
  b.status = std::system(command.c_str());
  b.log = slurp(log);
  return b;
}

// The lines Chromium logs for the page's console (console.error, uncaught exceptions, ...):
// "[...:INFO:CONSOLE:1] "message", source: file:///... (1)".
std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

bool is_png(const fs::path& file) {
  return slurp(file).substr(1, 3) == "PNG";
}

TEST(ReportInChromium, RendersWithoutConsoleMessages) {
  ASSERT_EQ(std::system("command -v chromium > /dev/null 2>&1"), 0)
      << "chromium is not installed: scripts/bootstrap.sh installs it (Debian package chromium)";
  const testing::TinyStudy& s = tiny_study();
  ASSERT_TRUE(s.run.exited && s.run.exit_code == 0) << s.run.describe();
  TempDir tmp;

  // The check can fail: a page that logs to its console is seen.
  testing::write_bytes(tmp / "noisy.html",
                       "<!DOCTYPE html><html><body><script>console.error('seen');</script>"
                       "</body></html>\n");
  const Browser noisy = screenshot(tmp / "noisy.html", tmp / "noisy.png", tmp.path());
  ASSERT_EQ(noisy.status, 0) << noisy.log;
  ASSERT_EQ(console_lines(noisy.log).size(), 1u) << noisy.log;

  const fs::path png = tmp / "report.png";
  const Browser b = screenshot(s.out / "report.html", png, tmp.path());
  ASSERT_EQ(b.status, 0) << b.log;
  ASSERT_TRUE(fs::exists(png)) << b.log;
  EXPECT_TRUE(is_png(png));
  // A blank 1200 × 3000 page compresses to about 15 KB; text, tables and figures to far more.
  EXPECT_GT(fs::file_size(png), 100'000u) << "screenshot of " << fs::file_size(png) << " bytes";
  EXPECT_GT(fs::file_size(png), 5 * fs::file_size(tmp / "noisy.png"));
  EXPECT_TRUE(console_lines(b.log).empty()) << b.log;
}

}  // namespace
}  // namespace normlab
