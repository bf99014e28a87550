// hwfp's collectors against fake /etc, /proc and /sys trees built by the test.
#include <gtest/gtest.h>

#include "licensing/fingerprint_match.hpp"
#include "licensing/host_probe.hpp"
#include "licensing/record.hpp"
#include "test_support.hpp"

using namespace licensing;
using testing_support::TempDir;
using testing_support::write;
namespace fs = std::filesystem;

namespace {

// A server: two physical NICs (one bonded), lo and a bridge, an NVMe root
// partition, two GPUs in the driver's procfs.
void build_server(const fs::path& r) {
  write(r / "etc/machine-id", "4C4C4544004A3510804BB4C04F4E3332\n");
  write(r / "sys/class/dmi/id/product_uuid", "6c1f0e2a-9b8d-4c3e-a1f2-5d6e7f8091a2\n");
  write(r / "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t\t: sse4_2 avx2 aes\n\n"
        "processor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t\t: sse4_2 avx2 aes\n");
  auto nic = [&](const std::string& name, const std::string& mac, bool physical, const std::string& type = "0") {
    const fs::path dev = r / "sys/devices/pci0000:00" / name;
    write(dev / "address", mac + "\n");
    write(dev / "addr_assign_type", type + "\n");
    if (physical) fs::create_directories(dev / "device");
    fs::create_directories(r / "sys/class/net");
    fs::create_directory_symlink("../../devices/pci0000:00/" + name, r / "sys/class/net" / name);
  };
  nic("eno1", "0C:42:A1:5E:10:00", true);
  nic("eno2", "02:00:00:00:00:99", true);  // enslaved to a bond: `address` is the bond's
  write(r / "sys/devices/pci0000:00/eno2/bonding_slave/perm_hwaddr", "0c:42:a1:5e:10:01\n");
  nic("lo", "00:00:00:00:00:00", false);
  nic("br0", "0c:42:a1:5e:10:00", false);
  nic("wlan0", "6a:11:22:33:44:55", true, "1");  // randomised MAC: not an identity
  write(r / "proc/self/mountinfo", "22 1 259:2 / / rw - ext4 /dev/nvme0n1p2 rw\n");
  const fs::path disk = r / "sys/devices/nvme0/nvme0n1";
  write(disk / "nvme0n1p2/partition", "2\n");
  write(disk / "device/serial", "  S6CKNE0R912345  \n");
  fs::create_directories(r / "sys/dev/block");
  fs::create_directory_symlink("../../devices/nvme0/nvme0n1/nvme0n1p2", r / "sys/dev/block/259:2");
  write(r / "proc/driver/nvidia/gpus/0000:41:00.0/information", "Model: \t H100\nGPU UUID: \t GPU-aaaa\n");
  write(r / "proc/driver/nvidia/gpus/0000:c1:00.0/information", "Model: \t H100\nGPU UUID: \t GPU-bbbb\n");
}

const Reading& find(const std::vector<Reading>& rs, const std::string& kind) {
  for (const auto& r : rs) {
    if (r.kind == kind) return r;
  }
  throw std::runtime_error("no reading " + kind);
}

TEST(HostProbe, ReadsEveryComponentOfAFakeServer) {
  TempDir dir;
  build_server(dir.path());
  const auto rs = probe_host({dir.path(), {}});
  EXPECT_EQ(find(rs, "machine_id").raw, std::vector<std::string>{"4c4c4544004a3510804bb4c04f4e3332"});
  EXPECT_EQ(find(rs, "dmi_uuid").raw, std::vector<std::string>{"6c1f0e2a-9b8d-4c3e-a1f2-5d6e7f8091a2"});
  EXPECT_EQ(find(rs, "cpu_model").raw, std::vector<std::string>{"AMD EPYC 9654 96-Core Processor"});
  EXPECT_EQ(find(rs, "cpu_flags").raw, std::vector<std::string>{"aes avx2 sse4_2"});
  // Physical, permanent MACs only; the bonded NIC reports its burned-in address.
  EXPECT_EQ(find(rs, "nic_mac").raw, (std::vector<std::string>{"0c:42:a1:5e:10:00", "0c:42:a1:5e:10:01"}));
  EXPECT_EQ(find(rs, "root_disk").raw, std::vector<std::string>{"S6CKNE0R912345"});
  EXPECT_EQ(find(rs, "root_disk").source, "/sys/block/nvme0n1/device/serial");
  EXPECT_EQ(find(rs, "gpu_uuid").raw, (std::vector<std::string>{"gpu-aaaa", "gpu-bbbb"}));
  EXPECT_EQ(fingerprint_of("gpulab-serve", rs).components.size(), 9u);
}

TEST(HostProbe, ContainerAndVmGapsAreReportedNotFatal) {
  TempDir dir;
  write(dir / "etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n");
  write(dir / "proc/self/mountinfo", "500 400 0:52 / / rw - overlay overlay rw\n");
  const auto rs = probe_host({dir.path(), {}});
  EXPECT_TRUE(find(rs, "machine_id").ok());
  EXPECT_NE(find(rs, "dmi_uuid").note.find("no DMI table"), std::string::npos);
  EXPECT_NE(find(rs, "root_disk").note.find("overlay, not on a block device"), std::string::npos);
  EXPECT_FALSE(find(rs, "cpu_model").ok());
  EXPECT_FALSE(find(rs, "nic_mac").ok());
  EXPECT_NE(find(rs, "gpu_uuid").note.find("no NVIDIA driver"), std::string::npos);
  EXPECT_EQ(fingerprint_of("gpulab-serve", rs).components.size(), 1u);
}

TEST(HostProbe, FirmwarePlaceholderUuidIsIgnored) {
  TempDir dir;
  write(dir / "sys/class/dmi/id/product_uuid", "03000200-0400-0500-0006-000700080009\n");
  EXPECT_FALSE(find(probe_host({dir.path(), {}}), "dmi_uuid").ok());
}

TEST(HostProbe, GpuProbeIsInjectable) {
  TempDir dir;
  ProbeOptions o{dir.path(), [] { return GpuProbe{{"GPU-1234"}, "NVML", ""}; }};
  EXPECT_EQ(find(probe_host(o), "gpu_uuid").raw, std::vector<std::string>{"gpu-1234"});
}

TEST(HostProbe, NvmlAbsenceIsAReasonNotACrash) {
  const GpuProbe g = probe_gpus_nvml();
  if (!g.uuids.empty()) GTEST_SKIP() << "this machine has NVIDIA GPUs";
  EXPECT_FALSE(g.note.empty());
}

TEST(Fingerprint, HashesAreSaltedPerProductAndHideRawValues) {
  const std::string a = component_hash("gpulab-serve", "machine_id", "abc");
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, component_hash("other-product", "machine_id", "abc"));
  EXPECT_NE(a, component_hash("gpulab-serve", "dmi_uuid", "abc"));
  TempDir dir;
  build_server(dir.path());
  const std::string file = format_fingerprint(fingerprint_of("gpulab-serve", probe_host({dir.path(), {}})));
  EXPECT_EQ(file.find("0c:42:a1"), std::string::npos);
  EXPECT_EQ(file.find("S6CKNE0R"), std::string::npos);
  EXPECT_EQ(format_fingerprint(parse_fingerprint(file)), file);
}

TEST(Fingerprint, FileParserRejectsDamage) {
  const Fingerprint fp{"gpulab-serve", testing_support::machine("a")};
  const std::string text = format_fingerprint(fp);
  EXPECT_THROW(parse_fingerprint(text.substr(0, text.size() - 10)), FormatError);
  EXPECT_THROW(parse_fingerprint("gpulab-fingerprint: 1\nproduct: gpulab-serve\n"), FormatError);
  std::string upper = text;
  upper[upper.size() - 2] = 'F';
  EXPECT_THROW(parse_fingerprint(upper), FormatError);
}

TEST(FuzzyMatch, NicSwapKeepsAServerLicensedAMoveDoesNot) {
  TempDir dir;
  build_server(dir.path());
  const auto before = fingerprint_of("gpulab-serve", probe_host({dir.path(), {}}));
  write(dir / "sys/devices/pci0000:00/eno1/address", "b8:ce:f6:77:20:4a\n");  // NIC replaced
  const auto after = fingerprint_of("gpulab-serve", probe_host({dir.path(), {}}));
  const MatchResult m = match_fingerprint(before.components, after.components, 2);
  EXPECT_TRUE(m.ok());
  EXPECT_EQ(m.changed(), 1u);
  EXPECT_EQ(m.explain(), "1 of 9 components changed (nic_mac); the licence allows 2");
  const MatchResult strict = match_fingerprint(before.components, after.components, 0);
  EXPECT_FALSE(strict.ok());
}

TEST(FuzzyMatch, MoreThanHalfMustAlwaysMatch) {
  EXPECT_EQ(check_tolerance(7, 3), "");
  EXPECT_NE(check_tolerance(7, 4), "");
  EXPECT_NE(check_tolerance(2, 1), "");
  EXPECT_EQ(check_tolerance(1, 0), "");
  EXPECT_NE(check_tolerance(0, 0), "");
}

}  // namespace
