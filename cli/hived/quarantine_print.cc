#include "hived/quarantine_print.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

std::string quarantine_who() {
  std::string user;
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) user = pw->pw_name;
  if (user.empty())
    if (const char* u = std::getenv("USER")) user = u;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  return (user.empty() ? "unknown" : user) + "@" + (host[0] ? host : "unknown");
}

std::string quarantine_plan_text(const pai::deploy::QuarantinePlan& p) {
  using A = pai::deploy::QuarantineNode::Action;
  const auto& r = p.request;
  std::string s;
  s += std::string(r.release ? "hived release" : "hived quarantine") + ": " +
       std::to_string(p.nodes.size()) + (p.nodes.size() == 1 ? " node" : " nodes") +
       (r.release ? ""
                  : ", by " + r.by + (r.reason.empty() ? "" : ", reason \"" + r.reason + "\"")) +
       "; effect from " + p.hived_source + "\n";
  Table t({{"NODE"}, {"ACTION"}, {"WHY"}});
  for (const auto& n : p.nodes)
    t.add({n.node, n.action == A::Refused ? "REFUSED" : std::string(to_string(n.action)), n.why});
  s += render_table(t);
  if (!p.effect) return s;
  const auto& e = *p.effect;
  if (e.nodes.empty()) return s;
  std::string nodes = pai::util::join(e.nodes, ", ");
  if (!e.doomed.empty()) {
    s += "\nWith " + nodes + (r.release ? " healthy again" : " bad in HiveD") + " (" +
         std::to_string(e.leaves) + " leaf cells), the VCs' doomed bad cells change:\n";
    Table d({{"VC"},
             {"CHAIN"},
             {"CELL TYPE"},
             {"DOOMED", false, true},
             {"LEAVES", false, true},
             {"OF GUARANTEED", false, true}});
    for (const auto& x : e.doomed)
      d.add({x.vc, x.chain, x.cell_type,
             std::to_string(x.cells_before) + " -> " + std::to_string(x.cells_after),
             std::to_string(x.leaves_before) + " -> " + std::to_string(x.leaves_after),
             std::to_string(x.guaranteed_leaves)});
    s += render_table(d);
  } else {
    s += "\nWith " + nodes + (r.release ? " healthy again" : " bad in HiveD") + " (" +
         std::to_string(e.leaves) + " leaf cells), no VC's doomed bad cells change" +
         (r.release ? "" : " (the healthy free cells still fit every VC's free guarantee)") + "\n";
  }
  if (!r.release) {
    if (e.groups.empty()) {
      s += "\nNo running group on " + nodes + ".\n";
    } else {
      s += "\nRunning groups on " + nodes +
           (r.drain ? " (--drain evicts their pods there):\n"
                    : " (they keep running; --drain evicts them):\n");
      Table g({{"GROUP"},
               {"VC"},
               {"PRIORITY", false, true},
               {"GPUS HERE", false, true},
               {"OF", false, true},
               {"NODES"}});
      for (const auto& x : e.groups)
        g.add({x.name, x.vc, std::to_string(x.priority), std::to_string(x.leaves),
               std::to_string(x.gpus), pai::util::join(x.nodes, ",")});
      s += render_table(g);
    }
  }
  return s;
}

}  // namespace paictl
