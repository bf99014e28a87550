// Stage 2: tokens -> AST by recursive descent, one function per grammar
// production (the grammar is written above each one in parser.cpp):
//
//   program := kernel*
//   kernel  := 'kernel' IDENT '(' [param (',' param)*] ')' '{' stmt* '}'
//   param   := IDENT ':' 'f32' ['*']
//   stmt    := IDENT '[' expr ']' '=' expr ';'  |  'let' IDENT '=' expr ';'
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := '-' unary | primary
//   primary := NUMBER | IDENT | IDENT '[' expr ']' | IDENT '(' [expr (',' expr)*] ')' | '(' expr
//   ')'
//
// On a syntax error the parser reports it and skips to the next ';' or '}', so
// one run shows the errors of several statements.
#pragma once

#include <vector>

#include "ptxc/ast.hpp"
#include "ptxc/lexer.hpp"

namespace ptxc {

Program parse(const std::vector<Token>& tokens, Diagnostics& diags);

}  // namespace ptxc
