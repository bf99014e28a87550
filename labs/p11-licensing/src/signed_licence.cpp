#include "licensing/signed_licence.hpp"

#include "licensing/civil_date.hpp"
#include "licensing/reports.hpp"

namespace licensing {

SignedLicenceFiles issue_signed_licence(const std::filesystem::path& dir,
                                        const std::string& customer, const std::string& features,
                                        std::uint32_t max_gpus) {
  const std::string vendor = (dir / "vendor").string();
  if (!std::filesystem::exists(vendor + ".key")) run_keygen(vendor, false);
  IssueOptions o;
  o.key_file = vendor + ".key";
  o.customer = customer;
  o.product = "gpulab";
  o.features = features;
  o.max_gpus = max_gpus;
  o.not_before = o.issued = "2020-01-01";
  o.expires = "2099-12-31";
  o.floating = true;
  o.out = (dir / "licence").string();
  run_issue(o, *parse_date("2020-01-01"));
  return {o.out, vendor + ".pub"};
}

}  // namespace licensing
