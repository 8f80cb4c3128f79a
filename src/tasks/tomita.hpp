// Tomita(n) internals shared with the tests: the seven languages as DFAs over {a, b}, and the
// token ids. The task itself is registered by tomita_info().
#pragma once

#include <cstdint>
#include <string>

namespace normlab::tomita {

// Vocabulary: the two letters, the query token, and the two answers.
inline constexpr int32_t kA = 0;
inline constexpr int32_t kB = 1;
inline constexpr int32_t kQuery = 2;
inline constexpr int32_t kAccept = 3;
inline constexpr int32_t kReject = 4;
inline constexpr int kVocab = 5;

// A complete DFA over {a = 0, b = 1}, start state 0.
struct Dfa {
  int states = 0;
  int next[5][2] = {};  // next[q][letter]
  bool accept[5] = {};
  const char* definition;  // the language, in words
};

// The DFA of Tomita language n (1..7); letters a = 1, b = 0 of the classic definitions.
const Dfa& dfa(int n);

// Whether the DFA of language n accepts `word` (a string of 'a' and 'b').
bool accepts(int n, const std::string& word);

}  // namespace normlab::tomita
