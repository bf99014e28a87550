// licensectl's four subcommands of the EK-certified enrolment round trip
// (ek_enrolment.hpp has the protocol and the file formats):
//   attest-ek-request    customer: the TPM's EK certificate, AK and PCR values
//   attest-ek-challenge  vendor: verify, wrap a secret for that TPM, keep its hash
//   attest-ek-answer     customer: the TPM unwraps it
//   attest-ek-certify    vendor: check the secret, write the signed ek-certified policy
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "licensing/civil_date.hpp"

namespace licensing {

class EkCommands {
 public:
  explicit EkCommands(CLI::App& app);
  // The exit code of the subcommand given, or nullopt when none of these was.
  [[nodiscard]] std::optional<int> run(Date today, bool json) const;

 private:
  [[nodiscard]] int request(Date today, bool json) const;
  [[nodiscard]] int challenge(Date today, bool json) const;
  [[nodiscard]] int answer(bool json) const;
  [[nodiscard]] int certify(Date today, bool json) const;

  CLI::App* request_ = nullptr;
  CLI::App* challenge_ = nullptr;
  CLI::App* answer_ = nullptr;
  CLI::App* certify_ = nullptr;
  std::string license_, pcrs_, tcti_, out_, input_, ek_ca_, pending_, key_, today_;
};

}  // namespace licensing
