// nvidia-smi -q -d ECC,PAGE_RETIREMENT of three GPU generations (Volta's
// Single/Double Bit counters with retired pages, Ampere's SRAM/DRAM counters
// with remapped rows, Hopper's SRAM Parity/SEC-DED split, a card without ECC),
// the kernel log's XID lines (dmesg, journalctl -k), and what they make of a
// host's GPU health (facts/gpu_findings.h).

#include <gtest/gtest.h>

#include "facts/gpu_findings.h"
#include "facts/host_facts.h"
#include "facts/parsers.h"
#include "test_files.h"

using namespace pai::facts;

namespace {

std::string gpu_health_sample(const std::string& name) {
  return pai::test::slurp(std::string(PAI_SOURCE_DIR) + "/tests/unit/facts/samples/" + name);
}

TEST(GpuHealth, VoltaCountersAndRetiredPages) {
  auto r = parse_gpu_health(gpu_health_sample("smi_q_ecc_v100.txt"), "v100");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value.driver_version, "470.223.02");
  ASSERT_EQ(r.value.gpus.size(), 3u);
  const auto& a = r.value.gpus[0];
  EXPECT_EQ(a.bus_id, "00000000:06:00.0");
  EXPECT_EQ(a.ecc_mode, "Enabled");
  EXPECT_EQ(a.volatile_uncorrectable, 0);
  EXPECT_EQ(a.volatile_correctable, 3);  // Single Bit Total only, not its parts
  EXPECT_EQ(a.retired_single_bit, 2);
  EXPECT_FALSE(a.retirement_pending);
  const auto& b = r.value.gpus[1];
  EXPECT_EQ(b.volatile_uncorrectable, 2);
  EXPECT_EQ(b.aggregate_uncorrectable, 5);
  EXPECT_EQ(b.retired_pages(), 15);
  EXPECT_TRUE(b.retirement_pending);
  EXPECT_EQ(b.remapped_uncorrectable, -1);  // not reported before Ampere
  EXPECT_EQ(r.value.gpus[2].retired_pages(), 61);
}

TEST(GpuHealth, AmpereSramDramAndRemappedRows) {
  auto r = parse_gpu_health(gpu_health_sample("smi_q_ecc_a100.txt"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value.gpus.size(), 2u);
  const auto& a = r.value.gpus[0];
  EXPECT_EQ(a.bus_id, "00000000:10:1C.0");
  EXPECT_EQ(a.volatile_uncorrectable, 0);
  EXPECT_EQ(a.volatile_correctable, 177);
  EXPECT_EQ(a.retired_single_bit, -1);  // N/A
  EXPECT_EQ(a.retired_pages(), 0);
  EXPECT_TRUE(a.remap_pending);
  EXPECT_FALSE(a.remap_failed);
  const auto& b = r.value.gpus[1];
  EXPECT_EQ(b.volatile_uncorrectable, 1);
  EXPECT_EQ(b.remapped_uncorrectable, 1);
  EXPECT_TRUE(b.remap_failed);
}

TEST(GpuHealth, HopperParityAndSecDedAreSummed) {
  auto r = parse_gpu_health(gpu_health_sample("smi_q_ecc_h100.txt"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value.gpus.size(), 1u);
  // SRAM Uncorrectable Parity 1 + SEC-DED 0 + DRAM 0; the SRAM sources are not counted again.
  EXPECT_EQ(r.value.gpus[0].volatile_uncorrectable, 1);
  EXPECT_EQ(r.value.gpus[0].aggregate_uncorrectable, 1);
  EXPECT_EQ(r.value.driver_version, "550.90.07");
}

TEST(GpuHealth, NoEccIsUnknownNotZero) {
  auto r = parse_gpu_health(gpu_health_sample("smi_q_ecc_geforce.txt"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value.gpus.size(), 1u);
  const auto& g = r.value.gpus[0];
  EXPECT_EQ(g.ecc_mode, "");
  EXPECT_EQ(g.volatile_uncorrectable, -1);
  EXPECT_EQ(g.remapped_uncorrectable, -1);
  EXPECT_FALSE(g.remap_pending);
}

TEST(GpuHealth, MalformedLinesAreReportedWithTheirPlace) {
  std::string text =
      "GPU 00000000:06:00.0\n"
      "    ECC Errors\n"
      "        Volatile\n"
      "            Double Bit\n"
      "                Total                 : lots\n"
      "GPU nowhere\n";
  auto r = parse_gpu_health(text, "q.txt");
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.items().size(), 2u);
  const auto& d = r.diagnostics.items()[0];
  EXPECT_EQ(d.code, "T151");
  EXPECT_EQ(d.file, "q.txt");
  EXPECT_EQ(d.line, 5u);
  EXPECT_NE(d.message.find("\"lots\""), std::string::npos) << d.message;
  EXPECT_EQ(r.diagnostics.items()[1].line, 6u);
  ASSERT_EQ(r.value.gpus.size(), 2u);
  EXPECT_EQ(r.value.gpus[0].volatile_uncorrectable, -1);
  // Not nvidia-smi at all: nothing, no throw.
  EXPECT_TRUE(parse_gpu_health("\x01\x02 : \n : : :\n").value.gpus.empty());
}

TEST(Xid, DmesgLines) {
  auto x = parse_xid_events(gpu_health_sample("dmesg_xid.txt"));
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(x[0].code, 13);
  EXPECT_EQ(x[0].bus_id, "0000:07:00");
  EXPECT_EQ(x[0].when, "[ 5120.331902]");
  EXPECT_EQ(x[1].code, 48);
  EXPECT_EQ(x[2].code, 79);
  EXPECT_EQ(x[2].bus_id, "0000:0a:00");
  EXPECT_EQ(x[2].text, "pid=0, GPU has fallen off the bus.");
  EXPECT_EQ(x[2].line, 4u);
  EXPECT_FALSE(xid_is_hardware(13));
  EXPECT_TRUE(xid_is_hardware(48));
  EXPECT_TRUE(xid_is_hardware(79));
}

TEST(Xid, JournalLinesAndOnesWithoutACode) {
  auto x = parse_xid_events(gpu_health_sample("journal_xid.txt"));
  ASSERT_EQ(x.size(), 2u);  // the third line has no code
  EXPECT_EQ(x[0].code, 63);
  EXPECT_EQ(x[0].when, "Jun 07 19:32:16");
  EXPECT_EQ(x[1].code, 94);
  EXPECT_EQ(x[1].bus_id, "0000:10:1d");
}

HostFacts gpu_health_host(int gpus) {
  HostFacts f;
  f.name = "w1";
  f.nvidia.smi_present = true;
  f.nvidia.smi_exit = 0;
  f.nvidia.driver_version = "535.104.05";
  const char* bus[] = {"00000000:06:00.0", "00000000:07:00.0", "00000000:0A:00.0",
                       "00000000:10:1C.0"};
  for (int i = 0; i < gpus; ++i)
    f.gpus.push_back({i, "Tesla V100-SXM2-16GB", 16160, bus[i % 4], ""});
  return f;
}

TEST(GpuFindings, FromTheSamples) {
  HostFacts f = gpu_health_host(3);
  f.nvidia.health = parse_gpu_health(gpu_health_sample("smi_q_ecc_v100.txt")).value.gpus;
  f.nvidia.kernel_log = "dmesg";
  f.nvidia.xids = parse_xid_events(gpu_health_sample("dmesg_xid.txt"));
  auto v = gpu_health_findings(f);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].code, "N011");
  EXPECT_EQ(v[0].kind, "eccUncorrectable");
  EXPECT_NE(v[0].message.find("GPU1 (00000000:07:00.0): 2 uncorrectable"), std::string::npos)
      << v[0].message;
  EXPECT_EQ(v[1].code, "N012");
  // GPU1's retirement is pending; GPU2 has 61 retired pages (more than 60); GPU0's 2 are fine.
  EXPECT_NE(v[1].message.find("GPU1 (00000000:07:00.0): a page retirement pending"),
            std::string::npos)
      << v[1].message;
  EXPECT_NE(v[1].message.find("GPU2 (00000000:0A:00.0): 61 retired pages"), std::string::npos);
  EXPECT_EQ(v[1].message.find("GPU0"), std::string::npos);
  EXPECT_EQ(v[2].code, "N013");
  // 13 is a program's fault: left out; 79 twice on one GPU: named once.
  EXPECT_EQ(v[2].message,
            "hardware XID errors in the kernel log (dmesg): Xid 48 on GPU1 (00000000:07:00.0) (An "
            "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
            "partition 3, subpartition 1.), Xid 79 on GPU2 (00000000:0A:00.0) (GPU has fallen off "
            "the bus.)");
  // A healthy host: nothing.
  EXPECT_TRUE(gpu_health_findings(gpu_health_host(3)).empty());
}

TEST(GpuFindings, CountAndDriver) {
  HostFacts f = gpu_health_host(7);
  auto c = gpu_count_findings(f, 8);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].code, "N010");
  EXPECT_EQ(c[0].message, "nvidia-smi lists 7 of the SKU's 8 GPUs");
  EXPECT_TRUE(gpu_count_findings(f, 7).empty());
  f.nvidia.smi_exit = 9;
  f.nvidia.smi_error = "NVIDIA-SMI has failed";
  EXPECT_EQ(gpu_count_findings(f, 8).at(0).message,
            "nvidia-smi failed (NVIDIA-SMI has failed): 0 of 8 GPUs usable");
  EXPECT_TRUE(gpu_driver_findings(f, "535").empty());
  EXPECT_TRUE(gpu_driver_findings(f, "535.104.05").empty());
  EXPECT_TRUE(gpu_driver_findings(f, "").empty());
  auto d = gpu_driver_findings(f, "550.127.05");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "N014");
  EXPECT_EQ(d[0].message, "driver 535.104.05, the SKU's hosts run 550.127.05");
}

TEST(GpuFindings, TheFactsDocumentKeepsThem) {
  HostFacts f = gpu_health_host(2);
  f.hostname = "w1";
  f.nvidia.health_read = true;
  f.nvidia.health = parse_gpu_health(gpu_health_sample("smi_q_ecc_a100.txt")).value.gpus;
  f.nvidia.kernel_log = "journalctl";
  f.nvidia.xids = parse_xid_events(gpu_health_sample("journal_xid.txt"));
  auto back = from_json(to_json(f));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->nvidia.health.size(), 2u);
  EXPECT_TRUE(back->nvidia.health_read);
  EXPECT_TRUE(back->nvidia.health[0].remap_pending);
  EXPECT_EQ(back->nvidia.health[1].volatile_uncorrectable, 1);
  EXPECT_TRUE(back->nvidia.health[1].remap_failed);
  EXPECT_EQ(back->nvidia.health[0].retired_single_bit, -1);
  EXPECT_EQ(back->nvidia.kernel_log, "journalctl");
  ASSERT_EQ(back->nvidia.xids.size(), 2u);
  EXPECT_EQ(back->nvidia.xids[1].code, 94);
  EXPECT_EQ(gpu_health_findings(*back).size(), gpu_health_findings(f).size());
}

}  // namespace
