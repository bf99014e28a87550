#include "platform/task/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <system_error>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/text.hpp"
#include "platform/task/atomic_file.hpp"
#include "platform/task/checksum.hpp"

namespace gpulab::platform::task {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kChecksumOffset = kCheckpointHeaderBytes - 8;
constexpr std::size_t kMaxCheckpointBytes = std::size_t{256} << 20;
constexpr std::uint64_t kMaxParams = (kMaxCheckpointBytes - kCheckpointHeaderBytes) / 4;

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  std::uint64_t get(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(b_[at_ + i])) << (8 * i);
    at_ += static_cast<std::size_t>(bytes);
    return v;
  }
  [[nodiscard]] std::size_t at() const { return at_; }

 private:
  std::string_view b_;
  std::size_t at_ = 0;
};

// FNV-1a over the whole file with the checksum field read as zero.
std::uint64_t file_checksum(std::string_view bytes) {
  const auto as_bytes = [](std::string_view s) {
    return std::span(reinterpret_cast<const std::byte*>(s.data()), s.size());
  };
  const std::byte zeros[8] = {};
  std::uint64_t h = fnv1a64(as_bytes(bytes.substr(0, kChecksumOffset)));
  h = fnv1a64(zeros, h);
  return fnv1a64(as_bytes(bytes.substr(kCheckpointHeaderBytes)), h);
}

[[noreturn]] void corrupt(const std::string& origin, const std::string& why) {
  throw UsageError(
      fmt::format("checkpoint {} is unusable: {}; remove it (and `latest`) to start "
                  "over, or point --checkpoint-dir elsewhere",
                  origin, why));
}

}  // namespace

std::string encode_checkpoint(const Checkpoint& c) {
  std::string out(kCheckpointMagic, sizeof kCheckpointMagic);
  put(out, kCheckpointVersion, 4);
  put(out, kCheckpointHeaderBytes, 4);
  put(out, c.step, 8);
  put(out, c.run.param_count, 8);
  put(out, c.run.seed, 8);
  put(out, c.run.world, 4);
  put(out, c.run.hidden, 4);
  put(out, c.run.batch, 8);
  put(out, std::bit_cast<std::uint32_t>(c.run.lr), 4);
  put(out, 0, 4);  // reserved
  put(out, std::bit_cast<std::uint64_t>(c.first_loss), 8);
  put(out, std::bit_cast<std::uint64_t>(c.last_loss), 8);
  put(out, 0, 8);  // checksum, filled below
  for (const float p : c.params) put(out, std::bit_cast<std::uint32_t>(p), 4);
  const std::uint64_t sum = file_checksum(out);
  for (int i = 0; i < 8; ++i)
    out[kChecksumOffset + static_cast<std::size_t>(i)] = static_cast<char>((sum >> (8 * i)) & 0xFF);
  return out;
}

Checkpoint decode_checkpoint(std::string_view bytes, const std::string& origin) {
  if (bytes.size() < kCheckpointHeaderBytes)
    corrupt(origin, fmt::format("{} bytes, shorter than the {}-byte header", bytes.size(),
                                kCheckpointHeaderBytes));
  if (std::memcmp(bytes.data(), kCheckpointMagic, sizeof kCheckpointMagic) != 0)
    corrupt(origin, "not a gpulab-task checkpoint (bad magic)");
  Reader r(bytes.substr(sizeof kCheckpointMagic));
  const auto version = static_cast<std::uint32_t>(r.get(4));
  if (version != kCheckpointVersion)
    corrupt(origin, fmt::format("format version {}, this program reads version {}", version,
                                kCheckpointVersion));
  const auto header = static_cast<std::uint32_t>(r.get(4));
  if (header != kCheckpointHeaderBytes)
    corrupt(origin, fmt::format("header of {} bytes, expected {}", header, kCheckpointHeaderBytes));
  Checkpoint c;
  c.step = r.get(8);
  c.run.param_count = r.get(8);
  c.run.seed = r.get(8);
  c.run.world = static_cast<std::uint32_t>(r.get(4));
  c.run.hidden = static_cast<std::uint32_t>(r.get(4));
  c.run.batch = r.get(8);
  c.run.lr = std::bit_cast<float>(static_cast<std::uint32_t>(r.get(4)));
  r.get(4);  // reserved
  c.first_loss = std::bit_cast<double>(r.get(8));
  c.last_loss = std::bit_cast<double>(r.get(8));
  const std::uint64_t stored_sum = r.get(8);
  if (c.run.param_count > kMaxParams)
    corrupt(origin, fmt::format("header claims {} parameters", c.run.param_count));
  const std::uint64_t want_size = kCheckpointHeaderBytes + c.run.param_count * 4;
  if (bytes.size() != want_size)
    corrupt(origin, fmt::format("{} bytes, the header implies {} (truncated or padded)",
                                bytes.size(), want_size));
  if (const std::uint64_t sum = file_checksum(bytes); sum != stored_sum)
    corrupt(origin, fmt::format("checksum {} does not match the stored {} (the file is damaged)",
                                hex64(sum), hex64(stored_sum)));
  Reader p(bytes.substr(kCheckpointHeaderBytes));
  c.params.resize(static_cast<std::size_t>(c.run.param_count));
  for (float& v : c.params) v = std::bit_cast<float>(static_cast<std::uint32_t>(p.get(4)));
  return c;
}

std::string checkpoint_file_name(std::uint64_t step) {
  return fmt::format("ckpt-{:08}.bin", step);
}

fs::path write_checkpoint(const fs::path& dir, const Checkpoint& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  // The previous checkpoint is kept: if this one turns out damaged, it is the way back.
  std::optional<std::string> previous;
  if (auto text = read_text_file((dir / "latest").string(), 4096))
    previous = std::string(trim(text.value()));
  const fs::path file = dir / checkpoint_file_name(c.step);
  write_file_atomic(file, encode_checkpoint(c));
  write_file_atomic(dir / "latest", file.filename().string() + "\n");
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("ckpt-") || !name.ends_with(".bin")) continue;
    if (name == file.filename().string() || (previous && name == *previous)) continue;
    fs::remove(entry.path(), ec);  // best effort: a leftover old file harms nothing
  }
  return file;
}

std::optional<Checkpoint> load_latest_checkpoint(const fs::path& dir) {
  const fs::path latest = dir / "latest";
  std::error_code ec;
  if (!fs::exists(latest, ec)) return std::nullopt;
  auto pointer = read_text_file(latest.string(), 4096);
  if (!pointer) corrupt(latest.string(), pointer.error().message);
  const std::string name(trim(pointer.value()));
  if (name.empty() || name.find('/') != std::string::npos)
    corrupt(latest.string(), fmt::format("'{}' is not a checkpoint file name", name));
  const fs::path file = dir / name;
  auto bytes = read_text_file(file.string(), kMaxCheckpointBytes);
  if (!bytes) corrupt(file.string(), bytes.error().message);
  return decode_checkpoint(bytes.value(), file.string());
}

void require_same_run(const Checkpoint& c, const RunIdentity& want, const std::string& origin) {
  std::vector<std::string> diffs;
  const auto differ = [&](std::string_view field, auto got, auto expected) {
    if (got != expected) diffs.push_back(fmt::format("{} {} (this run: {})", field, got, expected));
  };
  differ("seed", c.run.seed, want.seed);
  differ("world", c.run.world, want.world);
  differ("parameters", c.run.param_count, want.param_count);
  differ("hidden", c.run.hidden, want.hidden);
  differ("batch", c.run.batch, want.batch);
  differ("lr", c.run.lr, want.lr);
  if (!diffs.empty())
    throw UsageError(
        fmt::format("checkpoint {} belongs to another run: {}; use a fresh "
                    "--checkpoint-dir or the same settings",
                    origin, fmt::join(diffs, ", ")));
}

}  // namespace gpulab::platform::task
