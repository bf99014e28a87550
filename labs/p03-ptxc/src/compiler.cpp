#include "ptxc/compiler.hpp"

#include "ptxc/parser.hpp"
#include "ptxc/sema.hpp"

namespace ptxc {

CompileOptions CompileOptions::at_level(int level) {
  CompileOptions o;
  if (level <= 0) {
    o.passes = PassOptions::none();
    o.emit.inline_immediates = false;
  }
  return o;
}

std::vector<Token> tokenize(std::string_view source, const std::string& file_name) {
  Diagnostics diags(file_name, source);
  auto tokens = lex(source, diags);
  if (diags.has_errors()) throw CompileError(diags.render(), diags.errors().size());
  return tokens;
}

Compilation compile(std::string_view source, const std::string& file_name,
                    const CompileOptions& opts) {
  Diagnostics diags(file_name, source);
  const auto tokens = lex(source, diags);
  Compilation out;
  out.program = parse(tokens, diags);
  // Sema runs even after syntax errors, on what parsed, so one run reports both kinds.
  check(out.program, diags);
  if (diags.has_errors()) throw CompileError(diags.render(), diags.errors().size());
  for (const auto& k : out.program.kernels) {
    Function fn = lower(k);
    out.stats.push_back(optimize(fn, opts.passes));
    out.functions.push_back(std::move(fn));
  }
  out.ptx = emit_ptx(out.functions, opts.emit);
  return out;
}

}  // namespace ptxc
