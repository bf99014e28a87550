// The driver: source text through every stage. Front-end errors (lexer,
// parser, sema) are collected and thrown together as one CompileError.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptxc/ast.hpp"
#include "ptxc/ir.hpp"
#include "ptxc/lexer.hpp"
#include "ptxc/passes.hpp"
#include "ptxc/ptx_emitter.hpp"

namespace ptxc {

struct CompileOptions {
  PassOptions passes;  // -O1: all on
  EmitOptions emit;

  // -O0: no passes, every constant materialised with mov.f32.
  static CompileOptions at_level(int level);
};

struct Compilation {
  Program program;
  std::vector<Function> functions;  // optimised IR, one per kernel
  std::vector<PassStats> stats;
  std::string ptx;  // the whole module
};

// Lexes only (ptxc compile --emit tokens); throws CompileError on bad characters.
std::vector<Token> tokenize(std::string_view source, const std::string& file_name);

// Throws CompileError (rendered diagnostics) if the front end found errors.
Compilation compile(std::string_view source, const std::string& file_name,
                    const CompileOptions& opts);

}  // namespace ptxc
