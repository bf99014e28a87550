// The property the libFuzzer target (fuzz/license_parser_fuzz.cpp) and its
// replay test check on arbitrary bytes: every parser either rejects the input
// with FormatError or accepts it, and whatever it accepts re-serialises to
// exactly the input bytes (one spelling per document). Returns false when the
// property is broken; crashes and sanitizer reports are the fuzzer's to find.
#pragma once

#include <cstddef>
#include <cstdint>

namespace licensing {

bool fuzz_one_input(const std::uint8_t* data, std::size_t size);

}  // namespace licensing
