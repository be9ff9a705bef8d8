// The KIR lexer.
#include "KirLexer.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln::ir::kir {

namespace {

class Lexer {
public:
  explicit Lexer(llvm::StringRef text) : s_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      Token t = next();
      bool stop = t.kind == Tok::Eof || t.kind == Tok::Error;
      out.push_back(std::move(t));
      if (stop)
        return out;
    }
  }

private:
  llvm::StringRef s_;
  size_t i_ = 0;
  unsigned line_ = 1, col_ = 1;

  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : 0; }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  static bool name_char(char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
  }

  Token next() {
    while (i_ < s_.size()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\r') {
        advance();
      } else if (c == '#') {
        unsigned line = line_, col = col_;
        size_t start = i_;
        while (i_ < s_.size() && peek() != '\n')
          advance();
        llvm::StringRef comment = s_.slice(start + 1, i_).trim();
        if (comment.consume_front("assume:"))
          return {Tok::Assume, comment.trim().str(), line, col};
      } else {
        break;
      }
    }
    Token t{Tok::Eof, "", line_, col_};
    if (i_ >= s_.size())
      return t;
    char c = peek();
    auto single = [&](Tok k) {
      t.kind = k;
      t.text = std::string(1, c);
      advance();
      return t;
    };
    switch (c) {
    case '\n':
    case ';':
      return single(Tok::Newline);
    case '(':
      return single(Tok::LParen);
    case ')':
      return single(Tok::RParen);
    case '{':
      return single(Tok::LBrace);
    case '}':
      return single(Tok::RBrace);
    case '[':
      return single(Tok::LBracket);
    case ']':
      return single(Tok::RBracket);
    case ',':
      return single(Tok::Comma);
    case ':':
      return single(Tok::Colon);
    case '=':
      return single(Tok::Equal);
    case '*':
      return single(Tok::Star);
    case '"':
      return string_token(t);
    case '%':
    case '@': {
      t.kind = c == '%' ? Tok::Value : Tok::Global;
      advance();
      if (c == '@' && peek() == '"') {
        Token s = string_token(t);
        if (s.kind == Tok::Error)
          return s;
        t.text = s.text;
        return t;
      }
      size_t start = i_;
      while (name_char(peek()))
        advance();
      t.text = s_.slice(start, i_).str();
      if (t.text.empty())
        return error(t, std::string("expected a name after '") + c + "'");
      return t;
    }
    default:
      break;
    }
    bool sign = c == '-' || c == '+';
    char d = sign ? peek(1) : c;
    if (llvm::isDigit(d) || d == '.' ||
        (sign && (s_.substr(i_ + 1).starts_with("inf") ||
                  s_.substr(i_ + 1).starts_with("nan")))) {
      t.kind = Tok::Number;
      size_t start = i_;
      if (sign)
        advance();
      while (name_char(peek()) || ((peek() == '-' || peek() == '+') &&
                                   (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E') &&
                                   llvm::isDigit(s_[start + sign])))
        advance();
      t.text = s_.slice(start, i_).str();
      return t;
    }
    if (llvm::isAlpha(c) || c == '_') {
      t.kind = Tok::Ident;
      size_t start = i_;
      while (llvm::isAlnum(peek()) || peek() == '_')
        advance();
      t.text = s_.slice(start, i_).str();
      return t;
    }
    return error(t, std::string("unexpected character '") + c + "'");
  }

  Token string_token(Token t) {
    t.kind = Tok::String;
    advance(); // opening quote
    std::string value;
    while (true) {
      char c = peek();
      if (i_ >= s_.size() || c == '\n')
        return error(t, "unterminated string");
      advance();
      if (c == '"')
        break;
      if (c == '\\') {
        char e = peek();
        if (i_ >= s_.size() || e == '\n')
          return error(t, "unterminated string");
        advance();
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      value += c;
    }
    t.text = std::move(value);
    return t;
  }

  Token error(Token t, std::string message) {
    t.kind = Tok::Error;
    t.text = std::move(message);
    i_ = s_.size();
    return t;
  }
};

} // namespace

std::vector<Token> lex(llvm::StringRef text) { return Lexer(text).run(); }

} // namespace kiln::ir::kir
