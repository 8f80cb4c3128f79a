// The CPU normlab runs on and the kernels it uses there, for `normlab --version`,
// `normlab bench` and the results store's provenance; and the one-line notice of a slow path.
#pragma once

#include <string>

namespace normlab {

struct MachineInfo {
  std::string cpu;  // the CPU's brand string, e.g. "AMD EPYC 9R14 96-Core Processor"
  int family = 0;   // CPUID display family and model, e.g. 25 and 17
  int model = 0;
  bool avx2_fma = false;      // the CPU (and OS) run AVX2 and FMA instructions
  bool avx512 = false;        // ... and AVX-512F
  std::string build_arch;     // the -march of this binary ("native", "x86-64-v3", "" for default)
  std::string products;       // normlab's matrix products: "AVX2+FMA, float tile 6x16, ..."
  std::string openblas;       // OpenBLAS's configuration, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  std::string openblas_core;  // the kernels OpenBLAS picked, e.g. "Haswell", "Prescott"
};

MachineInfo machine_info();

// Several lines "cpu: …", "products: …", "openblas: …", for --version and bench.
std::string describe_machine(const MachineInfo& m);

// Says once per process, in one line on stderr, that OpenBLAS runs kernels older than the CPU
// (it does not know the CPU: Debian 12's 0.3.21 on Sapphire Rapids and later), which slows
// what still calls it (LAPACK: the probes' eigen-solvers, the particle dynamics' Schur form).
// Called by ensure_blas_single_threaded, before OpenBLAS's first use.
void note_slow_openblas_once();

// Says once per process, in one line on stderr, that this binary's products run the scalar
// tile (built without AVX2 and FMA) on a CPU that has them. Called by gemm.
void note_scalar_products_once();

}  // namespace normlab
