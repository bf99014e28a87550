// The seam between the scheduler and KV memory. The default has unlimited
// memory and no reuse; PagedPrefixKv runs every admitted request through
// paged-kv's block pool and automatic prefix cache, so a request is admitted
// only when its blocks fit, and prompt tokens found in the cache skip prefill.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>

#include "batching/request.hpp"

namespace batching {

class KvModel {
 public:
  virtual ~KvModel() = default;
  // Reserves KV for request `index` (prompt + all its output). Returns the
  // prompt tokens already cached, or nullopt when memory is short right now.
  virtual std::optional<std::uint32_t> admit(std::size_t index, const Request& r) = 0;
  // Whether the request could ever fit (with nothing else resident).
  [[nodiscard]] virtual bool can_ever_fit(const Request& r) const = 0;
  virtual void finish(std::size_t index) = 0;
};

struct PrefixKvStats {
  std::uint64_t block_lookups = 0, block_hits = 0, evictions = 0;
};

class PagedPrefixKv : public KvModel {
 public:
  // `caching` off still pages memory (capacity-limited admission) but never reuses.
  PagedPrefixKv(std::size_t pool_blocks, std::size_t block_size, bool caching);
  ~PagedPrefixKv() override;
  std::optional<std::uint32_t> admit(std::size_t index, const Request& r) override;
  [[nodiscard]] bool can_ever_fit(const Request& r) const override;
  void finish(std::size_t index) override;
  [[nodiscard]] PrefixKvStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace batching
