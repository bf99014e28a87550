// A hardware fingerprint is a set of salted component hashes, never the raw
// identifiers: hash = SHA-256("gpulab-fp-v1" 0 product 0 kind 0 value). The
// product salt makes the same machine look different to different products,
// so fingerprints cannot be joined across vendors' databases.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

namespace licensing {

struct HwComponent {
  std::string kind;  // machine_id, dmi_uuid, cpu_model, cpu_flags, nic_mac, root_disk, gpu_uuid
  std::string hash;  // 64 lowercase hex characters
  auto operator<=>(const HwComponent&) const = default;
};

struct Fingerprint {
  std::string product;
  std::vector<HwComponent> components;  // sorted, unique
};

std::string component_hash(std::string_view product, std::string_view kind, std::string_view raw);

// "kind hash" — how a component is written in licence, request and fingerprint files.
std::string format_component(const HwComponent& c);
// Throws FormatError on a bad kind or hash.
HwComponent parse_component(std::string_view text, std::size_t line);
bool valid_kind(std::string_view kind);

// Product names: [a-z0-9][a-z0-9-]{0,63}.
bool valid_product(std::string_view product);

// The fingerprint file hwfp --out writes and licensectl issue --fingerprint reads.
std::string format_fingerprint(const Fingerprint& fp);
Fingerprint parse_fingerprint(std::string_view text);

}  // namespace licensing
