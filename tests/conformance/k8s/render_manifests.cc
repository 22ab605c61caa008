// Writes every Kubernetes manifest `paictl install` applies, rendered by
// lib/deploy as the phases render them, one file per component, for the schema
// check (validate_manifests.mjs).
//   render_manifests TEMPLATES_DIR SERVICES_FILE OUT_DIR

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "deploy/onprem.h"
#include "deploy/openpai.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: render_manifests TEMPLATES_DIR SERVICES_FILE OUT_DIR\n");
    return 2;
  }
  pai::deploy::InstallSettings s;
  s.templates_dir = argv[1];
  auto openpai = pai::deploy::load_openpai_settings(argv[2]);
  if (!openpai || !openpai->enabled) {
    std::fprintf(stderr, "render_manifests: %s\n",
                 openpai ? "no services file" : openpai.error().message.c_str());
    return 2;
  }
  s.openpai = std::move(*openpai);
  pai::deploy::HostSpec master;
  master.name = "pai-master";
  master.address = "10.0.0.1";
  master.master = true;
  auto out = pai::deploy::render_install_manifests(s, master, 1500);
  if (!out) {
    std::fprintf(stderr, "render_manifests: %s\n", out.error().message.c_str());
    return 1;
  }
  // A highly available control plane's: three masters (the stateless services'
  // replicas spread over them) and the kube-vip static pod each master runs.
  pai::deploy::InstallSettings ha = s;
  ha.masters = {
      {"pai-master", "10.0.0.1"}, {"pai-master2", "10.0.0.11"}, {"pai-master3", "10.0.0.12"}};
  ha.control_plane_endpoint = "10.0.0.250:6443";
  ha.kube_vip_address = "10.0.0.250";
  ha.kube_vip_interface = "eth0";
  auto ha_out = pai::deploy::render_install_manifests(ha, master, 1500);
  if (!ha_out) {
    std::fprintf(stderr, "render_manifests: %s\n", ha_out.error().message.c_str());
    return 1;
  }
  for (auto& [what, text] : *ha_out) out->emplace_back("3 masters: " + what, text);
  for (bool initializing : {true, false}) {
    auto vip = pai::deploy::render_kube_vip(ha, initializing);
    if (!vip) {
      std::fprintf(stderr, "render_manifests: %s\n", vip.error().message.c_str());
      return 1;
    }
    out->emplace_back("kube-vip", *vip);
  }
  int i = 0;
  for (const auto& [what, text] : *out) {
    char name[32];
    std::snprintf(name, sizeof name, "/%02d.yaml", i++);
    std::ofstream f(std::string(argv[3]) + name);
    f << "# " << what << "\n" << text;
    if (!f) return 1;
  }
  std::printf("%d manifests\n", i);
  return 0;
}
