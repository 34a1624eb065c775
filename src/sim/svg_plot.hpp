// Line plots as standalone SVG, written by hand: axes with round-number
// ticks, one polyline per series, a legend. Deterministic text (fixed
// precision), so the same data gives the same file byte for byte.
#pragma once

#include <string>
#include <vector>

#include "sim/metrics.hpp"

namespace drover::sim {

struct PlotLine {
  Series series;
  int color = 0;        // index into the palette
  bool dashed = false;  // the second run of a comparison
};

struct Plot {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool x_log = false;   // log10 x axis (values below 1 are drawn at 1)
  double y_max = -1;    // < 0: from the data
  std::vector<PlotLine> lines;
};

std::string render_svg(const Plot& plot);

}  // namespace drover::sim
