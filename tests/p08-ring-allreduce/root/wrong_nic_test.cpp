// The wrong-NIC drill for real (docs/runbooks/collective-wrong-nic.md): four
// ranks, each a "host" in a network namespace with a management NIC (eno1,
// shaped to 40 Mbit/s by tbf) listed before its fabric NIC (ens2), built by
// labs/p08-ring-allreduce/drills/wrong-nic-hosts.sh. With NCCL's default rule
// the ring runs over eno1; with NCCL_SOCKET_IFNAME=ens2 over the fabric. The
// test reads which veth carried the bytes from each namespace's
// /sys/class/net/*/statistics, not from the program's word for it, and then
// proves with promtool that the SLO pack's alerts fire on the wrong run's
// metrics and not on the right one's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gpulab/json.hpp"
#include "gpulab_test/exposition.hpp"
#include "gpulab_test/netns_hosts.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::Json;

constexpr int kWorld = 4;
constexpr double kMgmtBytesPerSecond = 40e6 / 8;  // the tbf rate, 40mbit
const std::array<std::string, 2> kNics{"eno1", "ens2"};

struct Counters {
  std::map<std::string, unsigned long long> tx;  // "r<rank>/<nic>" -> tx_bytes
};

struct DrillRun {
  gpulab_test::ProgramRun run;
  Json doc;
  std::map<int, std::pair<std::string, double>> busbw;  // rank -> (iface label, bytes/s)
  std::map<std::string, long long> sent;                // "r<rank>/<nic>" -> tx bytes during the run
};

class WrongNicDrill : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpulab_test::ip_installed()) GTEST_SKIP() << "ip not installed (Debian: iproute2)";
    if (gpulab_test::shell("command -v tc").exit_code != 0) GTEST_SKIP() << "tc not installed (Debian: iproute2)";
    gpulab_test::remove_stale_netns();  // the gl-<pid>-* sets of runs that crashed
    prefix_ = "gl-" + std::to_string(::getpid());
    script_ = std::string(GPULAB_LAB_DIR) + "/drills/wrong-nic-hosts.sh";
    gpulab_test::shell_or_throw(script_ + " up " + prefix_ + " " + std::to_string(kWorld) + " 40mbit");
    char tmpl[] = "/tmp/gpulab-wrong-nic-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!prefix_.empty()) gpulab_test::shell(script_ + " down " + prefix_);
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string netns_list() const {
    std::string list;
    for (int r = 0; r < kWorld; ++r) list += (r ? "," : "") + prefix_ + "-r" + std::to_string(r);
    return list;
  }

  Counters counters() const {
    Counters c;
    for (int r = 0; r < kWorld; ++r)
      for (const auto& nic : kNics)
        c.tx["r" + std::to_string(r) + "/" + nic] = std::stoull(gpulab_test::shell_or_throw(
            "ip netns exec " + prefix_ + "-r" + std::to_string(r) + " cat /sys/class/net/" + nic +
            "/statistics/tx_bytes"));
    return c;
  }

  // One drill run: `env` sets or clears NCCL_SOCKET_IFNAME.
  DrillRun drill(const std::string& name, const std::string& env, bool json) {
    DrillRun d;
    const fs::path prom = dir_ / (name + ".prom");
    const Counters before = counters();
    d.run = gpulab_test::run_program(
        "ring-allreduce",
        "--world " + std::to_string(kWorld) + " --rank-netns " + netns_list() + " --metrics-out " + prom.string() +
            (json ? " --json" : ""),
        gpulab_test::Stderr::kSeparate, env);
    const Counters after = counters();
    for (const auto& [key, v] : after.tx) d.sent[key] = static_cast<long long>(v - before.tx.at(key));
    if (json && d.run.exit_code == 0) d.doc = Json::parse(d.run.out);
    if (d.run.exit_code == 0) {
      const auto e = gpulab_test::read_exposition(prom);
      if (const auto* f = e.find("allreduce_bus_bandwidth_bytes_per_second"))
        for (const auto& [labels, series] : f->series()) {
          std::string rank, iface;
          for (const auto& [k, v] : labels) {
            if (k == "rank") rank = v;
            if (k == "iface") iface = v;
          }
          d.busbw[std::stoi(rank)] = {iface, series.value};
        }
    }
    return d;
  }

  // Every rank's bytes went out of `used` (at least the payload it wrote) and
  // next to nothing (neighbour discovery, no payload) out of the other NIC.
  static void expect_carried_by(const DrillRun& d, const std::string& used, unsigned long long payload) {
    const std::string idle = used == "eno1" ? "ens2" : "eno1";
    for (int r = 0; r < kWorld; ++r) {
      const std::string k = "r" + std::to_string(r) + "/";
      EXPECT_GE(d.sent.at(k + used), static_cast<long long>(payload)) << "rank " << r << " on " << used;
      EXPECT_LT(d.sent.at(k + idle), static_cast<long long>(payload / 100)) << "rank " << r << " on " << idle;
    }
  }

  fs::path dir_;
  std::string prefix_;
  std::string script_;
};

// Payload per rank of the headline: the ring (2(N-1)/N x V) and the naive all-gather ((N-1) x V),
// V = 80,000 doubles.
constexpr unsigned long long kPayloadPerRank = 960'000 + 1'920'000;

TEST_F(WrongNicDrill, TheDefaultRuleTakesTheManagementNicAndTheVariableMovesTheRingToTheFabric) {
  const DrillRun wrong = drill("wrong", "env -u NCCL_SOCKET_IFNAME", false);
  ASSERT_EQ(wrong.run.exit_code, 0) << wrong.run.out << wrong.run.err;
  EXPECT_NE(wrong.run.out.find("interface chosen by default (no ib*: the first up interface that is not lo or docker*)"),
            std::string::npos)
      << wrong.run.out;
  for (int r = 0; r < kWorld; ++r)
    EXPECT_NE(wrong.run.out.find("rank " + std::to_string(r) + ": eno1 10.231.1." + std::to_string(r + 1)),
              std::string::npos)
        << wrong.run.out;
  expect_carried_by(wrong, "eno1", kPayloadPerRank);

  const DrillRun right = drill("right", "env NCCL_SOCKET_IFNAME=ens2", true);
  ASSERT_EQ(right.run.exit_code, 0) << right.run.out << right.run.err;
  const auto& nics = right.doc.at("headline").at("interfaces");
  ASSERT_EQ(nics.size(), static_cast<std::size_t>(kWorld));
  for (const auto& n : nics) {
    EXPECT_EQ(n.at("iface"), "ens2");
    EXPECT_EQ(n.at("rule"), "NCCL_SOCKET_IFNAME=ens2");
  }
  expect_carried_by(right, "ens2", kPayloadPerRank);

  // The metric: each rank's bus bandwidth and the interface. Over eno1 no rank can
  // beat the shaper (its ring bytes all leave through the 40 Mbit/s bucket, plus a
  // 32 KiB burst); over the fabric every rank does.
  ASSERT_EQ(wrong.busbw.size(), static_cast<std::size_t>(kWorld));
  ASSERT_EQ(right.busbw.size(), static_cast<std::size_t>(kWorld));
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_EQ(wrong.busbw.at(r).first, "eno1");
    EXPECT_EQ(right.busbw.at(r).first, "ens2");
    EXPECT_LT(wrong.busbw.at(r).second, kMgmtBytesPerSecond * 1.05) << "rank " << r;
    EXPECT_GT(right.busbw.at(r).second, kMgmtBytesPerSecond) << "rank " << r;
  }

  // The alerts, on these measured values (promtool as in the SLO drills).
  if (gpulab_test::shell("command -v promtool").exit_code != 0) {
    GTEST_SKIP() << "promtool not found (apt-get install prometheus): the alert half is not checked";
  }
  const fs::path rules = fs::path(GPULAB_LAB_DIR) / "../p10-exporter/slo/rules/nic.rules.yml";
  std::string series;
  std::string firing;
  for (int r = 0; r < kWorld; ++r) {
    const std::string rk = std::to_string(r);
    const std::string base = "{instance=\"trainer-0\",job=\"train\",rank=\"" + rk + "\"";
    // Two hours on the fabric, then the job restarts with the default rule: the
    // same ranks, now on eno1, for an hour (a scrape a minute).
    series += "      - series: 'allreduce_bus_bandwidth_bytes_per_second" + base + ",iface=\"ens2\"}'\n"
              "        values: '" + std::to_string(right.busbw.at(r).second) + "x120'\n";
    series += "      - series: 'allreduce_bus_bandwidth_bytes_per_second" + base + ",iface=\"eno1\"}'\n"
              "        values: '_x120 " + std::to_string(wrong.busbw.at(r).second) + "x60'\n";
    series += "      - series: 'allreduce_interface_info" + base + ",iface=\"eno1\",address=\"10.231.1." +
              std::to_string(r + 1) + "\"}'\n        values: '_x120 1x60'\n";
    for (const char* alert : {"CollectiveBandwidthCollapsed", "CollectiveOffFabric"})
      firing += std::string("          - labels: 'ALERTS{alertname=\"") + alert +
                "\",alertstate=\"firing\",iface=\"eno1\",instance=\"trainer-0\",job=\"train\",rank=\"" + rk +
                "\",severity=\"ticket\"}'\n            value: 1\n";
  }
  // What fires is read from ALERTS (the pack's own nic.test.yml checks the annotations,
  // which quote the value here measured).
  const fs::path test = dir_ / "nic-drill.test.yml";
  std::ofstream(test) << "rule_files:\n  - " << fs::weakly_canonical(rules).string()
                      << "\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"
                      << series
                      << "    promql_expr_test:\n"
                         "      - expr: ALERTS{alertstate=\"firing\"}\n        eval_time: 110m\n        exp_samples: []\n"
                         "      - expr: ALERTS{alertstate=\"firing\"}\n        eval_time: 150m\n        exp_samples:\n"
                      << firing;
  const auto r = gpulab_test::run_command("promtool test rules '" + test.string() + "'", gpulab_test::Stderr::kMerged);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
