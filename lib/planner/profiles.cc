#include "planner/profiles.h"

#include <algorithm>
#include <filesystem>

#include "util/fs.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::planner {

using diag::Severity;
namespace fs = std::filesystem;

std::vector<std::string> list_profiles(const std::string& layouts_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(layouts_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2) && fs::exists(it->path() / "profile.yaml", e2))
      out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Profile> load_profile(const std::string& layouts_dir, const std::string& name,
                                    diag::List& out) {
  const std::string dir = layouts_dir + "/" + name;
  const std::string file = dir + "/profile.yaml";
  if (name.empty() || name.find('/') != std::string::npos || !util::is_regular_file(file)) {
    std::vector<std::string> names = list_profiles(layouts_dir);
    std::string guess = util::did_you_mean(name, names);
    out.add("P109", Severity::Error, "", 0, 0, "unknown machine profile \"" + name + "\"",
            guess.empty()
                ? (names.empty() ? "no profiles found in " + layouts_dir + " (set --layouts DIR)"
                                 : "known profiles: " + util::join(names, ", "))
                : "did you mean \"" + guess + "\"?");
    return std::nullopt;
  }
  auto r = util::read_file(file, 1u << 20);
  if (!r.ok()) {
    out.add("P001", Severity::Error, file, 0, 0, "cannot read " + file + ": " + r.error().message);
    return std::nullopt;
  }
  yaml::Stream s = yaml::load(*r);
  if (s.error || s.documents.empty() || !s.documents[0]->is_mapping()) {
    uint32_t line = s.error ? s.error->mark.line : 1;
    out.add("P109", Severity::Error, file, line, 0, "profile.yaml is not a YAML mapping",
            s.error ? s.error->message : "");
    return std::nullopt;
  }
  const yaml::Node* root = s.documents[0];
  Profile p;
  p.name = name;
  p.dir = dir;
  auto text = [&](const yaml::Node* n, const char* key) {
    const yaml::Node* v = n ? n->get(key) : nullptr;
    return v && v->is_scalar() ? v->scalar() : std::string();
  };
  p.description = text(root, "description");
  p.sku = text(root, "sku");
  if (p.sku.empty()) p.sku = util::to_lower(name);
  if (const yaml::Node* e = root->get("expect"); e && e->is_mapping()) {
    p.expect_leaf = text(e, "leaf");
    if (const yaml::Node* ct = e->get("cell-types"); ct && ct->is_sequence())
      for (const yaml::Node* item : ct->items()) {
        if (!item->is_scalar()) continue;
        std::string v = item->scalar();
        size_t x = v.rfind(" x");
        int n = 0;
        if (x != std::string::npos)
          if (auto num = util::parse_int(std::string_view(v).substr(x + 2)))
            n = static_cast<int>(*num);
        p.expect_cell_types.push_back({v.substr(0, x), n});
      }
    if (const yaml::Node* lo = e->get("leaf-order"); lo && lo->is_sequence())
      for (const yaml::Node* item : lo->items())
        if (auto v = item->as_int()) p.expect_leaf_order.push_back(static_cast<int>(*v));
  }
  p.facts = load_host_dir(dir, name, out);
  p.facts.profile = name;
  p.facts.sku_name = p.sku;
  p.facts.origin = dir;
  if (!p.facts.cpu || !p.facts.mem) {
    out.add("P109", Severity::Error, dir, 0, 0, "profile " + name + " lacks lscpu.txt or meminfo",
            "a profile holds the facts of one machine: topo.txt, gpus.csv, lscpu.txt and meminfo");
    return std::nullopt;
  }
  return p;
}

std::string azure_profile_name(std::string_view vm_size) {
  std::string s(vm_size);
  if (s.rfind("Standard_", 0) == 0) s = s.substr(9);
  if (s.empty()) return "";
  std::replace(s.begin(), s.end(), '_', '-');
  return "azure-" + util::to_lower(s);
}

std::vector<Host> profile_hosts(const Profile& p, int count, int racks, int subnet) {
  std::vector<Host> out;
  out.reserve(static_cast<size_t>(std::max(count, 0)));
  int width = count >= 1000 ? 4 : 3;
  for (int i = 0; i < count; ++i) {
    Host h = p.facts;
    std::string num = std::to_string(i + 1);
    h.hostname =
        util::to_lower(p.name) + "-" +
        std::string(static_cast<size_t>(std::max(0, width - static_cast<int>(num.size()))), '0') +
        num;
    h.hostip = "10." + std::to_string(subnet) + "." + std::to_string(i / 254) + "." +
               std::to_string(i % 254 + 1);
    if (racks > 0) {
      // Contiguous blocks: the first (count % racks) racks get one more host.
      int base = count / racks, extra = count % racks, r = 0, start = 0;
      for (; r < racks; ++r) {
        int size = base + (r < extra ? 1 : 0);
        if (i < start + size) break;
        start += size;
      }
      h.rack = "rack" + std::to_string(r + 1);
    }
    h.origin = "profile " + p.name;
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace pai::planner
