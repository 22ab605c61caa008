// The ARM test server checked with Microsoft's own JavaScript SDKs
// (@azure/identity, @azure/arm-resources, @azure/arm-network, @azure/arm-compute):
// sign-in through the token endpoint, create with their long-running-operation
// pollers (also through an injected 500 and 429), list a scale set's VMs and
// NICs, delete. If the SDKs accept the server's answers, the server speaks the
// contract and not only what paictl expects of it.
//   node sdk_check.mjs ARM_URL CONTROL_URL TENANT CLIENT_ID SECRET_FILE
// (NODE_EXTRA_CA_CERTS names the test CA.)
import { readFileSync } from "node:fs";
import { ClientSecretCredential } from "@azure/identity";
import { ResourceManagementClient } from "@azure/arm-resources";
import { NetworkManagementClient } from "@azure/arm-network";
import { ComputeManagementClient } from "@azure/arm-compute";

const [arm, control, tenant, clientId, secretFile] = process.argv.slice(2);
const secret = readFileSync(secretFile, "utf8").trim();
const sub = "00000000-0000-0000-0000-0000000000aa";
const rg = "sdk-rg";
const scope = "https://management.azure.com/.default";
const opts = { endpoint: arm, credentialScopes: [scope], credentials: { scopes: [scope] } };
const poll = { updateIntervalInMs: 20 };
let failures = 0;
const check = (ok, what) => {
  console.log((ok ? "ok: " : "FAIL: ") + what);
  if (!ok) failures++;
};
const ctl = async (path, body) => {
  const r = await fetch(control + path, { method: "POST", body: JSON.stringify(body) });
  if (!r.ok) throw new Error("control " + path + ": " + r.status);
};
const requests = async () => (await (await fetch(control + "/__control/requests")).json());

const credential = new ClientSecretCredential(tenant, clientId, secret, {
  authorityHost: arm,
  disableInstanceDiscovery: true,
});
const resources = new ResourceManagementClient(credential, sub, opts);
const network = new NetworkManagementClient(credential, sub, opts);
const compute = new ComputeManagementClient(credential, sub, opts);

try {
  const group = await resources.resourceGroups.createOrUpdate(rg, { location: "eastus", tags: { "paictl.cluster": "sdk" } });
  check(group.properties?.provisioningState === "Succeeded", "resource group created");

  await ctl("/__control/fail", [{ kind: "poll", status: 500, count: 1, retryAfter: 0 },
                                { kind: "poll", status: 429, count: 1, retryAfter: 0 }]);
  const nsg = await network.networkSecurityGroups.beginCreateOrUpdateAndWait(rg, "sdk-nsg", {
    location: "eastus",
    securityRules: [{ name: "ssh", protocol: "Tcp", sourceAddressPrefix: "203.0.113.10/32", sourcePortRange: "*",
                      destinationAddressPrefix: "*", destinationPortRange: "22", access: "Allow", priority: 100,
                      direction: "Inbound" }],
  }, poll);
  check(nsg.provisioningState === "Succeeded", "NSG created through a failed and a throttled poll");
  check((nsg.defaultSecurityRules || []).length === 6, "the NSG has Azure's default rules");

  const vnet = await network.virtualNetworks.beginCreateOrUpdateAndWait(rg, "sdk-vnet", {
    location: "eastus",
    addressSpace: { addressPrefixes: ["10.224.0.0/16"] },
    subnets: [{ name: "s", addressPrefix: "10.224.1.0/24" }],
  }, poll);
  check(vnet.provisioningState === "Succeeded" && vnet.subnets?.[0]?.id?.endsWith("/subnets/s"), "VNet created");
  const subnet = await network.subnets.get(rg, "sdk-vnet", "s");
  check(subnet.addressPrefix === "10.224.1.0/24", "subnet read back");

  const vmss = await compute.virtualMachineScaleSets.beginCreateOrUpdateAndWait(rg, "sdk-vmss", {
    location: "eastus",
    sku: { name: "Standard_ND96asr_v4", tier: "Standard", capacity: 3 },
    orchestrationMode: "Uniform",
    upgradePolicy: { mode: "Manual" },
    singlePlacementGroup: true,
    virtualMachineProfile: {
      osProfile: { computerNamePrefix: "sdk", adminUsername: "paiadmin",
                   linuxConfiguration: { disablePasswordAuthentication: true,
                                         ssh: { publicKeys: [{ path: "/home/paiadmin/.ssh/authorized_keys", keyData: "ssh-ed25519 AAAA sdk" }] } } },
      networkProfile: { networkInterfaceConfigurations: [{ name: "nic0", primary: true, enableAcceleratedNetworking: true,
        ipConfigurations: [{ name: "ip0", subnet: { id: subnet.id } }] }] },
    },
  }, poll);
  check(vmss.provisioningState === "Succeeded" && vmss.sku?.capacity === 3, "scale set created");

  const vms = [];
  for await (const vm of compute.virtualMachineScaleSetVMs.list(rg, "sdk-vmss")) vms.push(vm);
  check(vms.length === 3 && vms.every((v) => v.osProfile?.computerName?.startsWith("sdk")), "three VMs listed");
  const nics = [];
  for await (const n of network.networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(rg, "sdk-vmss")) nics.push(n);
  const ips = nics.map((n) => n.ipConfigurations?.[0]?.privateIPAddress);
  check(nics.length === 3 && ips.every((ip) => ip?.startsWith("10.224.1.")), "their NICs with private IPs: " + ips.join(", "));

  await compute.virtualMachineScaleSets.beginDeleteAndWait(rg, "sdk-vmss", poll);
  let gone = false;
  try { await compute.virtualMachineScaleSets.get(rg, "sdk-vmss"); } catch (e) { gone = e.statusCode === 404; }
  check(gone, "scale set deleted (GET is 404)");
  await resources.resourceGroups.beginDeleteAndWait(rg, poll);
  const exists = await resources.resourceGroups.checkExistence(rg);
  check(exists === false || exists?.body === false, "resource group deleted (HEAD is 404)");

  const reqs = await requests();
  check(reqs.some((r) => r.kind === "token" && r.status === 200), "the SDK signed in at the token endpoint");
  check(reqs.filter((r) => r.kind === "poll" && r.status >= 500).length === 1, "a poll answered 500 and the operation still succeeded");
} catch (e) {
  console.log("FAIL: " + (e.stack || e));
  failures++;
}
process.exit(failures ? 1 : 0);
