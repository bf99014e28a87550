#include "caching_alloc/trace.hpp"

#include <fmt/format.h>

#include <unordered_map>

#include "caching_alloc/replay.hpp"
#include "gpulab/text.hpp"
#include "gpulab/utf8_bom.hpp"

namespace caching_alloc {

namespace {

using gpulab::split_fields;
using gpulab::trim;

bool parse_u64(std::string_view s, std::uint64_t& out) { return gpulab::parse_number(s, out); }

// Field text for an error message: non-printable bytes as \xNN, long fields cut.
std::string printable(std::string_view field) {
  std::string out;
  for (const char ch : field.substr(0, 64)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(ch);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (field.size() > 64) out += "...";
  return out;
}

gpulab::Error at(std::size_t line, std::string message) {
  return gpulab::Error{fmt::format("line {}: {}", line, message)};
}

}  // namespace

gpulab::Expected<std::vector<TraceEvent>> parse_trace(std::string_view text) {
  struct Live {
    std::size_t line;
    std::uint64_t size;
    StreamId stream;
  };
  std::vector<TraceEvent> events;
  std::unordered_map<std::string, Live> live;
  std::unordered_map<std::string, std::size_t> freed_at;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    const std::string_view line = trim(line_no == 1 ? gpulab::without_utf8_bom(raw) : raw);
    if (line.empty() || line.front() == '#') continue;
    if (line == "op,id,size,stream") continue;  // the header

    const auto f = split_fields(line);
    if (f.size() != 4) {
      return at(line_no, fmt::format("expected 4 comma-separated fields op,id,size,stream, got {}",
                                     f.size()));
    }
    TraceEvent ev;
    ev.line = line_no;
    if (f[0] == "alloc") {
      ev.op = TraceOp::kAlloc;
    } else if (f[0] == "free") {
      ev.op = TraceOp::kFree;
    } else {
      return at(line_no, fmt::format("unknown op '{}' (expected alloc or free)", printable(f[0])));
    }
    if (f[1].empty()) return at(line_no, "empty id");
    ev.id = std::string(f[1]);

    std::uint64_t size = 0;
    const bool has_size = !f[2].empty();
    if (has_size && (!parse_u64(f[2], size) || size == 0 || size > kMaxRequest)) {
      return at(line_no,
                fmt::format("size '{}' is not a byte count between 1 and 2^48", printable(f[2])));
    }
    std::uint64_t stream = 0;
    const bool has_stream = !f[3].empty();
    if (has_stream && (!parse_u64(f[3], stream) || stream > 0xffffffffu)) {
      return at(line_no, fmt::format("stream '{}' is not an integer between 0 and 4294967295",
                                     printable(f[3])));
    }

    if (ev.op == TraceOp::kAlloc) {
      if (!has_size) return at(line_no, "alloc needs a size");
      if (!has_stream) return at(line_no, "alloc needs a stream");
      if (const auto it = live.find(ev.id); it != live.end()) {
        return at(line_no, fmt::format("id '{}' is still live (allocated on line {})",
                                       printable(ev.id), it->second.line));
      }
      ev.size = size;
      ev.stream = static_cast<StreamId>(stream);
      live.emplace(ev.id, Live{line_no, size, ev.stream});
      freed_at.erase(ev.id);
    } else {
      const auto it = live.find(ev.id);
      if (it == live.end()) {
        if (const auto f_it = freed_at.find(ev.id); f_it != freed_at.end()) {
          return at(line_no, fmt::format("double free of id '{}' (already freed on line {})",
                                         printable(ev.id), f_it->second));
        }
        return at(line_no, fmt::format("free of unknown id '{}'", printable(ev.id)));
      }
      if (has_size && size != it->second.size) {
        return at(line_no,
                  fmt::format("free of '{}' gives size {}, but it was allocated with {} (line {})",
                              ev.id, size, it->second.size, it->second.line));
      }
      ev.size = it->second.size;
      ev.stream = it->second.stream;
      freed_at[ev.id] = line_no;
      live.erase(it);
    }
    events.push_back(std::move(ev));
  }
  return events;
}

ReplayResult replay_trace(const std::vector<TraceEvent>& events, std::uint64_t device_bytes,
                          const AllocatorConfig& config,
                          const std::function<void(std::size_t)>& on_step) {
  Device dev(device_bytes);
  CachingAllocator alloc(dev, config);
  ReplayResult result;
  result.steps.reserve(events.size());
  replay_events(alloc, events, [&](const ReplayStep& step) {
    result.steps.push_back(step);
    if (on_step) on_step(result.steps.size());
  });
  result.stats = alloc.stats();
  return result;
}

}  // namespace caching_alloc
