#include "config/layout.h"

#include <set>
#include <unordered_map>

#include "util/strings.h"

namespace pai::config {

const MachineSku* Layout::find_sku(std::string_view name) const {
  for (const auto& s : skus)
    if (s.name == name) return &s;
  return nullptr;
}

const Machine* Layout::find_machine(std::string_view hostname) const {
  if (!machine_index.empty() || machines.empty()) {
    auto it = machine_index.find(std::string(hostname));
    return it == machine_index.end() ? nullptr : &machines[it->second];
  }
  for (const auto& m : machines)
    if (m.hostname == hostname) return &m;
  return nullptr;
}

int64_t Layout::leaf_capacity(const MachineSku& sku) {
  return sku.device ? sku.device->count : sku.vcore;
}

namespace {

const std::vector<std::string> kLayoutTopKeys = {"kubernetes", "machine-sku", "machine-list"};
const std::vector<std::string> kSkuKeys = {"mem", "cpu", "computing-device", "labels", "taints"};
// Upper bounds of one machine: Linux's largest NR_CPUS, and far more devices
// than any server holds (HiveD makes cells for each).
constexpr int64_t kMaxVcores = 8192;
constexpr int64_t kMaxDevices = 1024;

const std::vector<std::string> kDeviceKeys = {"type", "model", "count"};
const std::vector<std::string> kMachineKeys = {"hostname",   "hostip",     "machine-type",
                                               "pai-master", "pai-worker", "pai-storage",
                                               "labels",     "taints"};
const std::vector<std::string> kKnownDeviceTypes = {"nvidia.com/gpu", "amd.com/gpu",
                                                    "enflame.com/dtu"};
const std::vector<std::string> kLegacyMachineKeys = {
    "nodename", "k8s-role", "etcdid", "zkid", "dashboard", "sshport", "username", "password"};

// `labels: {KEY: VALUE}` and `taints: [{key, value, effect}]` of a machine or
// a SKU (L083-L087).
void load_node_marks(const Node* item, const std::string& where, Context& ctx,
                     std::map<std::string, std::string>& labels, std::vector<NodeTaint>& taints,
                     std::vector<Mark>& taint_marks) {
  if (const Node* ls = item->get("labels"); ls && !ls->is_null()) {
    if (ctx.is_mapping(ls, where + ".labels")) {
      for (const auto& p : ls->pairs()) {
        const std::string& k = p.key->scalar();
        bool ok = true;
        if (auto r = check_label_key(k); !r.ok()) {
          ctx.error("L083", ctx.at(p.key), "label key \"" + k + "\" " + r.error().message,
                    r.error().hint);
          ok = false;
        } else if (auto a = check_label_key_allowed(k); !a.ok()) {
          ctx.error("L085", ctx.at(p.key), "label key \"" + k + "\" " + a.error().message,
                    a.error().hint);
          ok = false;
        }
        std::string value;
        if (p.value && !p.value->is_null()) {
          if (!p.value->is_scalar()) {
            ctx.error("L084", ctx.at(p.value),
                      "label " + k + " must have a string value, found " + p.value->describe(),
                      "write KEY: VALUE, e.g. example.com/rack: r12");
            continue;
          }
          value = p.value->scalar();
          if (auto r = check_label_value(value); !r.ok()) {
            ctx.error("L084", ctx.at(p.value),
                      "label " + k + ": value \"" + value + "\" " + r.error().message,
                      r.error().hint);
            ok = false;
          }
        }
        if (ok) labels[k] = value;
      }
    }
  }
  const Node* ts = item->get("taints");
  if (!ts || ts->is_null() || !ctx.is_sequence(ts, where + ".taints")) return;
  size_t i = 0;
  for (const Node* t : ts->items()) {
    std::string tw = where + ".taints[" + std::to_string(i++) + "]";
    if (!ctx.is_mapping(t, tw)) continue;
    ctx.unknown_keys(t, {"key", "value", "effect"}, tw);
    NodeTaint taint;
    bool ok = true;
    if (const Node* k = t->get("key"); !k || k->is_null()) {
      ctx.error("L087", ctx.at(t), tw + " has no key",
                "a taint is {key: example.com/dedicated, value: team-a, effect: NoSchedule}");
      ok = false;
    } else if (auto v = ctx.string_value(k, tw + ".key")) {
      taint.key = *v;
      if (auto r = check_label_key(*v); !r.ok()) {
        ctx.error("L087", ctx.at(k), "taint key \"" + *v + "\" " + r.error().message,
                  r.error().hint);
        ok = false;
      } else if (auto a = check_label_key_allowed(*v); !a.ok()) {
        ctx.error("L085", ctx.at(k), "taint key \"" + *v + "\" " + a.error().message,
                  a.error().hint);
        ok = false;
      }
    } else {
      ok = false;
    }
    if (const Node* v = t->get("value"); v && !v->is_null()) {
      if (auto s = ctx.string_value(v, tw + ".value")) {
        taint.value = *s;
        if (auto r = check_label_value(*s); !r.ok()) {
          ctx.error("L087", ctx.at(v), "taint value \"" + *s + "\" " + r.error().message,
                    r.error().hint);
          ok = false;
        }
      } else {
        ok = false;
      }
    }
    if (const Node* e = t->get("effect"); !e || e->is_null()) {
      ctx.error("L086", ctx.at(t), tw + " has no effect",
                "add effect: NoSchedule, PreferNoSchedule or NoExecute");
      ok = false;
    } else if (auto v = ctx.string_value(e, tw + ".effect")) {
      taint.effect = *v;
      if (auto r = check_taint_effect(*v); !r.ok()) {
        ctx.error("L086", ctx.at(e), "taint effect \"" + *v + "\" " + r.error().message,
                  r.error().hint);
        ok = false;
      }
    } else {
      ok = false;
    }
    if (!ok) continue;
    bool dup = false;
    for (size_t j = 0; j < taints.size(); ++j)
      if (taints[j].key == taint.key && taints[j].effect == taint.effect) {
        ctx.error("L087", ctx.at(t),
                  "taint " + taint.key + ":" + taint.effect + " is given twice (first at line " +
                      std::to_string(taint_marks[j].line) + ")",
                  "a node holds one taint per key and effect; remove one");
        dup = true;
      }
    if (dup) continue;
    taints.push_back(std::move(taint));
    taint_marks.push_back(ctx.at(t));
  }
}

bool looks_legacy(const Node* root) {
  if (const Node* skus = root->get("machine-sku"); skus && skus->is_mapping()) {
    for (const auto& p : skus->pairs()) {
      const Node* s = p.value;
      if (!s || !s->is_mapping()) continue;
      if (s->get("gpu") || s->get("os")) return true;
      if (const Node* mem = s->get("mem"); mem && mem->as_int()) return true;
    }
  }
  if (const Node* list = root->get("machine-list"); list && list->is_sequence()) {
    for (const Node* m : list->items()) {
      if (!m->is_mapping()) continue;
      for (const auto& k : kLegacyMachineKeys)
        if (m->get(k)) return true;
    }
  }
  return false;
}

void load_sku(const std::string& name, const Node* key, const Node* s, Layout& out, Context& ctx,
              bool legacy) {
  MachineSku sku;
  sku.name = name;
  sku.mark = ctx.at(key);
  std::string where = "machine-sku." + name;
  if (!ctx.is_mapping(s, where)) {
    out.skus.push_back(std::move(sku));
    return;
  }
  if (!legacy) ctx.unknown_keys(s, kSkuKeys, where);
  if (const Node* mem = ctx.required(s, "mem", where)) {
    if (legacy && mem->as_int()) {
      sku.mem_bytes = static_cast<double>(*mem->as_int()) * 1024.0 * 1024.0 * 1024.0;
    } else if (auto text = ctx.string_value(mem, where + ".mem", true)) {
      if (auto q = util::parse_quantity(*text); q && *q > 0) {
        sku.mem_bytes = *q;
      } else {
        ctx.error("L011", ctx.at(mem),
                  where + ".mem \"" + *text + "\" is not a Kubernetes memory quantity",
                  "write it like 60Gi, 220Gi or 512000Mi (Gi = 1024^3 bytes; G = 1000^3)");
      }
    }
  }
  if (const Node* cpu = ctx.required(s, "cpu", where)) {
    if (ctx.is_mapping(cpu, where + ".cpu")) {
      ctx.unknown_keys(cpu, {"vcore"}, where + ".cpu");
      if (const Node* vc = ctx.required(cpu, "vcore", where + ".cpu")) {
        if (auto v = ctx.int_value(vc, where + ".cpu.vcore")) {
          if (*v <= 0)
            ctx.error("L014", ctx.at(vc),
                      where + ".cpu.vcore must be positive, found " + std::to_string(*v));
          else if (*v > kMaxVcores)
            // OpenPAI makes a cell per vcore of a CPU-only machine: 2^63 of them is no machine.
            ctx.error("L014", ctx.at(vc),
                      where + ".cpu.vcore must be at most " + std::to_string(kMaxVcores) +
                          " (Linux's limit of CPUs in a machine), found " + std::to_string(*v));
          else
            sku.vcore = *v;
        }
      }
    }
  }
  const Node* dev = s->get("computing-device");
  if (legacy && !dev) {
    if (const Node* gpu = s->get("gpu"); gpu && gpu->is_mapping()) {
      ComputingDevice d;
      d.type = "nvidia.com/gpu";
      if (const Node* t = gpu->get("type"); t && t->is_scalar()) d.model = t->scalar();
      if (const Node* c = gpu->get("count"); c && c->as_int()) d.count = *c->as_int();
      d.mark = ctx.at(gpu);
      sku.device = d;
    }
  }
  if (dev) {
    std::string dwhere = where + ".computing-device";
    if (ctx.is_mapping(dev, dwhere)) {
      ctx.unknown_keys(dev, kDeviceKeys, dwhere);
      ComputingDevice d;
      d.mark = ctx.at(dev);
      if (const Node* t = ctx.required(dev, "type", dwhere)) {
        if (auto v = ctx.string_value(t, dwhere + ".type", true)) {
          d.type = *v;
          bool known = false;
          for (const auto& k : kKnownDeviceTypes) known |= (k == *v);
          if (!known) {
            std::string guess = util::did_you_mean(*v, kKnownDeviceTypes);
            ctx.warning("L015", ctx.at(t),
                        "computing-device type \"" + *v +
                            "\" is not a device-plugin resource that OpenPAI supports",
                        guess.empty()
                            ? "OpenPAI knows nvidia.com/gpu, amd.com/gpu and enflame.com/dtu"
                            : "did you mean \"" + guess + "\"?");
          }
        }
      }
      if (const Node* m = ctx.required(dev, "model", dwhere))
        if (auto v = ctx.string_value(m, dwhere + ".model", true)) d.model = *v;
      if (const Node* c = ctx.required(dev, "count", dwhere)) {
        if (auto v = ctx.int_value(c, dwhere + ".count")) {
          if (*v <= 0)
            ctx.error("L014", ctx.at(c),
                      dwhere + ".count must be positive, found " + std::to_string(*v),
                      "remove computing-device for a CPU-only machine");
          else if (*v > kMaxDevices)
            ctx.error("L014", ctx.at(c),
                      dwhere + ".count must be at most " + std::to_string(kMaxDevices) +
                          " devices in one machine, found " + std::to_string(*v));
          else
            d.count = *v;
        }
      }
      sku.device = d;
    }
  }
  if (!legacy) load_node_marks(s, where, ctx, sku.labels, sku.taints, sku.taint_marks);
  out.skus.push_back(std::move(sku));
}

bool role_value(const Node* n, std::string_view what, Context& ctx) {
  if (!n) return false;
  if (n->is_scalar() && n->is_quoted() && (n->scalar() == "true" || n->scalar() == "false"))
    return n->scalar() == "true";
  if (n->is_scalar() && !n->is_quoted() && (n->scalar() == "true" || n->scalar() == "false")) {
    // OpenPAI's schema takes only the strings; a YAML boolean fails it.
    ctx.error(
        "L010", ctx.at(n),
        std::string(what) + " must be the string \"" + n->scalar() + "\", not the boolean " +
            n->scalar(),
        "quote it: " + std::string(what.substr(what.rfind('.') + 1)) + ": \"" + n->scalar() + "\"");
    return n->scalar() == "true";
  }
  ctx.error("L010", ctx.at(n),
            std::string(what) + " must be \"true\" or \"false\", found " + n->describe(),
            "OpenPAI compares these with the strings \"true\" and \"false\"");
  return false;
}

}  // namespace

Layout load_layout(const Node* root, Context& ctx) {
  Layout out;
  out.file = ctx.file();
  if (!ctx.is_mapping(root, "layout.yaml")) {
    out.machines_complete = false;
    return out;
  }

  out.legacy = looks_legacy(root);
  if (out.legacy) {
    ctx.error("L012", ctx.at(root),
              "this is an OpenPAI 0.x layout; the v1.5+ installer does not accept it",
              "convert it: machine-sku mem becomes a quantity string (\"224Gi\"), gpu: {type, "
              "count} becomes "
              "computing-device: {type: nvidia.com/gpu, model, count}, os is dropped, and machines "
              "keep only "
              "hostname, hostip, machine-type and pai-master/pai-worker: \"true\"");
  } else {
    ctx.unknown_keys(root, kLayoutTopKeys, "layout.yaml");
  }

  if (const Node* k = root->get("kubernetes")) {
    if (ctx.is_mapping(k, "kubernetes")) {
      if (!out.legacy) ctx.unknown_keys(k, {"api-servers-url", "dashboard-url"}, "kubernetes");
    }
  }

  const Node* skus = ctx.required(root, "machine-sku", "layout.yaml");
  if (skus && ctx.is_mapping(skus, "machine-sku")) {
    for (const auto& p : skus->pairs())
      load_sku(p.key->scalar(), p.key, p.value, out, ctx, out.legacy);
  }

  std::vector<std::string> sku_names;
  for (const auto& s : out.skus) sku_names.push_back(s.name);

  const Node* list = ctx.required(root, "machine-list", "layout.yaml");
  if (!list || !ctx.is_sequence(list, "machine-list")) {
    out.machines_complete = false;
    return out;
  }

  std::unordered_map<std::string, size_t>& by_name = out.machine_index;
  std::unordered_map<std::string, size_t> by_ip;
  by_name.reserve(list->size());
  by_ip.reserve(list->size());
  std::unordered_map<std::string, bool> sku_used;
  size_t last_master = SIZE_MAX;
  std::set<std::pair<uint32_t, uint32_t>> l088_reported;  // a SKU's taint: once
  size_t masters = 0, workers = 0;
  size_t index = 0;
  for (const Node* item : list->items()) {
    std::string where = "machine-list[" + std::to_string(index++) + "]";
    if (!ctx.is_mapping(item, where)) {
      out.machines_complete = false;
      continue;
    }
    if (!out.legacy) ctx.unknown_keys(item, kMachineKeys, where);
    Machine m;
    m.mark = ctx.at(item);
    if (!item->get("hostname")) out.machines_complete = false;
    if (const Node* h = ctx.required(item, "hostname", where)) {
      m.hostname_mark = ctx.at(h);
      if (auto v = ctx.string_value(h, where + ".hostname")) {
        m.hostname = *v;
        if (!util::is_dns1123_subdomain(*v)) {
          bool upper = util::to_lower(*v) != *v;
          ctx.error("L001", ctx.at(h), "hostname \"" + *v + "\" is not a valid host name",
                    upper ? "use lower case only: \"" + util::to_lower(*v) +
                                "\" (Kubernetes node names are lower case)"
                          : "use lower-case letters, digits, '-' and '.', starting and ending with "
                            "a letter or digit");
        }
      }
    }
    if (const Node* ip = ctx.required(item, "hostip", where)) {
      m.hostip_mark = ctx.at(ip);
      if (auto v = ctx.string_value(ip, where + ".hostip")) {
        m.hostip = *v;
        if (!util::is_ipv4(*v))
          ctx.error("L002", ctx.at(ip), "hostip \"" + *v + "\" is not an IPv4 address",
                    "write four numbers 0-255 separated by dots, e.g. 10.0.0.2");
      }
    }
    if (const Node* t = ctx.required(item, "machine-type", where)) {
      m.type_mark = ctx.at(t);
      if (auto v = ctx.string_value(t, where + ".machine-type")) {
        m.machine_type = *v;
        if (!out.find_sku(*v)) {
          std::string guess = util::did_you_mean(*v, sku_names);
          ctx.error("L005", ctx.at(t), "machine-type \"" + *v + "\" is not defined in machine-sku",
                    guess.empty() ? "define it under machine-sku, or use one of: " +
                                        util::join(sku_names, ", ")
                                  : "did you mean \"" + guess + "\"?");
        } else {
          sku_used[*v] = true;
        }
      }
    }
    if (!out.legacy) {
      m.master = role_value(item->get("pai-master"), where + ".pai-master", ctx);
      m.worker = role_value(item->get("pai-worker"), where + ".pai-worker", ctx);
      m.storage = role_value(item->get("pai-storage"), where + ".pai-storage", ctx);
    } else {
      const Node* role = item->get("k8s-role");
      m.master = role && role->is_scalar() && role->scalar() == "master";
      m.worker = !m.master;
    }
    if (!out.legacy) load_node_marks(item, where, ctx, m.labels, m.taints, m.taint_marks);
    if (!m.hostname.empty()) {
      auto [it, fresh] = by_name.emplace(m.hostname, out.machines.size());
      if (!fresh)
        ctx.error("L003", m.hostname_mark,
                  "duplicate hostname \"" + m.hostname + "\" (first used at line " +
                      std::to_string(out.machines[it->second].hostname_mark.line) + ")",
                  "every machine needs its own hostname");
    }
    if (!m.hostip.empty()) {
      auto [it, fresh] = by_ip.emplace(m.hostip, out.machines.size());
      if (!fresh)
        ctx.error("L004", m.hostip_mark,
                  "duplicate hostip " + m.hostip + " (also used by \"" +
                      out.machines[it->second].hostname + "\" at line " +
                      std::to_string(out.machines[it->second].hostip_mark.line) + ")",
                  "every machine needs its own IP address");
    }
    if (!out.legacy && !m.master && !m.worker && !m.storage && item->get("pai-master") == nullptr &&
        item->get("pai-worker") == nullptr && item->get("pai-storage") == nullptr)
      ctx.warning("L016", m.mark,
                  "machine \"" + m.hostname + "\" has no role, so OpenPAI will not use it",
                  "add pai-worker: \"true\" (or pai-master: \"true\")");
    if (m.master) {
      ++masters;
      last_master = out.machines.size();
    }
    if (m.worker) ++workers;
    // A taint that keeps pods off a worker keeps OpenPAI's jobs off it, while
    // HiveD (which judges a node by Ready and unschedulable only) still counts
    // its cells: jobs HiveD places there wait.
    if (m.worker) {
      const MachineSku* sku = out.find_sku(m.machine_type);
      for (const auto& t : node_taints(m, sku)) {
        if (t.effect == "PreferNoSchedule") continue;
        std::optional<Mark> at;
        for (size_t j = 0; j < m.taints.size(); ++j)
          if (m.taints[j] == t) at = m.taint_marks[j];
        for (size_t j = 0; !at && sku && j < sku->taints.size(); ++j)
          if (sku->taints[j] == t) at = sku->taint_marks[j];
        Mark where_at = at.value_or(m.mark);
        if (!l088_reported.insert({where_at.line, where_at.column}).second) continue;
        ctx.warning("L088", where_at,
                    "taint " + t.key + ":" + t.effect + " keeps OpenPAI's jobs off the worker \"" +
                        m.hostname + "\", but HiveD still counts its cells as free",
                    "jobs HiveD places there wait; to take a node out of HiveD's view cordon it "
                    "(kubectl cordon), or use PreferNoSchedule");
      }
    }
    out.machines.push_back(std::move(m));
  }
  if (masters == 0) out.no_master_at = ctx.at(list);
  if (workers == 0)
    ctx.error("L008", ctx.at(list), "no machine has pai-worker: \"true\"",
              "mark the machines that run jobs with pai-worker: \"true\"");
  // A highly available control plane (docs/install.md): stacked etcd keeps a
  // quorum of floor(n/2)+1 members, so an even count tolerates no more lost
  // masters than the odd count below it, and 2 masters tolerate none.
  if (masters > 1 && (masters % 2 == 0 || masters > 5)) {
    const Machine& last = out.machines[last_master];
    ctx.error("L007", last.mark,
              std::to_string(masters) + " machines have pai-master: \"true\" (the last is \"" +
                  last.hostname + "\"); a control plane has 1, 3 or 5 masters",
              masters % 2 == 0
                  ? "etcd works while most masters are up: with " + std::to_string(masters) +
                        " masters it survives " + std::to_string((masters - 1) / 2) +
                        " lost, as with " + std::to_string(masters - 1) +
                        "; mark 1, 3 or 5 machines pai-master: \"true\""
                  : "mark 1, 3 or 5 machines pai-master: \"true\" (5 survive two lost masters)");
  }
  for (const auto& m : out.machines)
    if (m.master && m.worker)
      ctx.error("L009", m.mark, "the master \"" + m.hostname + "\" is also a worker",
                "OpenPAI does not let a machine be pai-master and pai-worker at the same time; set "
                "pai-worker: \"false\" on it");
  if (!out.legacy)
    for (const auto& s : out.skus)
      if (!sku_used.count(s.name))
        ctx.warning("L013", s.mark, "machine-sku \"" + s.name + "\" is not used by any machine",
                    "remove it, or set machine-type: " + s.name + " on the machines of that kind");
  return out;
}

std::map<std::string, std::string> node_labels(const Machine& m, const MachineSku* sku) {
  std::map<std::string, std::string> out;
  if (sku) out = sku->labels;
  for (const auto& [k, v] : m.labels) out[k] = v;
  return out;
}

std::vector<NodeTaint> node_taints(const Machine& m, const MachineSku* sku) {
  std::vector<NodeTaint> out;
  if (sku)
    for (const auto& t : sku->taints) {
      bool replaced = false;
      for (const auto& mt : m.taints) replaced |= mt.key == t.key && mt.effect == t.effect;
      if (!replaced) out.push_back(t);
    }
  for (const auto& t : m.taints) out.push_back(t);
  return out;
}

void check_master_present(const Layout& layout, bool master_elsewhere, Context& ctx) {
  if (!layout.no_master_at || master_elsewhere) return;
  ctx.error("L006", *layout.no_master_at, "no machine has pai-master: \"true\"",
            "mark exactly one machine with pai-master: \"true\"");
}

}  // namespace pai::config
