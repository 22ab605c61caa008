// The `containerd` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(ContainerdPhase, NeedsItsConfigurationAndARestartWithIt) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& containerd = named(phases, "containerd");
  ScriptedHosts run;
  HostRun& cpu = run.add(worker_spec("w1"));
  HostRun& gpu = run.add(worker_spec("w2", 4));
  auto o = observe(containerd, cpu);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs,
            (std::vector<std::string>{"write /etc/containerd/config.toml (SystemdCgroup = true)",
                                      "restart containerd with that configuration"}));
  // Done on a CPU host; a GPU host still needs NVIDIA as the default runtime.
  run.transport.on("C=/etc/containerd/config.toml",
                   {.out = "config=1\nsystemd=1\nstamp=1\nactive=active\n"});
  EXPECT_TRUE(observe(containerd, cpu).needs.empty());
  o = observe(containerd, gpu);
  ASSERT_EQ(o.needs.size(), 1u);
  EXPECT_NE(o.needs[0].find("nvidia the default runtime"), std::string::npos);
  // The right configuration, but containerd runs an older one.
  run.transport.on("C=/etc/containerd/config.toml",
                   {.out = "config=1\nsystemd=1\nactive=active\n"});
  EXPECT_EQ(observe(containerd, cpu).needs,
            std::vector<std::string>{"restart containerd with that configuration"});
}

TEST(ContainerdPhase, ApplyRewritesOnlyWhatIsNeededAndRestarts) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& containerd = named(phases, "containerd");
  ScriptedHosts run;
  HostRun& gpu = run.add(worker_spec("w2", 4));
  ASSERT_TRUE(containerd
                  .apply(gpu, {"write /etc/containerd/config.toml (SystemdCgroup = true, nvidia "
                               "the default runtime)",
                               "restart containerd with that configuration"})
                  .ok());
  std::string script = run.transport.calls().back().script;
  EXPECT_NE(script.find("containerd config default > /etc/containerd/config.toml.paictl-new"),
            std::string::npos);
  EXPECT_NE(script.find("nvidia-ctk runtime configure --runtime=containerd --set-as-default"),
            std::string::npos);
  EXPECT_NE(script.find("systemctl restart containerd"), std::string::npos);
  // A restart alone leaves the configuration as it is.
  ASSERT_TRUE(containerd.apply(gpu, {"restart containerd with that configuration"}).ok());
  script = run.transport.calls().back().script;
  EXPECT_EQ(script.find("config default"), std::string::npos);
  EXPECT_NE(script.find("systemctl restart containerd"), std::string::npos);

  run.transport.on("systemctl restart containerd",
                   {.err = "Job for containerd.service failed.\n", .exit_status = 1});
  auto r = containerd.apply(gpu, {"restart containerd with that configuration"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "configuring containerd failed (exit 1): Job for containerd.service failed.");
}

TEST(ContainerdPhase, MirrorsNeedConfigPathAndTheSandboxImageThroughTheMirror) {
  InstallSettings s = install_settings();
  s.registry_mirrors = {{"docker.io", {"https://mirror.corp"}}};
  s.image_mirror = "10.0.0.5:5000";
  auto phases = install_phases(s);
  Phase& containerd = named(phases, "containerd");
  ScriptedHosts run;
  HostRun& cpu = run.add(worker_spec("w1"));
  // A configuration written before the mirrors: rewritten.
  run.transport.on("C=/etc/containerd/config.toml",
                   {.out = "config=1\nsystemd=1\nstamp=1\nactive=active\nconfig_path=\"\"\n"
                           "sandbox_image=\"registry.k8s.io/pause:3.8\"\n"});
  EXPECT_EQ(observe(containerd, cpu).needs,
            std::vector<std::string>{"write /etc/containerd/config.toml (SystemdCgroup = true, "
                                     "config_path /etc/containerd/certs.d, the sandbox image from "
                                     "10.0.0.5:5000)"});
  run.transport.on("C=/etc/containerd/config.toml",
                   {.out = "config=1\nsystemd=1\nstamp=1\nactive=active\n"
                           "config_path=\"/etc/containerd/certs.d\"\n"
                           "sandbox_image=\"10.0.0.5:5000/pause:3.8\"\n"});
  EXPECT_TRUE(observe(containerd, cpu).needs.empty());
  ASSERT_TRUE(containerd.apply(cpu, {"write /etc/containerd/config.toml (...)"}).ok());
  std::string script = run.transport.calls().back().script;
  EXPECT_NE(script.find("sed -i 's|config_path = \"\"|config_path = \"/etc/containerd/certs.d\"|'"),
            std::string::npos);
  EXPECT_NE(script.find("sed -i 's|^\\( *sandbox_image = \"\\)[^/\"]*/|\\110.0.0.5:5000/|'"),
            std::string::npos)
      << script;
}

}  // namespace
}  // namespace pai::deploy::phase_test
