#include "kube/master.h"

#include "util/strings.h"

namespace pai::kube {

std::string api_access_script() {
  // admin.conf's first server, CA and client certificate, read with built-ins;
  // pai_api=1 where they and curl and base64 are there.
  return "pai_s=; pai_a=; pai_c=; pai_k=; pai_api=\n"
         "while IFS= read -r l || [ -n \"$l\" ]; do\n"
         "  l=${l#\"${l%%[![:space:]]*}\"}\n"
         "  case $l in\n"
         "    server:*) [ -n \"$pai_s\" ] || pai_s=${l#server:} ;;\n"
         "    certificate-authority-data:*) [ -n \"$pai_a\" ] || pai_a=${l#*:} ;;\n"
         "    client-certificate-data:*) [ -n \"$pai_c\" ] || pai_c=${l#*:} ;;\n"
         "    client-key-data:*) [ -n \"$pai_k\" ] || pai_k=${l#*:} ;;\n"
         "  esac\n"
         "done < /etc/kubernetes/admin.conf\n"
         "pai_s=${pai_s# }; pai_s=${pai_s%/}; pai_a=${pai_a# }; pai_c=${pai_c# }; pai_k=${pai_k# "
         "}\n"
         "[ -n \"$pai_s\" ] && [ -n \"$pai_a\" ] && [ -n \"$pai_c\" ] && [ -n \"$pai_k\" ] &&\n"
         "  command -v curl >/dev/null 2>&1 && command -v base64 >/dev/null 2>&1 && pai_api=1\n";
}

std::string api_curl(const std::string& args) {
  // Each credential decoded onto its own pipe (a here-document) that curl opens
  // as /dev/fd/N: never in argv or a file. One connection for every URL, so the
  // pipes are read once.
  return "curl -sS --max-time 20 --cacert /dev/fd/3 --cert /dev/fd/4 --key /dev/fd/5 " + args +
         " 3<<PAI_A 4<<PAI_C 5<<PAI_K\n"
         "$(printf '%s' \"$pai_a\" | base64 -d)\n"
         "PAI_A\n"
         "$(printf '%s' \"$pai_c\" | base64 -d)\n"
         "PAI_C\n"
         "$(printf '%s' \"$pai_k\" | base64 -d)\n"
         "PAI_K\n";
}

remote::ExecResult run_on_master(remote::Transport& transport, const inventory::HostSpec& master,
                                 const std::string& script, const std::string& input,
                                 int timeout_ms) {
  remote::ExecRequest req;
  std::string q = util::shell_quote(script);
  req.command = master.target.endpoint.user == "root" || master.target.endpoint.user.empty()
                    ? "sh -c " + q
                    : "sudo -n sh -c " + q;
  req.input = input;
  req.timeout_ms = timeout_ms;
  return transport.exec(master.target, req);
}

}  // namespace pai::kube
