#include "install/azure_step.h"
#include "flags.h"

#include <cstdio>

#include "install/install_out.h"
#include "util/strings.h"

namespace paictl {

void add_azure_options(Flags& cmd, AzureOptions& o, bool reset) {
  add_azure_endpoint_options(cmd, o);
  if (reset)
    cmd.add_flag("--azure", o.reset_azure,
                 "Delete the cluster's Azure resources (only those tagged paictl.cluster=<id>), "
                 "waiting for each, and drop their VMs from layout.yaml; the on-prem hosts are "
                 "left alone");
  else
    cmd.add_flag("--azure-only", o.azure_only,
                 "Create the Azure resources and write their VMs into layout.yaml, then stop "
                 "(no on-prem phases)");
}

void add_azure_endpoint_options(Flags& cmd, AzureOptions& o) {
  cmd.add_option("--arm-endpoint", o.arm_endpoint,
                 "Azure Resource Manager URL (else PAICTL_ARM_ENDPOINT, else "
                 "https://management.azure.com)")
      ->type_name("URL");
  cmd.add_option("--authority-host", o.authority_host,
                 "Sign-in URL (else PAICTL_AUTHORITY_HOST, else https://login.microsoftonline.com)")
      ->type_name("URL");
  cmd.add_option("--ca-file", o.ca_file,
                 "PEM bundle to verify the Azure endpoints with (else PAICTL_CA_FILE, else the "
                 "system store)")
      ->type_name("FILE");
}

pai::deploy::AzureAccess azure_access(const AzureOptions& o) {
  return {o.arm_endpoint, o.authority_host, o.ca_file};
}

void print_azure_plan(const pai::deploy::AzureInstallPlan& ap, bool color) {
  const auto& p = ap.plan;
  const auto& s = ap.session->spec;
  out_printf("%sAzure%s (subscription %s, resource group %s, %s)\n", color ? "\x1b[1m" : "",
             color ? "\x1b[0m" : "", s.azure.subscription.c_str(), s.azure.resource_group.c_str(),
             s.azure.location.c_str());
  int n[4] = {0, 0, 0, 0};
  for (const auto& c : p.changes) {
    n[static_cast<int>(c.action)]++;
    std::string extra = c.differences.empty() ? "" : "  " + pai::util::join(c.differences, "; ");
    out_printf("  %-7s %-23s %s%s\n", std::string(pai::azure::to_string(c.action)).c_str(),
               c.resource.kind.c_str(), c.resource.name.c_str(), extra.c_str());
  }
  out_printf("  %d to create, %d to update, %d to delete, %d unchanged\n", n[0], n[1], n[3], n[2]);
  std::fflush(stdout);  // before the progress lines on stderr
}

void print_azure_grow(const pai::deploy::AzureGrowPlan& g, const std::string& cluster_dir,
                      bool color) {
  const auto& s = g.session->spec;
  out_printf("%sAzure%s (subscription %s, resource group %s)\n", color ? "\x1b[1m" : "",
             color ? "\x1b[0m" : "", s.azure.subscription.c_str(), s.azure.resource_group.c_str());
  out_printf("  update  scale set               %s  sku.capacity: %lld -> %lld (%d new %s VM%s)\n",
             g.scale_set.c_str(), static_cast<long long>(g.from), static_cast<long long>(g.to),
             g.add, g.sku.c_str(), g.add == 1 ? "" : "s");
  out_printf("  then    config.yaml             azure pool %s count: %lld -> %lld\n",
             g.pool.c_str(), static_cast<long long>(g.from), static_cast<long long>(g.to));
  out_printf("  then    layout.yaml             the new VMs, machine-type %s\n",
             g.machine_type.c_str());
  out_printf(
      "  then    join                    each new VM as paictl node add %s HOST does "
      "(checks, prepare, join, labels)\n",
      cluster_dir.c_str());
  std::fflush(stdout);
}

void print_azure_reset_plan(const pai::deploy::AzureResetPlan& r) {
  const auto& s = r.session->spec;
  out_printf("reset --azure would delete, in resource group %s, what carries the tag %s=%s:\n",
             s.azure.resource_group.c_str(), pai::azure::kClusterTag, s.cluster.c_str());
  for (const auto& c : r.plan->changes)
    if (c.action != pai::azure::Action::Create)
      out_printf("  %-23s %s\n", c.resource.kind.c_str(), c.resource.name.c_str());
  out_printf("dry run: nothing was changed in Azure\n");
}

void print_azure_reset(const pai::deploy::AzureResetOutcome& r, const std::string& layout_file) {
  out_printf("azure: deleted %zu resource%s\n", r.result.deleted.size(),
             r.result.deleted.size() == 1 ? "" : "s");
  for (const auto& d : r.result.deleted) out_printf("  deleted %s\n", d.c_str());
  for (const auto& k : r.result.kept) out_printf("  kept    %s\n", k.c_str());
  if (r.layout_changed) out_printf("azure: removed the Azure VMs from %s\n", layout_file.c_str());
}

}  // namespace paictl
