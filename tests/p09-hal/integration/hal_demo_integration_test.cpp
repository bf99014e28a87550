// hal-demo as a user runs it, a backend compiled outside the build and handed
// to the already-built program, and the ELF facts that make the ABI real.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpulab/prom_text.hpp"
#include "gpulab_test/program_run.hpp"
#include "hal_test_support.hpp"

namespace fs = std::filesystem;
using gpulab_test::run_program;

namespace {
bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gpulab-hal-it-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(HalDemo, PrintsTheWalkthroughWithThisBuildsBackends) {
  const auto r = run_program("hal-demo", "");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "loaded backend: cpu_ref   (abi v2.2, dtypes=F32|F16|BF16, perf=1)\n"));
  EXPECT_TRUE(contains(r.out, "loaded backend: fast      (abi v2.2, dtypes=F32|F16, perf=10)\n"));
  EXPECT_TRUE(contains(r.out, "loaded backend: limited   (abi v2.1, dtypes=F32, perf=2)\n"));
  EXPECT_TRUE(contains(r.out, "rejected backend: stale   (abi v1 != core v2) \u2014 ABI version guard works\n"));
  EXPECT_TRUE(contains(r.out, "== conformance: matmul FP32 vs reference, all backends ==\n  cpu_ref : PASS\n") ||
              contains(r.out, "  cpu_ref : PASS\n"));
  EXPECT_TRUE(contains(r.out, "  liar    : FP16 matmul FAIL, FP16 softmax FAIL\n            -> quarantined"));
  EXPECT_TRUE(contains(r.out, "  FP16 matmul -> fast      (highest perf among F16-capable; liar quarantined)\n"));
  EXPECT_TRUE(contains(r.out, "  FP8  matmul -> (none)    cleanly refused: no loaded backend supports FP8 matmul\n"));
  // The ABI 2.2 ops: checked where declared, "n/a" with the reason on a 2.1 backend.
  EXPECT_TRUE(contains(r.out, "  cpu_ref : rmsnorm PASS, rope PASS, silu_mul PASS, paged_attention PASS\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "  limited : n/a (abi v2.1 predates these ops)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "  FP32 paged_attention -> fast")) << r.out;
  EXPECT_FALSE(contains(r.out, "FAIL:"));
  if (hal_test::built("cuda")) {
    EXPECT_TRUE(contains(r.out, "rejected backend: cuda    (no CUDA device") || contains(r.out, "loaded backend: cuda"));
  }
}

TEST(HalDemo, TrustingDeclarationsRoutesFp16ToTheLiar) {
  const auto r = run_program("hal-demo", "--backends cpu_ref,fast,limited,liar --no-gate");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "  FP16 matmul -> liar      (highest perf among F16-capable)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "quarantined: none"));
}

TEST(HalDemo, JsonHasTheSameFacts) {
  const auto r = run_program("hal-demo", "--backends cpu_ref,stale,liar --json --shape 9x8x7");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["abi"], "2.2");
  EXPECT_EQ(doc["loaded"][0]["ops"], "buffer|matmul|softmax|rmsnorm|rope|silu_mul|paged_attention");
  EXPECT_EQ(doc["loaded"][1]["abi"], "2.1");
  EXPECT_EQ(doc["conformance"][0]["FP32 paged_attention"]["result"], "PASS");
  EXPECT_EQ(doc["conformance"][1]["FP32 rmsnorm"]["result"], "n/a");
  ASSERT_EQ(doc["loaded"].size(), 2u);
  EXPECT_EQ(doc["loaded"][0]["name"], "cpu_ref");
  EXPECT_EQ(doc["rejected"][0]["reason"], "abi-major-mismatch");
  EXPECT_EQ(doc["conformance"][1]["FP16 matmul"]["result"], "FAIL");
  EXPECT_EQ(doc["conformance"][1]["quarantined"], true);
  EXPECT_EQ(doc["routing"][1]["backend"], "cpu_ref");
  EXPECT_TRUE(doc["routing"][3]["backend"].is_null());
  EXPECT_EQ(doc["pass"], true);
}

TEST(HalDemo, BadInputIsAOneLineErrorAndExit2) {
  for (const char* args : {"--shape 3x3", "--shape 9x9x-1", "--shape 1025x1x1", "--backends nosuch",
                           "--backend-dir /nonexistent/dir", "--bogus"}) {
    const auto r = run_program("hal-demo", args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
  }
  const auto r = run_program("hal-demo", "--backends nosuch");
  EXPECT_EQ(r.err.rfind("hal-demo: error: no backend 'nosuch' in ", 0), 0u) << r.err;
}

TEST(HalDemo, NoLoadableBackendIsAFailedRunNotACrash) {
  TempDir dir;
  const auto r = run_program("hal-demo", "--backend-dir " + dir.path.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "no backend loaded"));
}

TEST(HalDemo, MetricsOutWritesBackendCountsAsPrometheusText) {
  TempDir dir;
  const fs::path file = dir.path / "hal.prom";
  const auto r = run_program("hal-demo", "--backends cpu_ref,fast,stale --metrics-out " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(file);
  EXPECT_TRUE(contains(text, "hal_backends{state=\"loaded\"} 2\n")) << text;
  EXPECT_TRUE(contains(text, "hal_backends{state=\"rejected\"} 1\n")) << text;
  EXPECT_TRUE(gpulab::prom::parse(text)) << text;
  const auto bad = run_program("hal-demo", "--backends cpu_ref --metrics-out /nonexistent/dir/x.prom");
  EXPECT_EQ(bad.exit_code, 2);
}

// The curriculum's extension 1: a 4th backend, compiled separately against the
// header alone, loaded by the hal-demo that was built before it existed.
TEST(ExternalBackend, CompiledOutsideTheBuildLoadsInTheBuiltDemo) {
  TempDir dir;
  const fs::path demo = fs::path(GPULAB_BIN_DIR) / "hal-demo";
  const auto before = std::hash<std::string>{}(slurp(demo));
  const fs::path lib = dir.path / "gpulab-hal-external.so";
  const std::string cc = std::string("'") + GPULAB_HAL_C_COMPILER + "' -std=c11 -O2 -shared -fPIC -fvisibility=hidden -I'" +
                         GPULAB_HAL_INCLUDE_DIR + "' '" + GPULAB_LAB_DIR + "/examples/external-backend/external.c' -o '" +
                         lib.string() + "' 2>&1";
  const auto compiled = gpulab_test::run_command(cc, gpulab_test::Stderr::kMerged);
  ASSERT_EQ(compiled.exit_code, 0) << cc << "\n" << compiled.out;

  const auto r = run_program("hal-demo", "", gpulab_test::Stderr::kSeparate,
                             "env GPULAB_HAL_BACKENDS='" + lib.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "loaded backend: external  (abi v2.2, dtypes=F32|BF16, perf=3)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "  external: PASS\n"));
  EXPECT_TRUE(contains(r.out, "  external: BF16 matmul PASS\n"));
  EXPECT_EQ(std::hash<std::string>{}(slurp(demo)), before);  // the core was not rebuilt
}

TEST(ElfFacts, EachBackendExportsOnlyTheRegistrationSymbol) {
  if (!gpulab_test::run_command("command -v nm >/dev/null && echo yes").out.starts_with("yes"))
    GTEST_SKIP() << "nm (binutils) not installed";
  std::size_t checked = 0;
  for (const auto& e : fs::directory_iterator(gpulab::hal::build_backend_dir())) {
    if (e.path().extension() != ".so") continue;
    const auto nm = gpulab_test::run_command("nm -D --defined-only '" + e.path().string() + "' | awk '{print $3}'");
    ASSERT_EQ(nm.exit_code, 0) << nm.err;
    EXPECT_EQ(nm.out, "gpulab_hal_backend_register\n") << e.path();
    ++checked;
  }
  EXPECT_GE(checked, 5u);
}

TEST(ElfFacts, TheDemoLinksNoBackend) {
  if (!gpulab_test::run_command("command -v readelf >/dev/null && echo yes").out.starts_with("yes"))
    GTEST_SKIP() << "readelf (binutils) not installed";
  const auto readelf = gpulab_test::run_command(std::string("readelf -d '") + GPULAB_BIN_DIR + "/hal-demo'");
  ASSERT_EQ(readelf.exit_code, 0) << readelf.err;
  const std::string& out = readelf.out;
  EXPECT_TRUE(contains(out, "(NEEDED)"));
  EXPECT_FALSE(contains(out, "gpulab-hal-"));
  EXPECT_FALSE(contains(out, "libOpenCL"));
  EXPECT_FALSE(contains(out, "libopenblas"));
  EXPECT_FALSE(contains(out, "libcublas"));
}
