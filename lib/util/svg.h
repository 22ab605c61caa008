#pragma once
// A small SVG writer: rectangles with tooltips, text, the size they cover, and
// the palette and framing paictl's diagrams share (plan --diagram, hived cells
// --diagram).

#include <algorithm>
#include <string>
#include <string_view>

namespace pai::util {

inline constexpr const char* kSvgPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                              "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                              "#9c755f", "#86bcb6", "#d37295", "#8cd17d"};
inline constexpr size_t kSvgPaletteSize = sizeof kSvgPalette / sizeof *kSvgPalette;

inline std::string svg_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '"')
      o += "&quot;";
    else if (c == '\'')
      o += "&#39;";
    else
      o += c;
  }
  return o;
}

struct Svg {
  std::string body;
  int width = 0, height = 0;
  void rect(int x, int y, int w, int h, const std::string& fill, const std::string& stroke,
            int rx = 3, const std::string& title = {}, const std::string& extra = {}) {
    body += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
            std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" rx=\"" +
            std::to_string(rx) + "\" fill=\"" + fill + "\" stroke=\"" + stroke + "\"" + extra;
    if (title.empty())
      body += "/>\n";
    else
      body += "><title>" + svg_escape(title) + "</title></rect>\n";
    width = std::max(width, x + w);
    height = std::max(height, y + h);
  }
  void text(int x, int y, const std::string& t, int size = 11, const std::string& extra = {}) {
    body += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" font-size=\"" +
            std::to_string(size) + "\"" + extra + ">" + svg_escape(t) + "</text>\n";
    width = std::max(width, x + static_cast<int>(t.size()) * size * 6 / 10);
    height = std::max(height, y + 4);
  }
  void line(int x1, int y1, int x2, int y2, const std::string& stroke, int w = 1) {
    body += "<line x1=\"" + std::to_string(x1) + "\" y1=\"" + std::to_string(y1) + "\" x2=\"" +
            std::to_string(x2) + "\" y2=\"" + std::to_string(y2) + "\" stroke=\"" + stroke +
            "\" stroke-width=\"" + std::to_string(w) + "\" pointer-events=\"none\"/>\n";
  }
  // The whole document, white background, 10 px margin.
  std::string document() const {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width + 10) +
           "\" height=\"" + std::to_string(height + 10) +
           "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
           "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" +
           body + "</svg>\n";
  }
};

}  // namespace pai::util
