#include "ring_allreduce/ring_pipeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "ring_allreduce/collectives.hpp"
#include "ring_allreduce/relay.hpp"

namespace ring {
namespace {

// The sub-range of chunk `c` that round `k` covers: chunks differ by at most
// one element, so in the last round some slices may be one element short or empty.
Chunk round_slice(const RingSchedule& s, int c, std::size_t k) {
  const Chunk whole = chunk_bounds(s.n, s.world, c);
  const std::size_t lo = std::min(whole.size(), k * s.slice);
  const std::size_t hi = std::min(whole.size(), (k + 1) * s.slice);
  return {whole.begin + lo, whole.begin + hi};
}

// The element loops of the one-pass paths. On a little-endian host the wire
// bytes are the array's own (wire.hpp), so these are plain loads and stores
// the compiler vectorises; elsewhere every element goes through load_le/store_le.
template <WireFloat T>
void add_to(std::byte* dst, const std::byte* a, const std::byte* b, std::size_t count) {
  if constexpr (kWireIsNative) {
    T* __restrict d = reinterpret_cast<T*>(dst);
    const T* __restrict x = reinterpret_cast<const T*>(a);
    const T* __restrict y = reinterpret_cast<const T*>(b);
    for (std::size_t i = 0; i < count; ++i) d[i] = x[i] + y[i];
  } else {
    for (std::size_t i = 0; i < count; ++i)
      store_le<T>(load_le<T>(a + i * sizeof(T)) + load_le<T>(b + i * sizeof(T)), dst + i * sizeof(T));
  }
}

// One read of the incoming bytes, two writes: the value lands in `local` and goes
// on in `out` (two memcpy calls would read a 64 KiB piece twice, and it does not
// stay in L1). kAdd: the value is local + wire (the last reduce-scatter step: this
// rank's result and its first all-gather send); otherwise wire itself (recvCopySend).
template <WireFloat T, bool kAdd>
void keep_and_send(std::byte* local, const std::byte* wire, std::byte* out, std::size_t count) {
  if constexpr (kWireIsNative) {
    T* __restrict l = reinterpret_cast<T*>(local);
    const T* __restrict w = reinterpret_cast<const T*>(wire);
    T* __restrict o = reinterpret_cast<T*>(out);
    for (std::size_t i = 0; i < count; ++i) {
      const T v = kAdd ? l[i] + w[i] : w[i];
      l[i] = v;
      o[i] = v;
    }
  } else {
    if constexpr (kAdd)
      add_to<T>(local, local, wire, count);
    else
      std::memcpy(local, wire, count * sizeof(T));
    std::memcpy(out, local, count * sizeof(T));
  }
}

template <WireFloat T>
class RingPlan final : public RelayPlan {
 public:
  RingPlan(const RingSchedule& s, std::span<std::byte> data, const StepHook& hook)
      : s_(s), data_(data), hook_(hook) {}

  [[nodiscard]] std::size_t messages() const override { return s_.messages(); }
  [[nodiscard]] std::span<const std::byte> out_bytes(std::size_t i) const override { return bytes(s_.out_range(i)); }
  [[nodiscard]] bool derived(std::size_t i) const override { return s_.step_of(i) != 0; }
  [[nodiscard]] std::size_t in_size(std::size_t i) const override { return s_.in_range(i).size() * sizeof(T); }
  [[nodiscard]] std::span<std::byte> in_place(std::size_t i) const override {
    return reduces(i) ? std::span<std::byte>{} : bytes(s_.in_range(i));
  }

  void land(std::size_t i, std::size_t offset, std::span<const std::byte> wire) override {
    std::byte* local = bytes(s_.in_range(i)).data() + offset;
    if (reduces(i))
      add_to<T>(local, local, wire.data(), wire.size() / sizeof(T));
    else
      std::memcpy(local, wire.data(), wire.size());
  }

  void forward(std::size_t i, std::size_t offset, std::span<const std::byte> wire, std::span<std::byte> out) override {
    std::byte* local = bytes(s_.in_range(i)).data() + offset;
    const std::size_t count = wire.size() / sizeof(T);
    const int step = s_.step_of(i);
    if (step < s_.world - 2) {
      add_to<T>(out.data(), local, wire.data(), count);  // recvReduceSend: the partial sum goes on, not home
    } else if (step == s_.world - 2) {
      keep_and_send<T, true>(local, wire.data(), out.data(), count);  // this rank's result, and its first all-gather send
    } else {
      keep_and_send<T, false>(local, wire.data(), out.data(), count);  // recvCopySend
    }
  }

  void begin(std::size_t i) override {
    if (hook_ && s_.round_of(i) == 0) hook_(s_.step_of(i));
  }

  [[nodiscard]] std::string describe(std::size_t i) const override {
    const int step = s_.step_of(i);
    return step < s_.world - 1 ? fmt::format("reduce-scatter step {}", step)
                               : fmt::format("all-gather step {}", step - (s_.world - 1));
  }

 private:
  [[nodiscard]] bool reduces(std::size_t i) const { return s_.step_of(i) < s_.world - 1; }
  [[nodiscard]] std::span<std::byte> bytes(const Chunk& c) const {
    return data_.subspan(c.begin * sizeof(T), c.size() * sizeof(T));
  }

  RingSchedule s_;
  std::span<std::byte> data_;
  const StepHook& hook_;
};

}  // namespace

Chunk RingSchedule::out_range(std::size_t message) const {
  const int s = step_of(message);
  const int c = s < world - 1 ? rs_send_chunk(rank, s, world) : ag_send_chunk(rank, s - (world - 1), world);
  return round_slice(*this, c, round_of(message));
}

Chunk RingSchedule::in_range(std::size_t message) const {
  const int s = step_of(message);
  const int c = s < world - 1 ? rs_recv_chunk(rank, s, world) : ag_recv_chunk(rank, s - (world - 1), world);
  return round_slice(*this, c, round_of(message));
}

RingSchedule ring_schedule(std::size_t n, int world, int rank, std::size_t elem_size, std::size_t slice_bytes) {
  RingSchedule s;
  s.n = n;
  s.world = world;
  s.rank = rank;
  std::size_t max_chunk = 0;
  for (int i = 0; i < world; ++i) max_chunk = std::max(max_chunk, chunk_bounds(n, world, i).size());
  s.slice = slice_bytes == 0 ? std::max<std::size_t>(max_chunk, 1) : std::max<std::size_t>(slice_bytes / elem_size, 1);
  // At least one round, so the step hook sees every step even of an empty vector.
  s.rounds = std::max<std::size_t>(1, (max_chunk + s.slice - 1) / s.slice);
  return s;
}

template <WireFloat T>
void ring_allreduce(Transport& t, std::span<T> data, const StepHook& hook) {
  if (t.world() < 2) return;
  const RingSchedule s = ring_schedule(data.size(), t.world(), t.rank(), sizeof(T), t.slice_bytes());
  // The vector holds wire bytes while it travels (a no-op on little-endian hosts).
  to_wire_inplace(data);
  RingPlan<T> plan(s, std::as_writable_bytes(data), hook);
  t.relay(mod(t.rank() + 1, t.world()), mod(t.rank() - 1, t.world()), plan);
  from_wire_inplace(data);
}

template void ring_allreduce<double>(Transport&, std::span<double>, const StepHook&);
template void ring_allreduce<float>(Transport&, std::span<float>, const StepHook&);

}  // namespace ring
