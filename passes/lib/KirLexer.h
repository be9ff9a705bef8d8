// The KIR lexer: text -> tokens. Lexing errors become one Error token (the
// parser reports it when it gets there, so diagnostics come in source
// order). Private to the KIR parser.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace kiln::ir::kir {

// clang-format off
enum class Tok {
  Eof, Newline, Error,
  Ident, Number, String, Assume,
  Value,  // %name (text without the %)
  Global, // @name or @"quoted name"
  LParen, RParen, LBrace, RBrace, LBracket, RBracket,
  Comma, Colon, Equal, Star,
};
// clang-format on

struct Token {
  Tok kind;
  std::string text; // identifier, number, value/graph name, string contents
  unsigned line, col;
};

// Tokens of `text`, ending with an Eof token or at the first Error token
// (whose text is the message). Statements end at Newline tokens (a newline
// or `;`); `# assume: <relation>` comments are Assume tokens, other
// comments are skipped.
std::vector<Token> lex(llvm::StringRef text);

} // namespace kiln::ir::kir
