#include "report/report_page.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace normlab::report {
namespace {

// The page's only style: inline, no fonts or images from elsewhere.
constexpr const char* kStyle = R"css(
body { font-family: sans-serif; margin: 24px auto; max-width: 1180px; padding: 0 16px;
       color: #1a1a1a; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.08em; margin-top: 1.4em; }
.subtitle { color: #555; margin-top: 0; }
nav ol { padding-left: 1.4em; margin: 0.3em 0; }
nav li li { font-size: 0.92em; }
.table-wrap { overflow-x: auto; margin: 0.6em 0 1em; }
table { border-collapse: collapse; font-size: 0.86em; }
th, td { border: 1px solid #d4d4d4; padding: 3px 7px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
pre { background: #f7f7f7; border: 1px solid #e0e0e0; padding: 8px; overflow-x: auto;
      font-size: 0.82em; }
details summary { cursor: pointer; margin: 0.4em 0; }
.figures { display: flex; flex-wrap: wrap; gap: 12px 20px; }
figure { margin: 0.5em 0 1em; }
figcaption { font-size: 0.85em; color: #444; max-width: 560px; }
)css";

std::string slug(const std::string& title, size_t index) {
  std::string s;
  for (char c : title) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      s += c;
    } else if (c >= 'A' && c <= 'Z') {
      s += static_cast<char>(c - 'A' + 'a');
    } else if (!s.empty() && s.back() != '-') {
      s += '-';
    }
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return fmt::format("s{}-{}", index, s.substr(0, 40));
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != nullptr && *end == '\0';
}

}  // namespace

void Page::heading(int level, const std::string& title) {
  const std::string id = slug(title, contents_.size());
  contents_.push_back({level, id, title});
  body_ += fmt::format("<h{0} id=\"{1}\">{2}</h{0}>\n", level, id, svg::escape(title));
}

void Page::paragraph(const std::string& text) {
  body_ += "<p>" + svg::escape(text) + "</p>\n";
}

void Page::raw(const std::string& markup) {
  body_ += markup + "\n";
}

void Page::table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, bool numeric) {
  std::string s = "<div class=\"table-wrap\"><table>\n<tr>";
  for (const std::string& h : header) s += "<th>" + svg::escape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (const std::string& c : row) {
      s += (numeric && is_number(c) ? "<td class=\"num\">" : "<td>") + svg::escape(c) + "</td>";
    }
    s += "</tr>\n";
  }
  body_ += s + "</table></div>\n";
}

void Page::pre(const std::string& text, const std::string& summary, bool open) {
  const std::string block = "<pre>" + svg::escape(text) + "</pre>";
  if (summary.empty()) {
    body_ += block + "\n";
  } else {
    body_ += fmt::format("<details{}><summary>{}</summary>{}</details>\n", open ? " open" : "",
                         svg::escape(summary), block);
  }
}

void Page::figure(const svg::Figure& f, const std::string& caption) {
  ++figures_;
  body_ += "<figure>" + svg::render(f) + "\n<figcaption>" + svg::escape(caption) +
           "</figcaption></figure>\n";
}

void Page::begin_figures() {
  body_ += "<div class=\"figures\">\n";
}

void Page::end_figures() {
  body_ += "</div>\n";
}

std::string Page::document(const std::string& title, const std::string& subtitle) const {
  std::string nav = "<nav><h2>Contents</h2>\n<ol>\n";
  bool nested = false;
  for (size_t i = 0; i < contents_.size(); ++i) {
    const Entry& e = contents_[i];
    if (e.level == 2) {
      if (nested) nav += "</ol></li>\n";
      nested = false;
      const bool has_children = i + 1 < contents_.size() && contents_[i + 1].level > 2;
      nav += fmt::format("<li><a href=\"#{}\">{}</a>{}", e.id, svg::escape(e.title),
                         has_children ? "\n<ol>\n" : "</li>\n");
      nested = has_children;
    } else {
      nav += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", e.id, svg::escape(e.title));
    }
  }
  if (nested) nav += "</ol></li>\n";
  nav += "</ol></nav>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n"
      "<p class=\"subtitle\">{2}</p>\n{3}{4}</body>\n</html>\n",
      svg::escape(title), kStyle, svg::escape(subtitle), nav, body_);
}

}  // namespace normlab::report
