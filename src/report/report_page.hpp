// The HTML page of a report (html_report.hpp) as it is assembled: headings that feed the table
// of contents, paragraphs, tables, preformatted text and figures. Every string given as text
// is escaped here; only the `raw` calls take markup.
#pragma once

#include <string>
#include <vector>

#include "normlab/report/svg_plot.hpp"

namespace normlab::report {

class Page {
 public:
  // <h2> (level 2) or <h3> (level 3) with an id for the table of contents.
  void heading(int level, const std::string& title);
  void paragraph(const std::string& text);
  // A paragraph of markup the caller built (and escaped) itself.
  void raw(const std::string& markup);
  // A table; cells are text. `numeric` right-aligns columns whose cells read as numbers.
  void table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows, bool numeric = true);
  // Preformatted text; inside a <details> element (closed unless `open`) when `summary` is
  // not empty.
  void pre(const std::string& text, const std::string& summary = "", bool open = false);
  // An SVG figure with a caption under it.
  void figure(const svg::Figure& f, const std::string& caption);
  // Figures added between begin_figures and end_figures sit side by side where the window
  // is wide enough.
  void begin_figures();
  void end_figures();

  int figures() const { return figures_; }

  // The whole document: title, subtitle, contents, then the body so far.
  std::string document(const std::string& title, const std::string& subtitle) const;

 private:
  struct Entry {
    int level;
    std::string id, title;
  };
  std::string body_;
  std::vector<Entry> contents_;
  int figures_ = 0;
};

}  // namespace normlab::report
