// node remove of a master: etcd's members as etcdctl prints them, and the
// quorum a removal must keep (lib/deploy/etcd_members.h).

#include "deploy/etcd_members.h"

#include <gtest/gtest.h>

namespace pai::deploy {
namespace {

// What etcd_members_script prints with three members, the third down: its
// endpoint answers `endpoint health` with health false. IDs are uint64 (the
// first above INT64_MAX).
const char* kThreeOneDown = R"(@@paictl members@@
{"header":{"cluster_id":1,"member_id":2,"raft_term":3},"members":[
 {"ID":17293822569102704640,"name":"m1","peerURLs":["https://10.0.0.1:2380"],"clientURLs":["https://10.0.0.1:2379"]},
 {"ID":3735928559,"name":"m2","peerURLs":["https://10.0.0.2:2380"],"clientURLs":["https://10.0.0.2:2379"]},
 {"ID":48879,"name":"m3","peerURLs":["https://10.0.0.3:2380"],"clientURLs":["https://10.0.0.3:2379"]}]}

@@paictl health@@
[{"endpoint":"https://10.0.0.1:2379","health":true,"took":"1ms"},
 {"endpoint":"https://10.0.0.2:2379","health":true,"took":"1ms"},
 {"endpoint":"https://10.0.0.3:2379","health":false,"error":"context deadline exceeded"}]
)";

std::vector<EtcdMember> three_one_down() {
  auto m = parse_etcd_members(kThreeOneDown);
  EXPECT_TRUE(m.ok());
  return m.ok() ? *m : std::vector<EtcdMember>{};
}

TEST(EtcdMembers, ReadsIdsInHexNamesUrlsAndHealth) {
  auto m = three_one_down();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].id, "f000000000000000");
  EXPECT_EQ(m[1].id, "deadbeef");
  EXPECT_EQ(m[2].id, "beef");
  EXPECT_EQ(m[2].name, "m3");
  EXPECT_EQ(m[2].peer_urls, std::vector<std::string>{"https://10.0.0.3:2380"});
  EXPECT_TRUE(m[0].healthy);
  EXPECT_TRUE(m[1].healthy);
  EXPECT_FALSE(m[2].healthy);
}

TEST(EtcdMembers, NoHealthAnswerMeansNoMemberHealthy) {
  auto m = parse_etcd_members(
      "@@paictl "
      "members@@\n{\"members\":[{\"ID\":1,\"name\":\"a\",\"clientURLs\":[\"https://a:2379\"]}]}\n"
      "@@paictl health@@\n");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_FALSE((*m)[0].healthy);
}

TEST(EtcdMembers, OutputWithoutTheMemberListIsAnError) {
  EXPECT_FALSE(parse_etcd_members("Error: context deadline exceeded").ok());
  EXPECT_FALSE(parse_etcd_members("@@paictl members@@\nnot json\n@@paictl health@@\n[]").ok());
  EXPECT_FALSE(parse_etcd_members("@@paictl members@@\n{\"members\":3}\n@@paictl health@@\n").ok());
}

TEST(EtcdMembers, FoundByNameOrByPeerAddress) {
  auto m = three_one_down();
  ASSERT_NE(find_etcd_member(m, "m2", "x"), nullptr);
  EXPECT_EQ(find_etcd_member(m, "m2", "x")->id, "deadbeef");
  ASSERT_NE(find_etcd_member(m, "renamed", "10.0.0.3"), nullptr);
  EXPECT_EQ(find_etcd_member(m, "renamed", "10.0.0.3")->name, "m3");
  EXPECT_EQ(find_etcd_member(m, "m9", "10.0.0.9"), nullptr);
}

TEST(EtcdQuorum, TheLostMemberMayGo) {
  // Two healthy members left of two: a quorum.
  EXPECT_FALSE(etcd_quorum_refusal(three_one_down(), {"m3"}));
}

TEST(EtcdQuorum, ASecondMasterOfThreeWithOneLostIsRefused) {
  auto why = etcd_quorum_refusal(three_one_down(), {"m2"});
  ASSERT_TRUE(why);
  EXPECT_NE(why->message.find("would leave 2 etcd members (m1, m3) of which 1 healthy"),
            std::string::npos)
      << why->message;
  EXPECT_NE(why->message.find("a quorum needs 2"), std::string::npos);
  EXPECT_NE(why->hint.find("m3"), std::string::npos) << why->hint;
  EXPECT_EQ(why->kind, util::Error::Kind::Input);
}

TEST(EtcdQuorum, AllHealthyThreeMayLoseOne) {
  auto m = three_one_down();
  m[2].healthy = true;
  EXPECT_FALSE(etcd_quorum_refusal(m, {"m1"}));
  // Two of three leave one member, healthy: a quorum of one.
  EXPECT_FALSE(etcd_quorum_refusal(m, {"m1", "m2"}));
}

TEST(EtcdQuorum, EveryMemberOrNoQuorumAtAllIsRefused) {
  auto m = three_one_down();
  auto all = etcd_quorum_refusal(m, {"m1", "m2", "m3"});
  ASSERT_TRUE(all);
  EXPECT_NE(all->message.find("every etcd member"), std::string::npos);
  m[1].healthy = false;  // one of three healthy: no quorum now
  auto none = etcd_quorum_refusal(m, {"m3"});
  ASSERT_TRUE(none);
  EXPECT_NE(none->message.find("no quorum: 1 of 3 members healthy"), std::string::npos)
      << none->message;
  EXPECT_EQ(none->kind, util::Error::Kind::Remote);
}

TEST(EtcdJoin, AReplacedMasterWaitsForItsOldMemberToGo) {
  auto m = three_one_down();
  auto r = etcd_join_refusal(m, "m3", "10.0.0.3");
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->message.find("still lists a member of m3"), std::string::npos) << r->message;
  EXPECT_NE(r->hint.find("paictl node remove CLUSTER_DIR m3"), std::string::npos) << r->hint;
  // The same machine under another name, found by its peer address.
  auto by_address = etcd_join_refusal(m, "m3-new", "10.0.0.3");
  ASSERT_TRUE(by_address.has_value());
  EXPECT_NE(by_address->message.find("(m3, not healthy)"), std::string::npos);
}

TEST(EtcdJoin, AFourthMemberWithOneLostWouldLoseTheQuorum) {
  // Three listed, two healthy: a fourth, not started yet, makes 2 healthy of 4.
  auto r = etcd_join_refusal(three_one_down(), "m4", "10.0.0.4");
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->message.find("4 etcd members of which 2 healthy"), std::string::npos) << r->message;
  EXPECT_NE(r->hint.find("paictl node remove CLUSTER_DIR m3"), std::string::npos) << r->hint;
}

TEST(EtcdJoin, AReplacementJoinsTwoHealthyMembers) {
  auto m = three_one_down();
  m.pop_back();  // the lost member removed
  EXPECT_FALSE(etcd_join_refusal(m, "m3", "10.0.0.3").has_value());
  m.pop_back();  // one member that runs: a second may join it, as etcd allows
  EXPECT_FALSE(etcd_join_refusal(m, "m2", "10.0.0.2").has_value());
  m[0].healthy = false;  // one member that does not answer: no join
  EXPECT_TRUE(etcd_join_refusal(m, "m2", "10.0.0.2").has_value());
}

}  // namespace
}  // namespace pai::deploy
