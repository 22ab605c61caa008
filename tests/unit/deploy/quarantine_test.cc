// hived quarantine|release's Node side (lib/deploy/quarantine.h): the
// annotation, the Nodes as kubectl lists them, and what the master runs.

#include "deploy/quarantine.h"

#include <gtest/gtest.h>

namespace pai::deploy {
namespace {

TEST(QuarantineMark, RoundTripsThroughTheAnnotation) {
  QuarantineMark m{"alice@ops1", "2026-12-06T15:00:00Z", "ECC \"errors\"; Xid 79", true};
  auto back = parse_quarantine_mark(to_annotation(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->by, "alice@ops1");
  EXPECT_EQ(back->at, "2026-12-06T15:00:00Z");
  EXPECT_EQ(back->reason, "ECC \"errors\"; Xid 79");
  EXPECT_TRUE(back->cordoned);
  EXPECT_FALSE(parse_quarantine_mark("not json"));
  EXPECT_FALSE(parse_quarantine_mark("[1]"));
}

TEST(QuarantineNodes, FromKubectl) {
  auto nodes = parse_quarantine_nodes(R"({"items": [
    {"metadata": {"name": "w1"}, "spec": {}},
    {"metadata": {"name": "w2", "annotations": {"paictl.io/quarantine":
        "{\"by\":\"bob@ops2\",\"at\":\"2026-01-01T00:00:00Z\",\"reason\":\"fan\",\"cordoned\":true}"}},
     "spec": {"unschedulable": true}},
    {"metadata": {"name": "w3", "annotations": {"paictl.io/quarantine": "by hand",
        "paictl.io/maintenance": "upgrade u1"}}, "spec": {"unschedulable": true}},
    {"metadata": {}}, 7]})");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_FALSE((*nodes)[0].unschedulable);
  EXPECT_FALSE((*nodes)[0].mark);
  ASSERT_TRUE((*nodes)[1].mark);
  EXPECT_EQ((*nodes)[1].mark->by, "bob@ops2");
  EXPECT_TRUE((*nodes)[1].mark->cordoned);
  EXPECT_TRUE((*nodes)[1].unschedulable);
  // An annotation paictl cannot read is someone else's, kept as it is.
  ASSERT_TRUE((*nodes)[2].mark);
  EXPECT_EQ((*nodes)[2].mark->by, "(unreadable)");
  EXPECT_EQ((*nodes)[2].maintenance, "upgrade u1");
  EXPECT_FALSE(parse_quarantine_nodes("<html>").ok());
}

TEST(QuarantineScript, QuarantineAnnotatesFirstAndReleaseUndoesOnlyItsOwn) {
  QuarantinePlan p;
  p.request.by = "alice@ops1";
  p.request.at = "2026-12-06T15:00:00Z";
  p.request.reason = "it's bad";
  QuarantineNode q;
  q.node = "w1";
  q.action = QuarantineNode::Action::Quarantine;
  q.cordon = true;
  std::string s = p.node_script(q);
  size_t a = s.find(" annotate node w1 paictl.io/quarantine=");
  size_t c = s.find(" cordon w1");
  ASSERT_NE(a, std::string::npos) << s;
  ASSERT_NE(c, std::string::npos) << s;
  EXPECT_LT(a, c);                                      // annotated first
  EXPECT_EQ(s.find("--overwrite"), std::string::npos);  // never over someone else's
  EXPECT_EQ(s.find(" drain "), std::string::npos);
  p.request.drain = true;
  EXPECT_NE(p.node_script(q).find(" drain w1 --ignore-daemonsets"), std::string::npos);

  QuarantineNode r;
  r.node = "w1";
  r.action = QuarantineNode::Action::Release;
  r.cordon = false;  // the quarantine did not cordon it
  std::string rs = p.node_script(r);
  EXPECT_EQ(rs.find("uncordon"), std::string::npos) << rs;
  EXPECT_NE(rs.find(" annotate node w1 paictl.io/quarantine-"), std::string::npos) << rs;
  r.cordon = true;
  EXPECT_NE(p.node_script(r).find(" uncordon w1"), std::string::npos);
  QuarantineNode n;
  n.node = "w1";
  n.action = QuarantineNode::Action::Refused;
  EXPECT_EQ(p.node_script(n), "set -e\n");
}

}  // namespace
}  // namespace pai::deploy
