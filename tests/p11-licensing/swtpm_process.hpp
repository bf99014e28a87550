// A software TPM (swtpm, socket mode) for the attestation tests: its own
// state folder, a free loopback port pair chosen at run time (the swtpm TCTI
// talks to PORT and its control channel to PORT+1), killed by the destructor
// and, should the test process die first, by the kernel (PR_SET_PDEATHSIG).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "gpulab_test/raw_tcp.hpp"

namespace testing_support {

// True when `program` is an executable on PATH.
inline bool on_path(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// Why the attestation tests cannot run here, or "" when they can.
inline std::string swtpm_missing() {
  if (!on_path("swtpm")) return "swtpm not installed (apt-get install swtpm)";
  for (const char* tool : {"tpm2_createprimary", "tpm2_quote", "tpm2_pcrread", "tpm2_pcrextend"})
    if (!on_path(tool)) return std::string(tool) + " not installed (apt-get install tpm2-tools)";
  return "";
}

// Why TPMs with a vendor-signed EK certificate cannot be made here, or "".
inline std::string swtpm_manufacture_missing() {
  for (const char* tool : {"swtpm_setup", "swtpm_localca"})
    if (!on_path(tool)) return std::string(tool) + " not installed (apt-get install swtpm-tools)";
  for (const char* tool : {"tpm2_createek", "tpm2_makecredential", "tpm2_activatecredential",
                           "tpm2_nvread", "openssl"})
    if (!on_path(tool)) return std::string(tool) + " not installed";
  return "";
}

// Manufactures a TPM in `state_dir` as a TPM vendor would: swtpm_setup makes
// its EK and swtpm_localca signs an EK certificate into NV with the local CA
// kept in `ca_dir` (created on first use; both config files live there, so
// /etc and /var/lib/swtpm-localca are never used). "" on success, else why not.
inline std::string manufacture_tpm(const std::filesystem::path& state_dir,
                                   const std::filesystem::path& ca_dir) {
  namespace fs = std::filesystem;
  fs::create_directories(state_dir);
  fs::create_directories(ca_dir / "state");
  const auto put = [](const fs::path& p, const std::string& text) {
    FILE* f = std::fopen(p.c_str(), "w");
    if (!f) return false;
    const bool ok = std::fputs(text.c_str(), f) >= 0;
    return std::fclose(f) == 0 && ok;
  };
  const std::string ca = (ca_dir / "state").string();
  if (!put(ca_dir / "localca.conf", "statedir = " + ca + "\nsigningkey = " + ca +
                                        "/signkey.pem\nissuercert = " + ca +
                                        "/issuercert.pem\ncertserial = " + ca + "/certserial\n") ||
      !put(ca_dir / "localca.options", "--platform-manufacturer gpulab\n") ||
      !put(ca_dir / "swtpm_setup.conf",
           "create_certs_tool = /usr/bin/swtpm_localca\ncreate_certs_tool_config = " +
               (ca_dir / "localca.conf").string() + "\ncreate_certs_tool_options = " +
               (ca_dir / "localca.options").string() + "\nactive_pcr_banks = sha256\n"))
    return "cannot write the swtpm_setup config in " + ca_dir.string();
  const std::string log = (state_dir / "swtpm_setup.log").string();
  const std::string cmd = "swtpm_setup --tpm2 --tpmstate " + state_dir.string() +
                          " --create-ek-cert --overwrite --config " +
                          (ca_dir / "swtpm_setup.conf").string() + " >" + log + " 2>&1";
  if (std::system(cmd.c_str()) != 0) return "swtpm_setup failed (log: " + log + ")";
  return "";
}

// The local CA's certificates (root, then the intermediate that signs EK
// certificates) as one PEM bundle: what a TPM vendor publishes.
inline std::string ek_ca_bundle(const std::filesystem::path& ca_dir) {
  std::string out;
  for (const char* name : {"swtpm-localca-rootca-cert.pem", "issuercert.pem"}) {
    FILE* f = std::fopen((ca_dir / "state" / name).c_str(), "r");
    if (!f) return "";
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

class SwTpm {
 public:
  SwTpm() = default;
  SwTpm(const SwTpm&) = delete;
  SwTpm& operator=(const SwTpm&) = delete;
  ~SwTpm() { stop(); }

  // Starts swtpm on a fresh TPM whose state lives in `state_dir`; "" when it
  // answers on both ports, else why not. A port taken by someone else between
  // choosing and binding it makes swtpm exit: that attempt is retried on
  // another pair.
  std::string start(const std::filesystem::path& state_dir) {
    std::filesystem::create_directories(state_dir);
    const std::string log = (state_dir / "swtpm.log").string();
    for (int attempt = 0; attempt < 20; ++attempt) {
      port_ = gpulab_test::free_loopback_port();
      if (port_ >= 65535) continue;
      pid_ = fork();
      if (pid_ < 0) return "fork failed";
      if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        const std::string state = "dir=" + state_dir.string();
        const std::string server = "type=tcp,bindaddr=127.0.0.1,port=" + std::to_string(port_);
        const std::string ctrl = "type=tcp,bindaddr=127.0.0.1,port=" + std::to_string(port_ + 1);
        execlp("swtpm", "swtpm", "socket", "--tpm2", "--tpmstate", state.c_str(), "--server",
               server.c_str(), "--ctrl", ctrl.c_str(), "--flags", "not-need-init,startup-clear",
               static_cast<char*>(nullptr));
        _exit(127);
      }
      // Generous: a loaded 2-core machine may take seconds to schedule it.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "cannot run swtpm";
          break;  // most likely a port was taken meanwhile: try another pair
        }
        if (answers(port_) && answers(port_ + 1)) return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (pid_ > 0) return "swtpm did not answer within 60 s (log: " + log + ")";
    }
    return "swtpm could not bind a free port pair in 20 attempts (log: " + log + ")";
  }

  [[nodiscard]] std::string tcti() const {
    return "swtpm:host=127.0.0.1,port=" + std::to_string(port_);
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  static bool answers(int port) {
    const int fd = gpulab_test::connect_to(port);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace testing_support
