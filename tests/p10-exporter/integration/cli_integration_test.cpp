// gpu-exporter as a user runs it: --once in every mode through promtool,
// determinism of the simulated source, bad flags, a port already taken.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "exporter_process.hpp"
#include "gpulab_test/program_run.hpp"

using gpulab_test::run_program;

namespace {

std::string promtool() {
  const std::string p = p10test::find_program("promtool");
  return p;
}

// Lines of promtool's findings, without blank ones.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

}  // namespace

TEST(Once, SimulatedOutputIsDeterministicPerSeed) {
  const auto a = run_program("gpu-exporter", "--once --simulate 2");
  const auto b = run_program("gpu-exporter", "--once --simulate 2 --seed 1");
  const auto c = run_program("gpu-exporter", "--once --simulate 2 --seed 2");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_EQ(a.err, "");
  EXPECT_NE(a.out.find("gpu_exporter_source_up{source=\"simulated\"} 1\n"), std::string::npos);
}

TEST(Once, InjectedXidShowsFromItsTimeOn) {
  const auto before =
      run_program("gpu-exporter", "--once --simulate 2 --inject xid:79:1@30s --at 29s");
  const auto after =
      run_program("gpu-exporter", "--once --simulate 2 --inject xid:79:1@30s --at 30s");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(before.out.find("gpu_xid_errors_total"), std::string::npos);
  EXPECT_NE(after.out.find("gpu=\"1\","), std::string::npos);
  EXPECT_NE(after.out.find(",xid=\"79\"} 1\n"), std::string::npos) << after.out;
}

TEST(Once, WithoutNvmlOnlySourceUpZeroIsExposedAndTheReasonLogged) {
  const auto r =
      run_program("gpu-exporter",
                  "--once --nvml-lib libnvidia-ml-absent.so.1 --fakegpu-stats /nonexistent/stats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "# HELP gpu_exporter_source_up 1 if the source was read in the last collection, 0 if "
            "it is unavailable.\n"
            "# TYPE gpu_exporter_source_up gauge\n"
            "gpu_exporter_source_up{source=\"fakegpu\"} 0\n"
            "gpu_exporter_source_up{source=\"nvml\"} 0\n");
  EXPECT_NE(
      r.err.find("gpu-exporter: source nvml unavailable: libnvidia-ml-absent.so.1: cannot open"),
      std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find("gpu-exporter: source fakegpu unavailable: /nonexistent/stats: No such file"),
      std::string::npos)
      << r.err;
}

TEST(Promtool, EveryModePassesCheckMetrics) {
  const std::string pt = promtool();
  if (pt.empty()) GTEST_SKIP() << "promtool not found (Debian package prometheus)";
  const std::string dir =
      std::string(::testing::TempDir()) + "p10-textfiles-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/lab.prom")
      << "# HELP serving_ttft_seconds Time to first token.\n# TYPE serving_ttft_seconds histogram\n"
         "serving_ttft_seconds_bucket{le=\"0.3\"} 2\nserving_ttft_seconds_bucket{le=\"+Inf\"} 3\n"
         "serving_ttft_seconds_sum 1.1\nserving_ttft_seconds_count 3\n";
  const std::vector<std::string> modes = {
      "--once --nvml-lib libnvidia-ml-absent.so.1",
      "--once",  // whatever this machine has (NVML on a GPU machine)
      "--once --simulate 8 --inject "
      "xid:79@30s,xid:48:3@10s,thermal:0@60s,leak:2@10s,power:5@5s,ecc:1@1s --at 120s",
      "--once --simulate 2 --textfile-dir " + dir,
#ifdef GPULAB_FAKE_NVML
      "--once --nvml-lib " GPULAB_FAKE_NVML,  // NVML's success path, through a stand-in library
#endif
  };
  for (const auto& mode : modes) {
    const auto r = run_program("gpu-exporter", mode);
    ASSERT_EQ(r.exit_code, 0) << mode << "\n" << r.err;
    ASSERT_NE(r.out.find("# TYPE gpu_exporter_source_up gauge"), std::string::npos) << mode;
    const auto check = p10test::promtool_check_metrics(pt, r.out);
    EXPECT_EQ(check.rc, 0) << mode << "\n" << check.out;
    EXPECT_EQ(check.out, "") << mode;
  }
  std::filesystem::remove_all(dir);
}

TEST(Promtool, DcgmCompatFindingsAreOnlyTheDcgmNames) {
  const std::string pt = promtool();
  if (pt.empty()) GTEST_SKIP() << "promtool not found (Debian package prometheus)";
  const auto r =
      run_program("gpu-exporter", "--once --simulate 2 --dcgm-compat --inject xid:79@1s --at 2s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-"), std::string::npos);
  const auto check = p10test::promtool_check_metrics(pt, r.out);
  EXPECT_EQ(check.rc, 3) << check.out;  // lint findings, no parse error
  const auto findings = lines(check.out);
  ASSERT_FALSE(findings.empty());
  for (const auto& f : findings) {
    EXPECT_EQ(f.rfind("DCGM_FI_DEV_", 0), 0U) << f;
    const bool known = f.find("label names should be written in 'snake_case' not 'camelCase'") !=
                           std::string::npos ||
                       f.find("counter metrics should have \"_total\" suffix") != std::string::npos;
    EXPECT_TRUE(known) << f;
  }
}

TEST(BadInput, OneErrorLineAndExit2) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--once --simulate 2 --inject melt:0@1s",
       "gpu-exporter: error: --inject 'melt:0@1s': unknown kind 'melt' (xid, thermal, power, leak, "
       "ecc)\n"},
      {"--once --inject xid:79@1s", "gpu-exporter: error: --inject needs --simulate N\n"},
      {"--listen 9400",
       "gpu-exporter: error: --listen '9400': expected HOST:PORT, e.g. 127.0.0.1:9400 "
       "(0.0.0.0:9400 for every address)\n"},
      {"--listen localhost:9400",
       "gpu-exporter: error: --listen 'localhost:9400': 'localhost' is not a numeric IP address\n"},
      {"--listen 127.0.0.1:70000",
       "gpu-exporter: error: --listen '127.0.0.1:70000': the port must be 0..65535\n"},
      {"--once --simulate 2 --inject leak:5@1s",
       "gpu-exporter: error: --inject: GPU 5 does not exist (--simulate 2 has 0..1)\n"},
      {"--once --simulate 2 --interval 1ms",
       "gpu-exporter: error: --interval must be at least 10ms\n"},
  };
  for (const auto& [args, err] : cases) {
    const auto r = run_program("gpu-exporter", args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, err) << args;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST(BadInput, APortAlreadyTakenIsARunFailure) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int port = ntohs(a.sin_port);
  const auto r =
      run_program("gpu-exporter", "--simulate 1 --listen 127.0.0.1:" + std::to_string(port));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.err.rfind("gpu-exporter: error: cannot listen on 127.0.0.1:" + std::to_string(port), 0), 0U)
      << r.err;
}

TEST(Once, JsonIsTheSameExpositionAsOneDocument) {
  const auto r =
      run_program("gpu-exporter",
                  "--once --json --nvml-lib libnvidia-ml-absent.so.1 --fakegpu-stats /nonexistent "
                  "--textfile-dir " GPULAB_LAB_DIR "/examples/textfiles");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["sources"]["nvml"], false);
  EXPECT_EQ(doc["sources"]["textfile"], true);
  bool saw_histogram = false;
  for (const auto& f : doc["families"]) {
    if (f["name"] != "serving_ttft_seconds") continue;
    saw_histogram = true;
    EXPECT_EQ(f["type"], "histogram");
    const auto& s = f["series"][0];
    ASSERT_EQ(s["buckets"].size(), 4U);
    EXPECT_EQ(s["buckets"][1]["le"], 0.3);
    EXPECT_EQ(s["buckets"][1]["count"], 962);
    EXPECT_EQ(s["buckets"][3]["le"], "+Inf");
    EXPECT_EQ(s["count"], 1000);
    EXPECT_EQ(s["sum"], 131.7);
  }
  EXPECT_TRUE(saw_histogram);
  EXPECT_EQ(run_program("gpu-exporter", "--simulate 1 --json").exit_code, 2);
}
