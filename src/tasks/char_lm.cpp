// char_lm: character-level (byte-level) language modelling on the English quotations of
// Debian's `fortunes` package. Next-token prediction at every position of a window of the text;
// training windows come from 90% of the fortunes, validation windows from the other 10%.
// Definition: docs/tasks.md, "Character-level language modelling".
//
// Letters: n = T window length (every position scored), V = 114 (the corpus's bytes).
#include "tasks/char_lm.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "normlab/base/errors.hpp"
#include "tasks/task_list.hpp"
#include "tasks/task_util.hpp"

namespace normlab {
namespace char_lm {

const std::vector<std::string>& corpus_files() {
  static const std::vector<std::string> files = {
      "art",          "ascii-art", "computers",   "cookie",    "debian",        "definitions",
      "disclaimer",   "drugs",     "education",   "ethnic",    "food",          "goedel",
      "humorists",    "kids",      "knghtbrd",    "law",       "linux",         "linuxcookie",
      "love",         "magic",     "medicine",    "men-women", "miscellaneous", "news",
      "paradoxum",    "people",    "perl",        "pets",      "platitudes",    "politics",
      "pratchett",    "science",   "songs-poems", "sports",    "startrek",      "tao",
      "translate-me", "wisdom",    "work",        "zippy"};
  return files;
}

const std::vector<uint8_t>& vocabulary() {
  static const std::vector<uint8_t> vocab = [] {
    // BEL and BS (nroff overstrikes), TAB, LF; printable ASCII; and the non-ASCII bytes of the
    // corpus (pieces of UTF-8 and Latin-1 characters in a few files).
    std::vector<uint8_t> v = {0x07, 0x08, 0x09, 0x0a};
    for (int c = 0x20; c <= 0x7e; ++c) v.push_back(static_cast<uint8_t>(c));
    for (int c : {0x80, 0x82, 0x83, 0x88, 0x97, 0x99, 0x9c, 0x9d, 0x9f, 0xa2, 0xa3, 0xa9, 0xbc,
                  0xc2, 0xc3}) {
      v.push_back(static_cast<uint8_t>(c));
    }
    return v;
  }();
  return vocab;
}

uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t h) {
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string decode(const uint8_t* ids, size_t n) {
  const std::vector<uint8_t>& vocab = vocabulary();
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(vocab[ids[i]]);
  return s;
}

namespace {

constexpr const char* kInstallHint =
    "scripts/bootstrap.sh installs the Debian package 'fortunes', which provides it";

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(
        fmt::format("char_lm: cannot read corpus file {}; the corpus is the {} text files of the "
                    "Debian package 'fortunes' ({})",
                    path.string(), corpus_files().size(), kInstallHint));
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Appends the fortunes of one file: the text between lines that are exactly "%", each line
// ending with '\n' (one is added to an unterminated last line); empty fortunes are skipped.
void split_fortunes(const std::string& data, std::vector<std::string>& out) {
  std::string cur;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find('\n', pos);
    if (end == std::string::npos) end = data.size();
    const std::string_view line(data.data() + pos, end - pos);
    if (line == "%") {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.append(line);
      cur.push_back('\n');
    }
    pos = end + 1;
  }
  if (!cur.empty()) out.push_back(std::move(cur));
}

// Two fortunes are the same quotation if they agree after keeping only ASCII letters and digits,
// lowercased (the files repeat quotations with other spacing, punctuation or line breaks);
// fortunes without any are compared as they are.
std::string dedup_key(const std::string& fortune) {
  std::string key;
  for (const char ch : fortune) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u < 0x80 && std::isalnum(u)) key.push_back(static_cast<char>(std::tolower(u)));
  }
  return key.empty() ? fortune : key;  // a picture without letters or digits: as it is
}

}  // namespace

Corpus read_corpus(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    throw InputError(
        fmt::format("char_lm: corpus directory {} does not exist; {}", dir, kInstallHint));
  }
  int id_of[256];
  std::fill(std::begin(id_of), std::end(id_of), -1);
  const std::vector<uint8_t>& vocab = vocabulary();
  for (size_t i = 0; i < vocab.size(); ++i) id_of[vocab[i]] = static_cast<int>(i);

  Corpus c;
  c.dir = dir;
  uint64_t h = 0xcbf29ce484222325ULL;
  std::vector<std::string> fortunes;
  for (const std::string& name : corpus_files()) {
    const fs::path path = fs::path(dir) / name;
    const std::string data = read_whole(path);
    for (size_t i = 0; i < data.size(); ++i) {
      const uint8_t byte = static_cast<uint8_t>(data[i]);
      if (id_of[byte] < 0) {
        throw InputError(fmt::format(
            "char_lm: {}: byte 0x{:02x} at offset {} is not in the task's vocabulary of {} "
            "bytes (taken from {}); this corpus differs from the documented one (docs/tasks.md)",
            path.string(), byte, i, vocab.size(), kPackageVersion));
      }
    }
    h = fnv1a64(reinterpret_cast<const uint8_t*>(data.data()), data.size(), h);
    c.raw_bytes += static_cast<int64_t>(data.size());
    split_fortunes(data, fortunes);
  }
  c.raw_fnv1a = h;
  c.fortunes = static_cast<int64_t>(fortunes.size());

  // Unique fortunes in file order; every 10th (index mod 10 = 9) goes to validation. Each
  // fortune is followed by one '\n', so fortunes are separated by a blank line.
  std::unordered_set<std::string> seen;
  int64_t unique = 0;
  for (const std::string& f : fortunes) {
    if (!seen.insert(dedup_key(f)).second) {
      ++c.duplicates;
      continue;
    }
    const bool validation = unique % 10 == 9;
    ++unique;
    std::vector<uint8_t>& text = validation ? c.validation : c.train;
    ++(validation ? c.validation_fortunes : c.train_fortunes);
    for (const char ch : f) text.push_back(static_cast<uint8_t>(id_of[static_cast<uint8_t>(ch)]));
    text.push_back(static_cast<uint8_t>(id_of[static_cast<uint8_t>('\n')]));
  }
  if (c.train.size() < 2 || c.validation.size() < 2) {
    throw InputError(fmt::format("char_lm: the corpus in {} is too small to split", dir));
  }
  if (c.raw_bytes != kExpectedRawBytes || c.raw_fnv1a != kExpectedRawFnv1a) {
    std::fprintf(stderr,
                 "warning: char_lm: the corpus in %s has %lld bytes and FNV-1a 64 %016llx, not "
                 "the %lld bytes and %016llx of %s documented in docs/tasks.md; results are not "
                 "comparable with runs on the documented corpus\n",
                 dir.c_str(), static_cast<long long>(c.raw_bytes),
                 static_cast<unsigned long long>(c.raw_fnv1a),
                 static_cast<long long>(kExpectedRawBytes),
                 static_cast<unsigned long long>(kExpectedRawFnv1a), kPackageVersion);
  }
  return c;
}

const Corpus& load_corpus(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const Corpus>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(dir);
  if (it == cache.end())
    it = cache.emplace(dir, std::make_unique<const Corpus>(read_corpus(dir))).first;
  return *it->second;
}

}  // namespace char_lm

namespace {

class CharLm final : public Task {
 public:
  explicit CharLm(std::string dir) : dir_(std::move(dir)), corpus_(&char_lm::load_corpus(dir_)) {}

  std::string label() const override {
    return dir_ == char_lm::kDefaultDir ? "char_lm" : fmt::format("char_lm(dir={})", dir_);
  }
  int vocab() const override { return static_cast<int>(char_lm::vocabulary().size()); }
  LengthRange length_range() const override {
    // A window of n + 1 characters must fit in both splits.
    const int64_t shortest =
        static_cast<int64_t>(std::min(corpus_->train.size(), corpus_->validation.size()));
    return {1, shortest - 1, 1};
  }
  std::string length_rule() const override {
    return "a window of n + 1 characters must fit in the validation text";
  }
  int64_t sequence_length(int64_t n) const override { return n; }

  void generate(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    window(corpus_->train, n, rng, batch, b);
  }
  void generate_validation(int64_t n, Rng& rng, Batch& batch, int64_t b) const override {
    window(corpus_->validation, n, rng, batch, b);
  }

  void score(const Batch& batch, int64_t b, const float* logits,
             MetricAccumulator& metrics) const override {
    const int V = batch.vocab;
    const int64_t T = batch.len, row0 = b * T;
    double nll = 0;
    int64_t correct = 0;
    for (int64_t t = 0; t < T; ++t) {
      const float* z = logits + t * V;
      const int32_t want = batch.target(row0 + t).most_likely();
      const double zmax = *std::max_element(z, z + V);
      double sum = 0;
      for (int v = 0; v < V; ++v) sum += std::exp(static_cast<double>(z[v]) - zmax);
      nll += zmax + std::log(sum) - static_cast<double>(z[want]);
      correct += task_util::argmax(z, V) == want;
    }
    const double loss = nll / static_cast<double>(T);
    metrics.add_mean("loss", loss);
    metrics.add_mean("bpc", loss / std::numbers::ln2);
    metrics.add_mean("accuracy", static_cast<double>(correct) / static_cast<double>(T));
  }

  std::vector<std::string> metric_names() const override { return {"loss", "bpc", "accuracy"}; }

 private:
  // A window of n + 1 characters at a uniform random offset of `text`: tokens are its first
  // n characters, the target at position t is character t + 1.
  static void window(const std::vector<uint8_t>& text, int64_t n, Rng& rng, Batch& batch,
                     int64_t b) {
    const uint64_t start = rng.below(text.size() - static_cast<uint64_t>(n));
    const uint8_t* w = text.data() + start;
    const int64_t row0 = b * n;
    if (b == 0) {  // one one-hot target per position
      const auto targets = static_cast<size_t>(batch.batch * n);
      batch.target_offsets.reserve(targets + 1);
      batch.target_tokens.reserve(targets);
      batch.target_probs.reserve(targets);
    }
    for (int64_t t = 0; t < n; ++t) {
      batch.token(row0 + t) = w[t];
      batch.set_one_hot(row0 + t, w[t + 1]);
    }
  }

  std::string dir_;
  const char_lm::Corpus* corpus_;  // cached for the process's lifetime
};

}  // namespace

TaskInfo char_lm_info() {
  TaskInfo info;
  info.name = "char_lm";
  info.summary =
      "character-level language modelling on the English quotations of Debian's fortunes "
      "package: next-byte prediction at every position of a window (docs/tasks.md)";
  info.params = {
      {"dir",
       std::string(char_lm::kDefaultDir),
       {},
       "directory holding the 40 text files of the Debian package fortunes"},
  };
  info.make = [](const TaskParams& p) -> std::unique_ptr<Task> {
    return std::make_unique<CharLm>(param_string(p, "dir"));
  };
  return info;
}

}  // namespace normlab
