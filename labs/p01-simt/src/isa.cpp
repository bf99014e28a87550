#include "simt/isa.hpp"

#include "opcode_table.hpp"

namespace simt {

std::string_view mnemonic(Opcode op) { return opcode_info(op).name; }

}  // namespace simt
