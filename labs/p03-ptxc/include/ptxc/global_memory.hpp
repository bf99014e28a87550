// The interpreter's global memory: named buffers at 64-bit addresses with
// unmapped gaps between them, and every access bounds-checked. A store one
// element past the end of `c` is a MemoryFault naming the thread, the address
// and "4 bytes past the end of 'c'", never a silent write into a neighbour.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ptxc {

struct MemoryFault : std::runtime_error {
  MemoryFault(const std::string& what, std::uint64_t addr)
      : std::runtime_error(what), address(addr) {}
  std::uint64_t address;
  long long thread = -1;  // filled in by the interpreter
};

class GlobalMemory {
 public:
  // Returns the buffer's device address (aligned, with a gap before it).
  std::uint64_t allocate(std::string name, std::span<const float> init);

  [[nodiscard]] std::uint32_t load32(std::uint64_t addr) const;
  void store32(std::uint64_t addr, std::uint32_t bits);

  [[nodiscard]] std::span<const float> buffer(std::size_t index) const {
    return buffers_[index].data;
  }
  [[nodiscard]] std::size_t buffer_count() const { return buffers_.size(); }
  // "4 bytes past the end of 'c' (4000 bytes at 0x10001000)", for fault messages.
  [[nodiscard]] std::string describe(std::uint64_t addr) const;

  static constexpr std::uint64_t kFirstAddress = 0x10000000;
  static constexpr std::uint64_t kGap = 4096;  // unmapped bytes between buffers

 private:
  struct Buffer {
    std::string name;
    std::uint64_t base = 0;
    std::vector<float> data;
  };
  // The index of the buffer holding [addr, addr+4), or -1; checks alignment too.
  [[nodiscard]] int find(std::uint64_t addr) const;

  std::vector<Buffer> buffers_;
  std::uint64_t next_ = kFirstAddress;
};

}  // namespace ptxc
