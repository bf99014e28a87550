// Stage 2's output: the abstract syntax tree. Plain values; the parser builds
// it, sema checks it, lowering and the reference evaluator read it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ptxc/diagnostics.hpp"

namespace ptxc {

enum class ExprKind {
  kNumber,  // 2.0, 3
  kVar,     // a scalar parameter or a `let` name
  kIndex,   // ptr[i]
  kUnary,   // -x
  kBinary,  // x + y, x - y, x * y, x / y
  kCall,    // min(x, y), relu(x), ...
};

struct Expr {
  ExprKind kind = ExprKind::kNumber;
  SourceLoc loc;
  float value = 0.0F;                       // kNumber: the literal rounded to f32
  std::string name;                         // kVar, kIndex (the pointer), kCall (the function)
  char op = 0;                              // kUnary '-', kBinary '+' '-' '*' '/'
  std::vector<std::unique_ptr<Expr>> args;  // kIndex: the index; kUnary: 1; kBinary: 2; kCall: n
  // Levels of the tree from this node down (a leaf is 1). The parser keeps it
  // under a cap, so the recursive passes over the tree cannot overflow the stack.
  int height = 1;
};
using ExprPtr = std::unique_ptr<Expr>;

enum class StmtKind { kStore, kLet };

struct Stmt {
  StmtKind kind = StmtKind::kStore;
  SourceLoc loc;
  std::string name;  // kStore: the pointer; kLet: the new name
  ExprPtr index;     // kStore: the subscript (sema requires `i`)
  ExprPtr value;
};

enum class Type { kF32, kF32Ptr };

struct Param {
  std::string name;
  Type type = Type::kF32;
  SourceLoc loc;
};

struct Kernel {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;  // the user's; the hidden `n` is appended by the backends
  std::vector<Stmt> body;
};

struct Program {
  std::vector<Kernel> kernels;
};

// The AST as an S-expression, one kernel per block (ptxc --emit ast).
std::string dump_ast(const Program& program);

}  // namespace ptxc
