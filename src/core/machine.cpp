#include "normlab/core/machine.hpp"

#include <cblas.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/kernels/gemm.hpp"

#ifndef NORMLAB_ARCH
#define NORMLAB_ARCH ""
#endif

namespace normlab {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// CPUID leaves 0x80000002–4: 48 bytes of brand string, padded with spaces or zeros.
std::string brand_string() {
  std::array<unsigned, 12> words{};
  for (unsigned leaf = 0; leaf < 3; ++leaf) {
    unsigned* w = words.data() + 4 * leaf;
    if (!__get_cpuid(0x80000002 + leaf, &w[0], &w[1], &w[2], &w[3])) return "unknown CPU";
  }
  char text[49] = {};
  std::memcpy(text, words.data(), 48);
  std::string s(text);
  const size_t first = s.find_first_not_of(' '), last = s.find_last_not_of(' ');
  return first == std::string::npos ? "unknown CPU" : s.substr(first, last - first + 1);
}
#elif defined(__aarch64__)
// An Arm CPU has no brand string: Linux's /proc/cpuinfo gives the MIDR's implementer and part
// numbers, named here for the cores of AWS Graviton 2 to 4. Under qemu-user the file is the
// host's, with neither line: "unknown Arm CPU".
std::string arm_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  long implementer = -1, part = -1;
  while (std::getline(in, line) && (implementer < 0 || part < 0)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const long value = std::strtol(line.c_str() + colon + 1, nullptr, 0);
    if (line.rfind("CPU implementer", 0) == 0) implementer = value;
    if (line.rfind("CPU part", 0) == 0) part = value;
  }
  if (implementer < 0) return "unknown Arm CPU";
  const char* vendor = implementer == 0x41 ? "Arm" : implementer == 0x61 ? "Apple" : nullptr;
  const char* core = nullptr;
  if (implementer == 0x41) {
    core = part == 0xd0c   ? "Neoverse-N1"
           : part == 0xd40 ? "Neoverse-V1"
           : part == 0xd49 ? "Neoverse-N2"
           : part == 0xd4f ? "Neoverse-V2"
                           : nullptr;
  }
  std::string name = vendor != nullptr ? std::string(vendor) : fmt::format("{:#x}", implementer);
  name += core != nullptr ? fmt::format(" {}", core) : fmt::format(" part {:#x}", part);
  return name;
}
#endif

// OpenBLAS cores with AVX2 kernels (0.3.21's names); any other core on a CPU with AVX2 is an
// older kernel set than the CPU runs.
bool is_avx2_core(const std::string& core) {
  for (const char* name :
       {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Excavator"}) {
    if (core == name) return true;
  }
  return false;
}

}  // namespace

MachineInfo machine_info() {
  MachineInfo m;
#if defined(__x86_64__) || defined(__i386__)
  m.cpu = brand_string();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    const int base_family = (eax >> 8) & 0xF, base_model = (eax >> 4) & 0xF;
    m.family = base_family == 0xF ? base_family + int((eax >> 20) & 0xFF) : base_family;
    m.model = base_family == 0x6 || base_family == 0xF ? base_model | int((eax >> 16) & 0xF) << 4
                                                       : base_model;
  }
  __builtin_cpu_init();
  m.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  m.avx512 = m.avx2_fma && __builtin_cpu_supports("avx512f");
#elif defined(__aarch64__)
  m.cpu = arm_cpu_name();
#else
  m.cpu = "unknown CPU";
#endif
  m.build_arch = NORMLAB_ARCH;
  m.products = gemm_kernel_description();
  m.openblas = openblas_get_config();
  m.openblas_core = openblas_get_corename();
  return m;
}

std::string describe_machine(const MachineInfo& m) {
#if defined(__x86_64__) || defined(__i386__)
  const char* isa = m.avx512 ? "AVX-512, AVX2, FMA" : m.avx2_fma ? "AVX2, FMA" : "no AVX2";
  std::string out =
      fmt::format("cpu: {} (family {}, model {}; {})\n", m.cpu, m.family, m.model, isa);
#elif defined(__aarch64__)
  // The x86 kernels' branches (block16.hpp, gemm_tile.hpp) are not taken: the generic ones are.
  std::string out = fmt::format("cpu: {} (aarch64; generic kernels)\n", m.cpu);
#else
  std::string out = fmt::format("cpu: {} (generic kernels)\n", m.cpu);
#endif
  out += fmt::format("products: normlab's own, {} (built with -march={})\n", m.products,
                     m.build_arch.empty() ? "default" : m.build_arch);
  out += fmt::format(
      "openblas: {}, core {} (LAPACK: the probes' eigen-solvers, the particles' Schur form)\n",
      m.openblas, m.openblas_core);
  return out;
}

void note_slow_openblas_once() {
  static const bool said = [] {
    const MachineInfo m = machine_info();
    if (!m.avx2_fma || is_avx2_core(m.openblas_core)) return false;
    const char* chosen = std::getenv("OPENBLAS_CORETYPE");
    if (chosen != nullptr) {
      std::fprintf(stderr,
                   "normlab: OPENBLAS_CORETYPE=%s makes OpenBLAS run its %s kernels on this CPU "
                   "(%s), which has AVX2: the probes' eigen-solvers and the particle dynamics' "
                   "Schur form run slower\n",
                   chosen, m.openblas_core.c_str(), m.cpu.c_str());
    } else {
      std::fprintf(stderr,
                   "normlab: OpenBLAS does not know this CPU (%s) and runs its %s kernels, though "
                   "it has AVX2: the probes' eigen-solvers and the particle dynamics' Schur form "
                   "run slower; "
                   "OPENBLAS_CORETYPE=%s selects faster ones\n",
                   m.cpu.c_str(), m.openblas_core.c_str(), m.avx512 ? "SkylakeX" : "Haswell");
    }
    return true;
  }();
  (void)said;
}

void note_scalar_products_once() {
  static const bool said = [] {
    const MachineInfo m = machine_info();
    if (!m.avx2_fma || m.products.rfind("scalar", 0) != 0) return false;
    std::fprintf(stderr,
                 "normlab: this binary was built without AVX2 and FMA (-march=%s), so its "
                 "matrix products run a scalar tile on a CPU that has them; rebuild with "
                 "-DNORMLAB_ARCH=native\n",
                 m.build_arch.empty() ? "default" : m.build_arch.c_str());
    return true;
  }();
  (void)said;
}

}  // namespace normlab
