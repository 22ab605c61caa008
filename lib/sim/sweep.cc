#include "sim/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "config/cluster_files.h"
#include "diag/report.h"
#include "scheduler/hived.h"
#include "scheduler/policy.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/text_input.h"
#include "sim/trace.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::sim {

using nlohmann::json;
namespace fs = std::filesystem;

uint64_t fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool SweepSpec::seeded_trace(size_t trace) const {
  return traces[trace].generated || options.faults.rfind("random", 0) == 0;
}

// --- the spec -------------------------------------------------------------------

namespace {

class SpecReader {
 public:
  SpecReader(const std::string& file, const std::string& base, diag::List& d)
      : file_(file), base_(base), d_(d) {}

  void error(const yaml::Node* at, const std::string& code, const std::string& message,
             const std::string& hint = {}) {
    yaml::Mark m = at ? at->mark() : yaml::Mark{};
    d_.add(code, diag::Severity::Error, file_, m.line, m.column, message, hint);
  }

  std::string resolve(const std::string& p) const {
    if (p.empty() || p[0] == '/' || base_.empty()) return p;
    return (fs::path(base_) / p).lexically_normal().string();
  }

  // A scalar string, or an error.
  std::optional<std::string> str(const yaml::Node* n, const std::string& what) {
    if (!n || !n->is_scalar() || n->scalar().empty()) {
      error(n, "G002", what + " must be a non-empty string" + (n ? ", not " + n->describe() : ""));
      return std::nullopt;
    }
    return n->scalar();
  }

  // A list, or one value as a list of one.
  std::vector<const yaml::Node*> list(const yaml::Node* n) {
    std::vector<const yaml::Node*> out;
    if (!n || n->is_null()) return out;
    if (n->is_sequence()) {
      for (const auto* i : n->items()) out.push_back(i);
    } else {
      out.push_back(n);
    }
    return out;
  }

  void check_keys(const yaml::Node* map, std::initializer_list<std::string_view> allowed,
                  const std::string& where) {
    std::vector<std::string> names(allowed.begin(), allowed.end());
    for (const auto& pr : map->pairs()) {
      const std::string& k = pr.key->scalar();
      if (std::find(names.begin(), names.end(), k) != names.end()) continue;
      std::string guess = util::did_you_mean(k, names);
      error(pr.key, "G001", "unknown key \"" + k + "\" in " + where,
            guess.empty() ? "keys here: " + util::join(names, ", ")
                          : "did you mean \"" + guess + "\"?");
    }
  }

  std::optional<double> duration(const yaml::Node* n, const std::string& what) {
    if (!n || !n->is_scalar()) {
      error(n, "G004", what + " must be a duration such as 0, 12h or 7d");
      return std::nullopt;
    }
    auto v = parse_duration(n->scalar());
    if (!v || *v < 0) {
      error(n, "G004", what + " \"" + n->scalar() + "\" is not a duration",
            "write seconds or a number with s, m, h or d: 0, 90, 12h, 7d");
      return std::nullopt;
    }
    return v;
  }

  void configs(const yaml::Node* n, SweepSpec& s) {
    auto items = list(n);
    if (items.empty()) {
      error(n, "G003", "configs must name at least one cluster config",
            "configs: [examples/clusters/heterogeneous]");
      return;
    }
    std::set<std::string> names;
    for (const auto* i : items) {
      SweepConfig c;
      const yaml::Node* at = i;
      if (i->is_mapping()) {
        check_keys(i, {"name", "path"}, "a config");
        auto p = str(i->get("path"), "a config's path");
        if (!p) continue;
        c.path = resolve(*p);
        c.name = i->get("name") ? str(i->get("name"), "a config's name").value_or(*p) : *p;
        at = i->get("path");
      } else {
        auto p = str(i, "a config");
        if (!p) continue;
        c.path = resolve(*p);
        c.name = *p;
      }
      if (!util::path_exists(c.path)) {
        error(at, "G005", "no such config: " + c.path,
              "a cluster directory or HiveD config; relative paths start at the spec's directory");
        continue;
      }
      if (!names.insert(c.name).second) {
        error(at, "G006", "two configs are named \"" + c.name + "\"", "give them names (name:)");
        continue;
      }
      s.configs.push_back(c);
    }
  }

  void traces(const yaml::Node* n, SweepSpec& s) {
    auto items = list(n);
    if (items.empty()) {
      error(n, "G003", "traces must name at least one trace",
            "traces: [trace.json], or traces: [{generate: {jobs: 1000}}]");
      return;
    }
    std::set<std::string> names;
    for (const auto* i : items) {
      SweepTrace t;
      const yaml::Node* at = i;
      if (i->is_mapping()) {
        check_keys(i, {"name", "path", "format", "generate"}, "a trace");
        const yaml::Node* gen = i->get("generate");
        const yaml::Node* path = i->get("path");
        if ((gen != nullptr) == (path != nullptr)) {
          error(i, "G007",
                "a trace has either path: or generate:, not " +
                    std::string(gen ? "both" : "neither"));
          continue;
        }
        if (path) {
          for (const auto* p : list(path)) {
            auto v = str(p, "a trace's path");
            if (v) t.paths.push_back(resolve(*v));
            if (v && !util::path_exists(t.paths.back())) {
              error(p, "G005", "no such trace: " + t.paths.back());
              t.paths.clear();
              break;
            }
          }
          if (t.paths.empty()) continue;
          t.name = path->is_scalar() ? path->scalar() : util::join(t.paths, "+");
          at = path;
        } else {
          if (!generate(gen, t)) continue;
          t.name = "generated";
          at = gen;
        }
        if (const auto* f = i->get("format")) {
          auto v = str(f, "a trace's format");
          if (!v) continue;
          if (*v != "philly" && *v != "helios" && *v != "alibaba" && *v != "csv") {
            error(f, "G008", "unknown trace format \"" + *v + "\"",
                  "formats: philly, helios, alibaba, csv");
            continue;
          }
          t.format = *v;
        }
        if (const auto* nm = i->get("name")) {
          auto v = str(nm, "a trace's name");
          if (!v) continue;
          t.name = *v;
        }
      } else {
        auto v = str(i, "a trace");
        if (!v) continue;
        t.paths.push_back(resolve(*v));
        t.name = *v;
        if (!util::path_exists(t.paths.back())) {
          error(i, "G005", "no such trace: " + t.paths.back());
          continue;
        }
      }
      if (!names.insert(t.name).second) {
        error(at, "G006", "two traces are named \"" + t.name + "\"", "give them names (name:)");
        continue;
      }
      s.traces.push_back(t);
    }
  }

  bool generate(const yaml::Node* g, SweepTrace& t) {
    t.generated = true;
    if (g->is_null()) return true;
    if (!g->is_mapping()) {
      error(g, "G002", "generate: takes the options of simulate generate, not " + g->describe(),
            "generate: {jobs: 2000, load: 0.8}");
      return false;
    }
    check_keys(g, {"jobs", "load", "days", "max-gpus", "opportunistic", "priority"}, "generate");
    bool ok = true;
    auto number = [&](const char* key, double lo, double hi, double& out) {
      const yaml::Node* v = g->get(key);
      if (!v) return;
      auto d = v->as_float();
      if (!d || *d < lo || *d > hi) {
        char range[96];
        std::snprintf(range, sizeof range, " must be a number in %g..%g", lo, hi);
        error(v, "G009", std::string("generate: ") + key + range);
        ok = false;
        return;
      }
      out = *d;
    };
    double jobs = static_cast<double>(t.generate.jobs), max_gpus = t.generate.max_gpus,
           priority = t.generate.priority;
    number("jobs", 1, 100'000'000, jobs);
    number("load", 1e-6, 100, t.generate.load);
    number("days", 0, 36500, t.generate.days);
    number("max-gpus", 1, 1'000'000, max_gpus);
    number("opportunistic", 0, 1, t.generate.opportunistic);
    number("priority", 0, 1000, priority);
    t.generate.jobs = static_cast<int64_t>(jobs);
    t.generate.max_gpus = static_cast<int32_t>(max_gpus);
    t.generate.priority = static_cast<int32_t>(priority);
    return ok;
  }

  void options(const yaml::Node* n, SweepSpec& s) {
    if (!n || n->is_null()) return;
    if (!n->is_mapping()) {
      error(n, "G002", "options must be a mapping of simulate options, not " + n->describe());
      return;
    }
    check_keys(n,
               {"overflow", "preempt-one-node", "backfill", "tie-order", "vc-map", "faults",
                "priority", "limit"},
               "options");
    SweepSimOptions& o = s.options;
    for (auto [key, flag] :
         {std::pair<const char*, bool*>{"overflow", &o.overflow},
          std::pair<const char*, bool*>{"preempt-one-node", &o.preempt_one_node}})
      if (const auto* v = n->get(key)) {
        auto b = v->as_bool();
        if (!b) error(v, "G009", std::string(key) + " must be true or false");
        *flag = b.value_or(false);
      }
    auto integer = [&](const char* key, int64_t lo, int64_t hi, auto& out) {
      const yaml::Node* v = n->get(key);
      if (!v) return;
      auto i = v->as_int();
      if (!i || *i < lo || *i > hi) {
        error(v, "G009",
              std::string(key) + " must be an integer in " + std::to_string(lo) + ".." +
                  std::to_string(hi));
        return;
      }
      out = static_cast<std::remove_reference_t<decltype(out)>>(*i);
    };
    integer("backfill", 0, 100000, o.backfill);
    integer("priority", -1, 1000, o.priority);
    integer("limit", 0, 1'000'000'000, o.limit);
    if (const auto* v = n->get("tie-order")) {
      auto t = str(v, "tie-order");
      if (t && *t != "hived" && *t != "config")
        error(v, "G009", "tie-order must be hived or config, not \"" + *t + "\"");
      else if (t)
        o.tie_order = *t;
    }
    if (const auto* v = n->get("vc-map")) {
      auto t = str(v, "vc-map");
      if (t) o.vc_map = *t;
    }
    if (const auto* v = n->get("faults")) {
      auto t = str(v, "faults");
      if (t) {
        if (t->rfind("random", 0) != 0)
          error(v, "G009", "faults in a sweep must be a random model (random:mtbf=30d,mttr=4h)",
                "fault files name nodes of one cluster; sweep them with separate specs");
        else if (auto parsed = parse_random_faults(*t); !parsed.ok())
          error(v, "G009", "faults: " + parsed.error().message);
        else
          o.faults = *t;
      }
    }
  }

 private:
  std::string file_, base_;
  diag::List& d_;
};

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string window_name(double from, double to) {
  if (from == 0 && to < 0) return "all";
  return human_duration(from) + "-" + (to < 0 ? std::string("end") : human_duration(to));
}

}  // namespace

bool parse_sweep_spec(std::string_view text, const std::string& name, const std::string& base_dir,
                      SweepSpec& s, diag::List& d) {
  s = SweepSpec{};
  s.file = name;
  const size_t errors_before = d.count(diag::Severity::Error);
  yaml::Stream st = yaml::load(text);
  if (st.error) {
    d.add("G000", diag::Severity::Error, name, st.error->mark.line, st.error->mark.column,
          st.error->message, st.error->hint);
    return false;
  }
  for (const auto& w : st.warnings)
    d.add("G000", diag::Severity::Error, name, w.mark.line, w.mark.column, w.message, w.hint);
  if (st.documents.size() != 1 || !st.documents[0]->is_mapping()) {
    d.add("G002", diag::Severity::Error, name, 1, 1, "a sweep spec is one YAML mapping",
          "configs: [...], traces: [...], policies: [...], load: [...], seeds: [...]");
    return false;
  }
  const yaml::Node* root = st.documents[0];
  SpecReader r(name, base_dir, d);
  r.check_keys(root,
               {"configs", "traces", "policies", "load", "windows", "seeds", "suggested-fraction",
                "suggested-seed", "options"},
               "a sweep spec");
  r.configs(root->get("configs"), s);
  if (!root->get("configs")) r.error(root, "G003", "the spec has no configs:");
  r.traces(root->get("traces"), s);
  if (!root->get("traces")) r.error(root, "G003", "the spec has no traces:");

  // policies
  for (const auto* p : r.list(root->get("policies"))) {
    auto v = r.str(p, "a policy");
    if (!v) continue;
    const auto& known = scheduler::policy_names();
    if (std::find(known.begin(), known.end(), *v) == known.end()) {
      std::string guess = util::did_you_mean(*v, known);
      r.error(p, "G008", "unknown policy \"" + *v + "\"",
              guess.empty() ? "policies: " + util::join(known, ", ")
                            : "did you mean \"" + guess + "\"?");
      continue;
    }
    if (std::find(s.policies.begin(), s.policies.end(), *v) != s.policies.end()) {
      r.error(p, "G006", "policy \"" + *v + "\" is listed twice");
      continue;
    }
    s.policies.push_back(*v);
  }
  if (!root->get("policies")) s.policies.push_back("hived");

  // load factors
  for (const auto* l : r.list(root->get("load"))) {
    auto v = l->as_float();
    if (!v || !(*v > 0) || *v > 1000) {
      r.error(l, "G009", "a load factor must be a number above 0 (1 = the trace as recorded)",
              "load: [0.5, 1, 2] makes arrivals half, as and twice as dense");
      continue;
    }
    if (std::find(s.loads.begin(), s.loads.end(), *v) != s.loads.end()) {
      r.error(l, "G006", "load factor " + format_number(*v) + " is listed twice");
      continue;
    }
    s.loads.push_back(*v);
  }
  if (!root->get("load")) s.loads.push_back(1);

  // windows
  for (const auto* w : r.list(root->get("windows"))) {
    SweepWindow win;
    if (w->is_mapping()) {
      r.check_keys(w, {"from", "to"}, "a window");
      if (const auto* f = w->get("from")) {
        auto v = r.duration(f, "from");
        if (!v) continue;
        win.from = *v;
      }
      if (const auto* t = w->get("to")) {
        auto v = r.duration(t, "to");
        if (!v) continue;
        win.to = *v;
      }
    } else if (w->is_scalar() && w->scalar() == "all") {
    } else if (w->is_scalar() && w->scalar().find('-') != std::string::npos) {
      std::string text = w->scalar();
      size_t dash = text.find('-');
      auto f = parse_duration(util::trim(std::string_view(text).substr(0, dash)));
      std::string_view rest = util::trim(std::string_view(text).substr(dash + 1));
      auto t = rest == "end" ? std::optional<double>(-1) : parse_duration(rest);
      if (!f || !t || *f < 0) {
        r.error(w, "G004", "window \"" + text + "\" is not FROM-TO",
                "windows: [0-7d, 7d-14d, 14d-end], or {from: 7d, to: 14d}");
        continue;
      }
      win.from = *f;
      win.to = *t;
    } else {
      r.error(w, "G004", "a window is FROM-TO or {from:, to:}, not " + w->describe(),
              "windows: [0-7d, 7d-end]");
      continue;
    }
    if (win.to >= 0 && win.to <= win.from) {
      r.error(w, "G004", "a window must end after it starts");
      continue;
    }
    win.name = window_name(win.from, win.to);
    s.windows.push_back(win);
  }
  if (!root->get("windows")) s.windows.push_back({"all", 0, -1});

  // seeds
  for (const auto* sd : r.list(root->get("seeds"))) {
    auto v = sd->as_int();
    if (!v || *v < 0) {
      r.error(sd, "G009", "a seed must be a non-negative integer");
      continue;
    }
    if (std::find(s.seeds.begin(), s.seeds.end(), static_cast<uint64_t>(*v)) != s.seeds.end()) {
      r.error(sd, "G006", "seed " + std::to_string(*v) + " is listed twice");
      continue;
    }
    s.seeds.push_back(static_cast<uint64_t>(*v));
  }
  if (!root->get("seeds")) s.seeds.push_back(1);

  // Kubernetes' suggested node sets: fractions and their seeds
  for (const auto* f : r.list(root->get("suggested-fraction"))) {
    auto v = f->as_float();
    if (!v || !(*v >= 0) || *v > 1) {
      r.error(f, "G009", "a suggested fraction must be a number in 0..1 (1 = every node suggested)",
              "suggested-fraction: [1, 0.9] keeps each node in a decision's suggested set "
              "with probability 1 and 0.9");
      continue;
    }
    if (std::find(s.suggested_fractions.begin(), s.suggested_fractions.end(), *v) !=
        s.suggested_fractions.end()) {
      r.error(f, "G006", "suggested fraction " + format_number(*v) + " is listed twice");
      continue;
    }
    s.suggested_fractions.push_back(*v);
  }
  if (!root->get("suggested-fraction")) s.suggested_fractions.push_back(1);
  for (const auto* sd : r.list(root->get("suggested-seed"))) {
    auto v = sd->as_int();
    if (!v || *v < 0) {
      r.error(sd, "G009", "a suggested seed must be a non-negative integer");
      continue;
    }
    if (std::find(s.suggested_seeds.begin(), s.suggested_seeds.end(), static_cast<uint64_t>(*v)) !=
        s.suggested_seeds.end()) {
      r.error(sd, "G006", "suggested seed " + std::to_string(*v) + " is listed twice");
      continue;
    }
    s.suggested_seeds.push_back(static_cast<uint64_t>(*v));
  }
  if (!root->get("suggested-seed")) s.suggested_seeds.push_back(1);
  r.options(root->get("options"), s);

  if (d.count(diag::Severity::Error) > errors_before) return false;
  if (s.seeds.size() > 1) {
    bool any = false;
    for (size_t t = 0; t < s.traces.size(); ++t) any = any || s.seeded_trace(t);
    if (!any) {
      r.error(root->get("seeds"), "G010",
              "seeds change nothing here: no trace is generated and there are no random faults",
              "seeds apply to traces with generate: and to options: {faults: random:...}");
      return false;
    }
  }
  if (s.suggested_seeds.size() > 1) {
    bool any = false;
    for (size_t f = 0; f < s.suggested_fractions.size(); ++f) any = any || s.seeded_suggestion(f);
    if (!any) {
      r.error(root->get("suggested-seed"), "G010",
              "suggested seeds change nothing here: every suggested fraction is 1",
              "suggested seeds draw the sets of fractions below 1: suggested-fraction: [1, 0.9]");
      return false;
    }
  }
  return true;
}

bool load_sweep_spec(const std::string& path, SweepSpec& out, diag::List& diags) {
  auto text = util::read_file(path, 4u << 20);
  if (!text.ok()) {
    diags.add("G000", diag::Severity::Error, path, 0, 0,
              "cannot read the spec: " + text.error().message);
    return false;
  }
  std::string base = fs::path(path).parent_path().string();
  return parse_sweep_spec(*text, path, base.empty() ? "." : base, out, diags);
}

// --- the grid ---------------------------------------------------------------------

std::vector<SweepPoint> sweep_points(const SweepSpec& s) {
  std::vector<SweepPoint> out;
  for (size_t c = 0; c < s.configs.size(); ++c)
    for (size_t t = 0; t < s.traces.size(); ++t)
      for (size_t w = 0; w < s.windows.size(); ++w)
        for (size_t l = 0; l < s.loads.size(); ++l)
          for (size_t sd = 0; sd < (s.seeded_trace(t) ? s.seeds.size() : 1); ++sd)
            for (size_t f = 0; f < s.suggested_fractions.size(); ++f)
              for (size_t fs = 0; fs < (s.seeded_suggestion(f) ? s.suggested_seeds.size() : 1);
                   ++fs)
                for (size_t p = 0; p < s.policies.size(); ++p) {
                  SweepPoint pt;
                  pt.index = out.size();
                  pt.config = c;
                  pt.trace = t;
                  pt.window = w;
                  pt.load = l;
                  pt.seed = sd;
                  pt.suggested = f;
                  pt.suggested_seed = fs;
                  pt.policy = p;
                  out.push_back(pt);
                }
  return out;
}

namespace {

// The bytes of a config: a file, or the regular files directly in a directory.
util::Result<void> hash_path(const std::string& path, uint64_t& h) {
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  for (const auto& f : files) {
    auto r = util::read_file(f, size_t{4} << 30);
    if (!r.ok()) return util::Error{f + ": " + r.error().message, ""};
    h = fnv1a(fs::path(f).filename().string(), h);
    h = fnv1a(std::to_string(r->size()), h);
    h = fnv1a(*r, h);
  }
  return {};
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

util::Result<void> key_sweep_points(const SweepSpec& s, const std::string& version,
                                    std::vector<SweepPoint>& points) {
  std::map<std::string, uint64_t> cache;
  std::string error;
  auto content = [&](const std::string& path, uint64_t& h) {
    auto it = cache.find(path);
    if (it == cache.end()) {
      uint64_t v = 0xcbf29ce484222325ull;
      if (auto hashed = hash_path(path, v); !hashed) {
        error = hashed.error().message;
        return false;
      }
      it = cache.emplace(path, v).first;
    }
    h = fnv1a(hex(it->second), h);
    return true;
  };
  const SweepSimOptions& o = s.options;
  const std::string shared =
      "paictl-sweep/1|" + version + "|overflow=" + std::to_string(o.overflow) +
      "|one-node=" + std::to_string(o.preempt_one_node) +
      "|backfill=" + std::to_string(o.backfill) + "|tie=" + o.tie_order + "|vcmap=" + o.vc_map +
      "|faults=" + o.faults + "|priority=" + std::to_string(o.priority) +
      "|limit=" + std::to_string(o.limit);
  for (SweepPoint& p : points) {
    uint64_t h = fnv1a(shared);
    if (!content(s.configs[p.config].path, h)) return util::Error{error, ""};
    const SweepTrace& t = s.traces[p.trace];
    if (t.generated) {
      const GenerateOptions& g = t.generate;
      char buf[256];
      std::snprintf(
          buf, sizeof buf, "|gen jobs=%lld load=%.17g days=%.17g max=%d opp=%.17g prio=%d",
          static_cast<long long>(g.jobs), g.load, g.days, g.max_gpus, g.opportunistic, g.priority);
      h = fnv1a(buf, h);
    } else {
      for (const auto& f : t.paths)
        if (!content(f, h)) return util::Error{error, ""};
      h = fnv1a("|format=" + t.format, h);
    }
    const SweepWindow& w = s.windows[p.window];
    char buf[160];
    std::snprintf(buf, sizeof buf, "|window=%.17g,%.17g|load=%.17g|seed=%llu|", w.from, w.to,
                  s.loads[p.load],
                  static_cast<unsigned long long>(s.seeded_trace(p.trace) ? s.seeds[p.seed] : 0));
    h = fnv1a(buf, h);
    // Only a fraction below 1 changes the run: points without sets keep their keys.
    if (s.seeded_suggestion(p.suggested)) {
      std::snprintf(buf, sizeof buf, "suggested=%.17g,%llu|", s.suggested_fractions[p.suggested],
                    static_cast<unsigned long long>(s.suggested_seeds[p.suggested_seed]));
      h = fnv1a(buf, h);
    }
    h = fnv1a(s.policies[p.policy], h);
    p.key = hex(h);
  }
  return {};
}

json point_axes(const SweepSpec& s, const SweepPoint& p) {
  json j;
  j["config"] = s.configs[p.config].name;
  j["trace"] = s.traces[p.trace].name;
  j["window"] = s.windows[p.window].name;
  j["load"] = s.loads[p.load];
  if (s.seeded_trace(p.trace))
    j["seed"] = s.seeds[p.seed];
  else
    j["seed"] = nullptr;
  j["suggested_fraction"] = s.suggested_fractions[p.suggested];
  if (s.seeded_suggestion(p.suggested))
    j["suggested_seed"] = s.suggested_seeds[p.suggested_seed];
  else
    j["suggested_seed"] = nullptr;
  j["policy"] = s.policies[p.policy];
  return j;
}

void transform_trace(Trace& t, double from, double to, double load) {
  if (from > 0 || to >= 0) {
    std::vector<TraceJob> kept;
    kept.reserve(t.jobs.size());
    for (const TraceJob& j : t.jobs)
      if (j.submit >= from && (to < 0 || j.submit < to)) kept.push_back(j);
    const double first = kept.empty() ? 0 : kept.front().submit;
    for (TraceJob& j : kept) j.submit -= first;
    if (t.has_dates) t.origin += first;
    t.jobs = std::move(kept);
  }
  if (load != 1)
    for (TraceJob& j : t.jobs) j.submit /= load;
}

util::Result<json> run_sweep_point(const SweepSpec& s, const SweepPoint& p) {
  auto failed = [](std::string message) { return util::Error{std::move(message), ""}; };
  const SweepConfig& c = s.configs[p.config];
  config::CheckOutcome out = config::check_paths({c.path});
  std::shared_ptr<config::HivedModel> model;
  if (!out.diagnostics.has_errors() && !out.input_error)
    for (const auto& cl : out.clusters)
      if (cl.model) {
        model = cl.model;
        break;
      }
  if (!model) {
    return failed("the cluster config " + c.path +
                  (out.diagnostics.has_errors() ? " has errors (paictl check config " + c.path + ")"
                                                : " has no HiveD config"));
  }
  const SweepTrace& st = s.traces[p.trace];
  const uint64_t seed = s.seeds[p.seed];
  Trace trace;
  if (st.generated) {
    ClusterTemplate tmpl = cluster_template(*model);
    if (tmpl.gpus == 0) {
      return failed("the virtual clusters of " + c.path +
                    " have no GPU cells to generate jobs for");
    }
    GenerateOptions g = st.generate;
    g.seed = seed;
    trace = generate_trace(g, tmpl);
    if (s.options.limit > 0 && static_cast<int64_t>(trace.jobs.size()) > s.options.limit)
      trace.jobs.resize(static_cast<size_t>(s.options.limit));
  } else {
    TraceOptions topt;
    topt.format = st.format;
    topt.default_priority = s.options.priority;
    topt.limit = s.options.limit;
    TraceError te;
    if (!read_trace(st.paths, topt, trace, te)) {
      return failed(te.file +
                    (te.line ? ":" + std::to_string(te.line) + ":" + std::to_string(te.column)
                             : std::string()) +
                    ": " + te.message);
    }
  }
  const SweepWindow& w = s.windows[p.window];
  transform_trace(trace, w.from, w.to, s.loads[p.load]);
  if (trace.jobs.empty()) {
    return failed("no job of trace " + st.name + " is in window " + w.name);
  }
  SimOptions sopt;
  sopt.vc_map = s.options.vc_map;
  sopt.overflow = s.options.overflow;
  sopt.preempt_one_node = s.options.preempt_one_node;
  sopt.backfill = s.options.backfill > 0;
  sopt.backfill_depth = s.options.backfill;
  sopt.suggested_fraction = s.suggested_fractions[p.suggested];
  sopt.suggested_seed = s.suggested_seeds[p.suggested_seed];
  if (!s.options.faults.empty()) {
    auto faults = parse_random_faults(s.options.faults);
    if (!faults.ok()) return failed(faults.error().message);
    sopt.faults = std::move(*faults);
    sopt.faults.seed = seed;
  }
  if (s.options.tie_order == "config")
    sopt.make_policy = [](const std::string& name, const config::HivedModel& m) {
      if (name == "hived") return scheduler::make_hived_policy(m, false);
      return scheduler::make_policy(name, m);
    };
  Simulator sim(*model, trace, sopt);
  if (auto prepared = sim.prepare(); !prepared.ok()) return failed(prepared.error().message);
  std::vector<PolicyRun> runs(1);
  const std::string& policy = s.policies[p.policy];
  if (auto ran = sim.run(policy, runs[0]); !ran.ok())
    return failed(policy + ": " + ran.error().message);
  ReportContext ctx{trace, sim, runs, c.path, ""};
  json summary = summary_json(ctx);
  json result = json::object();
  result["trace"] = json{{"jobs", trace.jobs.size()},
                         {"span_s", trace.jobs.empty() ? 0.0 : trace.jobs.back().submit}};
  result["cluster"] = json{{"nodes", sim.cluster().nodes.size()}, {"gpus", runs[0].gpus}};
  json r = summary["policies"][0];
  r.erase("vcs");  // per-VC figures stay in single runs' reports
  result["result"] = r;
  return result;
}

// --- results through text -------------------------------------------------------------

namespace {
constexpr std::string_view kBegin = "==== paictl-sweep-result ";
constexpr std::string_view kEnd = "==== paictl-sweep-end ";
}  // namespace

std::string encode_result(const std::string& key, const json& result) {
  std::string body = result.dump();  // one line: dump() escapes every newline
  return std::string(kBegin) + key + " ====\n" + body + "\n" + std::string(kEnd) + key + " " +
         std::to_string(body.size()) + " ====\n";
}

std::map<std::string, json> decode_results(std::string_view text) {
  std::map<std::string, json> out;
  size_t pos = 0;
  while ((pos = text.find(kBegin, pos)) != std::string_view::npos) {
    size_t key_start = pos + kBegin.size();
    size_t eol = text.find('\n', key_start);
    if (eol == std::string_view::npos) break;
    std::string_view head = text.substr(key_start, eol - key_start);
    size_t sp = head.find(' ');
    std::string key(head.substr(0, sp));
    size_t end = text.find(kEnd, eol + 1);
    if (end == std::string_view::npos) break;
    // The body: the lines between the markers, joined (a log may wrap long lines).
    std::string body;
    std::string_view between = text.substr(eol + 1, end - eol - 1);
    for (char ch : between)
      if (ch != '\n' && ch != '\r') body += ch;
    size_t tail_eol = text.find('\n', end);
    std::string_view tail = text.substr(
        end + kEnd.size(),
        (tail_eol == std::string_view::npos ? text.size() : tail_eol) - end - kEnd.size());
    pos = end + kEnd.size();
    unsigned long long n = 0;
    char k2[64] = {0};
    if (std::sscanf(std::string(tail).c_str(), "%63s %llu", k2, &n) != 2 || key != k2 ||
        n != body.size())
      continue;  // cut or mixed up: not a result
    json j = util::parse_json_or_discarded(body);
    if (j.is_discarded()) continue;
    out[key] = std::move(j);
  }
  return out;
}

}  // namespace pai::sim
