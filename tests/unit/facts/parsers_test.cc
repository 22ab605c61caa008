// The fact parsers on real-format samples (old and new drivers, old and new
// lscpu), and on malformed input: diagnostics with line and column, no throw.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "facts/parsers.h"
#include "facts/text_lines.h"
#include "test_files.h"

using namespace pai::facts;
using pai::diag::Severity;

namespace {

using pai::test::slurp;

std::string sample(const std::string& name) {
  return slurp(std::string(PAI_SOURCE_DIR) + "/tests/unit/facts/samples/" + name);
}
std::string layout_file(const std::string& profile, const std::string& name) {
  return slurp(std::string(PAI_SOURCE_DIR) + "/layouts/" + profile + "/" + name);
}

const pai::diag::Diagnostic* find_code(const pai::diag::List& l, const std::string& code) {
  for (const auto& d : l.items())
    if (d.code == code) return &d;
  return nullptr;
}

std::string dump(const pai::diag::List& l) {
  std::string s;
  for (const auto& d : l.items())
    s += d.code + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " " + d.message +
         "\n";
  return s;
}

}  // namespace

// --- topo -m ------------------------------------------------------------------------

TEST(TopoMatrix, OldDriverDgx1WithDriverNamedNicsAndCpuAffinityOnly) {
  auto r = parse_topo_matrix(sample("topo_dgx1v_old.txt"), "topo.txt");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << dump(r.diagnostics);
  const TopoMatrix& m = r.value;
  ASSERT_EQ(m.devices.size(), 12u);
  EXPECT_EQ(m.gpu_count(), 8u);
  EXPECT_TRUE(m.old_driver);
  EXPECT_TRUE(m.has_cpu_affinity);
  EXPECT_FALSE(m.has_numa_affinity);
  EXPECT_FALSE(m.has_gpu_numa_id);
  EXPECT_EQ(m.devices[8].label, "mlx5_0");
  EXPECT_EQ(m.devices[8].kind, TopoDevice::Kind::Nic);
  EXPECT_EQ(m.devices[8].nic_name, "mlx5_0");
  // The hybrid cube-mesh: GPU0 has NV1 to 1 and 2, NV2 to 3 and 4, SYS to 5..7.
  EXPECT_EQ(m.link(0, 1).kind, LinkKind::NVLink);
  EXPECT_EQ(m.link(0, 1).nvlinks, 1);
  EXPECT_EQ(m.link(0, 3).nvlinks, 2);
  EXPECT_EQ(m.link(0, 4).nvlinks, 2);
  EXPECT_EQ(m.link(0, 5).kind, LinkKind::Sys);
  EXPECT_EQ(m.link(0, 8).kind, LinkKind::PIX);
  EXPECT_EQ(m.link(0, 10).kind, LinkKind::PHB);
  EXPECT_EQ(m.link(3, 3).kind, LinkKind::Self);
  EXPECT_EQ(m.devices[0].cpu_affinity, "0-19,40-59");
  EXPECT_EQ(m.devices[0].cpus.size(), 40u);
  EXPECT_EQ(m.devices[4].cpus.front(), 20);
  EXPECT_EQ(m.devices[4].numa_affinity, -1);
  EXPECT_EQ(m.devices[0].line, 2u);
}

TEST(TopoMatrix, NewDriverWithNicLegendNumaAffinityAndGpuNumaId) {
  auto r = parse_topo_matrix(layout_file("dgx-a100", "topo.txt"), "topo.txt");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << dump(r.diagnostics);
  const TopoMatrix& m = r.value;
  EXPECT_EQ(m.gpu_count(), 8u);
  EXPECT_EQ(m.devices.size(), 18u);
  EXPECT_FALSE(m.old_driver);
  EXPECT_TRUE(m.has_nic_legend);
  EXPECT_TRUE(m.has_numa_affinity);
  EXPECT_TRUE(m.has_gpu_numa_id);
  EXPECT_EQ(m.devices[8].label, "NIC0");
  EXPECT_EQ(m.devices[8].index, 0);
  EXPECT_EQ(m.devices[8].nic_name, "mlx5_0");
  EXPECT_EQ(m.devices[17].nic_name, "mlx5_9");
  EXPECT_EQ(m.link(0, 7).nvlinks, 12);
  EXPECT_EQ(m.link(0, 8).kind, LinkKind::PXB);
  EXPECT_EQ(m.devices[4].cpu_affinity, "112-127,240-255");
  EXPECT_EQ(m.devices[4].numa_affinity, 7);
  EXPECT_EQ(m.devices[0].numa_affinity, 3);
  EXPECT_EQ(m.devices[0].gpu_numa_id, -1);  // N/A
  EXPECT_TRUE(m.devices[8].cpu_affinity.empty());
}

TEST(TopoMatrix, GpuNumaIdWithAValueAndNumaAffinityNotApplicable) {
  // Grace Hopper: the GPU's memory is its own NUMA node (GPU NUMA ID); a NIC row
  // has no affinity values; NUMA Affinity may be N/A or a range.
  const std::string text =
      "        GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      SYS     NODE    SYS     0-71            0               4\n"
      "GPU1    SYS      X      SYS     NODE    72-143          N/A             12\n"
      "NIC0    NODE    SYS      X      SYS\n"
      "NIC1    SYS     NODE    SYS      X\n"
      "\n"
      "Legend:\n"
      "\n"
      "  X    = Self\n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_0\n"
      "  NIC1: mlx5_1\n";
  auto r = parse_topo_matrix(text, "t");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << dump(r.diagnostics);
  const TopoMatrix& m = r.value;
  EXPECT_EQ(m.devices[0].gpu_numa_id, 4);
  EXPECT_EQ(m.devices[1].gpu_numa_id, 12);
  EXPECT_EQ(m.devices[0].numa_affinity, 0);
  EXPECT_EQ(m.devices[1].numa_affinity, -1);
  EXPECT_EQ(m.devices[1].cpus.size(), 72u);
  EXPECT_EQ(m.devices[3].nic_name, "mlx5_1");
  EXPECT_EQ(m.link(0, 2).kind, LinkKind::Node);
}

TEST(TopoMatrix, EveryLinkTypeIncludingSocPsbAndNode) {
  const std::string text =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tCPU Affinity\n"
      "GPU0\t X \tPSB\tPIX\tPXB\tPHB\tSOC\t0-7\n"
      "GPU1\tPSB\t X \tNODE\tPHB\tNV4\tSYS\t0-7\n"
      "GPU2\tPIX\tNODE\t X \tPHB\tPHB\tSOC\t0-7\n"
      "GPU3\tPXB\tPHB\tPHB\t X \tPHB\tSOC\t0-7\n"
      "GPU4\tPHB\tNV4\tPHB\tPHB\t X \tSOC\t0-7\n"
      "GPU5\tSOC\tSYS\tSOC\tSOC\tSOC\t X \t8-15\n"
      "\n"
      "Legend:\n\n  X   = Self\n  SOC  = Connection traversing PCIe as well as the SMP link "
      "between CPU sockets(e.g. QPI)\n";
  auto r = parse_topo_matrix(text, "t");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  const TopoMatrix& m = r.value;
  EXPECT_TRUE(m.old_driver);
  EXPECT_EQ(m.link(0, 1).kind, LinkKind::PSB);
  EXPECT_EQ(m.link(0, 2).kind, LinkKind::PIX);
  EXPECT_EQ(m.link(0, 3).kind, LinkKind::PXB);
  EXPECT_EQ(m.link(0, 4).kind, LinkKind::PHB);
  EXPECT_EQ(m.link(0, 5).kind, LinkKind::Sys);
  EXPECT_EQ(m.link(0, 5).text, "SOC");
  EXPECT_EQ(m.link(1, 2).kind, LinkKind::Node);
  EXPECT_EQ(m.link(1, 4).kind, LinkKind::NVLink);
  EXPECT_EQ(m.link(1, 4).nvlinks, 4);
  EXPECT_LT(link_rank(LinkKind::NVLink), link_rank(LinkKind::PIX));
  EXPECT_EQ(link_rank(LinkKind::PIX), link_rank(LinkKind::PSB));
  EXPECT_LT(link_rank(LinkKind::PXB), link_rank(LinkKind::PHB));
  EXPECT_LT(link_rank(LinkKind::Node), link_rank(LinkKind::Sys));
}

TEST(TopoMatrix, HeaderWithoutLeadingWhitespaceAnsiEscapesAndCrlf) {
  const std::string text =
      "$ nvidia-smi topo -m\r\n"
      "\x1b[4mGPU0\x1b[0m \x1b[4mGPU1\x1b[0m \x1b[4mCPU Affinity\x1b[0m \x1b[4mNUMA "
      "Affinity\x1b[0m\r\n"
      "GPU0 X PHB 0-63 0\r\n"
      "GPU1 PHB X 0-63 0\r\n";
  auto r = parse_topo_matrix(text, "t");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_EQ(r.value.gpu_count(), 2u);
  EXPECT_EQ(r.value.link(0, 1).kind, LinkKind::PHB);
  EXPECT_EQ(r.value.devices[1].numa_affinity, 0);
  EXPECT_EQ(r.value.devices[1].cpus.size(), 64u);
}

TEST(TopoMatrix, UnknownLinkIsReportedWithLineAndColumn) {
  const std::string text =
      "\tGPU0\tGPU1\tCPU Affinity\n"
      "GPU0\t X \tQPI\t0-7\n"
      "GPU1\tPHB\t X \t0-7\n";
  auto r = parse_topo_matrix(text, "hosts/a/topo.txt");
  EXPECT_FALSE(r.ok());
  const auto* d = find_code(r.diagnostics, "T105");
  ASSERT_NE(d, nullptr) << dump(r.diagnostics);
  EXPECT_EQ(d->file, "hosts/a/topo.txt");
  EXPECT_EQ(d->line, 2u);
  EXPECT_EQ(d->column, 10u);  // "GPU0\t X \t" is 9 bytes
  EXPECT_NE(d->message.find("QPI"), std::string::npos);
  EXPECT_NE(d->hint.find("NV<n>"), std::string::npos);
  EXPECT_EQ(r.value.link(0, 1).kind, LinkKind::Unknown);
  EXPECT_EQ(r.value.link(1, 0).kind, LinkKind::PHB);
}

TEST(TopoMatrix, ShortRowMissingRowAsymmetryAndUnknownRow) {
  const std::string text =
      "\tGPU0\tGPU1\tGPU2\tCPU Affinity\n"
      "GPU0\t X \tPIX\tSYS\t0-7\n"
      "GPU1\tPXB\t X \n"
      "GPU9\tSYS\tSYS\t X \t0-7\n";
  auto r = parse_topo_matrix(text, "t");
  EXPECT_FALSE(r.ok());
  const auto* short_row = find_code(r.diagnostics, "T103");
  ASSERT_NE(short_row, nullptr) << dump(r.diagnostics);
  EXPECT_EQ(short_row->line, 3u);
  const auto* unknown = find_code(r.diagnostics, "T104");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->line, 4u);
  EXPECT_EQ(unknown->column, 1u);
  const auto* missing = find_code(r.diagnostics, "T110");
  ASSERT_NE(missing, nullptr);
  EXPECT_NE(missing->message.find("GPU2"), std::string::npos);
  const auto* asym = find_code(r.diagnostics, "T109");
  ASSERT_NE(asym, nullptr);
  EXPECT_EQ(asym->severity, Severity::Warning);
  // GPU2's links come from its column.
  EXPECT_EQ(r.value.link(2, 0).kind, LinkKind::Sys);
}

TEST(TopoMatrix, DriverErrorMessageIsNotAMatrix) {
  auto r = parse_topo_matrix(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
      "that the latest NVIDIA "
      "driver is installed and running.\n",
      "t");
  EXPECT_FALSE(r.ok());
  const auto* d = find_code(r.diagnostics, "T101");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->hint.find("NVIDIA-SMI has failed"), std::string::npos);
  auto empty = parse_topo_matrix("", "t");
  EXPECT_FALSE(empty.ok());
  EXPECT_EQ(empty.value.devices.size(), 0u);
}

TEST(TopoMatrix, BadAffinityIsAWarningAndNicLegendTypos) {
  const std::string text =
      "        GPU0    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      SYS     0-23x           zero            N/A\n"
      "NIC0    SYS      X\n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_0\n"
      "  NIC7: mlx5_7\n";
  auto r = parse_topo_matrix(text, "t");
  EXPECT_TRUE(r.ok()) << dump(r.diagnostics);
  size_t t106 = 0;
  for (const auto& d : r.diagnostics.items()) t106 += d.code == "T106";
  EXPECT_EQ(t106, 2u);
  EXPECT_EQ(r.value.devices[1].nic_name, "mlx5_0");
  ASSERT_NE(find_code(r.diagnostics, "T111"), nullptr);
  EXPECT_EQ(find_code(r.diagnostics, "T111")->line, 8u);
}

TEST(TopoMatrix, NicColumnMissingFromTheLegendIsAWarning) {
  const std::string text =
      "        GPU0    NIC0    NIC1    CPU Affinity\n"
      "GPU0     X      PIX     SYS     0-23\n"
      "NIC0    PIX      X      SYS\n"
      "NIC1    SYS     SYS      X\n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_0\n";
  auto r = parse_topo_matrix(text, "t");
  EXPECT_TRUE(r.ok()) << dump(r.diagnostics);
  const auto* d = find_code(r.diagnostics, "T111");
  ASSERT_NE(d, nullptr) << dump(r.diagnostics);
  EXPECT_EQ(d->severity, Severity::Warning);
  EXPECT_EQ(d->message, "the NIC legend gives no name for NIC1");
  EXPECT_EQ(d->line, 1u);
  EXPECT_EQ(r.value.devices[1].nic_name, "mlx5_0");
  EXPECT_TRUE(r.value.devices[2].nic_name.empty());
}

TEST(TopoMatrix, AHeaderOfThousandsOfDevicesIsRefused) {
  std::string header = "\t";
  for (int i = 0; i < 5000; ++i) header += "GPU" + std::to_string(i) + "\t";
  auto r = parse_topo_matrix(header + "\nGPU0\t X\n", "t");
  EXPECT_FALSE(r.ok());
  const auto* d = find_code(r.diagnostics, "T102");
  ASSERT_NE(d, nullptr) << dump(r.diagnostics);
  EXPECT_EQ(d->message, "the topology matrix has more than 256 devices");
  EXPECT_TRUE(r.value.links.empty());
}

TEST(Excerpt, KeepsValidUtf8AndReplacesTheRest) {
  using pai::facts::detail::excerpt;
  EXPECT_EQ(excerpt("GPU0"), "GPU0");
  EXPECT_EQ(excerpt("a\tb\x7f"), "a?b?");
  EXPECT_EQ(excerpt("\xc3\xa9t\xc3"), "\xc3\xa9t?");  // é kept, a cut sequence replaced
  EXPECT_EQ(excerpt("\xed\xa0\x80"), "???");          // a UTF-16 surrogate is not UTF-8
  EXPECT_EQ(excerpt("\xc0\xaf"), "??");               // overlong
  EXPECT_EQ(excerpt(std::string(39, 'x') + "\xe2\x82\xac"),
            std::string(39, 'x') + "...");  // never half a character
  EXPECT_EQ(excerpt(std::string(50, 'y')), std::string(40, 'y') + "...");
  EXPECT_TRUE(pai::facts::detail::is_binary(std::string("a\0b", 3)));
  EXPECT_FALSE(pai::facts::detail::is_binary("GPU0\tX\n"));
}

TEST(CpuList, RangesAndRejects) {
  std::vector<int> v;
  EXPECT_TRUE(parse_cpu_list("0-3,8,10-11", v));
  EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_FALSE(parse_cpu_list("3-1", v));
  EXPECT_FALSE(parse_cpu_list("0-99999999", v));
  EXPECT_FALSE(parse_cpu_list("a", v));
  EXPECT_FALSE(parse_cpu_list("1,,2", v));
  EXPECT_FALSE(parse_cpu_list("", v));
}

// --- query-gpu ----------------------------------------------------------------------

TEST(GpuQuery, HeaderWithUnits) {
  auto r = parse_gpu_query(sample("gpus_dgx1v.csv"), "gpus.csv");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  ASSERT_EQ(r.value.size(), 8u);
  EXPECT_EQ(r.value[0].name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(r.value[0].memory_mib, 32510);
  EXPECT_EQ(r.value[2].bus_id, "00000000:0A:00.0");
  EXPECT_EQ(r.value[7].uuid, "GPU-a4e6f1b8-3c7d-4b2a-8e9f-5d1a7c4b0e63");
  EXPECT_EQ(r.value[7].line, 9u);
}

TEST(GpuQuery, NoHeaderNoUnitsAndReorderedHeader) {
  auto r = parse_gpu_query(
      "1, Tesla T4, 15360, 00000000:86:00.0, GPU-b\n0, Tesla T4, 15360, 00000000:3B:00.0, GPU-a\n");
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  ASSERT_EQ(r.value.size(), 2u);
  EXPECT_EQ(r.value[0].index, 0);  // sorted by index
  EXPECT_EQ(r.value[0].memory_mib, 15360);
  auto h = parse_gpu_query(
      "name, index, uuid, memory.total [MiB], driver_version\nNVIDIA A100-SXM4-80GB, 3, GPU-x, "
      "81920 MiB, 535.104.05\n");
  ASSERT_TRUE(h.ok()) << dump(h.diagnostics);
  ASSERT_EQ(h.value.size(), 1u);
  EXPECT_EQ(h.value[0].index, 3);
  EXPECT_EQ(h.value[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(h.value[0].memory_mib, 81920);
  EXPECT_TRUE(h.value[0].bus_id.empty());
}

TEST(GpuQuery, MalformedLinesAreReportedAndSkipped) {
  const std::string text =
      "index, name, memory.total [MiB], pci.bus_id, uuid\n"
      "0, Tesla T4, 15360 MiB, 00000000:3B:00.0, GPU-a\n"
      "one, Tesla T4, 15360 MiB, 00000000:5E:00.0, GPU-b\n"
      "2, Tesla T4, lots, 00000000:86:00.0, GPU-c\n"
      "3, Tesla T4, 15360 MiB\n"
      "0, Tesla T4, 15360 MiB, 00000000:AF:00.0, GPU-d\n"
      "4, Tesla T4, [N/A], bus, uuid\n";
  auto r = parse_gpu_query(text, "gpus.csv");
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.value.size(), 2u);
  EXPECT_EQ(r.value[1].index, 4);
  EXPECT_EQ(r.value[1].memory_mib, 0);
  const auto* idx = find_code(r.diagnostics, "T124");
  ASSERT_NE(idx, nullptr);
  EXPECT_EQ(idx->line, 3u);
  EXPECT_EQ(idx->column, 1u);
  const auto* mem = find_code(r.diagnostics, "T125");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->line, 4u);
  EXPECT_EQ(mem->column, 14u);
  ASSERT_NE(find_code(r.diagnostics, "T123"), nullptr);
  ASSERT_NE(find_code(r.diagnostics, "T127"), nullptr);
  ASSERT_NE(find_code(r.diagnostics, "T126"), nullptr);
}

TEST(GpuQuery, NoDevicesAndGarbage) {
  auto none = parse_gpu_query("No devices were found\n");
  EXPECT_TRUE(none.ok());
  EXPECT_TRUE(none.value.empty());
  auto junk = parse_gpu_query("hello world\n");
  EXPECT_FALSE(junk.ok());
  EXPECT_NE(find_code(junk.diagnostics, "T121"), nullptr);
  EXPECT_FALSE(parse_gpu_query("").ok());
}

// --- lscpu --------------------------------------------------------------------------

TEST(Lscpu, FlatLayout) {
  auto r = parse_lscpu(sample("lscpu_dgx1v.txt"));
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  const CpuInfo& c = r.value;
  EXPECT_EQ(c.logical, 80);
  EXPECT_EQ(c.sockets, 2);
  EXPECT_EQ(c.cores_per_socket, 20);
  EXPECT_EQ(c.threads_per_core, 2);
  EXPECT_EQ(c.numa_nodes, 2);
  EXPECT_EQ(c.model_name, "Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz");
  ASSERT_EQ(c.numa_cpus.size(), 2u);
  EXPECT_EQ(c.numa_of_cpu(45), 0);
  EXPECT_EQ(c.numa_of_cpu(60), 1);
  EXPECT_EQ(c.numa_of_cpu(200), -1);
}

TEST(Lscpu, IndentedLayoutOfNewUtilLinux) {
  const std::string text =
      "Architecture:            x86_64\n"
      "  CPU op-mode(s):        32-bit, 64-bit\n"
      "  Address sizes:         46 bits physical, 57 bits virtual\n"
      "CPU(s):                  224\n"
      "  On-line CPU(s) list:   0-223\n"
      "Vendor ID:               GenuineIntel\n"
      "  Model name:            Intel(R) Xeon(R) Platinum 8480CL\n"
      "    CPU family:          6\n"
      "    Thread(s) per core:  2\n"
      "    Core(s) per socket:  56\n"
      "    Socket(s):           2\n"
      "NUMA:\n"
      "  NUMA node(s):          2\n"
      "  NUMA node0 CPU(s):     0-55,112-167\n"
      "  NUMA node1 CPU(s):     56-111,168-223\n"
      "Vulnerabilities:\n"
      "  Spectre v2:            Mitigation; Enhanced IBRS, IBPB conditional, RSB filling\n";
  auto r = parse_lscpu(text);
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_EQ(r.value.logical, 224);
  EXPECT_EQ(r.value.sockets, 2);
  EXPECT_EQ(r.value.model_name, "Intel(R) Xeon(R) Platinum 8480CL");
  EXPECT_EQ(r.value.numa_of_cpu(170), 1);
  EXPECT_EQ(r.value.online, "0-223");
}

TEST(Lscpu, JsonOutput) {
  const std::string text = R"({
   "lscpu": [
      {"field": "Architecture:", "data": "aarch64",
       "children": [{"field": "CPU op-mode(s):", "data": "64-bit"}]},
      {"field": "CPU(s):", "data": "72"},
      {"field": "Vendor ID:", "data": "ARM",
       "children": [{"field": "Model name:", "data": "Neoverse-V2",
          "children": [{"field": "Socket(s):", "data": "1"}, {"field": "Core(s) per socket:", "data": "72"}]}]},
      {"field": "NUMA node(s):", "data": "1"},
      {"field": "NUMA node0 CPU(s):", "data": "0-71"}
   ]
})";
  auto r = parse_lscpu(text);
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_EQ(r.value.architecture, "aarch64");
  EXPECT_EQ(r.value.logical, 72);
  EXPECT_EQ(r.value.sockets, 1);
  EXPECT_EQ(r.value.model_name, "Neoverse-V2");
  EXPECT_EQ(r.value.numa_of_cpu(71), 0);
}

TEST(Lscpu, BadValuesAndBadJson) {
  auto r = parse_lscpu("Architecture: x86_64\nCPU(s):   lots\nSocket(s): -\nnot a key value line\n",
                       "lscpu.txt");
  EXPECT_FALSE(r.ok());
  const auto* bad = find_code(r.diagnostics, "T133");
  ASSERT_NE(bad, nullptr) << dump(r.diagnostics);
  EXPECT_EQ(bad->line, 2u);
  EXPECT_EQ(bad->column, 11u);
  EXPECT_NE(find_code(r.diagnostics, "T132"), nullptr);  // no usable CPU(s)
  EXPECT_NE(find_code(r.diagnostics, "T131"), nullptr);
  EXPECT_EQ(r.value.sockets, 0);  // "-" means unknown, not an error
  auto j = parse_lscpu("{\n  \"lscpu\": [\n    {\"field\": \"CPU(s):\", \"data\": 12\n  ]\n}\n");
  EXPECT_FALSE(j.ok());
  const auto* jd = find_code(j.diagnostics, "T131");
  ASSERT_NE(jd, nullptr);
  EXPECT_EQ(jd->line, 4u);
  EXPECT_FALSE(parse_lscpu("{\"x\": 1}").ok());
}

// --- meminfo --------------------------------------------------------------------------

TEST(Meminfo, RealFile) {
  auto r = parse_meminfo(sample("meminfo_dgx1v"));
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_EQ(r.value.total_bytes, 528226736LL * 1024);
  EXPECT_EQ(r.value.available_bytes, 521355012LL * 1024);
  EXPECT_FALSE(r.value.available_estimated);
  EXPECT_EQ(r.value.hugepage_size_bytes, 2048 * 1024);
  EXPECT_EQ(r.value.hugepages_total, 0);
}

TEST(Meminfo, OldKernelWithoutMemAvailable) {
  auto r = parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value.available_estimated);
  EXPECT_EQ(r.value.available_bytes, 310 * 1024);
  EXPECT_NE(find_code(r.diagnostics, "T144"), nullptr);
}

TEST(Meminfo, Malformed) {
  auto r = parse_meminfo("MemTotal 1000 kB\nMemFree: x kB\nCached: 5 MB\n", "meminfo");
  EXPECT_FALSE(r.ok());
  const auto* key = find_code(r.diagnostics, "T141");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->line, 1u);
  const auto* val = find_code(r.diagnostics, "T142");
  ASSERT_NE(val, nullptr);
  EXPECT_EQ(val->line, 2u);
  EXPECT_EQ(val->column, 10u);
  EXPECT_NE(find_code(r.diagnostics, "T143"), nullptr);  // no MemTotal at all
  EXPECT_FALSE(parse_meminfo("").ok());
  EXPECT_FALSE(parse_meminfo("MemTotal: 99999999999999999999 kB\n").ok());
}

// A MemTotal that is there but no number is one finding at its line, not a
// second one saying that there is no MemTotal line.
TEST(Meminfo, BadMemTotalIsReportedOnce) {
  auto r = parse_meminfo("MemTotal: 1e400 kB\nMemFree: 100 kB\n", "meminfo");
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const auto& d = r.diagnostics.items()[0];
  EXPECT_EQ(d.code, "T142");
  EXPECT_EQ(d.line, 1u);
  EXPECT_NE(d.message.find("MemTotal"), std::string::npos) << d.message;
}

TEST(Lscpu, JsonWithAHugeNumberIsAnErrorAtTheNumber) {
  Parsed<CpuInfo> r;
  EXPECT_NO_THROW(r = parse_lscpu("{\"lscpu\": [\n  {\"field\": \"CPU(s):\", \"data\": 1e400}\n]}",
                                  "lscpu.txt"));
  const auto* d = find_code(r.diagnostics, "T131");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 2u);
  EXPECT_EQ(d->column, 32u);
  EXPECT_FALSE(r.ok());
}
