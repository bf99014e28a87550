// Request traces to replay instead of the synthetic stream. Two CSV layouts:
//   the public Azure LLM inference traces:  TIMESTAMP,ContextTokens,GeneratedTokens
//     (TIMESTAMP like "2023-11-16 18:15:46.6805900", optionally with "+00:00")
//   a plain one:                            arrival_ms,prompt_tokens,output_tokens
// The header picks the layout; a file without a header is read as the plain
// one. Arrivals are shifted so the first request arrives at 0.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "batching/request.hpp"

namespace batching {

// Throws gpulab::UsageError "NAME:LINE: what is wrong" for any bad line.
std::vector<Request> parse_trace(std::istream& in, const std::string& name);
// A trace larger than this is refused (so is /dev/zero or a directory):
// the public Azure traces are a few MiB to a few tens of MiB.
inline constexpr std::size_t kMaxTraceBytes = std::size_t{256} << 20;
// The file at `path`, read whole under kMaxTraceBytes; throws gpulab::UsageError
// naming the file when it cannot be read or parsed.
std::vector<Request> load_trace(const std::string& path);

}  // namespace batching
