#include "remote/known_hosts.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "util/strings.h"

namespace pai::remote {
namespace {

// Keys made with ssh-keygen; K1 and K2 are ed25519, K3 is ECDSA P-256.
const char* kK1 = "AAAAC3NzaC1lZDI1NTE5AAAAIEHpbd3RwLgFukkXrf5OZ1XaPj+XwTeMpvDA3x299OAS";
const char* kK2 = "AAAAC3NzaC1lZDI1NTE5AAAAICMxG/kc8bhSXfiFNp/NzYYrv22WODP2Md0wkoFL76Z+";
const char* kK3 =
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBJJFPevxnkxDUlb+wJAN4jW+qGJzkio7g0Qxz/"
    "KNE+19VNTvrSTV+hnr5jrup9Vne65+7qQEwtBDPlZgDliPtiQ=";
// `ssh-keygen -H` of "[10.0.0.7]:2222 ssh-ed25519 K1" and "master.example.org ssh-ed25519 K2".
const char* kHashed =
    "|1|E8+9W1dZ1zX2QgMTn4J4h4C0xko=|hTkcRNDIqBEwqB6+WAZQOaGXQ4M= ssh-ed25519 "
    "AAAAC3NzaC1lZDI1NTE5AAAAIEHpbd3RwLgFukkXrf5OZ1XaPj+XwTeMpvDA3x299OAS\n"
    "|1|Cpu98Q+YPxklCmSJT7puJ8rMAUs=|nGr3Targ4U+johSjmjmznmHKtZE= ssh-ed25519 "
    "AAAAC3NzaC1lZDI1NTE5AAAAICMxG/kc8bhSXfiFNp/NzYYrv22WODP2Md0wkoFL76Z+\n";

std::string blob(const char* b64) {
  return *util::base64_decode(b64);
}

KnownHostStatus status(const KnownHosts& kh, const std::string& name, const std::string& type,
                       const char* key) {
  return check_known_host({&kh}, name, type, blob(key)).status;
}

TEST(KnownHosts, PlainNamesPortsAndCase) {
  auto kh = KnownHosts::parse(std::string("# a comment\n\n10.0.0.1,Node-A ssh-ed25519 ") + kK1 +
                              " root@node-a\n[10.0.0.2]:2222 ssh-ed25519 " + kK2 + "\n");
  EXPECT_EQ(kh.size(), 2u);
  EXPECT_EQ(status(kh, "10.0.0.1", "ssh-ed25519", kK1), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "node-a", "ssh-ed25519", kK1), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "NODE-A", "ssh-ed25519", kK1), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "[10.0.0.2]:2222", "ssh-ed25519", kK2), KnownHostStatus::Ok);
  // The port is part of the name: the same address on port 22 is another host.
  EXPECT_EQ(status(kh, "10.0.0.2", "ssh-ed25519", kK2), KnownHostStatus::NotFound);
  EXPECT_EQ(status(kh, "10.0.0.3", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
}

TEST(KnownHosts, AnotherKeyOfTheSameTypeIsChangedOfAnotherTypeOther) {
  auto kh = KnownHosts::parse(std::string("h1 ssh-ed25519 ") + kK1 + "\n");
  auto c = check_known_host({&kh}, "h1", "ssh-ed25519", blob(kK2));
  EXPECT_EQ(c.status, KnownHostStatus::Changed);
  EXPECT_EQ(c.line, 1);
  EXPECT_EQ(status(kh, "h1", "ecdsa-sha2-nistp256", kK3), KnownHostStatus::Other);
  // One matching line among several is enough (a host with two keys of a type).
  auto two =
      KnownHosts::parse(std::string("h1 ssh-ed25519 ") + kK2 + "\nh1 ssh-ed25519 " + kK1 + "\n");
  auto ok = check_known_host({&two}, "h1", "ssh-ed25519", blob(kK1));
  EXPECT_EQ(ok.status, KnownHostStatus::Ok);
  EXPECT_EQ(ok.line, 2);
}

TEST(KnownHosts, HashedNamesAsSshKeygenWritesThem) {
  auto kh = KnownHosts::parse(kHashed);
  EXPECT_EQ(status(kh, "[10.0.0.7]:2222", "ssh-ed25519", kK1), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "master.example.org", "ssh-ed25519", kK2), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "Master.Example.ORG", "ssh-ed25519", kK2), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "master.example.org", "ssh-ed25519", kK1), KnownHostStatus::Changed);
  EXPECT_EQ(status(kh, "10.0.0.7", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
  EXPECT_EQ(status(kh, "[10.0.0.7]:2223", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
}

TEST(KnownHosts, WildcardsAndNegation) {
  auto kh = KnownHosts::parse(std::string("*.gpu.example.org,!bad.gpu.example.org ssh-ed25519 ") +
                              kK1 + "\n10.1.?.5 ssh-ed25519 " + kK2 + "\n");
  EXPECT_EQ(status(kh, "w1.gpu.example.org", "ssh-ed25519", kK1), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "bad.gpu.example.org", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
  EXPECT_EQ(status(kh, "w1.cpu.example.org", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
  EXPECT_EQ(status(kh, "10.1.7.5", "ssh-ed25519", kK2), KnownHostStatus::Ok);
  EXPECT_EQ(status(kh, "10.1.17.5", "ssh-ed25519", kK2), KnownHostStatus::NotFound);
}

TEST(KnownHosts, RevokedKeysAreRefusedForEveryHostAndCertAuthoritiesSkipped) {
  auto kh = KnownHosts::parse(std::string("h1 ssh-ed25519 ") + kK1 + "\n@revoked * ssh-ed25519 " +
                              kK1 + "\n@cert-authority *.example.org ssh-ed25519 " + kK2 + "\n");
  EXPECT_EQ(kh.size(), 1u);
  EXPECT_EQ(status(kh, "h1", "ssh-ed25519", kK1), KnownHostStatus::Revoked);
  EXPECT_EQ(status(kh, "h2", "ssh-ed25519", kK1), KnownHostStatus::Revoked);
  // A CA line is no host key.
  EXPECT_EQ(status(kh, "m.example.org", "ssh-ed25519", kK2), KnownHostStatus::NotFound);
  // Revoked in the global file refuses the key the user's file holds.
  auto user = KnownHosts::parse(std::string("h1 ssh-ed25519 ") + kK2 + "\n");
  auto global = KnownHosts::parse(std::string("@revoked h9 ssh-ed25519 ") + kK2 + "\n");
  EXPECT_EQ(check_known_host({&user, &global}, "h1", "ssh-ed25519", blob(kK2)).status,
            KnownHostStatus::Revoked);
}

TEST(KnownHosts, BothFilesAreConsulted) {
  auto user = KnownHosts::parse("");
  auto global = KnownHosts::parse(std::string("h1 ssh-ed25519 ") + kK1 + "\n");
  EXPECT_EQ(check_known_host({&user, &global}, "h1", "ssh-ed25519", blob(kK1)).status,
            KnownHostStatus::Ok);
  EXPECT_EQ(check_known_host({&user}, "h1", "ssh-ed25519", blob(kK1)).status,
            KnownHostStatus::NotFound);
}

TEST(KnownHosts, LinesThatDoNotParseAreSkippedNotTakenForKeys) {
  auto kh = KnownHosts::parse(std::string("h1 ssh-ed25519\n"  // no key
                                          "h2 ssh-ed25519 !!notbase64!!\n"
                                          "|1|bad|hash ssh-ed25519 ") +
                              kK1 + "\n|1|E8+9W1dZ1zX2QgMTn4J4h4C0xko=|AAAA ssh-ed25519 " + kK1 +
                              "\n@revoked\n,,, ssh-ed25519 " + kK1 + "\n   \t\nh3 ssh-ed25519 " +
                              kK2 + "\r\nh4 ssh-ed25519 " + kK2);  // no final newline
  EXPECT_EQ(kh.size(), 2u);
  EXPECT_EQ(status(kh, "h1", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
  EXPECT_EQ(status(kh, "h2", "ssh-ed25519", kK1), KnownHostStatus::NotFound);
  EXPECT_EQ(check_known_host({&kh}, "h3", "ssh-ed25519", blob(kK2)).line, 8);
  EXPECT_EQ(status(kh, "h4", "ssh-ed25519", kK2), KnownHostStatus::Ok);
}

TEST(KnownHosts, AlgorithmsOfferTheKnownTypesFirst) {
  EXPECT_EQ(host_key_algorithms({}),
            "ssh-ed25519,ecdsa-sha2-nistp521,ecdsa-sha2-nistp384,ecdsa-sha2-nistp256,"
            "sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,"
            "rsa-sha2-256");
  EXPECT_EQ(host_key_algorithms({"ssh-rsa"}),
            "rsa-sha2-512,rsa-sha2-256,ssh-ed25519,ecdsa-sha2-nistp521,ecdsa-sha2-nistp384,"
            "ecdsa-sha2-nistp256,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com");
  EXPECT_EQ(host_key_algorithms({"ecdsa-sha2-nistp256", "ssh-ed25519", "ssh-dss"}),
            "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp521,ecdsa-sha2-nistp384,"
            "sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,"
            "rsa-sha2-256");
  EXPECT_EQ(known_hosts_line("[h]:2222", "ssh-ed25519", kK1),
            std::string("[h]:2222 ssh-ed25519 ") + kK1 + "\n");
}

TEST(KnownHostsCache, ReadsOnceAndAgainWhenTheFileChanges) {
  char dir[] = "/tmp/pai-kh-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/known_hosts";
  KnownHostsCache cache;
  auto none = cache.get(path);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->size(), 0u);
  { std::ofstream(path) << "h1 ssh-ed25519 " << kK1 << "\n"; }
  auto one = cache.get(path);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)->size(), 1u);
  auto again = cache.get(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), one->get()) << "an unchanged file is not parsed again";
  { std::ofstream(path, std::ios::app) << "h2 ssh-ed25519 " << kK2 << "\n"; }
  auto two = cache.get(path);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ((*two)->size(), 2u);
  // Something that is not a regular file is an error, not an empty file.
  std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto bad = cache.get(fifo);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("FIFO"), std::string::npos) << bad.error().message;
  auto d = cache.get(dir);
  EXPECT_FALSE(d.ok());
  unlink(fifo.c_str());
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace pai::remote
