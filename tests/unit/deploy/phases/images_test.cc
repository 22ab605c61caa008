// An offline bundle (deploy/offline_bundle.h): its verification, which hosts
// need which image, and the `images` and `packages` phases installing from it
// over the scripted transport.

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "deploy/offline_bundle.h"
#include "phase_fixture.h"
#include "util/json.h"
#include "util/sha256.h"

namespace pai::deploy::phase_test {
namespace {

struct ImagesPhaseFile {
  std::string path, kind, name, content;
};

// Writes a bundle of these files (manifest.json with their sizes and sha256s).
std::string images_phase_bundle(const std::string& name, const std::vector<ImagesPhaseFile>& files,
                                const std::string& platform = "ubuntu-22.04-amd64") {
  std::string dir = ::testing::TempDir() + "/paictl-bundle-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  nlohmann::json m = {{"apiVersion", "paictl.io/bundle/v1"},
                      {"cluster", "t"},
                      {"created", "2026-12-06T00:00:00Z"},
                      {"kubeVersion", "1.30.10"},
                      {"driver", "535"},
                      {"files", nlohmann::json::array()}};
  auto dash = platform.rfind('-');
  m["platforms"] = {{{"os", platform.substr(0, dash)}, {"arch", platform.substr(dash + 1)}}};
  for (const auto& f : files) {
    std::filesystem::create_directories(std::filesystem::path(dir + "/" + f.path).parent_path());
    std::ofstream(dir + "/" + f.path, std::ios::binary) << f.content;
    nlohmann::json e = {{"path", f.path},
                        {"kind", f.kind},
                        {"sha256", util::sha256_hex(f.content)},
                        {"bytes", f.content.size()}};
    if (f.kind == "deb") {
      e["package"] = f.name;
      e["version"] = "1.30.10-1.1";
    } else {
      e["image"] = f.name;
    }
    m["files"].push_back(e);
  }
  std::ofstream(dir + "/manifest.json") << util::dump_json(m);
  return dir;
}

std::vector<ImagesPhaseFile> images_phase_files() {
  return {{"debs/ubuntu-22.04-amd64/kubeadm.deb", "deb", "kubeadm", "deb kubeadm"},
          {"debs/ubuntu-22.04-amd64/kubelet.deb", "deb", "kubelet", "deb kubelet"},
          {"debs/ubuntu-22.04-amd64/containerd.io.deb", "deb", "containerd.io", "deb containerd"},
          {"images/apiserver.tar", "image", "registry.k8s.io/kube-apiserver:v1.30.10", "a"},
          {"images/pause.tar", "image", "registry.k8s.io/pause:3.9", "p"},
          {"images/plugin.tar", "image", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "d"},
          {"images/flannel.tar", "image", "docker.io/flannel/flannel:v0.26.4", "f"},
          {"images/rest.tar", "image", "docker.io/openpai/rest-server:v1.8.0", "r"}};
}

TEST(OfflineBundle, VerifiedWholeEveryBadFileNamed) {
  std::string dir = images_phase_bundle("verify", images_phase_files());
  auto b = verify_offline_bundle(dir);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->kube_version, "1.30.10");
  EXPECT_EQ(b->driver, "535");
  EXPECT_EQ(b->files.size(), 8u);
  ASSERT_NE(b->deb("ubuntu-22.04-amd64", "kubeadm"), nullptr);
  EXPECT_EQ(deb_host_name(*b->deb("ubuntu-22.04-amd64", "kubeadm")),
            "kubeadm_1.30.10-1.1_amd64.deb");

  // The same size, another byte.
  std::ofstream(dir + "/images/pause.tar", std::ios::binary) << "q";
  b = verify_offline_bundle(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().kind, util::Error::Kind::Input);
  EXPECT_NE(b.error().message.find("images/pause.tar has SHA-256 "), std::string::npos)
      << b.error().message;
  std::ofstream(dir + "/images/pause.tar", std::ios::binary) << "p";
  ASSERT_TRUE(verify_offline_bundle(dir).ok());
  // Missing, truncated, unlisted.
  std::filesystem::remove(dir + "/debs/ubuntu-22.04-amd64/kubelet.deb");
  b = verify_offline_bundle(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("debs/ubuntu-22.04-amd64/kubelet.deb is missing"),
            std::string::npos)
      << b.error().message;
  std::ofstream(dir + "/debs/ubuntu-22.04-amd64/kubelet.deb", std::ios::binary) << "deb";
  b = verify_offline_bundle(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("has 3 bytes; the manifest says 11"), std::string::npos)
      << b.error().message;
  std::ofstream(dir + "/debs/ubuntu-22.04-amd64/kubelet.deb", std::ios::binary) << "deb kubelet";
  std::ofstream(dir + "/images/extra.tar") << "x";
  b = verify_offline_bundle(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("images/extra.tar is not in the bundle's manifest"),
            std::string::npos)
      << b.error().message;
  // read_offline_bundle reads the manifest only.
  EXPECT_TRUE(read_offline_bundle(dir).ok());
  EXPECT_TRUE(is_manifest_bundle(dir));
  EXPECT_FALSE(is_manifest_bundle(dir + "/images"));
}

TEST(OfflineBundle, ABadManifestIsNamed) {
  std::string dir = images_phase_bundle("bad", {});
  std::ofstream(dir + "/manifest.json") << R"({"apiVersion": "paictl.io/bundle/v2"})";
  auto b = read_offline_bundle(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("apiVersion is \"paictl.io/bundle/v2\""), std::string::npos)
      << b.error().message;
  std::ofstream(dir + "/manifest.json")
      << R"({"apiVersion": "paictl.io/bundle/v1", "kubeVersion": "1.30.10",
             "platforms": [{"os": "ubuntu-22.04", "arch": "amd64"}],
             "files": [{"path": "../etc/passwd", "kind": "deb", "sha256": "00", "bytes": 1}]})";
  b = read_offline_bundle(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("\"../etc/passwd\" is not a bundle path"), std::string::npos)
      << b.error().message;
}

TEST(OfflineBundle, NamesPlatformsAndScopes) {
  EXPECT_EQ(normalized_image("postgres:12"), "docker.io/library/postgres:12");
  EXPECT_EQ(normalized_image("openpai/pylon:v1.8.0"), "docker.io/openpai/pylon:v1.8.0");
  EXPECT_EQ(normalized_image("registry.k8s.io/pause:3.9"), "registry.k8s.io/pause:3.9");
  EXPECT_EQ(normalized_image("localhost:5000/x"), "localhost:5000/x:latest");
  EXPECT_EQ(image_scope("registry.k8s.io/kube-proxy:v1.30.10"), ImageScope::All);
  EXPECT_EQ(image_scope("registry.k8s.io/coredns/coredns:v1.11.1"), ImageScope::All);
  EXPECT_EQ(image_scope("docker.io/flannel/flannel:v0.26.4"), ImageScope::All);
  EXPECT_EQ(image_scope("nvcr.io/nvidia/k8s-device-plugin:v0.17.0"), ImageScope::Gpu);
  EXPECT_EQ(image_scope("registry.k8s.io/etcd:3.5.12-0"), ImageScope::Masters);
  auto b = read_offline_bundle(images_phase_bundle("names", images_phase_files()));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(bundle_fits_platform(*b, "ubuntu-22.04", "x86_64").ok());
  auto r = bundle_fits_platform(*b, "ubuntu-20.04", "amd64");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "the offline bundle carries ubuntu-22.04-amd64, not ubuntu-20.04-amd64");
  EXPECT_FALSE(bundle_fits_platform(*b, "ubuntu-22.04", "aarch64").ok());
  EXPECT_TRUE(deb_for_host("kubeadm", false));
  EXPECT_FALSE(deb_for_host("nvidia-container-toolkit", false));
  EXPECT_TRUE(deb_for_host("libnvidia-container1", true));
  EXPECT_FALSE(deb_for_host("nvidia-driver-535", true));
  EXPECT_FALSE(deb_for_host("libnvidia-compute-535", true));
  EXPECT_EQ(images_for_host(*b, false, false).size(), 2u);  // pause, flannel
  EXPECT_EQ(images_for_host(*b, false, true).size(), 3u);   // + the device plugin
  EXPECT_EQ(images_for_host(*b, true, false).size(), 4u);   // the masters'
}

InstallSettings images_phase_settings(const std::string& dir) {
  InstallSettings s = install_settings();
  s.openpai.enabled = true;  // the OpenPAI services' manifests say where their images run
  s.offline_bundle = dir;
  auto b = verify_offline_bundle(dir);
  EXPECT_TRUE(b.ok());
  s.bundle = std::make_shared<const OfflineBundle>(std::move(*b));
  return s;
}

TEST(ImagesPhase, EachHostTheImagesOfItsRolesOnlyThoseContainerdLacks) {
  InstallSettings s = images_phase_settings(images_phase_bundle("phase", images_phase_files()));
  auto phases = install_phases(s);
  Phase& images = named(phases, "images");
  ScriptedHosts run;
  HostRun& master = run.add(master_spec());
  HostRun& gpu = run.add(worker_spec("w1", 4));
  auto o = observe(images, master);
  ASSERT_TRUE(o.status.ok());
  // The rendered manifests say where each image runs: flannel (a DaemonSet
  // without a node selector) everywhere, rest-server on the masters, the
  // plugin on GPU hosts.
  ASSERT_EQ(o.needs.size(), 2u);
  EXPECT_EQ(o.needs[0],
            "copy 4 image archive(s) (1 KiB) to /var/cache/paictl/bundle/images: "
            "images/apiserver.tar, images/pause.tar, images/flannel.tar, images/rest.tar");
  EXPECT_NE(o.needs[1].find("import 4 image(s) into containerd (ctr -n k8s.io images import)"),
            std::string::npos);
  o = observe(images, gpu);
  EXPECT_TRUE(needs_has(o.needs, "images/pause.tar, images/plugin.tar, images/flannel.tar"));
  // Imported already, or its archive there with the right sha256: nothing to
  // import, or nothing to copy.
  run.transport.on("ctr -n k8s.io images ls -q",
                   {.out = "img_registry.k8s.io/pause:3.9=1\nimg_nvcr.io/nvidia/"
                           "k8s-device-plugin:v0.17.0=1\nfile_flannel.tar=" +
                           util::sha256_hex("f") + "\n"});
  o = observe(images, gpu);
  EXPECT_EQ(o.needs,
            (std::vector<std::string>{"import 1 image(s) into containerd (ctr -n k8s.io "
                                      "images import): docker.io/flannel/flannel:v0.26.4"}));
  // Without a bundle the phase reads nothing at all.
  InstallSettings none = install_settings();
  auto plain = install_phases(none);
  ScriptedHosts run2;
  HostRun& m2 = run2.add(master_spec());
  EXPECT_TRUE(observe(named(plain, "images"), m2).needs.empty());
  EXPECT_TRUE(run2.transport.calls().empty());
}

TEST(ImagesPhase, ApplyCopiesCheckedOnTheHostThenImports) {
  InstallSettings s = images_phase_settings(images_phase_bundle("apply", images_phase_files()));
  auto phases = install_phases(s);
  Phase& images = named(phases, "images");
  ScriptedHosts run;
  HostRun& w = run.add(worker_spec("w1"));
  ASSERT_TRUE(images.apply(w, {"copy", "import"}).ok());
  std::vector<std::string> scripts;
  for (const auto& c : run.transport.calls()) scripts.push_back(c.script);
  std::string all;
  for (const auto& sc : scripts) all += sc + "\n----\n";
  EXPECT_NE(all.find("cat > /var/cache/paictl/bundle/images/pause.tar.part"), std::string::npos)
      << all;
  EXPECT_NE(all.find("if [ \"$s\" != " + util::sha256_hex("p") + " ]"), std::string::npos) << all;
  EXPECT_NE(all.find("ctr -n k8s.io images import /var/cache/paictl/bundle/images/pause.tar"),
            std::string::npos)
      << all;
  EXPECT_EQ(all.find("apiserver.tar"), std::string::npos) << all;  // a master's
}

TEST(PackagesPhase, FromABundleTheHostsPlatformWithDpkgNoRepository) {
  InstallSettings s = images_phase_settings(images_phase_bundle("packages", images_phase_files()));
  auto phases = install_phases(s);
  Phase& packages = named(phases, "packages");
  ScriptedHosts run;
  HostRun& w = run.add(worker_spec("w1"));
  w.facts()["os_id"] = "ubuntu";
  w.facts()["os_version"] = "22.04";
  run.transport.on("dpkg-query", {.out = "arch=x86_64\n"});
  auto o = observe(packages, w);
  ASSERT_TRUE(o.status.ok()) << o.status.error().message;
  EXPECT_EQ(o.needs, (std::vector<std::string>{
                         "copy 3 .deb file(s) of ubuntu-22.04-amd64 (1 KiB) to "
                         "/var/cache/paictl/bundle/debs",
                         "install kubeadm=1.30.10-1.1 kubelet=1.30.10-1.1 kubectl=1.30.10-1.1 "
                         "containerd.io (dpkg -i of the bundle's .debs)",
                         "hold kubeadm kubelet kubectl"}));
  ASSERT_TRUE(packages.apply(w, o.needs).ok());
  std::string last = run.transport.calls().back().script;
  EXPECT_NE(last.find("dpkg -i /var/cache/paictl/bundle/debs/kubeadm_1.30.10-1.1_amd64.deb"),
            std::string::npos)
      << last;
  for (const auto& c : run.transport.calls())
    EXPECT_EQ(c.script.find("apt-get"), std::string::npos);
  // Another OS: refused, naming both.
  w.facts()["os_version"] = "20.04";
  o = observe(packages, w);
  ASSERT_FALSE(o.status.ok());
  EXPECT_EQ(o.status.error().message,
            "w1: the offline bundle carries ubuntu-22.04-amd64, not ubuntu-20.04-amd64");
  EXPECT_EQ(o.status.error().kind, util::Error::Kind::Input);
}

TEST(ContainerdPhase, FromABundleTheSandboxImageIsTheBundlesPause) {
  InstallSettings s = images_phase_settings(images_phase_bundle("sandbox", images_phase_files()));
  auto phases = install_phases(s);
  Phase& containerd = named(phases, "containerd");
  ScriptedHosts run;
  HostRun& w = run.add(worker_spec("w1"));
  run.transport.on("C=/etc/containerd/config.toml",
                   {.out = "config=1\nsystemd=1\nstamp=1\nactive=active\n"});
  auto o = observe(containerd, w);
  EXPECT_EQ(o.needs, (std::vector<std::string>{"write /etc/containerd/config.toml (SystemdCgroup = "
                                               "true, sandbox image registry.k8s.io/pause:3.9)"}));
  ASSERT_TRUE(containerd.apply(w, o.needs).ok());
  EXPECT_NE(run.transport.calls().back().script.find(
                "sed -i 's#sandbox_image = .*#sandbox_image = \"registry.k8s.io/pause:3.9\"#'"),
            std::string::npos);
  run.transport.on("C=/etc/containerd/config.toml",
                   {.out = "config=1\nsystemd=1\nstamp=1\nactive=active\n"
                           "sandbox_image=\"registry.k8s.io/pause:3.9\"\n"});
  EXPECT_TRUE(observe(containerd, w).needs.empty());
}

}  // namespace
}  // namespace pai::deploy::phase_test
