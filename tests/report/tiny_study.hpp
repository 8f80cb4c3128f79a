// The tiny training study the report tests share, run once per test process: the tiny
// experiment (tests/support/experiment_file.hpp) with periodic validation, the depth probe and
// a description full of markup, through `normlab run`, with a stand-in for gnuplot that keeps
// every script it is given and writes a placeholder PNG.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/cli.hpp"
#include "support/experiment_file.hpp"

namespace normlab::testing {

// A gnuplot stand-in: saves its script as CAPTURES/plot_XXXXXX.gp and writes "png" to the
// script's `set output` file, so that the plot counts as written. Returns its path.
inline std::filesystem::path fake_gnuplot(const std::filesystem::path& dir,
                                          const std::filesystem::path& captures) {
  std::filesystem::create_directories(captures);
  const std::filesystem::path program = dir / "fake_gnuplot.sh";
  std::ofstream(program) << "#!/bin/sh\n"
                            "f=$(mktemp "
                         << shell_quote((captures / "plot_XXXXXX").string())
                         << ")\n"
                            "cat > \"$f\"\n"
                            "out=$(sed -n 's/^set output \"\\(.*\\)\"$/\\1/p' \"$f\" | head -n 1)\n"
                            "[ -n \"$out\" ] && printf png > \"$out\"\n"
                            "exit 0\n";
  ::chmod(program.c_str(), 0755);
  return program;
}

// The scripts the stand-in received whose output is `png` (a name like "curves.png").
inline std::vector<std::string> captured_scripts(const std::filesystem::path& captures,
                                                 const std::string& png) {
  std::vector<std::string> scripts;
  for (const auto& entry : std::filesystem::directory_iterator(captures)) {
    const std::string text = slurp(entry.path());
    if (text.find("/" + png + ".tmp.") != std::string::npos) scripts.push_back(text);
  }
  return scripts;
}

struct TinyStudy {
  TempDir dir;
  std::filesystem::path out, captures;
  RunResult run;
};

// Markup in the experiment file: the report must show it as text.
inline constexpr const char* kHostileDescription = "<script>alert(1)</script> & <b>bold</b>";

inline const TinyStudy& tiny_study() {
  static const std::unique_ptr<TinyStudy> study = [] {
    auto s = std::make_unique<TinyStudy>();
    s->out = s->dir / "out";
    s->captures = s->dir / "captures";
    std::string text = kTinyExperiment;
    text.replace(text.find("schemes"), 0,
                 std::string("description = \"") + kHostileDescription + "\"\n");
    text.replace(text.find("lr = 0.01\n"), 10, "lr = 0.01\neval_every = 20\n");
    text += "\n[probe]\ndepth = true\nbatch = 4\n";
    std::ofstream(s->dir / "tiny.toml") << text;
    s->run = run_normlab({"run", (s->dir / "tiny.toml").string(), "--out", s->out.string()},
                         {"NORMLAB_GNUPLOT=" + fake_gnuplot(s->dir.path(), s->captures).string()});
    return s;
  }();
  return *study;
}

}  // namespace normlab::testing
