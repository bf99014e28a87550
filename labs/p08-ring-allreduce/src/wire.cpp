#include "ring_allreduce/wire.hpp"

namespace ring {

std::string_view dtype_name(DType t) { return t == DType::kF64 ? "double" : "float"; }
std::size_t dtype_size(DType t) { return t == DType::kF64 ? 8 : 4; }

}  // namespace ring
