#include "licensing/fingerprint.hpp"

#include <algorithm>

#include "licensing/digest.hpp"
#include "licensing/record.hpp"

namespace licensing {

std::string component_hash(std::string_view product, std::string_view kind, std::string_view raw) {
  std::string msg = "gpulab-fp-v1";
  // NUL separators: no (kind, value) pair can be re-split into another.
  msg.push_back('\0');
  msg.append(product).push_back('\0');
  msg.append(kind).push_back('\0');
  msg.append(raw);
  return sha256_hex(msg);
}

bool valid_kind(std::string_view kind) {
  if (kind.empty() || kind.size() > 32) return false;
  return std::all_of(kind.begin(), kind.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

bool valid_product(std::string_view p) {
  if (p.empty() || p.size() > 64 || p.front() == '-') return false;
  return std::all_of(p.begin(), p.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::string format_component(const HwComponent& c) { return c.kind + " " + c.hash; }

HwComponent parse_component(std::string_view text, std::size_t line) {
  const std::size_t sp = text.find(' ');
  const std::string where = "line " + std::to_string(line) + ": ";
  if (sp == std::string_view::npos) throw FormatError(where + "expected 'hw: <kind> <sha256 hex>'");
  HwComponent c{std::string(text.substr(0, sp)), std::string(text.substr(sp + 1))};
  if (!valid_kind(c.kind)) throw FormatError(where + "bad component kind '" + c.kind + "'");
  if (!is_lower_hex(c.hash, 64)) throw FormatError(where + "component hash is not 64 lowercase hex digits");
  return c;
}

std::string format_fingerprint(const Fingerprint& fp) {
  std::string out = format_field("gpulab-fingerprint", "1");
  out += format_field("product", fp.product);
  for (const auto& c : fp.components) out += format_field("hw", format_component(c));
  return out;
}

Fingerprint parse_fingerprint(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "fingerprint");
  if (cur.take("gpulab-fingerprint").value != "1") throw FormatError("unsupported fingerprint version");
  Fingerprint fp;
  const Field& product = cur.take("product");
  if (!valid_product(product.value)) throw FormatError("line " + std::to_string(product.line) + ": bad product name");
  fp.product = product.value;
  for (const Field* f : cur.take_repeated("hw")) fp.components.push_back(parse_component(f->value, f->line));
  cur.expect_end();
  if (fp.components.empty()) throw FormatError("fingerprint has no components");
  if (!std::is_sorted(fp.components.begin(), fp.components.end()) ||
      std::adjacent_find(fp.components.begin(), fp.components.end()) != fp.components.end()) {
    throw FormatError("fingerprint components must be sorted and unique");
  }
  return fp;
}

}  // namespace licensing
