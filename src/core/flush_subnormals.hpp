// Subnormal floats are flushed to zero in every task of normlab's kernels (parallel.hpp's
// run_tasks): a subnormal input reads as zero, a result too small to be normal is written as
// zero. On x86-64 these are MXCSR's DAZ and FTZ bits, on aarch64 FPCR's FZ bit; the mode is the
// thread's, so the guard sets it for the task's duration and gives the caller back its own.
//
// Why: a model trained to a loss near zero carries values below 2^-126 (softmax probabilities
// of the wrong tokens, their gradients, the products of both), and on Intel CPUs each
// arithmetic operation that reads or writes one takes a microcode assist of about a hundred
// cycles; one such run trained 7× slower than with the mode set (docs/performance-log.md,
// "Subnormals flushed to zero"). The mode is part of the arithmetic, the same on every CPU
// of an architecture, so results stay bit-identical across machines and thread counts
// (docs/training.md, "Determinism"). JAX's and TensorFlow's CPU back-ends compute so as well.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace normlab {

class FlushSubnormals {
 public:
  FlushSubnormals() : saved_(read_mode()) {
    if ((saved_ & kFlushBits) != kFlushBits) write_mode(saved_ | kFlushBits);
  }
  ~FlushSubnormals() {
    if ((saved_ & kFlushBits) != kFlushBits) write_mode(saved_);
  }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
#if defined(__x86_64__) || defined(__i386__)
  static constexpr uint64_t kFlushBits = 0x8040;  // MXCSR: FTZ (bit 15) | DAZ (bit 6)
  static uint64_t read_mode() {
    return _mm_getcsr();
  }
  static void write_mode(uint64_t mode) {
    _mm_setcsr(static_cast<unsigned>(mode));
  }
#elif defined(__aarch64__)
  static constexpr uint64_t kFlushBits = uint64_t(1) << 24;  // FPCR: FZ
  static uint64_t read_mode() {
    uint64_t fpcr;
    asm volatile("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
  }
  static void write_mode(uint64_t mode) {
    asm volatile("msr fpcr, %0" : : "r"(mode));
  }
#else
  // Another architecture keeps its default (subnormals computed): results are its own.
  static constexpr uint64_t kFlushBits = 0;
  static uint64_t read_mode() {
    return 0;
  }
  static void write_mode(uint64_t) {}
#endif
  uint64_t saved_;
};

}  // namespace normlab
