// Shared by the licensing tests: a scratch directory, file helpers and a
// licence factory with fixed keys.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gpulab/errors.hpp"
#include "licensing/digest.hpp"
#include "licensing/ed25519.hpp"
#include "licensing/license.hpp"

namespace testing_support {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpulab-p11-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

inline void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 0777u;
}

inline licensing::PrivateKey key(std::string_view label) {
  const auto d = licensing::sha256(label);
  return licensing::PrivateKey::from_seed(licensing::Bytes(d.begin(), d.end()));
}

inline licensing::HwComponent comp(const std::string& kind, const std::string& raw) {
  return {kind, licensing::component_hash("gpulab-serve", kind, raw)};
}

// Seven components, sorted: a server with two NICs.
inline std::vector<licensing::HwComponent> machine(const std::string& tag) {
  std::vector<licensing::HwComponent> v{comp("machine_id", tag + "-mid"), comp("cpu_model", "EPYC"),
                                        comp("cpu_flags", "aes avx2"),     comp("nic_mac", tag + "-nic0"),
                                        comp("nic_mac", tag + "-nic1"),    comp("root_disk", tag + "-disk"),
                                        comp("gpu_uuid", tag + "-gpu0")};
  std::sort(v.begin(), v.end());
  return v;
}

inline licensing::License sample_license() {
  licensing::License l;
  l.id = "00112233aabbccdd";
  l.product = "gpulab-serve";
  l.customer = "Example Sovereign Cloud";
  l.features = {"batching", "kv-offload"};
  l.max_gpus = 8;
  l.issued = *licensing::parse_date("2025-12-15");
  l.not_before = *licensing::parse_date("2026-01-01");
  l.expires = *licensing::parse_date("2026-12-31");
  l.grace_days = 14;
  l.hw = machine("a");
  l.hw_max_changed = 2;
  return l;
}

inline std::int64_t noon(const char* date) {
  return licensing::start_of(*licensing::parse_date(date)) + licensing::kSecondsPerDay / 2;
}

}  // namespace testing_support
