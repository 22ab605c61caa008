#include "deploy/image_mirror.h"

#include "util/strings.h"

namespace pai::deploy {

std::string image_through_mirror(std::string_view image, std::string_view mirror) {
  if (mirror.empty() || image.empty()) return std::string(image);
  auto r = parse_image_ref(std::string(image));
  if (!r.ok()) return std::string(image);  // not a reference: left as written
  ImageRef m = through_mirror(*r, std::string(mirror));
  // parse_image_ref names the tag a runtime pulls (":latest" for none); the
  // rewritten text keeps what was written.
  std::string_view named = image.substr(0, image.find('@'));
  auto slash = named.rfind('/');
  if (named.find(':', slash == std::string_view::npos ? 0 : slash) == std::string_view::npos)
    m.tag.clear();
  return m.str();
}

std::string manifest_through_mirror(std::string_view manifest, std::string_view mirror) {
  if (mirror.empty()) return std::string(manifest);
  std::string out;
  out.reserve(manifest.size() + 64);
  size_t pos = 0;
  while (pos < manifest.size()) {
    size_t end = manifest.find('\n', pos);
    size_t stop = end == std::string_view::npos ? manifest.size() : end;
    std::string_view line = manifest.substr(pos, stop - pos);
    // "  image: X", "  - image: X", with X plain, "quoted" or 'quoted', maybe a comment after.
    size_t i = line.find_first_not_of(' ');
    if (i != std::string_view::npos && line.substr(i, 2) == "- ")
      i = line.find_first_not_of(' ', i + 2);
    bool done = false;
    if (i != std::string_view::npos && line.substr(i, 6) == "image:") {
      size_t v = line.find_first_not_of(' ', i + 6);
      if (v != std::string_view::npos && line[v] != '#') {
        char q = (line[v] == '"' || line[v] == '\'') ? line[v] : 0;
        size_t vs = q ? v + 1 : v;
        size_t ve = q ? line.find(q, vs) : line.find_first_of(" #", vs);
        if (ve == std::string_view::npos) ve = q ? std::string_view::npos : line.size();
        if (ve != std::string_view::npos && ve > vs &&
            line.substr(vs, ve - vs).find("{{") == std::string_view::npos) {
          out += line.substr(0, vs);
          out += image_through_mirror(line.substr(vs, ve - vs), mirror);
          out += line.substr(ve);
          done = true;
        }
      }
    }
    if (!done) out += line;
    if (end != std::string_view::npos) out += '\n';
    pos = stop + 1;
  }
  return out;
}

}  // namespace pai::deploy
