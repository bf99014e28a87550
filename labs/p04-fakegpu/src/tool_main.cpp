#include "fakegpu/tool_main.hpp"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "fakegpu/client_checks.hpp"
#include "fakegpu/evil.hpp"

namespace fakegpu {

int tool_main(Tool tool, int argc, char** argv) {
  const bool evil = tool == Tool::kEvil;
  const char* prog = evil ? "fakegpu-evil" : "fakegpu-client";
  CLI::App app{evil ? "fakegpu-evil: the adversarial client. Bad, freed and foreign handles, absurd sizes, closed fds,\n"
                      "racing threads, unknown commands, bad pointers: every case must fail cleanly and leak nothing."
                    : "fakegpu-client: the test suite of a fakegpu device (the kernel module or fakegpud).\n"
                      "INFO, ALLOC(1 MiB), SUBMIT, WAIT first, then one PASS/FAIL line per check.",
               prog};
  std::string device = "/dev/fakegpu";
  bool sim = false;
  bool json = false;
  int per_thread = 400;
  app.add_option("--device", device, "device file: /dev/fakegpu (module) or MOUNTDIR/fakegpu (fakegpud)")
      ->capture_default_str();
  app.add_flag("--sim", sim, "run against the device core in this process instead of a device file");
  app.add_flag("--json", json, "print the results as one JSON document");
  if (evil)
    app.add_option("--race-submits", per_thread, "SUBMITs per racing thread")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
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
                     "%s: SKIPPED: %s does not exist: load the module (insmod fakegpu.ko) or start `fakegpud DIR` "
                     "and pass --device DIR/fakegpu\n",
                     prog, device.c_str());
        return 77;
      }
      std::fprintf(stderr, "%s: error: cannot stat %s: %s\n", prog, device.c_str(), errno_name(err).c_str());
      return 2;
    }
    if (S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "%s: error: %s is a directory; pass the device file (e.g. %s/fakegpu)\n", prog,
                   device.c_str(), device.c_str());
      return 2;
    }
    dev = make_system_device();
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
                             {"verdict", c.verdict == Verdict::kPass ? "PASS" : c.verdict == Verdict::kFail ? "FAIL" : "SKIP"},
                             {"detail", c.detail}});
    std::printf("%s\n", j.dump(2).c_str());
  } else if (report.all_passed()) {
    std::printf("ALL CHECKS PASSED (%d passed, %d skipped)\n", report.passed(), report.skipped());
  } else {
    std::printf("FAIL: %d of %d checks failed\n", report.failed(), report.passed() + report.failed());
  }
  return report.all_passed() ? 0 : 1;
}

}  // namespace fakegpu
