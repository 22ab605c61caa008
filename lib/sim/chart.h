#pragma once
// Line charts as inline SVG, shared by simulate's reports (report.h: a run,
// a sweep; forecast.h: a forecast): no scripts, no external resources. The
// charts' text uses the classes `t` (title) and `a` (axes, legend) that
// kChartStyle defines in a page, or chart_svg_style() in a standalone picture.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pai::sim {

// The report pages' style sheet (the body of a <style> element).
extern const char* const kChartStyle;
// The charts' text classes as a <style> element for a standalone SVG document.
std::string chart_svg_style();

// HTML and XML text: & < > " ' escaped.
std::string chart_escape(std::string_view s);
// One decimal, as coordinates are written.
std::string chart_number(double v);
// A policy's colour (hived, quota, k8s-default, private), else the i-th of four others.
const char* chart_color(const std::string& name, size_t i);

struct ChartSeries {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;  // already in axis units
  std::string dash = {};                          // stroke-dasharray, e.g. "6,4"; "": solid
  bool step = false;  // drawn as steps: each point's value holds until the next point
};

struct ChartAxis {
  double min = 0, max = 1;
  std::vector<std::pair<double, std::string>> ticks;
  std::string label;
};

// A mark on the x axis (a triangle under the plot, its tooltip the title).
struct ChartMark {
  double x = 0;
  std::string color;
  std::string title;
};

// One chart: a frame, grid lines at the ticks, a polyline per series (clamped
// to the axes), the legend on the title line (or under it when it does not fit),
// and the marks.
std::string line_chart(const std::string& title, const std::vector<ChartSeries>& series,
                       const ChartAxis& x, const ChartAxis& y, int width = 640, int height = 300,
                       const std::vector<ChartMark>& marks = {});

// Hours from 0 to end_hours (at least 1), ticks every 2 h, 6 h, a day, a week or 30 days.
ChartAxis chart_time_axis(double end_hours,
                          const std::string& label = "time since the first submission");
// From 0 to a little above max (1 when max is 0), round ticks; percent: 0.5 -> "50%".
ChartAxis chart_value_axis(double max, const std::string& label, bool percent = false);

}  // namespace pai::sim
