#include "check/report.h"

#include <algorithm>
#include <deque>

#include "diag/report.h"
#include "util/strings.h"

namespace pai::check {

namespace {

const char* kReset = "\x1b[0m";
const char* kBold = "\x1b[1m";
const char* kRed = "\x1b[1;31m";
const char* kYellow = "\x1b[1;33m";
const char* kGreen = "\x1b[32m";
const char* kDim = "\x1b[2m";
const char* kCyan = "\x1b[36m";

std::vector<std::string> host_order(const std::vector<CheckResult>& results,
                                    const ReportContext& ctx) {
  std::vector<std::string> order;
  if (ctx.hosts)
    for (const auto& h : *ctx.hosts) order.push_back(h.plan.name);
  for (const auto& r : results)
    if (std::find(order.begin(), order.end(), r.host) == order.end()) order.push_back(r.host);
  return order;
}

const HostOutcome* outcome(const ReportContext& ctx, const std::string& host) {
  if (!ctx.hosts) return nullptr;
  for (const auto& h : *ctx.hosts)
    if (h.plan.name == host) return &h;
  return nullptr;
}

struct HostCounts {
  size_t pass = 0, warn = 0, fail = 0, skip = 0, install = 0;
  bool unreachable = false;
};

HostCounts counts_for(const std::vector<CheckResult>& results, const std::string& host) {
  HostCounts c;
  for (const auto& r : results) {
    if (r.host != host) continue;
    switch (r.status) {
      case Status::Pass:
        ++c.pass;
        break;
      case Status::Warn:
        ++c.warn;
        break;
      case Status::Fail:
        ++c.fail;
        break;
      case Status::Skip:
        ++c.skip;
        break;
      case Status::Install:
        ++c.install;
        break;
    }
    if (r.check == "Reachable" && r.status == Status::Fail) c.unreachable = true;
  }
  return c;
}

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s += std::string(w - s.size(), ' ');
  return s;
}

}  // namespace

std::string dump(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string write_text_report(const std::vector<CheckResult>& results, const ReportContext& ctx,
                              const TextReportOptions& o) {
  auto paint = [&](const char* c, const std::string& s) {
    return o.color ? std::string(c) + s + kReset : s;
  };
  std::string out;
  size_t name_w = 0;
  for (const auto& r : results) name_w = std::max(name_w, r.check.size());
  name_w = std::min<size_t>(name_w, 22);
  const auto order = host_order(results, ctx);
  auto shows = [&](const CheckResult& r) {
    if (o.quiet) return r.status == Status::Fail;
    return o.verbose || r.status == Status::Fail || r.status == Status::Warn ||
           r.status == Status::Install;
  };
  auto finding = [&](const CheckResult& r) {
    std::string label;
    switch (r.status) {
      case Status::Fail:
        label = paint(kRed, "FAIL");
        break;
      case Status::Warn:
        label = paint(kYellow, "WARN");
        break;
      case Status::Pass:
        label = paint(kGreen, "ok  ");
        break;
      case Status::Skip:
        label = paint(kDim, "skip");
        break;
      case Status::Install:
        label = paint(kCyan, "INST");
        break;
    }
    std::string s = "  " + label + "  " + pad(r.check, name_w) + "  " + r.message +
                    (r.demoted ? " (error ignored)" : "") + "\n";
    if (!r.hint.empty() && (r.status == Status::Fail || r.status == Status::Warn))
      s += "  " + std::string(6 + name_w + 2, ' ') + paint(kCyan, "hint:") + " " + r.hint + "\n";
    else if (!r.hint.empty() && r.status == Status::Install)
      s += "  " + std::string(6 + name_w + 2, ' ') + paint(kCyan, "install will do this:") + " " +
           r.hint + "\n";
    return s;
  };

  // A finding worded the same on several hosts (an NTP policy, a missing package)
  // is printed once, with the hosts it is on; per-host sections keep the rest.
  // With -v every host is printed whole.
  std::map<std::string, std::vector<std::string>> hosts_of;  // finding key -> hosts
  std::vector<std::pair<std::string, const CheckResult*>> common_order;
  auto key_of = [](const CheckResult& r) {
    return r.check + '\x1f' + std::string(to_string(r.status)) + '\x1f' + r.message + '\x1f' +
           r.hint;
  };
  if (!o.verbose) {
    for (const auto& r : results) {
      if (!shows(r)) continue;
      auto& hs = hosts_of[key_of(r)];
      if (hs.empty()) common_order.push_back({key_of(r), &r});
      hs.push_back(r.host);
    }
    std::map<std::string, std::vector<const CheckResult*>> blocks;  // host list -> findings
    std::vector<std::string> block_order;
    for (const auto& [key, r] : common_order) {
      const auto& hs = hosts_of[key];
      if (hs.size() < 2) continue;
      std::string who = hs.size() != order.size() ? "On " + std::to_string(hs.size()) + " hosts: "
                        : hs.size() == 2          ? std::string("On both hosts")
                                         : "On all " + std::to_string(hs.size()) + " hosts";
      if (hs.size() != order.size()) {
        std::vector<std::string> shown(hs.begin(), hs.begin() + std::min<size_t>(hs.size(), 8));
        who += util::join(shown, ", ") +
               (hs.size() > 8 ? " and " + std::to_string(hs.size() - 8) + " more" : "");
      }
      if (!blocks.count(who)) block_order.push_back(who);
      blocks[who].push_back(r);
    }
    for (const auto& who : block_order) {
      out += paint(kBold, who) + "\n";
      for (const CheckResult* r : blocks[who]) out += finding(*r);
      out += "\n";
    }
  }

  for (const auto& host : order) {
    HostCounts c = counts_for(results, host);
    const HostOutcome* h = outcome(ctx, host);
    std::string title = host;
    if (h && h->plan.address != host) title += " (" + h->plan.address + ")";
    std::vector<const CheckResult*> shown;
    size_t common = 0;
    for (const auto& r : results) {
      if (r.host != host || !shows(r)) continue;
      if (!o.verbose && hosts_of[key_of(r)].size() >= 2) {
        ++common;
        continue;
      }
      shown.push_back(&r);
    }
    if (shown.empty() && (common > 0 || o.quiet)) continue;
    out += paint(kBold, title) + "\n";
    if (shown.empty()) {
      out += "  " + paint(kGreen, "ok") + "    all " + std::to_string(c.pass) + " checks passed" +
             (c.skip ? " (" + std::to_string(c.skip) + " not applicable)" : "") + "\n";
    }
    for (const CheckResult* r : shown) out += finding(*r);
    out += "\n";
  }
  if (o.quiet) return out;

  // Summary table: hosts x outcome.
  size_t host_w = 4;
  for (const auto& host : order) host_w = std::max(host_w, host.size());
  out += paint(kBold, pad("HOST", host_w) + "  PASS  WARN  FAIL  SKIP  INST  RESULT") + "\n";
  size_t ok = 0, warned = 0, failed = 0, unreachable = 0, install = 0, install_hosts = 0;
  for (const auto& host : order) {
    HostCounts c = counts_for(results, host);
    install += c.install;
    install_hosts += c.install > 0;
    std::string result;
    if (c.unreachable) {
      result = paint(kRed, "unreachable");
      ++unreachable;
    } else if (c.fail) {
      result = paint(kRed, "errors");
      ++failed;
    } else if (c.warn) {
      result = paint(kYellow, "warnings");
      ++warned;
    } else {
      result = paint(kGreen, "ok");
      ++ok;
    }
    auto num = [](size_t n) {
      std::string s = std::to_string(n);
      return std::string(4 > s.size() ? 4 - s.size() : 0, ' ') + s;
    };
    out += pad(host, host_w) + "  " + num(c.pass) + "  " + num(c.warn) + "  " + num(c.fail) + "  " +
           num(c.skip) + "  " + num(c.install) + "  " + result + "\n";
  }
  std::string line = std::to_string(order.size()) + (order.size() == 1 ? " host" : " hosts") +
                     ": " + std::to_string(ok) + " ok, " + std::to_string(warned) +
                     " with warnings, " + std::to_string(failed) + " with errors, " +
                     std::to_string(unreachable) + " unreachable";
  if (ctx.duration_ms > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " (%.1f s, %zu in parallel)", ctx.duration_ms / 1000.0,
                  ctx.parallel);
    line += buf;
  }
  if (install > 0)
    out += "\n" + paint(kCyan, "INST") + ": " + std::to_string(install) +
           (install == 1 ? " finding" : " findings") + " on " + std::to_string(install_hosts) +
           (install_hosts == 1 ? " host" : " hosts") +
           " that paictl install sets right itself: none is an error before the install, "
           "on an installed cluster they count.\n";
  out += "\n" +
         (unreachable || failed ? paint(kRed, line)
          : warned              ? paint(kYellow, line)
                                : paint(kGreen, line)) +
         "\n";
  return out;
}

nlohmann::json write_json_report(const std::vector<CheckResult>& results,
                                 const ReportContext& ctx) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json j = {{"host", r.host},
                        {"check", r.check},
                        {"status", to_string(r.status)},
                        {"message", r.message},
                        {"hint", r.hint}};
    if (r.demoted) j["demoted"] = true;
    arr.push_back(std::move(j));
  }
  nlohmann::json hosts = nlohmann::json::array();
  if (ctx.hosts) {
    for (const auto& h : *ctx.hosts) {
      nlohmann::json j = {{"name", h.plan.name},
                          {"address", h.plan.target.endpoint.address},
                          {"port", h.plan.target.endpoint.port},
                          {"user", h.plan.target.endpoint.user},
                          {"reached", h.reached},
                          {"failure", remote::to_string(h.exec.failure)},
                          {"error", h.exec.error},
                          {"auth_method", h.exec.auth_method},
                          {"host_key", h.exec.host_key},
                          {"connect_ms", static_cast<int64_t>(h.exec.connect_ms)},
                          {"exec_ms", static_cast<int64_t>(h.exec.exec_ms)},
                          {"facts_complete", h.facts.complete},
                          {"stuck_in", h.facts.stuck_in},
                          {"privilege", h.facts.privilege}};
      if (h.plan.sku) j["machine_type"] = h.plan.sku->name;
      hosts.push_back(std::move(j));
    }
  }
  Summary s = summarize(results, ctx.hosts ? ctx.hosts->size() : host_order(results, ctx).size());
  return {{"results", std::move(arr)},
          {"hosts", std::move(hosts)},
          {"summary",
           {{"hosts", s.hosts},
            {"unreachable", s.unreachable},
            {"pass", s.pass},
            {"warn", s.warn},
            {"fail", s.fail},
            {"skip", s.skip},
            {"install", s.install},
            {"exit_code", exit_code(s, ctx.fail_on_warn)},
            {"duration_ms", static_cast<int64_t>(ctx.duration_ms)},
            {"parallel", ctx.parallel}}}};
}

std::string write_junit_report(const std::vector<CheckResult>& results, const ReportContext& ctx) {
  using diag::xml_escape;
  std::string body;
  size_t total = 0, failures = 0, skipped = 0;
  for (const auto& host : host_order(results, ctx)) {
    std::string cases;
    size_t t = 0, f = 0, sk = 0;
    for (const auto& r : results) {
      if (r.host != host) continue;
      ++t;
      cases += "    <testcase classname=\"" + xml_escape(host) + "\" name=\"" +
               xml_escape(r.check) + "\">\n";
      std::string text = r.message + (r.hint.empty() ? "" : "\nhint: " + r.hint);
      bool failure = r.status == Status::Fail || (ctx.fail_on_warn && r.status == Status::Warn);
      if (failure) {
        ++f;
        cases += "      <failure type=\"" + xml_escape(r.check) + "\" message=\"" +
                 xml_escape(r.message) + "\">" + xml_escape(text) + "</failure>\n";
      } else if (r.status == Status::Skip) {
        ++sk;
        cases += "      <skipped message=\"" + xml_escape(r.message) + "\"/>\n";
      } else if (r.status == Status::Install) {
        cases += "      <system-out>" +
                 xml_escape("install will do this: " + r.message +
                            (r.hint.empty() ? "" : "\ninstall " + r.hint)) +
                 "</system-out>\n";
      } else if (r.status == Status::Warn) {
        cases += "      <system-out>" +
                 xml_escape("warning: " + text + (r.demoted ? " (error ignored)" : "")) +
                 "</system-out>\n";
      } else {
        cases += "      <system-out>" + xml_escape(r.message) + "</system-out>\n";
      }
      cases += "    </testcase>\n";
    }
    total += t;
    failures += f;
    skipped += sk;
    body += "  <testsuite name=\"" + xml_escape(host) + "\" tests=\"" + std::to_string(t) +
            "\" failures=\"" + std::to_string(f) + "\" errors=\"0\" skipped=\"" +
            std::to_string(sk) + "\">\n" + cases + "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"paictl check hosts\" "
         "tests=\"" +
         std::to_string(total) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\">\n" + body +
         "</testsuites>\n";
}

nlohmann::json write_sarif_report(const std::vector<CheckResult>& results, const ReportContext& ctx,
                                  std::string_view tool_version) {
  std::vector<diag::Diagnostic> diags;
  for (const auto& r : results) {
    if (r.status != Status::Fail && r.status != Status::Warn && r.status != Status::Install)
      continue;
    diag::Diagnostic d;
    d.code = r.check;
    // What install sets right itself is a note ("install will do this").
    d.severity = r.status == Status::Fail   ? diag::Severity::Error
                 : r.status == Status::Warn ? diag::Severity::Warning
                                            : diag::Severity::Info;
    if (!ctx.layout_file.empty()) {
      d.file = ctx.layout_file;
      auto it = ctx.layout_lines.find(r.host);
      if (it != ctx.layout_lines.end()) d.line = it->second;
    }
    d.message =
        r.host + ": " + (r.status == Status::Install ? "install will do this: " : "") + r.message;
    d.hint = r.hint;
    d.location = r.host;
    diags.push_back(std::move(d));
  }
  // Rules: the catalogue, with one rule per port actually reported.
  std::deque<std::string> storage;
  std::vector<diag::Rule> rules;
  for (const auto& c : catalogue()) {
    if (c.name == "Port-<N>") {
      for (const auto& d : diags) {
        if (d.code.rfind("Port-", 0) != 0) continue;
        bool have = false;
        for (const auto& r : rules) have |= r.code == d.code;
        if (have) continue;
        storage.push_back(d.code);
        std::string_view code = storage.back();
        storage.push_back(util::to_lower(d.code));
        rules.push_back({code, storage.back(), c.severity, c.summary});
      }
      continue;
    }
    storage.push_back(util::to_lower(c.name));
    rules.push_back({c.name, storage.back(), c.severity, c.summary});
  }
  return diag::write_sarif(diags, rules, tool_version, "");
}

}  // namespace pai::check
