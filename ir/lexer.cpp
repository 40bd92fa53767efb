// Lexer of the weft text format (see ir/lexer.h): a single forward scan that tracks line and
// column and reports malformed input (unterminated comments, invalid numbers, stray
// characters) as ParseError at the position where the problem starts.
#include "ir/lexer.h"

#include <cstring>

#include "ir/parser.h"

namespace weft {

std::string Token::describe() const {
  if (kind == TokenKind::End) return "end of file";
  return "'" + text + "'";
}

namespace {

bool isIdentifierStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool isIdentifierChar(unsigned char c) { return isIdentifierStart(c) || (c >= '0' && c <= '9'); }
bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(const std::string& text, std::shared_ptr<const std::string> file)
      : text_(text), file_(std::move(file)) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skipSpaceAndComments();
      SourceLoc loc = here();
      if (pos_ >= text_.size()) {
        tokens.push_back(Token{TokenKind::End, "", loc});
        return tokens;
      }
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (isIdentifierStart(c)) {
        size_t start = pos_;
        while (pos_ < text_.size() && isIdentifierChar(static_cast<unsigned char>(text_[pos_]))) {
          advance();
        }
        tokens.push_back(Token{TokenKind::Identifier, text_.substr(start, pos_ - start), loc});
      } else if (isDigit(c)) {
        tokens.push_back(number(loc));
      } else {
        tokens.push_back(symbol(loc));
      }
    }
  }

 private:
  SourceLoc here() const { return SourceLoc{file_, line_, column_}; }

  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void advance() {
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    ++pos_;
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else if ((c & 0xC0) != 0x80) {  // UTF-8 continuation bytes do not start a column
      ++column_;
    }
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && peek() != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        SourceLoc start = here();
        advance();
        advance();
        while (true) {
          if (pos_ >= text_.size()) {
            throw ParseError(start, "expected '*/' to end this comment, found end of file");
          }
          if (peek() == '*' && peek(1) == '/') {
            advance();
            advance();
            break;
          }
          advance();
        }
      } else {
        return;
      }
    }
  }

  // digits [. digits] [(e|E) [+|-] digits] [f|F]; a float needs a fraction or an exponent.
  Token number(const SourceLoc& loc) {
    size_t start = pos_;
    bool isFloat = false;
    bool valid = true;
    while (isDigit(peek())) advance();
    if (peek() == '.' && isDigit(peek(1))) {
      isFloat = true;
      advance();
      while (isDigit(peek())) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      isFloat = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!isDigit(peek())) valid = false;
      while (isDigit(peek())) advance();
    }
    if (peek() == 'f' || peek() == 'F') {
      if (!isFloat) valid = false;  // C has no 1f
      advance();
    }
    // A number runs into a following letter, digit or '.' digit: 12abc, 1.5.3, 1e.
    while (isIdentifierChar(static_cast<unsigned char>(peek())) ||
           (peek() == '.' && isDigit(peek(1)))) {
      valid = false;
      advance();
    }
    std::string text = text_.substr(start, pos_ - start);
    if (!valid) throw ParseError(loc, "invalid number '" + text + "'");
    return Token{isFloat ? TokenKind::Float : TokenKind::Integer, text, loc};
  }

  Token symbol(const SourceLoc& loc) {
    static const char* const twoChar[] = {"->", "<=", ">=", "==", "!=", "&&", "||"};
    for (const char* s : twoChar) {
      if (peek() == s[0] && peek(1) == s[1]) {
        advance();
        advance();
        return Token{TokenKind::Symbol, s, loc};
      }
    }
    char c = peek();
    if (c != '\0' && std::strchr("()[],:.+-*/%<>!?=", c)) {
      advance();
      return Token{TokenKind::Symbol, std::string(1, c), loc};
    }
    // Report the whole UTF-8 sequence of a stray character.
    size_t start = pos_;
    advance();
    while (pos_ < text_.size() && (static_cast<unsigned char>(peek()) & 0xC0) == 0x80) advance();
    throw ParseError(loc, "unexpected character '" + text_.substr(start, pos_ - start) + "'");
  }

  const std::string& text_;
  std::shared_ptr<const std::string> file_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::vector<Token> tokenize(const std::string& text, std::shared_ptr<const std::string> file) {
  return Lexer(text, std::move(file)).run();
}

}  // namespace weft
