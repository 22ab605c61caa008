// paictl bundle build CLUSTER_DIR --out DIR and paictl bundle verify DIR
// (lib/bundle/build.h, manifest.h; docs/bundle.md): flags, the plan as text or
// -o json|yaml, progress lines and exit codes.

#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "bundle/build.h"
#include "bundle/manifest.h"
#include "command.h"
#include "data_dirs.h"
#include "exit_codes.h"
#include "flags.h"
#include "http/client.h"
#include "install/install_out.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct BundleBuildOptions {
  std::string cluster_dir;
  std::string out;
  std::vector<std::string> platforms;
  std::string driver;
  std::vector<std::string> os_repos;
  std::string registry_ca;
  bool registry_http = false;
  bool dry_run = false;
  std::string output = "table";
};

struct BundleVerifyOptions {
  std::string dir;
  std::string output = "table";
};

int bundle_fail(const pai::util::Error& e, const std::string& output) {
  if (is_structured(output)) {
    print_document(document("bundle", {{"error", e.message}, {"hint", e.hint}}), output);
  }
  print_error(e.message + (e.hint.empty() ? "" : "\n  hint: " + e.hint));
  return exit_code_of(e.kind);
}

Json bundle_plan_doc(const pai::bundle::BuildPlan& p) {
  Json images = Json::array();
  for (const auto& i : p.images)
    images.push_back({{"image", i.image},
                      {"pull", i.pull},
                      {"path", i.path},
                      {"usedBy", i.used_by},
                      {"kept", i.kept}});
  Json debs = Json::array();
  for (const auto& d : p.debs)
    debs.push_back({{"platform", d.platform.dir_name()},
                    {"package", d.package.name},
                    {"version", d.package.version},
                    {"url", d.package.url()},
                    {"sha256", d.package.sha256},
                    {"bytes", d.package.size},
                    {"path", d.path},
                    {"kept", d.kept}});
  Json platforms = Json::array();
  for (const auto& pl : p.request.platforms)
    platforms.push_back({{"os", pl.os}, {"arch", pl.arch}});
  Json doc = {
      {"cluster", p.cluster},   {"out", p.request.out_dir}, {"kubeVersion", p.kube_version},
      {"platforms", platforms}, {"mirror", p.mirror},       {"images", images},
      {"debs", debs},           {"sources", p.sources},     {"assumedInstalled", p.assumed}};
  if (p.request.driver) doc["driver"] = *p.request.driver;
  return doc;
}

void bundle_print_plan(const pai::bundle::BuildPlan& p, bool dry_run) {
  size_t kept = 0;
  for (const auto& i : p.images) kept += i.kept;
  for (const auto& d : p.debs) kept += d.kept;
  out_printf("bundle of cluster %s (Kubernetes %s) in %s: %zu images, %zu .debs%s\n",
             p.cluster.c_str(), p.kube_version.c_str(), p.request.out_dir.c_str(), p.images.size(),
             p.debs.size(),
             kept ? (", " + std::to_string(kept) + " already there and verified").c_str() : "");
  if (!p.mirror.empty()) out_printf("images through the mirror %s\n", p.mirror.c_str());
  if (!dry_run) return;
  Table t({{"KIND"}, {"WHAT"}, {"FROM"}, {"STATE"}});
  for (const auto& i : p.images)
    t.add({"image", i.image, i.pull == i.image ? "" : i.pull, i.kept ? "kept" : "fetch"});
  for (const auto& d : p.debs)
    t.add({"deb " + d.platform.dir_name(), d.package.name + " " + d.package.version,
           d.package.url(), d.kept ? "kept" : "fetch"});
  print_table(t);
  for (const auto& [platform, assumed] : p.assumed)
    if (!assumed.empty())
      out_printf("%s: assumed installed with the OS (no repository read has them): %s\n",
                 platform.c_str(), pai::util::join(assumed, ", ").c_str());
  out_printf("dry run: nothing was fetched or written (.debs to fetch: %s)\n",
             pai::util::format_bytes(static_cast<double>(p.deb_bytes_to_fetch)).c_str());
}

int run_bundle_build(const BundleBuildOptions& o, Globals& g) {
  bool json = is_structured(o.output);
  pai::bundle::BuildRequest r;
  r.cluster_dir = o.cluster_dir;
  r.out_dir = o.out;
  for (const auto& p : o.platforms) r.platforms.push_back(*pai::bundle::parse_platform(p));
  if (!o.driver.empty()) r.driver = o.driver;
  r.os_repos = o.os_repos;
  r.templates_dir = find_templates();

  pai::http::Options ho;
  ho.timeout_s = 600;
  ho.max_response_bytes = size_t{4} << 30;
  if (g.verbose) ho.log = [](const std::string& l) { err_printf("paictl: %s\n", l.c_str()); };
  pai::http::Options ro = ho;
  ro.tls.ca_file = o.registry_ca;
  pai::http::CurlClient apt(ho), registry(ro);
  pai::bundle::BuildDeps deps;
  deps.apt = &apt;
  deps.registry = &registry;
  deps.registry_scheme = o.registry_http ? "http" : "https";
  if (!json && !g.quiet)
    deps.on_progress = [](const std::string& what, const std::string& detail) {
      err_printf("  %-8s %s\n", what.c_str(), detail.c_str());
    };

  auto plan = pai::bundle::plan_bundle(r, deps);
  if (!plan) return bundle_fail(plan.error(), o.output);
  Json doc = bundle_plan_doc(*plan);
  if (o.dry_run) {
    doc["dryRun"] = true;
    if (json)
      print_document(document("bundle", doc), o.output);
    else
      bundle_print_plan(*plan, true);
    return kExitChanges;
  }
  if (!json) bundle_print_plan(*plan, false);
  auto out = pai::bundle::apply_bundle(*plan, deps);
  if (!out) return bundle_fail(out.error(), o.output);
  doc["fetched"] = out->fetched;
  doc["kept"] = out->kept;
  doc["removed"] = out->removed;
  doc["fetchedBytes"] = out->fetched_bytes;
  doc["manifest"] = o.out + "/manifest.json";
  if (json) {
    print_document(document("bundle", doc), o.output);
  } else {
    uint64_t total = 0;
    for (const auto& f : out->bundle.files) total += f.bytes;
    out_printf(
        "wrote %s/manifest.json: %zu files, %s (%d fetched, %d kept from an earlier build)\n",
        o.out.c_str(), out->bundle.files.size(),
        pai::util::format_bytes(static_cast<double>(total)).c_str(), out->fetched, out->kept);
  }
  return kExitChanges;
}

void validate_bundle_build(const BundleBuildOptions& o, Usage& u) {
  u.error_if(!pai::util::is_directory(o.cluster_dir), o.cluster_dir + " is not a directory",
             "the cluster directory: layout.yaml, config.yaml, services-configuration.yaml");
  u.error_if(o.out.empty(), "bundle build needs --out DIR",
             "paictl bundle build " + o.cluster_dir + " --out bundle/");
  for (const auto& p : o.platforms)
    if (auto r = pai::bundle::parse_platform(p); !r) u.error(r.error().message, r.error().hint);
  for (const auto& l : o.os_repos)
    if (auto r = pai::bundle::parse_apt_source(l); !r) u.error(r.error().message, r.error().hint);
  if (!o.registry_ca.empty())
    u.error_if(!pai::util::is_regular_file(o.registry_ca),
               "--registry-ca " + o.registry_ca + " is not a file",
               "a PEM file of the CA that signed the registries' certificates");
  if (!o.driver.empty())
    u.error_if(o.driver.find_first_not_of("0123456789") != std::string::npos,
               "--driver " + o.driver + " is not a driver branch", "e.g. --driver 535");
}

int run_bundle_verify(const BundleVerifyOptions& o, Globals&) {
  auto b = pai::bundle::verify_bundle(o.dir);
  if (!b) return bundle_fail(b.error(), o.output);
  uint64_t total = 0;
  size_t debs = 0;
  for (const auto& f : b->files) {
    total += f.bytes;
    debs += f.kind == pai::bundle::FileKind::Deb;
  }
  if (is_structured(o.output)) {
    Json platforms = Json::array();
    for (const auto& p : b->platforms) platforms.push_back({{"os", p.os}, {"arch", p.arch}});
    print_document(document("bundle", {{"dir", o.dir},
                                       {"verified", true},
                                       {"cluster", b->cluster},
                                       {"kubeVersion", b->kube_version},
                                       {"platforms", platforms},
                                       {"files", b->files.size()},
                                       {"bytes", total}}),
                   o.output);
  } else {
    out_printf("%s: verified %zu files (%zu .debs, %zu images, %s) of cluster %s, Kubernetes %s\n",
               o.dir.c_str(), b->files.size(), debs, b->files.size() - debs,
               pai::util::format_bytes(static_cast<double>(total)).c_str(), b->cluster.c_str(),
               b->kube_version.c_str());
  }
  return kExitOk;
}

}  // namespace

void build_bundle_build(Flags& cmd, Globals& g) {
  auto o = std::make_shared<BundleBuildOptions>();
  cmd.add_option("CLUSTER_DIR", o->cluster_dir, "The cluster directory")->required();
  cmd.add_option("--out", o->out, "The bundle's directory (new, or a bundle to update)")
      ->type_name("DIR");
  cmd.add_option("--platform", o->platforms,
                 "OS-VERSION/ARCH of the hosts (repeatable; default ubuntu-22.04/amd64)")
      ->type_name("OS/ARCH");
  cmd.add_option("--driver", o->driver,
                 "The NVIDIA driver branch of the GPU hosts (nvidia-driver-BRANCH), e.g. 535")
      ->type_name("BRANCH");
  cmd.add_option("--os-repo", o->os_repos,
                 "An apt source of the OS ('deb URL SUITE COMPONENT...' or 'deb URL /'; "
                 "repeatable; default the OS's archive)")
      ->type_name("LINE");
  cmd.add_option("--registry-ca", o->registry_ca,
                 "Trust this CA (PEM) for the registries, besides none else")
      ->type_name("FILE");
  cmd.add_flag("--registry-http", o->registry_http,
               "Reach the registries over plain HTTP (a mirror on a trusted network)");
  cmd.add_flag("--dry-run", o->dry_run,
               "List every image and .deb it would fetch (the repositories' indexes are read), "
               "and write nothing");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "Building a bundle needs a connected machine (the registries and package repositories);\n"
      "installing from it needs none (kube_offline_bundle: DIR in config.yaml).\n"
      "A build that was stopped is resumed by running it again: files already fetched and\n"
      "verified are kept. With image_registry_mirror in config.yaml every image is pulled\n"
      "through that mirror.\n\n"
      "EXIT STATUS:\n"
      "  0 written, 2 bad usage or cluster files, 3 a registry or repository failed;\n"
      "  with --detailed-exitcode: 2 written (or would be), 1 any error\n");
  define_command(cmd, g, o, {.validate = validate_bundle_build, .run = run_bundle_build});
}

void build_bundle_verify(Flags& cmd, Globals& g) {
  auto o = std::make_shared<BundleVerifyOptions>();
  cmd.add_option("DIR", o->dir, "The bundle's directory")->required();
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 every file is there with its size and SHA-256, 2 a file is missing, changed or\n"
      "  not in the manifest (named), or the manifest is bad\n");
  define_command(cmd, g, o, {.run = run_bundle_verify});
}

}  // namespace paictl
