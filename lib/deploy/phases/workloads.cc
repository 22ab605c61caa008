#include "deploy/phases/workloads.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "deploy/image_mirror.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy::phases {

util::Result<void> WorkloadsPhase::render(const std::string& name,
                                          const std::vector<std::string>& templates,
                                          std::map<std::string, std::string> values, Component& c) {
  std::string text;
  values["hash"] = "";
  for (const auto& t : templates) {
    auto part = render_template(s_.templates_dir, t, values);
    if (!part) return part.error();
    text += "---\n" + manifest_through_mirror(*part, s_.image_mirror);
  }
  values["hash"] = config_hash(text);
  c.name = name;
  c.hash = values["hash"];
  c.manifest.clear();
  for (const auto& t : templates) {
    auto part = render_template(s_.templates_dir, t, values);
    if (!part) return part.error();
    c.manifest += "---\n" + manifest_through_mirror(*part, s_.image_mirror);
  }
  return {};
}

std::map<std::string, std::string> WorkloadsPhase::base_values(const HostSpec& master) const {
  const auto& o = s_.openpai;
  return {{"ns", o.ns},
          {"cluster_id", o.cluster_id},
          {"image_prefix", o.image_prefix},
          {"tag", o.tag},
          {"data_path", o.data_path},
          {"admin_user", o.admin_user},
          {"rest_port", std::to_string(o.rest_port)},
          {"webportal_port", std::to_string(o.webportal_port)},
          {"pylon_port", std::to_string(o.pylon_port)},
          {"hived_port", std::to_string(o.hived_port)},
          {"hived_address", master.address},
          {"kube_version", s_.kube_version}};
}

void WorkloadsPhase::observation_reads(HostRun& h, std::vector<ObservationRead>& out) {
  if (!wanted()) return;
  extra_reads(h, out);
  out.push_back({&h, workloads_script()});
}

util::Result<void> WorkloadsPhase::workloads(HostRun& h,
                                             std::map<std::string, WorkloadState>& out) {
  auto r = h.observe_sh(workloads_script());
  if (!r.ok()) return command_failure("listing the workloads of " + s_.openpai.ns, r);
  auto all = util::parse_json_or_discarded(r.out);
  nlohmann::json items = nlohmann::json::array();
  for (const char* kind : {"StatefulSet", "Deployment"}) {
    nlohmann::json of_kind = objects_of_kind(all, kind, s_.openpai.ns);
    for (auto& o : of_kind["items"]) items.push_back(std::move(o));
  }
  for (const auto& it : items) {
    if (!it.is_object() || !it.contains("metadata")) continue;
    const auto& md = it["metadata"];
    std::string kind = util::to_lower(it.value("kind", ""));
    std::string key = kind + "/" + md.value("name", "");
    WorkloadState w;
    w.found = true;
    if (md.contains("annotations") && md["annotations"].is_object())
      w.hash = md["annotations"].value("paictl.io/config-hash", "");
    w.available = rolled_out(it);
    out[key] = w;
  }
  return {};
}

util::Result<void> WorkloadsPhase::observe(HostRun& h, std::vector<std::string>& needs) {
  pending_.clear();
  waiting_.clear();
  if (!wanted()) return {};
  std::vector<Component> cs;
  if (util::Result<void> s = components(h.spec(), cs); !s.ok()) return s;
  if (util::Result<void> s = observe_extra(h, needs); !s.ok()) return s;
  std::map<std::string, WorkloadState> live;
  if (util::Result<void> s = workloads(h, live); !s.ok()) return s;
  for (const auto& c : cs) {
    bool current = true, available = true;
    for (const auto& [kind, name] : c.workloads) {
      auto it = live.find(kind + "/" + name);
      if (it == live.end() || it->second.hash != c.hash) current = false;
      if (it == live.end() || !it->second.available) available = false;
    }
    if (!current) {
      needs.push_back("apply " + c.name);
      pending_.insert(c.name);
    } else if (!available) {
      needs.push_back("wait for " + c.name + " to roll out");
      waiting_.insert(c.name);
    }
  }
  // The endpoints phase reads it: services a plan has still to install or
  // roll out cannot answer yet.
  if (!pending_.empty() || !waiting_.empty()) h.facts()[kServicesPendingFact] = true;
  return {};
}

util::Result<void> WorkloadsPhase::apply(HostRun& h, const std::vector<std::string>&) {
  if (util::Result<void> s = apply_extra(h); !s.ok()) return s;
  std::vector<Component> cs;
  if (util::Result<void> s = components(h.spec(), cs); !s.ok()) return s;
  auto ns_doc = render_template(s_.templates_dir, "namespace.yaml", {{"ns", s_.openpai.ns}});
  if (!ns_doc) return ns_doc.error();
  std::string manifest;
  for (const auto& c : cs)
    if (pending_.count(c.name)) manifest += c.manifest;
  if (!manifest.empty()) {
    if (util::Result<void> s = run_step(
            h, "applying " + util::join({pending_.begin(), pending_.end()}, ", "),
            std::string(kKubectl) + " apply --server-side --field-manager=paictl --force-conflicts "
                                    "-f - >/dev/null",
            "---\n" + *ns_doc + "\n" + manifest);
        !s.ok())
      return s;
  }
  // Every rollout at once, in one read of the namespace's workloads per look.
  std::vector<std::string> wait;
  std::map<std::string, std::string> component_of;
  for (const auto& c : cs) {
    if (!pending_.count(c.name) && !waiting_.count(c.name)) continue;
    for (const auto& [kind, name] : c.workloads) {
      wait.push_back(kind + "/" + name);
      component_of[kind + "/" + name] = c.name;
    }
  }
  if (wait.empty()) return {};
  auto left = wait_for_rollouts(h, s_.openpai.ns, wait, s_.wait_s);
  if (left.empty()) return {};
  const std::string& w = left.front();
  std::string others;
  if (left.size() > 1) others = " (nor " + util::join({left.begin() + 1, left.end()}, ", ") + ")";
  return util::Error{component_of[w] + ": " + w + " did not roll out within " +
                         std::to_string(s_.wait_s) + " s" + others +
                         pod_report(h, w.substr(w.find('/') + 1)),
                     "look at the pods (kubectl -n " + s_.openpai.ns +
                         " describe pod ...): their image, node and logs; a re-run "
                         "waits again (--wait sets the time)"};
}

std::string WorkloadsPhase::pod_report(HostRun& h, const std::string& workload) {
  auto r = h.sh(std::string(kKubectl) + " -n " + s_.openpai.ns +
                " get pods --request-timeout=20s -o 'jsonpath={range .items[*]}{.metadata.name}"
                "{\"\\t\"}{.status.phase}{\"\\t\"}{.spec.nodeName}{\"\\t\"}{range "
                ".status.containerStatuses[*]}{.name} {.state.waiting.reason},{end}{\"\\n\"}{end}' "
                "2>/dev/null; echo '#EVENTS#'; " +
                kKubectl + " -n " + s_.openpai.ns +
                " get events --request-timeout=20s -o 'jsonpath={range .items[*]}"
                "{.involvedObject.name}{\"\\t\"}{.reason}{\"\\t\"}{.message}{\"\\n\"}{end}' "
                "2>/dev/null");
  if (!r.ok()) return {};
  auto cut = r.out.find("#EVENTS#");
  if (cut == std::string::npos) return {};
  std::vector<std::string> lines;
  std::set<std::string> names;
  for (auto line : util::split(std::string_view(r.out).substr(0, cut), '\n')) {
    auto f = util::split(line, '\t');
    if (f.size() < 3 || std::string(f[0]).rfind(workload + "-", 0) != 0) continue;
    names.insert(std::string(f[0]));
    std::string out = "pod " + std::string(f[0]) + ": " + std::string(f[1]);
    if (!f[2].empty()) out += " on " + std::string(f[2]);
    if (f.size() > 3)
      for (auto c : util::split(f[3], ','))
        if (auto sp = c.find(' '); sp != std::string_view::npos && sp + 1 < c.size())
          out += ", " + std::string(c.substr(0, sp)) + " " + std::string(c.substr(sp + 1));
    lines.push_back(out);
  }
  size_t events = 0;
  for (auto line : util::split(std::string_view(r.out).substr(cut + 8), '\n')) {
    auto f = util::split(line, '\t');
    if (f.size() < 3) continue;
    std::string n(f[0]);
    if (!names.count(n) && n != workload) continue;
    lines.push_back("event " + std::string(f[1]) + " on " + n + ": " + std::string(f[2]));
    if (++events >= 8) break;
  }
  return lines.empty() ? std::string() : "; " + util::join(lines, "; ");
}

}  // namespace pai::deploy::phases
