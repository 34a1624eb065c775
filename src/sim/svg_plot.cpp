#include "sim/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace drover::sim {
namespace {

constexpr double kWidth = 820, kHeight = 460;
constexpr double kLeft = 70, kRight = 190, kTop = 44, kBottom = 56;
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// 1, 2 or 5 times a power of ten, near range / 5.
double nice_step(double range) {
  if (range <= 0) return 1;
  double raw = range / 5;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

std::string tick_text(double v) {
  if (std::fabs(v) >= 1e6 || (std::fabs(v) < 1e-3 && v != 0)) return fmt::format("{:.0e}", v);
  std::string s = fmt::format("{:.3f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

struct Axes {
  double x0, x1, y0, y1;
  bool x_log;
  double px(double x) const {
    double v = x_log ? std::log10(std::max(x, 1.0)) : x;
    return kLeft + (v - x0) / (x1 - x0) * (kWidth - kLeft - kRight);
  }
  double py(double y) const { return kHeight - kBottom - (y - y0) / (y1 - y0) * (kHeight - kTop - kBottom); }
};

Axes fit_axes(const Plot& p) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const auto& l : p.lines) {
    for (auto [x, y] : l.series.points) {
      double xv = p.x_log ? std::log10(std::max(x, 1.0)) : x;
      xmin = std::min(xmin, xv);
      xmax = std::max(xmax, xv);
      ymax = std::max(ymax, y);
    }
  }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1;
  if (p.x_log) xmin = 0, xmax = std::max(1.0, std::ceil(xmax));
  if (!p.x_log) xmin = std::min(xmin, 0.0);
  if (xmax <= xmin) xmax = xmin + 1;
  double y1 = p.y_max > 0 ? p.y_max : (ymax > 0 ? ymax * 1.05 : 1);
  return Axes{xmin, xmax, 0, y1, p.x_log};
}

void draw_ticks(const Axes& a, std::string& out) {
  double ys = nice_step(a.y1 - a.y0);
  for (double y = a.y0; y <= a.y1 + ys * 1e-9; y += ys) {
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e0e0e0\"/>\n", kLeft,
                       a.py(y), kWidth - kRight, a.py(y));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, a.py(y) + 4,
                       tick_text(y));
  }
  double xs = a.x_log ? 1 : nice_step(a.x1 - a.x0);
  for (double x = std::ceil(a.x0 / xs) * xs; x <= a.x1 + xs * 1e-9; x += xs) {
    double xv = a.x_log ? std::pow(10.0, x) : x;
    double px = a.px(xv);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e0e0e0\"/>\n", px, kTop,
                       px, kHeight - kBottom);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px,
                       kHeight - kBottom + 16, tick_text(xv));
  }
}

void draw_frame(const Plot& p, std::string& out) {
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333\"/>\n",
                     kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  out += fmt::format("<text x=\"{:.1f}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
                     (kLeft + kWidth - kRight) / 2, escape(p.title));
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", (kLeft + kWidth - kRight) / 2,
                     kHeight - 14, escape(p.x_label));
  out += fmt::format("<text x=\"18\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1f})\">{}</text>\n",
                     (kTop + kHeight - kBottom) / 2, (kTop + kHeight - kBottom) / 2, escape(p.y_label));
}

void draw_line(const Axes& a, const PlotLine& l, std::size_t row, std::string& out) {
  const char* color = kPalette[static_cast<std::size_t>(l.color) % std::size(kPalette)];
  const char* dash = l.dashed ? " stroke-dasharray=\"6 4\"" : "";
  out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"{} points=\"", color, dash);
  for (auto [x, y] : l.series.points) out += fmt::format("{:.1f},{:.1f} ", a.px(x), a.py(std::min(y, a.y1)));
  out += "\"/>\n";
  double ly = kTop + 10 + static_cast<double>(row) * 18;
  double lx = kWidth - kRight + 14;
  out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                     lx, ly, lx + 24, ly, color, dash);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", lx + 30, ly + 4, escape(l.series.name));
}

}  // namespace

std::string render_svg(const Plot& p) {
  Axes a = fit_axes(p);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  draw_ticks(a, out);
  draw_frame(p, out);
  for (std::size_t i = 0; i < p.lines.size(); ++i) draw_line(a, p.lines[i], i, out);
  out += "</svg>\n";
  return out;
}

}  // namespace drover::sim
