// A floating licence granting some features, signed with a vendor key made for it: what a
// product demo or a test of a licensed product needs in one call, instead of keygen + issue
// spelled out by each of them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace licensing {

struct SignedLicenceFiles {
  std::string licence;     // DIR/licence
  std::string public_key;  // DIR/vendor.pub (the key the product is told to trust)
};

// Makes DIR/vendor.key (kept when it already exists), then issues DIR/licence for `customer`,
// product "gpulab", `features` (comma-separated), `max_gpus`, valid 2020-01-01 .. 2099-12-31.
SignedLicenceFiles issue_signed_licence(const std::filesystem::path& dir,
                                        const std::string& customer, const std::string& features,
                                        std::uint32_t max_gpus);

}  // namespace licensing
