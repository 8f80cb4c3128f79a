// PNG plots of the probes' results, drawn by gnuplot (pngcairo terminal).
//
// Kept apart from the probes so it can move onto a shared plotting helper later: each
// function writes its data to a temporary directory, pipes a gnuplot script, and renames the
// PNG into place (nothing half-written). If gnuplot is not on PATH, the first call prints one
// warning on stderr and no function draws anything. Returns the files written.
#pragma once

#include <string>
#include <vector>

#include "normlab/probes/depth_probe.hpp"
#include "normlab/probes/dilution_probe.hpp"
#include "normlab/probes/dispersion_probe.hpp"
#include "normlab/probes/variance_probe.hpp"

namespace normlab {

// PREFIX.png (per-feature std against length, log-log, with the fits and a −0.5 reference)
// and PREFIX_hist.png (histograms of the attention output at the two lengths).
std::vector<std::string> plot_variance(const VarianceResult& r, const std::string& prefix);
// PREFIX.png: max weight (log-log) and entropy (log x) against length, uniform references.
std::vector<std::string> plot_dispersion(const DispersionResult& r, const std::string& prefix);
// PREFIX.png: stream and block-output RMS, gradient norm per layer, cosine, effective rank.
std::vector<std::string> plot_depth(const DepthResult& r, const std::string& prefix);

// PREFIX.png: |mean gap| against the input size s (log-log) per site, with a 1/s reference.
std::vector<std::string> plot_dilution(const DilutionResult& r, const std::string& prefix);

// Whether gnuplot can be run (searched on PATH once).
bool gnuplot_available();

}  // namespace normlab
