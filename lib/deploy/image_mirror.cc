#include "deploy/image_mirror.h"

#include "util/strings.h"

namespace pai::deploy {

std::string ImageRef::str() const {
  std::string out = registry.empty() ? repository : registry + "/" + repository;
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

ImageRef parse_image_ref(std::string_view image) {
  ImageRef r;
  std::string rest(image);
  if (auto at = rest.find('@'); at != std::string::npos) {
    r.digest = rest.substr(at + 1);
    rest.resize(at);
  }
  // The tag follows the last ':' after the last '/' (a registry's port comes before a '/').
  auto slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    r.tag = rest.substr(colon + 1);
    rest.resize(colon);
  }
  auto first = rest.find('/');
  std::string head = first == std::string::npos ? "" : rest.substr(0, first);
  bool is_registry = !head.empty() && (head.find('.') != std::string::npos ||
                                       head.find(':') != std::string::npos || head == "localhost");
  if (is_registry) {
    r.registry = head;
    r.repository = rest.substr(first + 1);
  } else {
    r.registry = "docker.io";
    r.repository = rest;
  }
  if (r.registry == "index.docker.io" || r.registry == "registry-1.docker.io")
    r.registry = "docker.io";
  if (r.registry == "docker.io" && r.repository.find('/') == std::string::npos)
    r.repository = "library/" + r.repository;
  return r;
}

std::string image_through_mirror(std::string_view image, std::string_view mirror) {
  if (mirror.empty() || image.empty()) return std::string(image);
  ImageRef r = parse_image_ref(image);
  r.registry = std::string(mirror);
  return r.str();
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
