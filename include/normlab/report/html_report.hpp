// `normlab report OUT`: one self-contained HTML page, OUT/report.html, for a results folder
// (docs/report.md). Inline CSS and inline SVG figures only: no scripts, no fonts, images or
// styles from elsewhere, so it opens the same from a mail attachment, offline.
//
//   kind "train"     (OUT/experiment.json, from `normlab run`): the experiment and its
//                    provenance (results.sqlite), every metric against length per scheme and
//                    weights with 95% bands across seeds and the training lengths shaded, the
//                    summary tables, loss curves, and the probes' figures where present
//   kind "particles" (OUT/particles_summary.csv and summary.json): mean cosine and
//                    1 − mean cosine against t per run, the summary table, the run configs
//   kind "claims"    (OUT/claims.json or claims.md, from `normlab claims run`): the ledger
//
// Any folder with claims.json/claims.md gets the ledger section too. A train folder whose study
// has not finished shows the runs that ended and the loss curves so far. Every string from a
// file is HTML-escaped.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace normlab {

enum class ResultsKind { train, particles, claims };

// What kind of results folder `out` is. InputError when it does not exist or holds none of
// the files above; UsageError when it is not a folder.
ResultsKind results_kind(const std::filesystem::path& out);

// The page for `out` (InputError naming a file that cannot be read).
std::string html_report(const std::filesystem::path& out);

// One page with several kind = "train" folders side by side (normlab report OUT1 OUT2 ...):
// their settings in one table, every metric's figures of each study with one colour per
// scheme and one y range per metric, the loss curves and each study's summary tables.
// UsageError for a folder of another kind.
std::string html_comparison(const std::vector<std::filesystem::path>& outs);

// Writes OUT/report.html atomically and returns its path.
std::filesystem::path write_html_report(const std::filesystem::path& out);

// For the end of `normlab run`: writes the report and returns "report: OUT/report.html", or,
// if it cannot be written, "report: not written (REASON)" — a study never fails for its report.
std::string report_line_after_run(const std::filesystem::path& out);

}  // namespace normlab
