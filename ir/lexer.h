// Lexer of the weft text format: turns a file's text into tokens that carry their
// file:line:column, so that every later parse error can point at the offending token.
//
// Tokens are identifiers (ASCII letters, digits, '_' and any non-ASCII UTF-8 byte, so that
// tuning parameters may be written κ or θ), integer and float literals (C spelling: 2, 1.5,
// 1.5f, 1e-3f; a float literal has a fraction, an exponent or both, optionally an 'f'),
// operators and punctuation. Comments are `//` to the end of the line and `/* */`. Columns
// count characters (UTF-8 code points), starting at 1.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/source_loc.h"

namespace weft {

enum class TokenKind { Identifier, Integer, Float, Symbol, End };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // as written; "" for End
  SourceLoc loc;

  bool is(TokenKind k, const char* t) const { return kind == k && text == t; }
  bool isSymbol(const char* t) const { return is(TokenKind::Symbol, t); }
  bool isIdentifier(const char* t) const { return is(TokenKind::Identifier, t); }
  // How an error message names the token: 'text', or "end of file".
  std::string describe() const;
};

// Splits `text` into tokens ending with one End token. Throws ParseError (ir/parser.h) for an
// unterminated comment, an invalid number or a character that starts no token.
std::vector<Token> tokenize(const std::string& text, std::shared_ptr<const std::string> file);

}  // namespace weft
