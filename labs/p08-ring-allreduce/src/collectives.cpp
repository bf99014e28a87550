#include "ring_allreduce/collectives.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <vector>

#include "ring_allreduce/chunks.hpp"

namespace ring {
namespace {

template <WireFloat T>
std::span<std::byte> writable_bytes(std::span<T> s) {
  return std::as_writable_bytes(s);
}

}  // namespace

std::string_view algo_name(Algo a) {
  switch (a) {
    case Algo::kRing: return "ring";
    case Algo::kNaive: return "naive";
    case Algo::kTree: return "tree";
    case Algo::kMpi: return "mpi";
  }
  return "?";
}

Algo parse_algo(std::string_view name) {
  if (name == "ring") return Algo::kRing;
  if (name == "naive") return Algo::kNaive;
  if (name == "tree") return Algo::kTree;
  if (name == "mpi") return Algo::kMpi;
  throw std::invalid_argument(fmt::format("unknown algorithm '{}' (ring, naive, tree or mpi)", name));
}

int step_count(Algo a, int world) {
  if (world < 2) return 0;
  switch (a) {
    case Algo::kRing: return 2 * (world - 1);
    case Algo::kNaive: return world - 1;
    case Algo::kTree: return 2;  // reduce phase, broadcast phase
    case Algo::kMpi: return 0;   // opaque to us
  }
  return 0;
}

// ring_allreduce: src/ring_pipeline.cpp (one relay, sliced).

template <WireFloat T>
void naive_allreduce(Transport& t, std::span<T> data, const StepHook& hook) {
  const int n_ranks = t.world();
  const int r = t.rank();
  if (n_ranks < 2) return;
  const std::size_t n = data.size();
  // Slot p holds rank p's whole vector; every slot travels N-1 hops around the ring.
  std::vector<T> all(n * static_cast<std::size_t>(n_ranks));
  const auto slot = [&](int p) { return std::span<T>(all).subspan(static_cast<std::size_t>(p) * n, n); };
  std::copy(data.begin(), data.end(), slot(r).begin());
  std::vector<std::byte> staging;
  for (int s = 0; s < n_ranks - 1; ++s) {
    if (hook) hook(s);
    auto out = slot(mod(r - s, n_ranks));
    auto in = slot(mod(r - s - 1, n_ranks));
    const SendOp send{mod(r + 1, n_ranks), as_wire<T>(out, staging)};
    RecvOp recv{mod(r - 1, n_ranks), writable_bytes(in), {}, 1};
    t.exchange(std::span(&send, 1), std::span(&recv, 1), fmt::format("naive all-gather step {}", s));
    from_wire_inplace(in);
  }
  // The same summation order on every rank, so every rank gets the same bits.
  std::copy(slot(0).begin(), slot(0).end(), data.begin());
  for (int p = 1; p < n_ranks; ++p) {
    auto v = slot(p);
    for (std::size_t i = 0; i < n; ++i) data[i] += v[i];
  }
}

template <WireFloat T>
void tree_allreduce(Transport& t, std::span<T> data, const StepHook& hook) {
  const int n_ranks = t.world();
  const int r = t.rank();
  if (n_ranks < 2) return;
  // Binary tree rooted at rank 0: children 2r+1 and 2r+2, parent (r-1)/2.
  std::vector<int> children;
  for (int c : {2 * r + 1, 2 * r + 2})
    if (c < n_ranks) children.push_back(c);
  std::vector<std::byte> staging;

  if (hook) hook(0);
  // Reduce up: both children's partial sums arrive at once; they are added
  // child by child afterwards so the rounding order is fixed.
  std::vector<std::vector<std::byte>> inbox(children.size(), std::vector<std::byte>(data.size_bytes()));
  std::vector<RecvOp> recvs;
  for (std::size_t i = 0; i < children.size(); ++i) recvs.push_back({children[i], inbox[i], {}, 1});
  t.exchange({}, recvs, "tree reduce (children)");
  for (const auto& box : inbox)
    for (std::size_t i = 0; i < data.size(); ++i) data[i] += load_le<T>(box.data() + i * sizeof(T));
  if (r != 0) {
    const SendOp up{(r - 1) / 2, as_wire<T>(data, staging)};
    t.exchange(std::span(&up, 1), {}, "tree reduce (parent)");
  }

  if (hook) hook(1);
  // Broadcast down: the root's result replaces everyone's partial sums.
  if (r != 0) {
    RecvOp down{(r - 1) / 2, writable_bytes(data), {}, 1};
    t.exchange({}, std::span(&down, 1), "tree broadcast (parent)");
    from_wire_inplace(data);
  }
  std::vector<SendOp> sends;
  for (int c : children) sends.push_back({c, as_wire<T>(data, staging)});
  t.exchange(sends, {}, "tree broadcast (children)");
}

void barrier(Transport& t) {
  const int n_ranks = t.world();
  std::byte token{1};
  std::byte got{0};
  for (int s = 0; s < n_ranks - 1; ++s) {
    const SendOp send{mod(t.rank() + 1, n_ranks), std::span(&token, 1)};
    RecvOp recv{mod(t.rank() - 1, n_ranks), std::span(&got, 1), {}, 1};
    t.exchange(std::span(&send, 1), std::span(&recv, 1), "barrier");
  }
}

template void naive_allreduce<double>(Transport&, std::span<double>, const StepHook&);
template void naive_allreduce<float>(Transport&, std::span<float>, const StepHook&);
template void tree_allreduce<double>(Transport&, std::span<double>, const StepHook&);
template void tree_allreduce<float>(Transport&, std::span<float>, const StepHook&);

}  // namespace ring
