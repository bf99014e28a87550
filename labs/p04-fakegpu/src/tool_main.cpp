#include "fakegpu/tool_main.hpp"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "fakegpu/client_checks.hpp"
#include "fakegpu/evil.hpp"
#include "fakegpu/mount_point.hpp"
#include "fakegpu/wait_bench.hpp"
#include "gpulab/stdout_check.hpp"
#include "gpulab/version.h"  // generated from project(VERSION); header-only, as this file links statically

namespace fakegpu {

namespace {

int run_tool(Tool tool, int argc, char** argv) {
  gpulab::hold_standard_streams();
  const bool evil = tool == Tool::kEvil;
  const bool bench = tool == Tool::kBench;
  const char* prog = bench ? "fakegpu-bench" : evil ? "fakegpu-evil" : "fakegpu-client";
  CLI::App app{
      bench ? "fakegpu-bench: waits per second, ioctl WAIT vs polling the mmap'd fence page, and "
              "the ioctl\n"
              "round trip, on a device file (the module in the VM, or fakegpud). Machine-dependent "
              "numbers."
      : evil
          ? "fakegpu-evil: the adversarial client. Bad, freed and foreign handles, absurd sizes, "
            "closed fds,\n"
            "racing threads, unknown commands, bad pointers: every case must fail cleanly and leak "
            "nothing."
          : "fakegpu-client: the test suite of a fakegpu device (the kernel module or fakegpud).\n"
            "INFO, ALLOC(1 MiB), SUBMIT, WAIT first, then one PASS/FAIL line per check.",
      prog};
  std::string device = "/dev/fakegpu";
  bool sim = false;
  bool json = false;
  int per_thread = 400;
  app.add_option("--device", device,
                 "device file: /dev/fakegpu (module) or MOUNTDIR/fakegpu (fakegpud)")
      ->capture_default_str();
  app.add_flag("--sim", sim,
               "run against the device core in this process instead of a device file");
  app.add_flag("--json", json, "print the results as one JSON document");
  std::uint64_t iterations = 20000;
  int fresh_jobs = 20;
  if (bench) {
    app.add_option("--iterations", iterations, "ioctls per repetition (polls: 100x)")
        ->capture_default_str()
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100000000}));
    app.add_option("--jobs", fresh_jobs, "fresh 10 ms jobs to wait for each way")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
  }
  if (evil)
    app.add_option("--race-submits", per_thread, "SUBMITs per racing thread")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
  // What gpulab::run_program gives every other program (these cannot link gpulab::common).
  app.set_version_flag("--version", std::string(prog) + " " + GPULAB_VERSION_STRING,
                       "Print the program name and gpulab's version, then exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s (see --help)\n", prog, e.what());
    return 2;
  }

  std::unique_ptr<Device> dev;
  if (sim) {
    dev = make_sim_device(default_config());
    device = "sim";
  } else {
    struct stat st {};
    if (::stat(device.c_str(), &st) != 0) {
      const int err = errno;
      if (err == ENOENT) {
        std::fprintf(stderr,
                     "%s: SKIPPED: %s does not exist: load the module (insmod fakegpu.ko) or start "
                     "`fakegpud DIR` "
                     "and pass --device DIR/fakegpu\n",
                     prog, device.c_str());
        return 77;
      }
      if (err == ENOTCONN) {
        std::fprintf(stderr, "%s: error: %s\n", prog, stale_mount_advice(parent_dir(device)).c_str());
        return 2;
      }
      std::fprintf(stderr, "%s: error: cannot stat %s: %s\n", prog, device.c_str(),
                   errno_name(err).c_str());
      return 2;
    }
    if (S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "%s: error: %s is a directory; pass the device file (e.g. %s/fakegpu)\n",
                   prog, device.c_str(), device.c_str());
      return 2;
    }
    dev = make_system_device();
  }

  if (bench) {
    try {
      const WaitBenchResult r = run_wait_bench(*dev, device, iterations, fresh_jobs);
      if (json) {
        nlohmann::json j;
        j["program"] = prog;
        j["device"] = device;
        for (const auto& row : r.rows)
          j["rows"].push_back(
              {{"what", row.what}, {"calls", row.calls}, {"ns_per_call", row.ns_per_call}});
        j["fence_page"] = r.has_fence_page;
        j["poll_vs_ioctl"] = r.poll_vs_ioctl;
        j["job_wait_ioctl_ms"] = r.job_wait_ioctl_ms;
        j["job_wait_poll_ms"] = r.job_wait_poll_ms;
        std::printf("%s\n", j.dump(2).c_str());
      } else {
        std::printf("%s: %s (%s)\n", prog, device.c_str(), dev->name().c_str());
        print_wait_bench(r, stdout);
      }
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: error: %s\n", prog, e.what());
      return 1;
    }
  }

  std::FILE* out = json ? nullptr : stdout;
  if (!json) std::printf("%s: %s (%s)\n", prog, device.c_str(), dev->name().c_str());
  const ClientReport report =
      evil ? run_evil_cases(*dev, device, out, per_thread) : run_client_checks(*dev, device, out);
  if (json) {
    nlohmann::json j;
    j["program"] = prog;
    j["device"] = device;
    j["passed"] = report.passed();
    j["failed"] = report.failed();
    j["skipped"] = report.skipped();
    for (const auto& c : report.checks)
      j["checks"].push_back({{"name", c.name},
                             {"verdict", c.verdict == Verdict::kPass   ? "PASS"
                                         : c.verdict == Verdict::kFail ? "FAIL"
                                                                       : "SKIP"},
                             {"detail", c.detail}});
    std::printf("%s\n", j.dump(2).c_str());
  } else if (report.all_passed()) {
    std::printf("ALL CHECKS PASSED (%d passed, %d skipped)\n", report.passed(), report.skipped());
  } else {
    std::printf("FAIL: %d of %d checks failed\n", report.failed(),
                report.passed() + report.failed());
  }
  return report.all_passed() ? 0 : 1;
}

}  // namespace

int tool_main(Tool tool, int argc, char** argv) {
  const char* prog = tool == Tool::kBench  ? "fakegpu-bench"
                     : tool == Tool::kEvil ? "fakegpu-evil"
                                           : "fakegpu-client";
  // These tools print with printf and parse their own flags (no gpulab::run_program in the
  // static builds), so they check their output the same way run_program does.
  return gpulab::finish_stdout(prog, run_tool(tool, argc, argv));
}

}  // namespace fakegpu
