#include "sim/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/svg.h"

namespace pai::sim {

const char* const kChartStyle =
    "body{font-family:-apple-system,Segoe "
    "UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px "
    "8px;text-align:right}"
    "th{background:#f5f5f5}td.l,th.l{text-align:left}.t{font-size:14px;font-weight:600}.a{font-"
    "size:11px;fill:#444}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}.note{color:#666;font-size:13px}\n";

std::string chart_svg_style() {
  return "<style>text{font-family:Helvetica,Arial,sans-serif}.t{font-size:14px;font-weight:600}"
         ".a{font-size:11px;fill:#444}</style>\n";
}

std::string chart_escape(std::string_view s) {
  return util::svg_escape(s);
}

std::string chart_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

const char* chart_color(const std::string& name, size_t i) {
  if (name == "hived") return "#1b9e77";
  if (name == "quota") return "#d95f02";
  if (name == "k8s-default") return "#7570b3";
  if (name == "private") return "#e7298a";
  static const char* extra[] = {"#66a61e", "#e6ab02", "#a6761d", "#666666"};
  return extra[i % 4];
}

std::string line_chart(const std::string& title, const std::vector<ChartSeries>& series,
                       const ChartAxis& x, const ChartAxis& y, int width, int height,
                       const std::vector<ChartMark>& marks) {
  const auto& esc = chart_escape;
  const auto& fmt = chart_number;
  // The legend goes on the title line, right of the title, when it fits there;
  // otherwise on a line of its own under the title.
  double legend_width = 0;
  for (const ChartSeries& se : series)
    legend_width += 24 + 7.0 * static_cast<double>(se.name.size());
  const double left = 60, right = 16, bottom = 46;
  const bool own_line = left + 8.0 * static_cast<double>(title.size()) + 24 + legend_width > width;
  const double top = own_line ? 44 : 30;
  const double pw = width - left - right, ph = height - top - bottom;
  auto X = [&](double v) {
    return left + (x.max > x.min ? (v - x.min) / (x.max - x.min) : 0) * pw;
  };
  auto Y = [&](double v) {
    return top + ph - (y.max > y.min ? (v - y.min) / (y.max - y.min) : 0) * ph;
  };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                  "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                  std::to_string(width) + " " + std::to_string(height) +
                  "\" role=\"img\" aria-label=\"" + esc(title) + "\">\n";
  s += "<text x=\"" + fmt(left) + "\" y=\"18\" class=\"t\">" + esc(title) + "</text>\n";
  s += "<rect x=\"" + fmt(left) + "\" y=\"" + fmt(top) + "\" width=\"" + fmt(pw) + "\" height=\"" +
       fmt(ph) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (const auto& [v, label] : x.ticks) {
    if (v < x.min || v > x.max) continue;
    s += "<line x1=\"" + fmt(X(v)) + "\" y1=\"" + fmt(top) + "\" x2=\"" + fmt(X(v)) + "\" y2=\"" +
         fmt(top + ph) + "\" stroke=\"#eee\"/>";
    s += "<text x=\"" + fmt(X(v)) + "\" y=\"" + fmt(top + ph + 14) +
         "\" class=\"a\" text-anchor=\"middle\">" + esc(label) + "</text>\n";
  }
  for (const auto& [v, label] : y.ticks) {
    if (v < y.min || v > y.max) continue;
    s += "<line x1=\"" + fmt(left) + "\" y1=\"" + fmt(Y(v)) + "\" x2=\"" + fmt(left + pw) +
         "\" y2=\"" + fmt(Y(v)) + "\" stroke=\"#eee\"/>";
    s += "<text x=\"" + fmt(left - 4) + "\" y=\"" + fmt(Y(v) + 4) +
         "\" class=\"a\" text-anchor=\"end\">" + esc(label) + "</text>\n";
  }
  s += "<text x=\"" + fmt(left + pw / 2) + "\" y=\"" + std::to_string(height - 6) +
       "\" class=\"a\" text-anchor=\"middle\">" + esc(x.label) + "</text>\n";
  s += "<text transform=\"translate(12," + fmt(top + ph / 2) +
       ") rotate(-90)\" class=\"a\" text-anchor=\"middle\">" + esc(y.label) + "</text>\n";
  double lx = own_line ? left : left + 8.0 * static_cast<double>(title.size()) + 24;
  const std::string ly = own_line ? "32" : "18", ry = own_line ? "23" : "9";
  for (const ChartSeries& se : series) {
    if (se.points.empty()) continue;
    s += "<polyline fill=\"none\" stroke=\"" + se.color + "\" stroke-width=\"1.6\"" +
         (se.dash.empty() ? std::string() : " stroke-dasharray=\"" + se.dash + "\"") + " points=\"";
    for (size_t i = 0; i < se.points.size(); ++i) {
      const auto& [px, py] = se.points[i];
      const std::string yv = fmt(Y(std::clamp(py, y.min, y.max)));
      s += fmt(X(std::clamp(px, x.min, x.max))) + "," + yv + " ";
      if (se.step && i + 1 < se.points.size())
        s += fmt(X(std::clamp(se.points[i + 1].first, x.min, x.max))) + "," + yv + " ";
    }
    s += "\"><title>" + esc(se.name) + "</title></polyline>\n";
    if (se.dash.empty()) {
      s += "<rect x=\"" + fmt(lx) + "\" y=\"" + ry + "\" width=\"10\" height=\"10\" fill=\"" +
           se.color + "\"/>";
    } else {                                           // a dashed line's swatch is a piece of it
      const std::string my = fmt(own_line ? 28 : 14);  // the swatch's middle
      s += "<line x1=\"" + fmt(lx - 2) + "\" y1=\"" + my + "\" x2=\"" + fmt(lx + 12) + "\" y2=\"" +
           my + "\" stroke=\"" + se.color + "\" stroke-width=\"1.6\" stroke-dasharray=\"4,2\"/>";
    }
    s += "<text x=\"" + fmt(lx + 14) + "\" y=\"" + ly + "\" class=\"a\">" + esc(se.name) +
         "</text>\n";
    lx += 24 + 7.0 * static_cast<double>(se.name.size());
  }
  for (const ChartMark& m : marks) {
    if (m.x < x.min || m.x > x.max) continue;
    const double mx = X(m.x), my = top + ph;
    s += "<polygon points=\"" + fmt(mx) + "," + fmt(my - 9) + " " + fmt(mx - 5) + "," + fmt(my) +
         " " + fmt(mx + 5) + "," + fmt(my) + "\" fill=\"" + m.color +
         "\" stroke=\"#fff\" stroke-width=\"0.8\"><title>" + esc(m.title) + "</title></polygon>\n";
  }
  s += "</svg>\n";
  return s;
}

ChartAxis chart_time_axis(double end_hours, const std::string& label) {
  ChartAxis a;
  a.min = 0;
  a.max = std::max(end_hours, 1.0);
  double step = a.max <= 12        ? 2
                : a.max <= 48      ? 6
                : a.max <= 24 * 8  ? 24
                : a.max <= 24 * 60 ? 24 * 7
                                   : 24 * 30;
  for (double v = 0; v <= a.max + 1e-9; v += step) {
    std::string text = step >= 24 ? std::to_string(static_cast<int>(v / 24)) + "d"
                                  : std::to_string(static_cast<int>(v)) + "h";
    a.ticks.push_back({v, text});
  }
  a.label = label;
  return a;
}

ChartAxis chart_value_axis(double max, const std::string& label, bool percent) {
  ChartAxis a;
  a.label = label;
  a.min = 0;
  a.max = max > 0 ? max * 1.05 : 1;
  double step = std::pow(10, std::floor(std::log10(std::max(a.max, 1e-9) / 2)));
  if (a.max / step > 8) step *= 2;
  if (a.max / step > 8) step *= 2.5;
  for (double v = 0; v <= a.max; v += step) {
    char buf[32];
    if (percent)
      std::snprintf(buf, sizeof buf, "%.0f%%", v * 100);
    else if (v >= 1000)
      std::snprintf(buf, sizeof buf, "%.0fk", v / 1000);
    else
      std::snprintf(buf, sizeof buf, "%g", v);
    a.ticks.push_back({v, buf});
  }
  return a;
}

}  // namespace pai::sim
