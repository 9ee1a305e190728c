//! The lexer: cuts source text into tokens by the one greedy rule set of language §1.
//!
//! Invariant: the tokens cover the input exactly, in order, with no gaps, so that the tree built
//! from them is lossless. Every byte the rules do not accept still lands in a token (an
//! `ERROR_TOKEN`, or a `STRING`/`CHAR` that is unterminated or holds a bad escape) and an `E-LEX`
//! error names it; the lexer never fails and never looks at more than one token's worth of text at
//! a time, so it runs in linear time on any input.

use rowan::{TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::error::{ErrorCode, SyntaxError};

/// One token: its kind and its length in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: SyntaxKind,
    pub len: TextSize,
}

/// The tokens of a text, and the lexical errors met while cutting them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub errors: Vec<SyntaxError>,
    /// Parallel to `errors`: true for an error that stops the original's lexer (an unexpected
    /// character, an unterminated or empty literal), which outranks every parse error.
    pub hard: Vec<bool>,
}

/// Cuts `text` into tokens. Never fails; see the module comment.
pub fn lex(text: &str) -> Lexed {
    let mut lexer = Lexer { text, bytes: text.as_bytes(), pos: 0, out: Lexed::default() };
    lexer.run();
    lexer.out
}

/// Lexes one token at the start of `text` and returns its kind and byte length, or `None` for an
/// empty text. Used by renderers that underline "the token that starts at the column".
pub fn first_token(text: &str) -> Option<(SyntaxKind, usize)> {
    if text.is_empty() {
        return None;
    }
    let mut lexer = Lexer { text, bytes: text.as_bytes(), pos: 0, out: Lexed::default() };
    let kind = lexer.next_kind();
    Some((kind, lexer.pos))
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: Lexed,
}

impl Lexer<'_> {
    fn run(&mut self) {
        // A rough guess (one token per five bytes) avoids most regrowth on real programs.
        self.out.tokens.reserve(self.bytes.len() / 5 + 1);
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let kind = self.next_kind();
            debug_assert!(self.pos > start, "the lexer must always make progress");
            let len = TextSize::from((self.pos - start) as u32);
            // Runs of unrecognised characters become one token with one error.
            if kind == ERROR_TOKEN
                && let Some(last) = self.out.tokens.last_mut()
                && last.kind == ERROR_TOKEN
                && self.out.errors.last().is_some_and(|e| e.range.end() == TextSize::from(start as u32))
            {
                last.len += len;
                let error = self.out.errors.last_mut().expect("checked above");
                error.range = TextRange::new(error.range.start(), TextSize::from(self.pos as u32));
                continue;
            }
            if kind == ERROR_TOKEN {
                let found = &self.text[start..self.pos];
                self.push_error(start, self.pos, unexpected_character_message(found), true);
            }
            self.out.tokens.push(Token { kind, len });
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn push_error(&mut self, start: usize, end: usize, message: String, hard: bool) {
        let range = TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32));
        self.out.errors.push(SyntaxError::new(ErrorCode::Lex, message, range));
        self.out.hard.push(hard);
    }

    /// Consumes one token and returns its kind; always advances by at least one character.
    fn next_kind(&mut self) -> SyntaxKind {
        let byte = self.bytes[self.pos];
        match byte {
            b'/' if self.peek(1) == Some(b'/') => {
                // A comment runs to the end of the line, newline excluded.
                let rest = &self.bytes[self.pos..];
                self.pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                COMMENT
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' => {
                let start = self.pos;
                self.pos += 1;
                while let Some(b) = self.peek(0)
                    && (b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
                {
                    self.pos += 1;
                }
                SyntaxKind::from_keyword(&self.text[start..self.pos]).unwrap_or(IDENT)
            }
            b'0'..=b'9' => self.number(),
            b'"' => self.quoted(b'"'),
            b'\'' => self.quoted(b'\''),
            _ if byte.is_ascii_whitespace() || byte == 0x0b || (0x1c..=0x1f).contains(&byte) => self.whitespace(),
            _ if byte >= 0x80 => {
                let ch = self.text[self.pos..].chars().next().expect("pos is on a char boundary");
                if ch.is_whitespace() {
                    self.whitespace()
                } else {
                    self.pos += ch.len_utf8();
                    ERROR_TOKEN
                }
            }
            _ => self.punct(),
        }
    }

    fn whitespace(&mut self) -> SyntaxKind {
        while self.pos < self.bytes.len() {
            let byte = self.bytes[self.pos];
            if byte.is_ascii_whitespace() || byte == 0x0b || (0x1c..=0x1f).contains(&byte) {
                self.pos += 1;
            } else if byte >= 0x80 {
                let ch = self.text[self.pos..].chars().next().expect("pos is on a char boundary");
                if !ch.is_whitespace() {
                    break;
                }
                self.pos += ch.len_utf8();
            } else {
                break;
            }
        }
        WHITESPACE
    }

    fn eat_digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek(0).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Integers (decimal, `0x` hex) and floats (`1.5`, `1.5e-3`, `2e10`); `1.` and `0..n` keep the
    /// dot out of the number.
    fn number(&mut self) -> SyntaxKind {
        if self.bytes[self.pos] == b'0'
            && self.peek(1) == Some(b'x')
            && self.peek(2).is_some_and(|b| b.is_ascii_hexdigit())
        {
            self.pos += 2;
            while self.peek(0).is_some_and(|b| b.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            return INT_NUMBER;
        }
        self.eat_digits();
        let mut kind = INT_NUMBER;
        if self.peek(0) == Some(b'.') && self.peek(1).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
            self.eat_digits();
            kind = FLOAT_NUMBER;
        }
        if matches!(self.peek(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek(1), Some(b'+' | b'-')));
            if self.peek(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1 + sign;
                self.eat_digits();
                kind = FLOAT_NUMBER;
            }
        }
        kind
    }

    /// A string or character literal. The token always ends at the closing quote, or before the
    /// end of the line when there is none (then it is unterminated). As in the original, an
    /// unterminated or empty literal stops the lexer (a *hard* error, reported before any parse
    /// error), while a bad escape or a character literal of several characters is reported where
    /// the parser meets the literal, at its first character.
    fn quoted(&mut self, quote: u8) -> SyntaxKind {
        let start = self.pos;
        let kind = if quote == b'"' { STRING } else { CHAR };
        let noun = if quote == b'"' { "string" } else { "character" };
        self.pos += 1;
        let mut code_points = 0usize;
        let mut closed = false;
        let mut bad_escape: Option<String> = None;
        while let Some(byte) = self.peek(0) {
            match byte {
                b'\n' => break,
                b'\r' if self.peek(1) == Some(b'\n') => break,
                _ if byte == quote => {
                    self.pos += 1;
                    closed = true;
                    break;
                }
                b'\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some(b'n' | b't' | b'r' | b'0' | b'\\' | b'"' | b'\'') => self.pos += 1,
                        Some(b'x') => {
                            self.pos += 1;
                            let digits =
                                (0..2).take_while(|&i| self.peek(i).is_some_and(|b| b.is_ascii_hexdigit())).count();
                            self.pos += digits;
                            if digits != 2 && bad_escape.is_none() {
                                bad_escape = Some(format!(
                                    "The escape `\\x` in this {noun} literal needs exactly two hex digits, as in `\\x41`."
                                ));
                            }
                        }
                        Some(b'\n') | None => break,
                        Some(_) => {
                            let ch = self.text[self.pos..].chars().next().expect("char boundary");
                            self.pos += ch.len_utf8();
                            if bad_escape.is_none() {
                                bad_escape = Some(format!(
                                    "`\\{ch}` is not an escape CAIRN knows; use one of \\n \\t \\r \\0 \\\\ \\\" \\' or \\xHH."
                                ));
                            }
                        }
                    }
                    code_points += 1;
                }
                _ => {
                    let ch = self.text[self.pos..].chars().next().expect("char boundary");
                    self.pos += ch.len_utf8();
                    code_points += 1;
                }
            }
        }
        if !closed {
            let closing = if quote == b'"' { "\"" } else { "'" };
            let message = format!(
                "This {noun} literal is not closed on its line; end it with `{closing}` (a literal cannot hold a raw newline)."
            );
            self.push_error(start, self.pos, message, true);
        } else if quote == b'\'' && code_points == 0 {
            self.push_error(
                start,
                self.pos,
                "A character literal holds exactly one character; `''` is empty.".into(),
                true,
            );
        } else if let Some(message) = bad_escape {
            self.push_error(start, self.pos, message, false);
        } else if quote == b'\'' && code_points != 1 {
            let message =
                "A character literal holds exactly one character after escapes; use a string literal for more."
                    .to_string();
            self.push_error(start, self.pos, message, false);
        }
        kind
    }

    fn punct(&mut self) -> SyntaxKind {
        let first = self.bytes[self.pos];
        let second = self.peek(1);
        let two = match (first, second) {
            (b'=', Some(b'>')) => Some(FAT_ARROW),
            (b'-', Some(b'>')) => Some(THIN_ARROW),
            (b'.', Some(b'.')) => Some(DOT2),
            (b'=', Some(b'=')) => Some(EQ2),
            (b'!', Some(b'=')) => Some(NEQ),
            (b'<', Some(b'=')) => Some(LTEQ),
            (b'>', Some(b'=')) => Some(GTEQ),
            (b'&', Some(b'&')) => Some(AMP2),
            (b'|', Some(b'|')) => Some(PIPE2),
            (b'+', Some(b'=')) => Some(PLUSEQ),
            (b'-', Some(b'=')) => Some(MINUSEQ),
            (b'*', Some(b'=')) => Some(STAREQ),
            (b'/', Some(b'=')) => Some(SLASHEQ),
            (b'%', Some(b'=')) => Some(PERCENTEQ),
            (b'&', Some(b'=')) => Some(AMPEQ),
            (b'|', Some(b'=')) => Some(PIPEEQ),
            (b'^', Some(b'=')) => Some(CARETEQ),
            _ => None,
        };
        if let Some(kind) = two {
            self.pos += 2;
            return kind;
        }
        let one = match first {
            b'{' => L_CURLY,
            b'}' => R_CURLY,
            b'(' => L_PAREN,
            b')' => R_PAREN,
            b'[' => L_BRACK,
            b']' => R_BRACK,
            b',' => COMMA,
            b';' => SEMICOLON,
            b':' => COLON,
            b'.' => DOT,
            b'@' => AT,
            b'+' => PLUS,
            b'-' => MINUS,
            b'*' => STAR,
            b'/' => SLASH,
            b'%' => PERCENT,
            b'<' => LT,
            b'>' => GT,
            b'=' => EQ,
            b'!' => BANG,
            b'&' => AMP,
            b'|' => PIPE,
            b'^' => CARET,
            b'~' => TILDE,
            _ => ERROR_TOKEN,
        };
        self.pos += 1;
        one
    }
}

fn unexpected_character_message(found: &str) -> String {
    let shown: String = found.chars().take(8).collect();
    let hint = match shown.chars().next() {
        Some('?') => " CAIRN has no `?` operator; propagate a failure with `try e`.",
        Some('#') => " CAIRN has no attributes; comments start with `//`.",
        Some('`') => " Backquotes are not CAIRN syntax.",
        Some('\\') => " A backslash is only legal inside a string or character literal.",
        _ => "",
    };
    if shown.chars().all(|c| c.is_control()) {
        let codes: Vec<String> = shown.chars().map(|c| format!("U+{:04X}", c as u32)).collect();
        format!("Unexpected character {} starts no CAIRN token.{hint}", codes.join(" "))
    } else {
        format!("Unexpected character `{shown}` starts no CAIRN token.{hint}")
    }
}
