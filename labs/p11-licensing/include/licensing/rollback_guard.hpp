// Clock-rollback detection. Each successful check records the latest time the
// software has seen, with an HMAC tag, in a small state file. A clock that
// reads earlier than that (beyond a tolerance for NTP steps) is reported as
// CLOCK_ROLLBACK instead of being believed, and so is a state file whose tag
// does not verify (edited to an earlier time).
//
// Honest limits: the HMAC key is derived from data inside the program and the
// licence, so someone who reverse-engineers the binary can forge the tag, and
// deleting the file forgets the last-seen time (the licence's issue date stays
// as a floor). It stops a changed BIOS clock and a hand-edited file, not a
// determined reverse engineer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "licensing/license.hpp"

namespace licensing {

class RollbackGuard {
 public:
  explicit RollbackGuard(std::filesystem::path state_file, std::int64_t tolerance_s = 3600)
      : path_(std::move(state_file)), tolerance_s_(tolerance_s) {}

  // nullopt when `now` is plausible; otherwise why the clock cannot be trusted.
  [[nodiscard]] std::optional<std::string> check(const SignedLicense& lic, std::int64_t now) const;
  // last_seen := max(last_seen, now), written atomically with mode 0600.
  void record(const SignedLicense& lic, std::int64_t now) const;
  // The recorded time for this licence, if the file exists and its tag verifies.
  [[nodiscard]] std::optional<std::int64_t> last_seen(const SignedLicense& lic) const;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  struct Stored {
    bool present = false;
    bool tag_ok = false;
    bool same_license = false;
    std::int64_t last_seen = 0;
  };
  [[nodiscard]] Stored load(const SignedLicense& lic) const;

  std::filesystem::path path_;
  std::int64_t tolerance_s_;
};

}  // namespace licensing
