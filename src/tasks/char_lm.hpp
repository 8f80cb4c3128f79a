// char_lm internals, exposed for the tests: the corpus of Debian's `fortunes` package, its
// preprocessing and split. Definition: docs/tasks.md, "Character-level language modelling".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normlab::char_lm {

inline constexpr const char* kDefaultDir = "/usr/share/games/fortunes";
// The package version the corpus facts below (and in docs/tasks.md) were taken from.
inline constexpr const char* kPackageVersion = "fortunes 1:1.99.1-7.3 (Debian 12)";
// Bytes and FNV-1a 64 checksum of the 40 files concatenated in name order, for that version.
inline constexpr int64_t kExpectedRawBytes = 2478275;
inline constexpr uint64_t kExpectedRawFnv1a = 0x6e16192aad206f87ULL;

// The 40 text files of the `fortunes` package (dpkg -L fortunes, without the .dat indexes
// and the .u8 symlinks), sorted by name. The directory also holds fortunes-min's files
// (fortunes, literature, riddles); they are not part of the corpus.
const std::vector<std::string>& corpus_files();

// The vocabulary: the distinct bytes of that corpus, sorted; token id = index (V = 114).
const std::vector<uint8_t>& vocabulary();

// FNV-1a, 64 bits.
uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t h = 0xcbf29ce484222325ULL);

struct Corpus {
  std::string dir;
  int64_t raw_bytes = 0;            // the files' bytes, concatenated in name order
  uint64_t raw_fnv1a = 0;           // FNV-1a 64 of that concatenation
  int64_t fortunes = 0;             // fortunes in the files (non-empty, between `%` lines)
  int64_t duplicates = 0;           // exact repeats dropped (the first occurrence is kept)
  int64_t train_fortunes = 0;       // unique fortunes with index i mod 10 != 9
  int64_t validation_fortunes = 0;  // unique fortunes with index i mod 10 == 9
  std::vector<uint8_t> train;       // token ids of the training text
  std::vector<uint8_t> validation;  // token ids of the validation text
};

// Reads and preprocesses the corpus in `dir`. InputError if the directory or a file is
// missing, or a file holds a byte outside the vocabulary (naming the file, offset and byte).
// Prints a warning to stderr if the size or checksum differs from the documented ones.
Corpus read_corpus(const std::string& dir);

// read_corpus once per process and directory: later calls return the cached corpus (safe
// from several threads). What the task uses.
const Corpus& load_corpus(const std::string& dir);

// The text of token ids (inverse of the byte → id map).
std::string decode(const uint8_t* ids, size_t n);

}  // namespace normlab::char_lm
