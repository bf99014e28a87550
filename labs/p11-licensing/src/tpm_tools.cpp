#include "licensing/tpm_tools.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/text.hpp"
#include "licensing/ek_trust.hpp"
#include "licensing/secure_file.hpp"

extern char** environ;

namespace licensing {
namespace {

namespace fs = std::filesystem;

// The tools write their outputs to files; this folder holds them for one call.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/licensectl-tpm-XXXXXX";
    if (!mkdtemp(tmpl.data()))
      throw gpulab::RunError("cannot create a scratch directory: " + std::string(strerror(errno)));
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] std::string file(std::string_view name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// The reason a failed tool gave: tpm2-tools print it last, then often a
// generic "ERROR: Unable to run tpm2_x", which says nothing and is skipped.
std::string last_line(const std::string& text) {
  std::string_view last;
  for (auto line : gpulab::split_fields(text, '\n')) {
    if (line.empty() || line.find("Unable to run ") != std::string_view::npos) continue;
    if (line.substr(0, 7) == "ERROR: ") line.remove_prefix(7);
    last = line;
  }
  return last.empty() ? "no message" : std::string(last);
}

void run_tool(const ScratchDir& dir, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string err = dir.file("stderr.txt");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == ENOENT) throw gpulab::Unsupported(args[0] + " not found (apt-get install tpm2-tools)");
  if (rc != 0) throw gpulab::RunError("cannot start " + args[0] + ": " + strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw gpulab::RunError("waitpid " + args[0] + ": " + strerror(errno));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const auto text = gpulab::read_text_file(err, 64 * 1024);
  throw gpulab::RunError(fmt::format(
      "{} failed ({}): {}", args[0],
      WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status)) : "killed by a signal",
      text ? last_line(text.value()) : "no message"));
}

Bytes read_bytes(const std::string& path, std::size_t limit) {
  auto text = gpulab::read_text_file(path, limit);
  if (!text) throw gpulab::RunError(text.error().message);
  const std::string& bytes = text.value();
  return Bytes(bytes.begin(), bytes.end());
}

// Creates the attestation key (see the header) as a transient object in ak.ctx.
// The caller flushes it.
void create_ak(const ScratchDir& dir, const std::string& tcti) {
  run_tool(dir, {"tpm2_createprimary", "-T", tcti, "-C", "o", "-G", "ecc256:ecdsa-sha256:null",
                 "-g", "sha256", "-a",
                 "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign|noda", "-c",
                 dir.file("ak.ctx")});
}

// Runs `body` with the AK loaded and flushes transient objects afterwards, also
// when `body` throws (a flush failure then does not hide the first error).
template <typename F>
auto with_ak(const ScratchDir& dir, const std::string& tcti, F body) {
  const auto flush = [&] { run_tool(dir, {"tpm2_flushcontext", "-T", tcti, "-t"}); };
  try {
    create_ak(dir, tcti);
    auto result = body();
    flush();
    return result;
  } catch (...) {
    try {
      flush();
    } catch (...) {
    }
    throw;
  }
}

void write_bytes(const std::string& path, const std::string& data) {
  write_file_atomic(path, data, kPublicMode);
}

Bytes read_ak(const ScratchDir& dir, const std::string& tcti) {
  run_tool(dir, {"tpm2_readpublic", "-T", tcti, "-c", dir.file("ak.ctx"), "-f", "der", "-o",
                 dir.file("ak.der")});
  return read_bytes(dir.file("ak.der"), kMaxAkPublicBytes);
}

std::vector<Bytes> read_pcrs(const ScratchDir& dir, const std::string& tcti,
                             const PcrSelection& s) {
  run_tool(dir, {"tpm2_pcrread", "-T", tcti, format_pcr_selection(s), "-o", dir.file("pcrs.bin")});
  const Bytes all = read_bytes(dir.file("pcrs.bin"), kPcrCount * kPcrDigestBytes);
  if (all.size() != s.pcrs.size() * kPcrDigestBytes)
    throw gpulab::RunError(
        fmt::format("tpm2_pcrread returned {} bytes for {} PCRs", all.size(), s.pcrs.size()));
  std::vector<Bytes> out;
  for (std::size_t i = 0; i < s.pcrs.size(); ++i) {
    const auto at = all.begin() + static_cast<std::ptrdiff_t>(i * kPcrDigestBytes);
    out.emplace_back(at, at + static_cast<std::ptrdiff_t>(kPcrDigestBytes));
  }
  return out;
}

}  // namespace

std::string default_tcti() {
  const char* env = getenv("TPM2TOOLS_TCTI");
  return env && *env ? env : "device:/dev/tpmrm0";
}

Bytes TpmTools::ak_public() const {
  const ScratchDir dir;
  return with_ak(dir, tcti_, [&] { return read_ak(dir, tcti_); });
}

std::vector<Bytes> TpmTools::pcr_values(const PcrSelection& s) const {
  const ScratchDir dir;
  return read_pcrs(dir, tcti_, s);
}

TpmQuote TpmTools::quote(const PcrSelection& s, const Bytes& nonce) const {
  const ScratchDir dir;
  return with_ak(dir, tcti_, [&] {
    TpmQuote q;
    q.ak_public = read_ak(dir, tcti_);
    q.selection = s;
    q.pcr_values = read_pcrs(dir, tcti_, s);
    run_tool(dir, {"tpm2_quote", "-T", tcti_, "-c", dir.file("ak.ctx"), "-l",
                   format_pcr_selection(s), "-q", to_hex(nonce), "-g", "sha256", "-m",
                   dir.file("quote.msg"), "-s", dir.file("quote.sig")});
    q.attest = read_bytes(dir.file("quote.msg"), kMaxAttestBytes);
    q.signature = read_bytes(dir.file("quote.sig"), kMaxSignatureBytes);
    return q;
  });
}

}  // namespace licensing

namespace licensing {

// Credentials and EK certificates are small; these bound what is read back.
constexpr std::size_t kMaxCredentialBytes = 4096;
constexpr std::size_t kMaxSecretBytes = 64;

Bytes make_credential(const std::string& ek_public_pem, const Bytes& ak_name, const Bytes& secret) {
  const ScratchDir dir;
  write_bytes(dir.file("ek.pem"), ek_public_pem);
  write_bytes(dir.file("secret.bin"), std::string(secret.begin(), secret.end()));
  run_tool(dir, {"tpm2_makecredential", "-T", "none", "-u", dir.file("ek.pem"), "-G", "rsa", "-s",
                 dir.file("secret.bin"), "-n", to_hex(ak_name), "-o", dir.file("credential.bin")});
  return read_bytes(dir.file("credential.bin"), kMaxCredentialBytes);
}

TpmTools::AkArea TpmTools::ak_area() const {
  const ScratchDir dir;
  return with_ak(dir, tcti_, [&] {
    run_tool(dir, {"tpm2_readpublic", "-T", tcti_, "-c", dir.file("ak.ctx"), "-o",
                   dir.file("ak.pub"), "-n", dir.file("ak.name")});
    return AkArea{read_bytes(dir.file("ak.pub"), kMaxAkPublicBytes),
                  read_bytes(dir.file("ak.name"), kMaxAkPublicBytes)};
  });
}

Bytes TpmTools::ek_certificate() const {
  const ScratchDir dir;
  run_tool(dir, {"tpm2_nvread", "-T", tcti_, "0x01c00002", "-o", dir.file("ek.der")});
  return read_bytes(dir.file("ek.der"), kMaxEkCertBytes);
}

Bytes TpmTools::activate_credential(const Bytes& credential) const {
  const ScratchDir dir;
  write_bytes(dir.file("credential.bin"), std::string(credential.begin(), credential.end()));
  return with_ak(dir, tcti_, [&] {
    // Saved contexts load again after a flush; without a resource manager
    // swtpm has three transient slots, so each object is flushed once saved.
    run_tool(dir, {"tpm2_flushcontext", "-T", tcti_, "-t"});
    run_tool(dir, {"tpm2_createek", "-T", tcti_, "-G", "rsa", "-c", dir.file("ek.ctx")});
    run_tool(dir, {"tpm2_flushcontext", "-T", tcti_, "-t"});
    // The EK's policy: a session that has satisfied PolicySecret(endorsement).
    run_tool(dir, {"tpm2_startauthsession", "-T", tcti_, "--policy-session", "-S",
                   dir.file("session.ctx")});
    try {
      run_tool(dir, {"tpm2_policysecret", "-T", tcti_, "-S", dir.file("session.ctx"), "-c", "e"});
      run_tool(dir, {"tpm2_activatecredential", "-T", tcti_, "-c", dir.file("ak.ctx"), "-C",
                     dir.file("ek.ctx"), "-i", dir.file("credential.bin"), "-o",
                     dir.file("secret.bin"), "-P", "session:" + dir.file("session.ctx")});
    } catch (...) {
      try {
        run_tool(dir, {"tpm2_flushcontext", "-T", tcti_, dir.file("session.ctx")});
      } catch (...) {
      }
      throw;
    }
    run_tool(dir, {"tpm2_flushcontext", "-T", tcti_, dir.file("session.ctx")});
    return read_bytes(dir.file("secret.bin"), kMaxSecretBytes);
  });
}

}  // namespace licensing
