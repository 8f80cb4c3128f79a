#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "normlab/base/errors.hpp"
#include "normlab/base/interrupts.hpp"
#include "normlab/experiment/experiment.hpp"
#include "normlab/experiment/kept_runs.hpp"
#include "normlab/experiment/mpi_comm.hpp"
#include "normlab/experiment/run_rows.hpp"
#include "normlab/experiment/sweep_progress.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/crash_points.hpp"
#include "normlab/io/progress.hpp"
#include "normlab/store/provenance.hpp"
#include "normlab/store/results_store.hpp"
#include "normlab/train/trainer.hpp"

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

bool has_probes(const Experiment& e) {
  return e.probe_depth || e.probe_variance || e.probe_dilution || e.probe_bridge;
}

// Run hash → run folder, for every run in the `folders` that ended as `e` asks (finished and
// evaluated with its weights, or diverged): what `--reuse` restores from. Folders that do not
// exist are skipped (a study that has not run yet).
std::map<std::string, fs::path> reusable_runs(const Experiment& e,
                                              const std::vector<fs::path>& folders) {
  std::map<std::string, fs::path> by_hash;
  for (const fs::path& folder : folders) {
    if (!fs::is_directory(folder)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
      const fs::path dir = entry.path();
      if (!is_kept_run(dir)) continue;
      const RunStatus status = read_run_status(dir);
      if (status == RunStatus::diverged || (status == RunStatus::finished && evaluated(e, dir))) {
        by_hash.emplace(run_hash(dir), dir);
      }
    }
  }
  return by_hash;
}

// A run's probes ([probe]) as soon as it has finished, where it was trained (this process, an
// MPI rank, a Slurm array task), so that its rows carry them into the store.
void probe_if_finished(const Experiment& e, const Job& job) {
  if (read_run_status(job.dir) == RunStatus::finished && evaluated(e, job.dir)) {
    probe_finished_run(e, *job.variant, job.seed, job.dir);
  }
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
  std::vector<std::string> args = {
      prog, "train", d, "--resume", "--die-with-parent", std::to_string(::getpid())};
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

// Holds the folder's lock file (OUT/.lock, or OUT/.lock-shard-K for a Slurm shard) for the
// rest of the process, so a second `normlab run` on the same folder refuses at once instead of
// racing this one for the same runs. flock is released by the kernel when the process ends,
// however it ends.
void lock_results_folder(const fs::path& out, const Shard& shard) {
  const fs::path file =
      out / (shard.count > 1 ? fmt::format(".lock-shard-{}", shard.index) : std::string(".lock"));
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

namespace {

// Every run of the study in a fixed order (variants, then seeds): the same list on every MPI
// rank, so ranks name a run by its index. With `prepare`, each run folder is created or
// checked against its config (prepare_run).
std::vector<Job> study_jobs(const Experiment& e, const fs::path& out, bool prepare) {
  const nlohmann::json eval{{"lengths", e.eval.lengths},
                            {"samples", e.eval.samples},
                            {"seed", e.eval.seed},
                            {"max_rows", e.eval.max_rows},
                            {"weights", e.weights}};
  std::vector<Job> jobs;
  for (const Variant& v : e.variants) {
    for (uint64_t seed : e.seeds) {
      RunSpec spec;
      spec.label = fmt::format("{} seed {}", v.label, seed);
      spec.model = v.model;
      spec.task = e.task;
      spec.train = v.train;
      spec.train.seed = seed;
      spec.eval = eval;
      const fs::path dir = run_directory(out, v, seed);
      if (prepare) prepare_run(dir, spec);
      jobs.push_back({spec.label, dir, &v, seed});
    }
  }
  return jobs;
}

// How a training process ended, as rank 0 reports it.
struct Ending {
  bool exited_ok = false;  // exit code 0
  std::string why;         // "exit code 3", "killed by signal 9"
};

Ending ending_of(int wait_status) {
  Ending x;
  x.exited_ok = WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
  x.why = WIFSIGNALED(wait_status) ? fmt::format("killed by signal {}", WTERMSIG(wait_status))
                                   : fmt::format("exit code {}", WEXITSTATUS(wait_status));
  return x;
}

// Trains one run in a child process and waits for it (an MPI worker's one run at a time).
int train_and_wait(const fs::path& program, const fs::path& dir) {
  const pid_t pid = spawn_run(program, dir);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::filesystem::path results_store_file(const fs::path& out, const Shard& shard) {
  if (shard.count <= 1) return out / "results.sqlite";
  return out / fmt::format("results-shard-{}-of-{}.sqlite", shard.index, shard.count);
}

int run_experiment(const Experiment& e, const StudyOptions& o) {
  fs::create_directories(o.out / "runs");
  lock_results_folder(o.out, o.shard);
  write_file_atomic(o.out / "experiment.json", to_json(e).dump(2) + "\n");
  if (fs::exists(e.file)) write_file_atomic(o.out / "experiment.toml", read_file(e.file));

  const std::vector<Job> jobs = study_jobs(e, o.out, true);
  auto ended_here = [&](const fs::path& dir) {
    const RunStatus status = read_run_status(dir);
    return status == RunStatus::diverged || (status == RunStatus::finished && evaluated(e, dir));
  };
  // With --keep: a run that ended here and is not kept is probed (an earlier invocation's run
  // may not be) and kept; a run that did not end here but is kept is restored (kept_runs.hpp).
  auto keep = [&](const Job& job) {
    probe_if_finished(e, job);
    keep_run(job.dir, o.keep / job.dir.filename());
  };
  std::vector<size_t> todo, restored, reused;  // indices into `jobs`
  if (!o.reuse.empty() && has_probes(e)) {
    std::fprintf(stderr,
                 "%s: --reuse not used: the study's [probe] table needs each run's weights\n",
                 e.name.c_str());
  }
  const std::map<std::string, fs::path> reusable =
      has_probes(e) ? std::map<std::string, fs::path>{} : reusable_runs(e, o.reuse);
  int total = 0, skipped = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(o.shard.count)) != o.shard.index) continue;
    ++total;
    const fs::path kept = o.keep / jobs[i].dir.filename();
    if (!o.keep.empty() && !ended_here(jobs[i].dir) && is_kept_run(kept)) {
      if (run_hash(kept) != run_hash(jobs[i].dir)) {
        throw UsageError(fmt::format(
            "{}: the kept run was trained with other settings than {} asks for now; remove it "
            "to train the run again",
            kept.string(), jobs[i].label));
      }
      restore_kept_run(kept, jobs[i].dir);
      restored.push_back(i);
    }
    if (!ended_here(jobs[i].dir) && checkpoint_step(jobs[i].dir) == 0) {
      if (const auto found = reusable.find(run_hash(jobs[i].dir)); found != reusable.end()) {
        restore_reused_run(found->second, jobs[i].dir);
        reused.push_back(i);
      }
    }
    if (ended_here(jobs[i].dir)) {
      if (!o.keep.empty() && !is_kept_run(kept)) keep(jobs[i]);
      ++skipped;
      continue;
    }
    todo.push_back(i);
  }
  // Each run's rows go into the store, in one transaction, as soon as it ends.
  ResultsStore store(results_store_file(o.out, o.shard));
  if (o.shard.count > 1) store.mark_shard(o.shard.index, o.shard.count);
  const int64_t experiment_id = store.begin_experiment(experiment_record(e));
  for (const std::vector<size_t>* copied : {&restored, &reused}) {
    for (size_t i : *copied) {
      store.record_run(experiment_id, gather_run_rows(e, *jobs[i].variant, jobs[i].seed, o.out));
    }
  }
  const int jobs_here = o.jobs > 0 ? o.jobs : e.jobs;
  const int workers = o.mpi != nullptr ? o.mpi->size() - 1 : 0;
  const std::string where =
      workers > 0 ? fmt::format("{} here and 1 on each of {} other MPI ranks", jobs_here, workers)
                  : fmt::format("{} at a time", jobs_here);
  const std::string shard_note =
      o.shard.count > 1 ? fmt::format(" (Slurm shard {} of {})", o.shard.index, o.shard.count) : "";
  std::vector<std::string> resuming;  // "pre seed 1 from step 4000"
  for (size_t i : todo) {
    if (const int64_t step = checkpoint_step(jobs[i].dir); step > 0) {
      resuming.push_back(fmt::format("{} from step {}", jobs[i].label, step));
    }
  }
  const size_t listed = std::min<size_t>(resuming.size(), 4);
  const std::string resuming_note =
      resuming.empty()
          ? ""
          : fmt::format("; resuming {}{}",
                        fmt::join(resuming.begin(),
                                  resuming.begin() + static_cast<std::ptrdiff_t>(listed), ", "),
                        resuming.size() > listed
                            ? fmt::format(" and {} more", resuming.size() - listed)
                            : "");
  std::string restored_note = restored.empty() ? ""
                                               : fmt::format(", {} of them restored from {}",
                                                             restored.size(), o.keep.string());
  if (!reused.empty()) {
    restored_note += fmt::format(
        ", {} of them another study's runs with the same settings "
        "(--reuse)",
        reused.size());
  }
  if (o.only_kept) {
    std::fprintf(stderr, "%s%s: %d runs (%d done%s; %zu not trained: --only-kept); results in %s\n",
                 e.name.c_str(), shard_note.c_str(), total, skipped, restored_note.c_str(),
                 todo.size(), o.out.string().c_str());
    return 0;
  }
  std::fprintf(stderr, "%s%s: %d runs (%zu to do, %d already done%s%s), %s; results in %s\n",
               e.name.c_str(), shard_note.c_str(), total, todo.size(), skipped,
               restored_note.c_str(), resuming_note.c_str(), where.c_str(), o.out.string().c_str());

  struct Active {
    size_t job;  // index into `jobs`
    std::chrono::steady_clock::time_point start;
    std::string started_at;
  };
  std::map<pid_t, Active> local;  // this process's children
  std::map<int, size_t> remote;   // MPI rank → the job it trains
  int stopped_workers = 0;
  size_t next = 0;
  int done = skipped, failed = 0;
  std::vector<std::string> stopped;  // runs an interrupt stopped: "pre seed 1 at step 4000"
  catch_interrupts();
  const bool terminal = stderr_is_terminal();
  SweepProgress progress(stderr, terminal, progress_interval(terminal));
  // The live block: each active run's newest record with its recent speed, and the total with
  // its ETA.
  std::map<size_t, RecentRate> recent;         // by index into `jobs`
  std::vector<double> cost(jobs.size(), 0.0);  // step_cost of each run to do, by index into `jobs`
  for (size_t i : todo) cost[i] = step_cost(*jobs[i].variant);
  auto show_progress = [&] {
    const double now = steady_seconds();
    std::vector<ActiveRun> views;
    auto view = [&](size_t i) {
      RunSnapshot snapshot = read_run_snapshot(jobs[i].dir / "metrics.jsonl");
      RecentRate& rate = recent[i];
      if (snapshot.step > 0) rate.observe(now, snapshot.step);
      snapshot.steps_per_s = rate.steps_per_s(snapshot.steps_per_s);
      views.push_back({jobs[i].label, jobs[i].variant->train.steps, snapshot,
                       read_eval_progress(jobs[i].dir), cost[i]});
    };
    for (const auto& [pid, a] : local) view(a.job);
    for (const auto& [rank, i] : remote) view(i);
    double waiting_work = 0;
    for (size_t k = next; k < todo.size(); ++k) {
      waiting_work += static_cast<double>(jobs[todo[k]].variant->train.steps) * cost[todo[k]];
    }
    const size_t evaluating = static_cast<size_t>(std::count_if(
        views.begin(), views.end(), [](const ActiveRun& r) { return r.evaluation.has_value(); }));
    progress.update(views, format_sweep_total(done, total, views.size() - evaluating, evaluating,
                                              sweep_eta_seconds(views, waiting_work)));
  };
  // " (from step S)" for a run that resumes from its checkpoint at S (its time counts from
  // there), read before the run starts.
  std::map<size_t, std::string> resumed;  // by index into `jobs`
  auto note_resume = [&](size_t i) {
    const int64_t from = checkpoint_step(jobs[i].dir);
    resumed[i] = from > 0 ? fmt::format(" (from step {})", from) : "";
  };
  auto started = [&](size_t i) {
    progress.message(fmt::format("[{}/{}] started  {}{}",
                                 done + static_cast<int>(local.size() + remote.size()), total,
                                 jobs[i].label, resumed[i]));
  };
  // Records a run that ended (here or on another rank) and prints its line.
  auto ended = [&](size_t i, RunRows rows, const Ending& how, const std::string& log_line) {
    crash_point();
    store.record_run(experiment_id, rows);
    crash_point();
    ++done;
    const Job& job = jobs[i];
    if (how.exited_ok && rows.run.status == to_string(RunStatus::finished) &&
        !rows.results.empty()) {
      progress.message(fmt::format("[{}/{}] finished {} in {:.1f} s{}", done, total, job.label,
                                   rows.run.seconds, resumed[i]));
    } else if (rows.run.status == to_string(RunStatus::diverged)) {
      progress.message(fmt::format("[{}/{}] diverged {}: {}", done, total, job.label, log_line));
    } else if (rows.run.status == to_string(RunStatus::interrupted)) {
      --done;  // not ended: it resumes
      const int64_t step = checkpoint_step(job.dir);
      stopped.push_back(fmt::format("{} at step {}", job.label, step));
      progress.message(fmt::format("interrupted {} at step {}, saved there", job.label, step));
    } else {
      ++failed;
      progress.message(fmt::format("[{}/{}] FAILED   {} ({}): {}; see {}", done, total, job.label,
                                   how.why, log_line, (job.dir / "train.log").string()));
    }
    if (!o.keep.empty() && ended_here(job.dir)) keep(job);
  };
  // A worker asking for work (kReady) or reporting a run (kDone, which asks for more).
  auto serve = [&](const MpiComm::Message& m) {
    if (m.tag == MpiComm::kDone) {
      const nlohmann::json j = nlohmann::json::parse(m.text);
      const size_t i = remote.at(m.source);
      remote.erase(m.source);
      Ending how{j.at("exited_ok").get<bool>(), j.at("why").get<std::string>()};
      ended(i, run_rows_from_json(j.at("rows")), how, j.at("log_line").get<std::string>());
    }
    if (next < todo.size()) {
      const size_t i = todo[next++];
      note_resume(i);
      remote[m.source] = i;
      o.mpi->send(m.source, MpiComm::kJob, std::to_string(i));
      started(i);
    } else {
      o.mpi->send(m.source, MpiComm::kStop, "");
      ++stopped_workers;
    }
  };
  bool stopping = false;
  while (next < todo.size() || !local.empty() || !remote.empty() || stopped_workers < workers) {
    bool busy = false;
    if ((interrupt_signal() != 0 || !stopped.empty()) && !stopping) {
      // Start nothing more; ask each run here to save and stop (a terminal's Ctrl-C reached
      // them already; a SIGTERM sent to this process alone did not). A run that was
      // interrupted on its own stops the study too.
      stopping = true;
      next = todo.size();
      for (const auto& [pid, a] : local) ::kill(pid, SIGTERM);
    }
    while (next < todo.size() && static_cast<int>(local.size()) < jobs_here) {
      const size_t i = todo[next++];
      note_resume(i);
      local[spawn_run(o.program, jobs[i].dir)] = {i, std::chrono::steady_clock::now(), utc_now()};
      crash_point();
      started(i);
      busy = true;
    }
    if (o.mpi != nullptr) {
      while (std::optional<MpiComm::Message> m = o.mpi->poll()) {
        serve(*m);
        busy = true;
      }
    }
    int status = 0;
    const pid_t pid = local.empty() ? 0 : ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      auto it = local.find(pid);
      if (it == local.end()) continue;
      const Active a = it->second;
      local.erase(it);
      const std::string finished_at = utc_now();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - a.start).count();
      probe_if_finished(e, jobs[a.job]);
      RunRows rows = gather_run_rows(e, *jobs[a.job].variant, jobs[a.job].seed, o.out);
      rows.run.started_at = a.started_at;
      rows.run.finished_at = finished_at;
      rows.run.seconds = seconds;
      ended(a.job, rows, ending_of(status), last_line(jobs[a.job].dir / "train.log"));
      continue;
    }
    if (!busy) {  // every run still training: show where they are, look again shortly
      crash_point();
      show_progress();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  progress.clear();
  const int signal = interrupt_signal();
  release_interrupts();
  if (signal != 0 || !stopped.empty()) {
    const std::string saved =
        stopped.empty()
            ? std::string("no run was training")
            : fmt::format("{} run{} saved where {} stopped ({})", stopped.size(),
                          stopped.size() == 1 ? "" : "s", stopped.size() == 1 ? "it" : "they",
                          fmt::join(stopped, ", "));
    throw Interrupted(
        fmt::format("{}: stopped by {}: {}; {} of {} runs had ended; the summaries "
                    "are not written",
                    e.name, signal != 0 ? interrupt_name(signal) : "an interrupt of a run", saved,
                    done, total));
  }
  return failed;
}

void run_experiment_worker(const Experiment& e, const StudyOptions& o) {
  const std::vector<Job> jobs = study_jobs(e, o.out, false);  // rank 0 prepared the folders
  MpiComm& mpi = *o.mpi;
  mpi.send(0, MpiComm::kReady, "");
  for (;;) {
    const MpiComm::Message m = mpi.receive(0);
    if (m.tag == MpiComm::kStop) return;
    const size_t i = std::stoul(m.text);
    if (i >= jobs.size())
      throw InputError(fmt::format("MPI: rank 0 sent run {} of {}", i, jobs.size()));
    const Job& job = jobs[i];
    const std::string started_at = utc_now();
    const auto start = std::chrono::steady_clock::now();
    crash_point();
    const Ending how = ending_of(train_and_wait(o.program, job.dir));
    crash_point();
    const std::string finished_at = utc_now();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    probe_if_finished(e, job);
    RunRows rows = gather_run_rows(e, *job.variant, job.seed, o.out);
    rows.run.started_at = started_at;
    rows.run.finished_at = finished_at;
    rows.run.seconds = seconds;
    const nlohmann::json report{{"exited_ok", how.exited_ok},
                                {"why", how.why},
                                {"log_line", last_line(job.dir / "train.log")},
                                {"rows", run_rows_to_json(rows)}};
    mpi.send(0, MpiComm::kDone, report.dump());
  }
}

Shard shard_from_environment() {
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (id == nullptr || count == nullptr) return {};
  const char* min = std::getenv("SLURM_ARRAY_TASK_MIN");
  auto integer = [](const char* name, const char* text) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 0 || v > 1'000'000) {
      throw UsageError(fmt::format("{}={} is not a task number", name, text));
    }
    return static_cast<int>(v);
  };
  Shard s;
  s.count = integer("SLURM_ARRAY_TASK_COUNT", count);
  s.index = integer("SLURM_ARRAY_TASK_ID", id) -
            (min != nullptr ? integer("SLURM_ARRAY_TASK_MIN", min) : 0);
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw UsageError(fmt::format(
        "Slurm array task {} (minimum {}) is not one of {} tasks; give the array as --array=0-{}",
        id, min != nullptr ? min : "0", count, s.count - 1));
  }
  return s;
}

}  // namespace normlab
