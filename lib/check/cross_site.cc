#include "check/cross_site.h"

#include <cctype>
#include <map>

#include "util/strings.h"

namespace pai::check {

namespace {

bool safe_address(const std::string& a) {
  if (a.empty() || a.size() > 253) return false;
  for (char c : a)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
          c == '_'))
      return false;
  return true;
}

const char* kProbeFunctions = R"SH(to=""; command -v timeout >/dev/null 2>&1 && to="timeout 4"
tcp() {
  if command -v bash >/dev/null 2>&1; then
    out=$($to bash -c 'exec 3<>"/dev/tcp/$1/$2"' sh "$1" "$2" 2>&1); s=$?
  elif command -v nc >/dev/null 2>&1; then
    out=$(nc -z -w 3 "$1" "$2" 2>&1); s=$?
  else
    echo "tcp unknown $1 $2 no-bash-or-nc"; return
  fi
  if [ "$s" = 0 ]; then echo "tcp open $1 $2"
  else case "$out" in *refused*) echo "tcp refused $1 $2";; *) echo "tcp blocked $1 $2 $s";; esac; fi
}
# udp ADDR PORT: one datagram on a connected socket, then a read: data is an
# answer, "refused" an ICMP port unreachable, a timeout (status > 128) no answer.
udp() {
  if ! command -v bash >/dev/null 2>&1; then echo "udp unknown $1 $2 no-bash"; return; fi
  out=$(bash -c 'exec 3<>"/dev/udp/$1/$2" || exit 3; printf "paictl-probe\n" >&3 || exit 3
    IFS= read -r -t "$3" x <&3; s=$?; [ -n "$x" ] && exit 0; exit $s' sh "$1" "$2" "$UDP_WAIT" 2>&1); s=$?
  case "$s:$out" in
    0:*) echo "udp answered $1 $2";;
    *refused*) echo "udp refused $1 $2";;
    *unreachable*|*"No route"*|*"not permitted"*|*denied*) echo "udp blocked $1 $2 $s";;
    *) if [ "$s" -gt 128 ]; then echo "udp noreply $1 $2"; else echo "udp blocked $1 $2 $s"; fi;;
  esac
}
cni=$CNI_MTU
if [ "$cni" = 0 ]; then
  i=$(ip route show default 2>/dev/null | awk '{for(i=1;i<NF;i++) if($i=="dev"){print $(i+1); exit}}')
  m=1500; [ -n "$i" ] && m=$(cat /sys/class/net/$i/mtu 2>/dev/null || echo 1500)
  [ "$TUNNEL_MTU" -gt 0 ] && [ "$m" -gt "$TUNNEL_MTU" ] && m=$TUNNEL_MTU
  cni=$((m - 50))
fi
mtu() {
  if ! command -v ping >/dev/null 2>&1; then echo "mtu unknown $1 $cni no-ping"; return; fi
  if ping -c 1 -W 2 -M do -s $((cni + 50 - 28)) "$1" >/dev/null 2>&1; then echo "mtu ok $1 $cni"
  else echo "mtu fail $1 $cni"; fi
}
)SH";

}  // namespace

std::vector<Probe> cross_site_probes(const SiteHost& from, const std::vector<SiteHost>& all) {
  std::vector<Probe> out;
  for (const auto& h : all) {
    if (h.site == from.site || h.name == from.name || !safe_address(h.address)) continue;
    if (h.master) out.push_back({h.name, h.address, 6443, "the API server"});
    out.push_back({h.name, h.address, 10250, "the kubelet"});
    out.push_back({h.name, h.address, 0, "the pods' VXLAN packets"});
    out.push_back({h.name, h.address, 8472, "the pod overlay: flannel's VXLAN", true});
    out.push_back({h.name, h.address, 4789, "VXLAN's IANA port: Calico's", true});
  }
  return out;
}

std::string cross_site_script(const std::vector<Probe>& probes, int cni_mtu, int udp_wait_s,
                              int tunnel_mtu) {
  std::string s = "# paictl cross-site probes: connects and pings, changes nothing.\nCNI_MTU=" +
                  std::to_string(cni_mtu < 0 ? 0 : cni_mtu) +
                  "\nTUNNEL_MTU=" + std::to_string(tunnel_mtu < 0 ? 0 : tunnel_mtu) +
                  "\nUDP_WAIT=" + std::to_string(udp_wait_s < 1 ? 1 : udp_wait_s) + "\n" +
                  kProbeFunctions;
  for (const auto& p : probes) {
    if (!safe_address(p.address)) continue;
    if (p.port > 0)
      s += std::string(p.udp ? "udp " : "tcp ") + p.address + " " + std::to_string(p.port) + " &\n";
    else
      s += "mtu " + p.address + " &\n";
  }
  s += "wait\n";
  return s;
}

std::vector<CheckResult> cross_site_results(const std::string& host,
                                            const std::vector<Probe>& probes,
                                            const remote::ExecResult& r) {
  std::vector<CheckResult> out;
  std::map<std::string, std::vector<std::string>> seen;  // "tcp ADDR PORT" / "mtu ADDR" -> words
  for (auto line : util::split(r.out, '\n')) {
    auto w = util::split(util::trim(line), ' ');
    if (w.size() < 4) continue;
    std::vector<std::string> words(w.begin(), w.end());
    std::string key = words[0] == "tcp" || words[0] == "udp"
                          ? words[0] + " " + words[2] + " " + words[3]
                          : "mtu " + words[2];
    seen[key] = words;
  }
  for (const auto& p : probes) {
    CheckResult c;
    c.host = host;
    c.check = p.udp ? "CrossSiteUDP" : p.port > 0 ? "CrossSitePort" : "CrossSiteMTU";
    std::string peer = p.peer + " (" + p.address + ")";
    std::string key =
        p.port > 0 ? std::string(p.udp ? "udp " : "tcp ") + p.address + " " + std::to_string(p.port)
                   : "mtu " + p.address;
    auto it = seen.find(key);
    if (!r.ok() || it == seen.end()) {
      c.status = Status::Skip;
      c.message = "the probe of " + peer + " did not run" + (r.ok() ? "" : ": " + r.error);
      out.push_back(std::move(c));
      continue;
    }
    const auto& w = it->second;
    if (p.udp) {
      std::string port = "UDP " + std::to_string(p.port) + " (" + p.what + ")";
      if (w[1] == "answered" || w[1] == "refused") {
        c.status = Status::Pass;
        c.message = "reaches " + peer + " on " + port +
                    (w[1] == "answered" ? ": it answered"
                                        : ": the host sent back \"port unreachable\" (nothing "
                                          "listens yet; the datagram got there)");
      } else if (w[1] == "unknown") {
        c.status = Status::Skip;
        c.message = "cannot probe " + peer + " on " + port + ": bash is not installed";
      } else if (w[1] == "noreply") {
        c.status = Status::Warn;
        c.message = "no answer from " + peer + " on " + port +
                    ": UDP cannot tell a silent listener (a VXLAN device never answers) from a "
                    "datagram the path drops";
        c.hint =
            "before an install nothing listens, and a host that gets the datagram answers "
            "\"port unreachable\": silence then points at a firewall or an NSG that drops it; "
            "open UDP " +
            std::to_string(p.port) + " between the sites (docs/hybrid.md)";
      } else {
        c.status = Status::Fail;
        c.message = "cannot reach " + peer + " on " + port +
                    ": the network answered that the host is unreachable or the port prohibited";
        c.hint =
            "open UDP " + std::to_string(p.port) +
            " between the sites: the NSG rules paictl writes admit it from "
            "azure.onprem-address-space; the on-prem firewall must admit it from the Azure range "
            "(docs/hybrid.md)";
      }
    } else if (p.port > 0) {
      std::string port = "TCP " + std::to_string(p.port) + " (" + p.what + ")";
      if (w[1] == "open" || w[1] == "refused") {
        c.status = Status::Pass;
        c.message = "reaches " + peer + " on " + port +
                    (w[1] == "open" ? "" : " (refused: nothing listens yet, the path is open)");
      } else if (w[1] == "unknown") {
        c.status = Status::Skip;
        c.message = "cannot probe " + peer + " on " + port + ": neither bash nor nc is installed";
      } else {
        c.status = Status::Fail;
        c.message = "cannot reach " + peer + " on " + port + ": no answer (timed out or no route)";
        c.hint =
            "open the port between the sites: the NSG rules paictl writes admit it from "
            "azure.onprem-address-space; the on-prem firewall must admit it from the Azure range, "
            "and the VPN must route both ranges (docs/hybrid.md)";
      }
    } else {
      std::string mtu = w.size() > 3 ? w[3] : "?";
      auto mtu_value = util::parse_int(mtu);
      if (w[1] == "ok") {
        c.status = Status::Pass;
        c.message =
            "packets of the CNI's MTU " + mtu + " + 50 (VXLAN) reach " + peer + " unfragmented";
      } else if (w[1] == "unknown") {
        c.status = Status::Skip;
        c.message = "cannot probe the path MTU to " + peer + ": ping is not installed";
      } else {
        c.status = Status::Fail;
        c.message = "a packet of " +
                    (mtu_value ? std::to_string(*mtu_value + 50) + " bytes"
                               : std::string("the pods' size")) +
                    " (the CNI's MTU " + mtu +
                    " + 50 of VXLAN) with don't-fragment set does not "
                    "reach " +
                    peer + ": the path between the sites is narrower";
        c.hint =
            "set azure.tunnel-mtu to what the link between the sites carries (install gives "
            "the pods 50 less), or clamp the MSS on the VPN device; check with ping -M do -s "
            "SIZE";
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace pai::check
