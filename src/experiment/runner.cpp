#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "normlab/atomic_file.hpp"
#include "normlab/errors.hpp"
#include "normlab/experiment.hpp"
#include "normlab/progress.hpp"
#include "normlab/provenance.hpp"
#include "normlab/results_store.hpp"
#include "normlab/run_rows.hpp"
#include "normlab/sweep_progress.hpp"
#include "normlab/trainer.hpp"

extern char** environ;

namespace normlab {
namespace fs = std::filesystem;

namespace {

struct Job {
  std::string label;
  fs::path dir;
  const Variant* variant = nullptr;
  uint64_t seed = 0;
};

bool evaluated(const Experiment& e, const fs::path& dir) {
  for (const std::string& w : e.weights) {
    if (!fs::exists(dir / ("eval_" + w + ".json"))) return false;
  }
  return true;
}

// The last non-empty line of a file (for failure messages).
std::string last_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// Starts `program train DIR --resume` with stdout and stderr appended to DIR/train.log.
pid_t spawn_run(const fs::path& program, const fs::path& dir) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (dir / "train.log").string();
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const std::string prog = program.string(), d = dir.string();
  std::vector<std::string> args = {prog, "train", d, "--resume", "--die-with-parent"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, prog.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw InputError(fmt::format("cannot start {}: {}", prog, std::strerror(rc)));
  return pid;
}

}  // namespace

// Holds OUT/.lock for the rest of the process, so a second `normlab run` on the same folder
// refuses at once instead of racing this one for the same runs. flock is released by the
// kernel when the process ends, however it ends.
void lock_results_folder(const fs::path& out) {
  const fs::path file = out / ".lock";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw InputError(fmt::format("{}: cannot open: {}", file.string(), std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw InputError(
        fmt::format("{}: another normlab process is working in this folder; wait "
                    "for it to finish (the same command afterwards finds its runs "
                    "done)",
                    out.string()));
  }
  // fd stays open on purpose: the lock lives as long as this process.
}

int run_experiment(const Experiment& e, const StudyOptions& o) {
  fs::create_directories(o.out / "runs");
  lock_results_folder(o.out);
  write_file_atomic(o.out / "experiment.json", to_json(e).dump(2) + "\n");
  if (fs::exists(e.file)) write_file_atomic(o.out / "experiment.toml", read_file(e.file));

  const nlohmann::json eval{{"lengths", e.eval.lengths},
                            {"samples", e.eval.samples},
                            {"seed", e.eval.seed},
                            {"max_rows", e.eval.max_rows},
                            {"weights", e.weights}};
  std::vector<Job> todo;
  int total = 0, skipped = 0;
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      ++total;
      RunSpec spec;
      spec.label = fmt::format("{} seed {}", v.label, seed);
      spec.model = v.model;
      spec.task = e.task;
      spec.train = v.train;
      spec.train.seed = seed;
      spec.eval = eval;
      const fs::path dir = run_directory(o.out, v, seed);
      prepare_run(dir, spec);
      const RunStatus status = read_run_status(dir);
      if (status == RunStatus::diverged || (status == RunStatus::finished && evaluated(e, dir))) {
        ++skipped;
        continue;
      }
      todo.push_back({spec.label, dir, &v, seed});
    }
  }
  // Each run's rows go into the store, in one transaction, as soon as it ends.
  ResultsStore store(o.out / "results.sqlite");
  const int64_t experiment_id = store.begin_experiment(experiment_record(e));
  const int jobs = o.jobs > 0 ? o.jobs : e.jobs;
  std::fprintf(stderr, "%s: %d runs (%zu to do, %d already done), %d at a time; results in %s\n",
               e.name.c_str(), total, todo.size(), skipped, jobs, o.out.string().c_str());

  struct Active {
    Job job;
    std::chrono::steady_clock::time_point start;
    std::string started_at;
  };
  std::map<pid_t, Active> active;
  size_t next = 0;
  int done = skipped, failed = 0;
  const bool terminal = stderr_is_terminal();
  SweepProgress progress(stderr, terminal, progress_interval(terminal));
  // The live block: each active run's newest record, and the total with its ETA.
  auto show_progress = [&] {
    std::vector<ActiveRun> views;
    for (const auto& [pid, a] : active) {
      views.push_back({a.job.label, a.job.variant->train.steps,
                       read_run_snapshot(a.job.dir / "metrics.jsonl")});
    }
    int64_t waiting_steps = 0;
    for (size_t i = next; i < todo.size(); ++i) waiting_steps += todo[i].variant->train.steps;
    progress.update(views, format_sweep_total(done, total, active.size(),
                                              sweep_eta_seconds(views, waiting_steps)));
  };
  while (next < todo.size() || !active.empty()) {
    while (next < todo.size() && static_cast<int>(active.size()) < jobs) {
      const Job& job = todo[next++];
      const pid_t pid = spawn_run(o.program, job.dir);
      active[pid] = {job, std::chrono::steady_clock::now(), utc_now()};
      progress.message(fmt::format("[{}/{}] started  {}", done + static_cast<int>(active.size()),
                                   total, job.label));
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0) break;
    if (pid == 0) {  // every run still training: show where they are, look again shortly
      show_progress();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    auto it = active.find(pid);
    if (it == active.end()) continue;
    const Job job = it->second.job;
    const std::string started_at = it->second.started_at;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.start).count();
    active.erase(it);
    RunRows rows = gather_run_rows(e, *job.variant, job.seed, o.out);
    rows.run.started_at = started_at;
    rows.run.finished_at = utc_now();
    rows.run.seconds = seconds;
    store.record_run(experiment_id, rows);
    ++done;
    const RunStatus run_status = read_run_status(job.dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && evaluated(e, job.dir)) {
      progress.message(
          fmt::format("[{}/{}] finished {} in {:.1f} s", done, total, job.label, seconds));
    } else if (run_status == RunStatus::diverged) {
      progress.message(fmt::format("[{}/{}] diverged {}: {}", done, total, job.label,
                                   last_line(job.dir / "train.log")));
    } else {
      ++failed;
      const std::string why = WIFSIGNALED(status)
                                  ? fmt::format("killed by signal {}", WTERMSIG(status))
                                  : fmt::format("exit code {}", WEXITSTATUS(status));
      progress.message(fmt::format("[{}/{}] FAILED   {} ({}): {}; see {}", done, total, job.label,
                                   why, last_line(job.dir / "train.log"),
                                   (job.dir / "train.log").string()));
    }
  }
  progress.clear();
  return failed;
}

}  // namespace normlab
