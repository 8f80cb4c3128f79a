#include "normlab/claims/ledger.hpp"
#include "normlab/base/interrupts.hpp"
#include "normlab/io/shell_quote.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <utility>

#include <toml++/toml.h>

#include "normlab/base/errors.hpp"
#include "normlab/claims/design_rules.hpp"
#include "normlab/experiment/dry_run.hpp"
#include "normlab/experiment/kept_runs.hpp"
#include "normlab/experiment/overrides.hpp"
#include "normlab/experiment/part_of.hpp"
#include "normlab/experiment/run_rows.hpp"
#include "normlab/experiment/sweep.hpp"
#include "normlab/io/atomic_file.hpp"
#include "normlab/io/json_file.hpp"
#include "normlab/io/temp_folder.hpp"
#include "normlab/io/toml_reader.hpp"
#include "normlab/particles/study.hpp"
#include "normlab/store/provenance.hpp"

extern char** environ;

namespace normlab::claims {
namespace fs = std::filesystem;

namespace {

// Runs `program args...` with this process's stdout and stderr; returns the wait status. The
// child gets SIGTERM when this process ends, however it ends, so a killed ledger leaves no study
// training with its folder locked (the study's own runs die with it the same way).
// With `output` (not empty), the child's stdout and stderr go to that file instead.
int run_child(const fs::path& program, const std::vector<std::string>& args,
              const fs::path& output = {}) {
  std::vector<std::string> all = {program.string()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw InputError(fmt::format("cannot start {}: {}", all[0], std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent ended before the line above
    if (!output.empty()) {
      const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) ::_exit(127);
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    ::execve(all[0].c_str(), argv.data(), environ);
    ::_exit(127);
  }
  // An interrupt (catch_interrupts) is passed on once: the study saves its runs and ends.
  int status = 0;
  bool passed_on = false;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    if (interrupt_signal() != 0 && !passed_on) {
      ::kill(pid, SIGTERM);
      passed_on = true;
    }
  }
  return status;
}

bool decided(const std::string& verdict) {
  const std::vector<std::string>& all = decided_verdicts();
  return std::find(all.begin(), all.end(), verdict) != all.end();
}

// The record a study leaves in its folder when the ledger has run it.
constexpr const char* kStudyRecord = "ledger_study.json";

// A reason as the ledger's files show it: the results folder named OUT, as in the studies'
// commands, so that claims.json and claims.md name no machine's folders.
std::string with_out_named(std::string text, const fs::path& out) {
  const std::string prefix = (out / "").string();  // the study folders are out / <name>
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 4)) {
    text.replace(at, prefix.size(), "OUT/");
  }
  return text;
}

// Copies a study's tables into `dest` (created), each file written atomically: every CSV,
// JSON, Markdown and TOML file at the top of its folder (no run folders, no results store, no
// figures).
void copy_study_tables(const fs::path& folder, const fs::path& dest) {
  fs::create_directories(dest);
  for (const fs::directory_entry& e : fs::directory_iterator(folder)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() &&
        (ext == ".csv" || ext == ".json" || ext == ".md" || ext == ".toml")) {
      write_file_atomic(dest / e.path().filename(), read_file(e.path()));
    }
  }
}

// The experiment the study would run now (experiment.json's form).
nlohmann::json study_experiment_json(const StudyRun& s) {
  Experiment e = read_swept_experiment(
      [&] { return load_experiment_document(s.file, s.tier, s.sets); }, s.file.string());
  e.tier = s.tier;
  e.sets = s.sets;
  return to_json(e);
}

// Whether the kept tables' record says their study was decided by its pilot (D6).
bool kept_pilot(const fs::path& tables) {
  try {
    return parse_json_file(tables / kStudyRecord).value("decided_by_pilot", false);
  } catch (const std::exception&) {
    return false;
  }
}

// Whether `kept` (a study's kept runs, DIR/<study>/runs with --tables) holds a kept run.
bool holds_kept_runs(const fs::path& kept) {
  if (kept.empty() || !fs::is_directory(kept)) return false;
  for (const fs::directory_entry& e : fs::directory_iterator(kept)) {
    if (is_kept_run(e.path())) return true;
  }
  return false;
}

// Restores the study's runs kept in `kept` that `folder` lacks and writes its tables there,
// training nothing (`normlab run --only-kept`, into the study's own folder or a dry run's
// scratch folder): a pilot kept only there, e.g. from another machine, is then where design
// rule D6 reads it. With `output`, the child's output goes to that file. Whether it succeeded
// (where it did not, the study's own run meets the same cause and reports it).
bool restore_kept_runs(const StudyRun& s, const fs::path& program, const fs::path& kept,
                       const fs::path& folder, const fs::path& output = {}) {
  std::vector<std::string> args = s.args;
  const auto out = std::find(args.begin(), args.end(), "--out");
  if (out == args.end() || out + 1 == args.end()) return false;
  *(out + 1) = folder.string();
  args.insert(args.end(), {"--keep", kept.string(), "--only-kept"});
  const int status = run_child(program, args, output);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// With --tables: a study that finished in an earlier ledger run, perhaps on another
// machine, has its tables kept in `tables` and no runs there any more. When its folder here has
// no record of its own and the kept experiment.json is the experiment the study would run now
// (the same config hash, the kept file read as this version reads it: an older normlab's
// tables of the same experiment count), kept_tables_match is true, and reuse_kept_tables copies
// the kept tables into the folder, where they are used instead of training the study again
// (false, and nothing copied, otherwise). A study its pilot decided (design rule D6) kept the
// pilot's tables: they match when the pilot's runs are runs of the study now (runs_are_part_of)
// and the pilot still decides the study's `claims` (all the ledger's that it decides). A
// particle study (kind "particles") matches when its kept summary.json holds the runs the file
// would integrate now, each under its key (particles::summary_holds_runs).
bool kept_tables_match(const StudyRun& s, const fs::path& tables,
                       const std::vector<Claim>& claims) {
  const fs::path settings = s.trains ? tables / "experiment.json" : tables / "summary.json";
  if (tables.empty() || fs::exists(s.folder / kStudyRecord) || fs::exists(tables / "runs") ||
      !fs::exists(tables / kStudyRecord) || !fs::exists(settings)) {
    return false;
  }
  try {
    const nlohmann::json record = parse_json_file(tables / kStudyRecord);
    if (!record.value("ok", false)) return false;
    if (!s.trains) {
      auto document = load_experiment_document(s.file, s.tier, s.sets);
      TomlSection top(document.get(), s.file.string(), "top level");
      top.get_string("kind", "");
      return particles::summary_holds_runs(parse_json_file(settings),
                                           particles::study_run_keys(top));
    }
    const nlohmann::json study = study_experiment_json(s);
    const nlohmann::json kept =
        experiment_json_as_read(parse_json_file(tables / "experiment.json"));
    if (record.value("decided_by_pilot", false)) {
      return runs_are_part_of(kept, study) && decided_by_pilot(claims, tables);
    }
    return experiment_config_hash(study) == experiment_config_hash(kept);
  } catch (const std::exception&) {
    return false;  // unreadable kept tables: the study runs
  }
}

bool reuse_kept_tables(const StudyRun& s, const fs::path& tables,
                       const std::vector<Claim>& claims) {
  if (!kept_tables_match(s, tables, claims)) return false;
  fs::create_directories(s.folder);
  for (const fs::directory_entry& e : fs::directory_iterator(tables)) {
    if (e.is_regular_file()) write_file_atomic(s.folder / e.path().filename(), read_file(e.path()));
  }
  return true;
}

// The invocations an earlier record of the study lists; none without a readable one.
nlohmann::json earlier_invocations(const fs::path& record) {
  if (!fs::exists(record)) return nlohmann::json::array();
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(record));
    if (j.contains("invocations") && j.at("invocations").is_array()) return j.at("invocations");
    // A record written before invocations were listed: its one invocation.
    if (j.contains("seconds") && j.at("seconds").is_number()) {
      return nlohmann::json::array({{{"finished_at", j.value("finished_at", "")},
                                     {"seconds", j.at("seconds")},
                                     {"ok", j.value("ok", false)},
                                     {"failure", j.value("failure", "")}}});
    }
  } catch (const std::exception&) {
  }
  return nlohmann::json::array();
}

// Adds `invocation` to the study's record in its folder (the earlier ones kept), with the
// commit this program was built from (the study's child is this program), sets s.seconds to
// their sum and writes the record; returns how many invocations it lists.
size_t write_study_record(StudyRun& s, nlohmann::json invocation) {
  const fs::path file = s.folder / kStudyRecord;
  nlohmann::json invocations = earlier_invocations(file);
  invocation["git_commit"] = build_git_commit();
  invocations.push_back(std::move(invocation));
  s.seconds = 0;
  for (const nlohmann::json& i : invocations) s.seconds += i.value("seconds", 0.0);
  nlohmann::json record{{"command", s.command()},    {"seconds", s.seconds}, {"ok", s.ok},
                        {"failure", s.failure},      {"tier", s.tier},       {"sets", s.sets},
                        {"invocations", invocations}};
  if (s.decided_by_pilot) record["decided_by_pilot"] = true;
  write_file_atomic(file, record.dump(2) + "\n");
  return invocations.size();
}

// Design rule D6: the study is not run; its pilot decides every claim. Recorded as an
// invocation of no time.
void keep_pilot(StudyRun& s) {
  std::printf(
      "study %s: decided by its pilot (design rule D6): D1 finds every claim it governs "
      "untestable on the baseline's runs already there, and the others read those runs alone, "
      "so no other arm runs\n",
      s.folder.filename().string().c_str());
  std::fflush(stdout);
  s.ok = true;
  s.decided_by_pilot = true;
  const std::string now = utc_now();
  write_study_record(s, {{"started_at", now},
                         {"finished_at", now},
                         {"seconds", 0.0},
                         {"ok", true},
                         {"failure", ""},
                         {"decided_by_pilot", true}});
}

// The runs folders of the other studies under `roots` (the ledger's OUT and its tables folder):
// `normlab run --reuse` copies from them a run with the same settings instead of training it
// (docs/claims.md, "Runs that two studies share").
std::vector<fs::path> runs_of_other_studies(const std::vector<fs::path>& roots,
                                            const std::string& own) {
  std::vector<fs::path> folders;
  for (const fs::path& root : roots) {
    if (root.empty() || !fs::is_directory(root)) continue;
    for (const fs::directory_entry& study : fs::directory_iterator(root)) {
      if (study.path().filename() != own && fs::is_directory(study.path() / "runs")) {
        folders.push_back(study.path() / "runs");
      }
    }
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

// Starts the study as a child process, times it, and leaves its record in its folder: this
// invocation added to the earlier ones, `seconds` their sum (a study resumed after its
// ledger was stopped counts only the invocations that ended).
// With `kept` (not empty), the study keeps its runs there as they end (`normlab run --keep`);
// each of `reuse` is passed as `normlab run --reuse`.
// `place` is "study 3 of 63" (the ledger's study order), printed with the command.
void run_study(StudyRun& s, const std::string& place, const fs::path& program, const fs::path& kept,
               const std::vector<fs::path>& reuse) {
  std::fprintf(stderr, "study %s (%s): %s\n", s.folder.filename().string().c_str(), place.c_str(),
               s.command().c_str());
  const std::string started_at = utc_now();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> args = s.args;
  if (!kept.empty()) args.insert(args.end(), {"--keep", kept.string()});
  for (const fs::path& r : reuse) args.insert(args.end(), {"--reuse", r.string()});
  catch_interrupts();
  const int status = run_child(program, args);
  const int signal = interrupt_signal();
  release_interrupts();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!s.ok) {
    s.failure = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                    : fmt::format("exit code {}", WEXITSTATUS(status));
  }
  std::printf("study %s: %.1f s wall%s\n", s.folder.filename().string().c_str(), seconds,
              s.ok ? "" : (" — FAILED (" + s.failure + ")").c_str());
  std::fflush(stdout);
  s.seconds = seconds;
  if (!fs::is_directory(s.folder)) return;  // refused before it made its folder
  const size_t invocations = write_study_record(s, {{"started_at", started_at},
                                                    {"finished_at", utc_now()},
                                                    {"seconds", seconds},
                                                    {"ok", s.ok},
                                                    {"failure", s.failure}});
  if (invocations > 1) {
    std::printf("study %s: %.1f s wall over its %zu ledger invocations that ended\n",
                s.folder.filename().string().c_str(), s.seconds, invocations);
    std::fflush(stdout);
  }
  if (signal != 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 130)) {
    throw Interrupted(fmt::format(
        "the ledger stopped by {} during study {}, whose runs are saved; the same `normlab claims "
        "run` command resumes it",
        signal != 0 ? interrupt_name(signal) : "an interrupt", s.folder.filename().string()));
  }
}

// Every claim of the whole ledger that the study decides, whichever were selected.
std::vector<Claim> ledger_claims_of(const std::vector<Paper>& papers, const StudyRun& s) {
  std::vector<Claim> out;
  for (const Paper& p : papers) {
    for (const Claim& c : p.claims) {
      std::vector<std::string> sets;
      for (const std::string& set : c.sets) sets.push_back(normalized_set(set));
      if (c.study == s.file && sets == s.sets) out.push_back(c);
    }
  }
  return out;
}

// --decide-only: the study as its record describes it; not run when it has none.
void read_study_record(StudyRun& s) {
  const fs::path file = s.folder / kStudyRecord;
  if (!fs::exists(file)) {
    s.ran = false;
    s.ok = false;
    return;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(file));
    s.recorded = j.at("command").get<std::string>();
    s.seconds = j.at("seconds").get<double>();
    s.ok = j.at("ok").get<bool>();
    s.failure = j.at("failure").get<std::string>();
    s.decided_by_pilot = j.value("decided_by_pilot", false);
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format(
        "{}: not a study record (command, seconds, ok and failure, as `normlab claims run` "
        "writes them)",
        file.string()));
  }
}

// Whether an earlier ledger run trained every arm of the study in its folder (its record says
// it finished, not by its pilot): D6 then has no arm to spare, and a second ledger run over
// the same folder decides its claims as the first did.
bool ran_every_arm(const StudyRun& s) {
  StudyRun earlier = s;
  read_study_record(earlier);
  return earlier.ok && !earlier.decided_by_pilot;
}

}  // namespace

bool folder_runs_are_part_of_study(const StudyRun& s, const fs::path& folder) {
  try {
    return runs_are_part_of(experiment_json_as_read(parse_json_file(folder / "experiment.json")),
                            study_experiment_json(s));
  } catch (const std::exception&) {
    return false;  // no or unreadable experiment.json: no pilot to read
  }
}

bool pilot_decides(const StudyRun& s, const std::vector<Paper>& papers, const fs::path& folder) {
  return folder_runs_are_part_of_study(s, folder) &&
         decided_by_pilot(ledger_claims_of(papers, s), folder);
}

// The study's output folder is named OUT/<study folder>, OUT the ledger's --out: records and
// reports are kept and copied (docs/full-tier), so they name no path of the machine that ran.
std::string StudyRun::command() const {
  if (!recorded.empty()) return recorded;
  std::string out = "normlab";
  for (size_t i = 0; i < args.size(); ++i) {
    const bool folder = i > 0 && args[i - 1] == "--out";
    out += " " + shell_quoted(folder ? "OUT/" + fs::path(args[i]).filename().string() : args[i]);
  }
  return out;
}

std::string StudyRun::status() const {
  if (!ran) return "not run";
  if (ok && decided_by_pilot) return "decided by its pilot (D6)";
  return ok ? "done" : "failed: " + failure;
}

bool LedgerResult::all_decided() const {
  for (const ClaimOutcome& c : claims) {
    if (!decided(c.verdict) && c.verdict != "not run") return false;
  }
  return true;
}

std::vector<Claim> select_claims(const std::vector<Paper>& papers, const std::string& paper,
                                 const std::string& claim) {
  std::vector<Claim> out;
  std::vector<std::string> arxiv_ids;
  for (const Paper& p : papers) {
    arxiv_ids.push_back(p.arxiv);
    if (!paper.empty() && p.arxiv != paper) continue;
    for (const Claim& c : p.claims) {
      if (claim.empty() || c.id == claim) out.push_back(c);
    }
  }
  if (out.empty()) {
    if (!paper.empty() && std::find(arxiv_ids.begin(), arxiv_ids.end(), paper) == arxiv_ids.end()) {
      throw UsageError(fmt::format("--paper {}: no such paper in the ledger; papers: {}", paper,
                                   fmt::join(arxiv_ids, ", ")));
    }
    throw UsageError(fmt::format("--claim {}: no such claim{}; `normlab claims list` shows the ids",
                                 claim, paper.empty() ? "" : " in paper " + paper));
  }
  return out;
}

StudyRun plan_study(const fs::path& file, const std::vector<std::string>& sets,
                    const std::string& tier, const fs::path& out, int jobs) {
  StudyRun s;
  s.file = file;
  for (const std::string& set : sets) s.sets.push_back(normalized_set(set));
  const std::shared_ptr<toml::table> doc = parse_toml_file(file);
  const std::vector<std::string> tiers = tier_names(*doc, file.string());
  // A file without tiers runs as written, whatever the ledger's tier.
  s.tier = tiers.empty() ? "" : tier;
  const toml::node* name = doc->get("name");
  const std::string study_name = name != nullptr && name->is_string()
                                     ? std::string(*name->value<std::string>())
                                     : file.stem().string();
  s.folder = out / study_folder_name(study_name, s.tier, s.sets);
  const toml::node* kind = doc->get("kind");
  s.trains = kind == nullptr || !kind->is_string() || *kind->value<std::string>() == "train";
  s.args = {"run", file.string()};
  if (!s.tier.empty()) s.args.insert(s.args.end(), {"--tier", s.tier});
  for (const std::string& set : s.sets) s.args.insert(s.args.end(), {"--set", set});
  s.args.insert(s.args.end(), {"--out", s.folder.string()});
  if (jobs > 0) s.args.insert(s.args.end(), {"--jobs", std::to_string(jobs)});
  return s;
}

namespace {

// The distinct studies of `claims`, in claim order, planned under `out` (one that cannot be
// planned has its failure set); study_of gets each claim's index into them.
std::vector<StudyRun> plan_studies(const std::vector<Claim>& claims, const std::string& tier,
                                   const fs::path& out, int jobs, std::vector<size_t>& study_of) {
  std::vector<StudyRun> studies;
  for (const Claim& c : claims) {
    std::vector<std::string> sets;
    for (const std::string& s : c.sets) sets.push_back(normalized_set(s));
    size_t index = 0;
    while (index < studies.size() &&
           !(studies[index].file == c.study && studies[index].sets == sets)) {
      ++index;
    }
    if (index == studies.size()) {
      try {
        studies.push_back(plan_study(c.study, c.sets, tier, out, jobs));
      } catch (const std::exception& e) {
        StudyRun failed;
        failed.file = c.study;
        failed.sets = sets;
        failed.failure = e.what();
        studies.push_back(failed);
      }
    }
    study_of.push_back(index);
  }
  return studies;
}

// A dry run's design rule D6: whether the study's pilot decides it, read from its kept runs
// under `tables` restored into a scratch folder (the study's own folder is left as it is), or
// from its folder where nothing is kept.
bool pilot_decides_dry(const StudyRun& s, const std::vector<Paper>& papers, const fs::path& program,
                       const fs::path& tables) {
  const fs::path kept = tables.empty() ? fs::path() : tables / "runs";
  if (!holds_kept_runs(kept)) return pilot_decides(s, papers, s.folder);
  const TempFolder scratch("normlab_dry_run_pilot");
  if (scratch.path().empty()) return pilot_decides(s, papers, s.folder);
  const fs::path folder = scratch.path() / s.folder.filename();
  return restore_kept_runs(s, program, kept, folder, scratch.path() / "restore.log") &&
         pilot_decides(s, papers, folder);
}

fs::path ledger_out(const LedgerOptions& o) {
  return o.out.empty() ? fs::path("results") / ("claims-" + o.tier) : o.out;
}

}  // namespace

std::string ledger_dry_run(const LedgerOptions& o, bool measure) {
  const std::vector<Paper> papers = read_ledger(o.claims_dir);
  const std::vector<Claim> claims = select_claims(papers, o.paper, o.claim);
  const fs::path out = ledger_out(o);
  std::vector<size_t> study_of;
  const std::vector<StudyRun> studies = plan_studies(claims, o.tier, out, o.jobs, study_of);
  std::string report = fmt::format("{} claims and findings, {} studies at the {} tier, in {}:\n",
                                   claims.size(), studies.size(), o.tier, out.string());
  const auto name_of = [](const StudyRun& s) {
    return s.folder.empty() ? s.file.string() : s.folder.filename().string();
  };
  // A column as wide as the longest name up to 64 characters; the names of studies with many
  // sets (MQAR's panels, up to about 130) overflow it.
  size_t name_width = 0;
  for (const StudyRun& s : studies) name_width = std::max(name_width, name_of(s).size());
  name_width = std::min<size_t>(name_width, 64);
  double seconds = 0, eval_seconds = 0, probe_seconds = 0;
  double longest_run = 0;            // the training left of the longest run, over every study
  bool any_variance = false;         // a study to do runs the variance probe
  std::vector<std::string> untimed;  // the probes not timed, over every study
  int to_do = 0;
  StepRates rates;  // shared: the studies of one task and model time its step once
  for (const StudyRun& s : studies) {
    const std::string name = name_of(s);
    std::string line;
    const fs::path tables = o.tables.empty() ? fs::path() : o.tables / s.folder.filename();
    StudyRun recorded = s;
    if (s.failure.empty()) read_study_record(recorded);
    if (!s.failure.empty()) {
      line = "cannot run: " + s.failure;
    } else if (recorded.ran && recorded.ok) {
      line = recorded.decided_by_pilot ? "decided by its pilot (D6)" : "finished";
    } else if (kept_tables_match(s, tables, ledger_claims_of(papers, s))) {
      line = kept_pilot(tables)
                 ? "decided by its pilot (D6) in an earlier ledger run: its kept tables are used"
                 : "finished in an earlier ledger run: its kept tables are used";
    } else if (s.trains && !recorded.ok && pilot_decides_dry(s, papers, o.program, tables)) {
      line = "decided by its pilot (D6): no other arm would run";
    } else if (!s.trains) {
      line = "not a training study: no estimate";
    } else {
      Experiment e = read_swept_experiment(
          [&] { return load_experiment_document(s.file, s.tier, s.sets); }, s.file.string());
      const int jobs = o.jobs > 0 ? o.jobs : e.jobs;
      const TrainingEstimate t = estimate_training(
          e, s.folder, jobs, measure, tables.empty() ? tables : tables / "runs", &rates);
      to_do += t.to_do;
      seconds += t.seconds;
      eval_seconds += t.eval_seconds;
      probe_seconds += t.probe_seconds;
      longest_run = std::max(longest_run, t.longest_run_seconds);
      any_variance = any_variance || e.probe_variance;
      for (const std::string& p : t.untimed_probes) {
        if (std::find(untimed.begin(), untimed.end(), p) == untimed.end()) untimed.push_back(p);
      }
      line = fmt::format("{} runs, {} to do", t.runs, t.to_do);
      if (measure && t.to_do > 0) {
        line += fmt::format(
            ": about {} at {} at a time, the longest run {}{}",
            estimate_amounts(t.seconds, t.eval_seconds, e.probe_variance, t.probe_seconds),
            t.at_once, training_duration(t.longest_run_seconds),
            t.untimed_probes.empty() ? "" : "; " + probes_on_top(t.untimed_probes));
      }
    }
    report += fmt::format("  {:<{}} {}\n", name, name_width, line);
    if (measure) {  // a line at a time: the timed steps take seconds per study
      std::fputs(report.c_str(), stdout);
      std::fflush(stdout);
      report.clear();
    }
  }
  report += fmt::format("in all: {} runs to do", to_do);
  if (measure) {
    report += fmt::format(", about {}, {}",
                          estimate_amounts(seconds, eval_seconds, any_variance, probe_seconds),
                          o.jobs > 0 ? fmt::format("{} runs at a time", o.jobs)
                                     : std::string("each study's file's jobs at a time"));
    if (!untimed.empty()) report += " (" + probes_on_top(untimed) + ")";
    report += "; the longest run " + training_duration(longest_run);
  }
  return report + "\n";
}

LedgerResult run_ledger(const LedgerOptions& o) {
  const std::vector<Paper> papers = read_ledger(o.claims_dir);
  const std::vector<Claim> claims = select_claims(papers, o.paper, o.claim);
  LedgerResult r;
  r.tier = o.tier;
  r.decide_only = o.decide_only;
  const fs::path out = ledger_out(o);
  std::vector<size_t> study_of;
  r.studies = plan_studies(claims, o.tier, out, o.jobs, study_of);
  for (size_t i = 0; i < claims.size(); ++i) {
    ClaimOutcome outcome;
    outcome.claim = claims[i];
    outcome.study = study_of[i];
    r.claims.push_back(outcome);
  }
  for (const Paper& p : papers) {
    for (const Question& q : p.questions) {
      const bool answered_here =
          std::any_of(q.parts.begin(), q.parts.end(), [&](const QuestionPart& part) {
            return std::any_of(part.findings.begin(), part.findings.end(), [&](const auto& id) {
              return std::any_of(claims.begin(), claims.end(),
                                 [&](const Claim& c) { return c.id == id; });
            });
          });
      if (answered_here) r.questions.push_back(q);
    }
  }

  for (StudyRun& s : r.studies) {
    if (!s.failure.empty()) {
      std::fprintf(stderr, "study %s: FAILED: %s\n", s.file.string().c_str(), s.failure.c_str());
      continue;
    }
    if (o.decide_only) {
      read_study_record(s);
      continue;
    }
    // With --tables, each study keeps its runs in its tables' folder until it has finished.
    const fs::path tables = o.tables.empty() ? fs::path() : o.tables / s.folder.filename();
    const fs::path kept = tables.empty() || !s.trains ? fs::path() : tables / "runs";
    if (reuse_kept_tables(s, tables, ledger_claims_of(papers, s))) {
      if (kept_pilot(tables)) {
        std::printf(
            "study %s: decided by its pilot (design rule D6) in an earlier ledger run; its kept "
            "tables %s are the pilot's runs of this study, which still decide its claims, and "
            "are used: no arm runs\n",
            s.folder.filename().string().c_str(), tables.string().c_str());
      } else {
        std::printf(
            "study %s: finished in an earlier ledger run; its kept tables %s are the same "
            "experiment and are used, not run again\n",
            s.folder.filename().string().c_str(), tables.string().c_str());
      }
      std::fflush(stdout);
      read_study_record(s);
      continue;
    }
    if (!ran_every_arm(s) && holds_kept_runs(kept)) {
      std::printf("study %s: restoring its kept runs from %s before design rule D6 reads them\n",
                  s.folder.filename().string().c_str(), kept.string().c_str());
      std::fflush(stdout);
      restore_kept_runs(s, o.program, kept, s.folder);
    }
    if (!ran_every_arm(s) && pilot_decides(s, papers, s.folder)) {
      keep_pilot(s);
    } else {
      const size_t k = static_cast<size_t>(&s - r.studies.data());
      run_study(s, fmt::format("study {} of {}", k + 1, r.studies.size()), o.program, kept,
                s.trains ? runs_of_other_studies({out, o.tables}, s.folder.filename().string())
                         : std::vector<fs::path>{});
    }
    if (s.ok && !tables.empty()) {
      copy_study_tables(s.folder, tables);
      if (!kept.empty()) fs::remove_all(kept);
    }
  }

  for (ClaimOutcome& c : r.claims) {
    const StudyRun& s = r.studies[c.study];
    if (!s.ran) {
      c.verdict = "not run";
      c.reason = fmt::format("OUT/{} has no {}: the study has not run there",
                             s.folder.filename().string(), kStudyRecord);
      continue;
    }
    if (!s.ok) {
      c.verdict = "study failed";
      c.reason = fmt::format("{}: {}", s.command(), s.failure);
      continue;
    }
    try {
      c.evaluation = evaluate_claim(c.claim, s.folder, s.decided_by_pilot);
      c.verdict = to_string(c.evaluation.decision.verdict);
      c.reason = with_out_named(c.evaluation.decision.reason, out);
    } catch (const std::exception& e) {
      c.verdict = "error";
      c.reason = with_out_named(e.what(), out);
      std::fprintf(stderr, "claim %s: %s\n", c.claim.id.c_str(), e.what());
    }
  }
  return r;
}

}  // namespace normlab::claims
