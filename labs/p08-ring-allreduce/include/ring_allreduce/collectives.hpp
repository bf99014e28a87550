// The three all-reduce algorithms, each written against Transport::exchange():
//   ring  — reduce-scatter then all-gather, 2(N-1) steps, 2(N-1)/N*V bytes per rank
//   naive — all-gather every full vector around the ring, then sum: (N-1)*V per rank
//   tree  — reduce up a binary tree to rank 0, broadcast back down: 2*ceil(log2 N) levels
// All three leave bit-identical results on every rank (each element is reduced once,
// in an order fixed by the algorithm, then copied).
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "ring_allreduce/mpi_launch.hpp"
#include "ring_allreduce/transport.hpp"
#include "ring_allreduce/wire.hpp"

namespace ring {

// kMpi is the reference: MPI_Allreduce in place, only under mpirun (mpi_launch.hpp).
enum class Algo { kRing, kNaive, kTree, kMpi };

std::string_view algo_name(Algo a);
// Throws std::invalid_argument for an unknown name.
Algo parse_algo(std::string_view name);

// Called at the start of every communication step with its global index
// (0-based). The failure demo uses it to exit a rank mid-collective.
using StepHook = std::function<void(int step)>;

// Number of steps the hook sees for one all-reduce on `world` ranks.
int step_count(Algo a, int world);

template <WireFloat T>
void ring_allreduce(Transport& t, std::span<T> data, const StepHook& hook = {});
template <WireFloat T>
void naive_allreduce(Transport& t, std::span<T> data, const StepHook& hook = {});
template <WireFloat T>
void tree_allreduce(Transport& t, std::span<T> data, const StepHook& hook = {});

template <WireFloat T>
void allreduce(Algo a, Transport& t, std::span<T> data, const StepHook& hook = {}) {
  switch (a) {
    case Algo::kRing: return ring_allreduce(t, data, hook);
    case Algo::kNaive: return naive_allreduce(t, data, hook);
    case Algo::kTree: return tree_allreduce(t, data, hook);
    case Algo::kMpi: return mpi_allreduce_inplace(data);
  }
}

// Returns once every rank has entered it (a token passed N-1 times around the ring).
void barrier(Transport& t);

}  // namespace ring
