// One pass's activation buffers carved from one block (llm.c's malloc_and_point). Each buffer
// is declared with its element count into its slot, the pointer or span the code reads; carve()
// then grows the block to the sum and points every slot into it. Private to src/model/.
//
// The block only grows: a batch of another shape declares again and re-carves the same block,
// which is reallocated only for a larger total. A buffer holds whatever an earlier pass left in
// the block; nothing may read one before writing it, nor rely on its size beyond its count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace normlab {

template <typename T>
class Arena {
 public:
  // Forgets the slots declared so far; the block stays.
  void clear() { slots_.clear(); }

  // slot gets `count` values; count 0 leaves it null (empty).
  void declare(T*& slot, int64_t count) { slots_.push_back({&slot, nullptr, count}); }
  void declare(std::span<T>& slot, int64_t count) { slots_.push_back({nullptr, &slot, count}); }

  // A slot several users share (inference's one set of sublayer buffers): declared once, with
  // the largest count asked for.
  void declare_at_least(T*& slot, int64_t count) {
    for (Slot& s : slots_) {
      if (s.pointer == &slot) {
        s.count = std::max(s.count, count);
        return;
      }
    }
    declare(slot, count);
  }

  // Values the declared slots take, each rounded up to whole 64-byte lines.
  int64_t elements() const {
    int64_t total = 0;
    for (const Slot& s : slots_) total += padded(s.count);
    return total;
  }

  // Grows the block to elements() (never shrinks) and points every declared slot into it.
  void carve() {
    const int64_t total = elements();
    if (static_cast<int64_t>(block_.size()) < total + kLine) {
      std::vector<T>().swap(block_);  // freed first: the old contents are not kept
      block_.resize(total + kLine);
    }
    T* next = aligned(block_.data());
    for (const Slot& s : slots_) {
      T* start = s.count > 0 ? next : nullptr;
      if (s.pointer != nullptr) *s.pointer = start;
      if (s.span != nullptr) *s.span = std::span<T>(start, static_cast<size_t>(s.count));
      next += padded(s.count);
    }
  }

 private:
  static constexpr int64_t kLine = 64 / sizeof(T) > 0 ? 64 / sizeof(T) : 1;  // values per line

  struct Slot {
    T** pointer;
    std::span<T>* span;
    int64_t count;
  };

  static int64_t padded(int64_t count) { return (count + kLine - 1) / kLine * kLine; }
  static T* aligned(T* p) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    return p + (64 - address % 64) % 64 / sizeof(T);
  }

  std::vector<Slot> slots_;
  std::vector<T> block_;
};

}  // namespace normlab
