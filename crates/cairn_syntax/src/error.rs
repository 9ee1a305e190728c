//! Syntax errors: what the lexer and parser report beside the tree.
//!
//! Errors are never stored in the tree (the tree is a value; style.md). Each carries the stable
//! code of the rule it breaks, a message that says what is wrong and where the fix goes, and the
//! byte range it covers in the parsed text. Turning ranges into lines and columns is the caller's
//! business.

use std::fmt;

use rowan::TextRange;

/// The diagnostic codes the syntax layer can raise (language Appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorCode {
    /// `E-LEX`: a character that starts no token, a bad escape, a bad character literal, `$`
    /// outside a recipe.
    Lex,
    /// `E-PARSE`: a syntax error.
    Parse,
    /// `E-DEPTH`: nesting beyond the language's limit.
    Depth,
    /// `E-NAME`: a reserved word where a name is needed, or `if`/`match` used as an expression.
    Name,
    /// `E-DECLARATION`: something at top level that is no declaration.
    Declaration,
    /// `E-PLACE`: an unknown placement word after `@`.
    Place,
    /// `E-STATIC`: a non-negative integer literal was required.
    Static,
    /// `E-TEST`: a malformed `test` block.
    Test,
    /// `E-REDUCE-OP`: an unknown reduction operator.
    ReduceOp,
    /// `E-CALL`: a call through something other than a name, a path, an instance or a method.
    Call,
    /// `E-TYPE`: an index used as type arguments that is not a type or natural.
    Type,
    /// `E-EXPRESSION-BODY`: `= expr;` on a function without a result type.
    ExpressionBody,
    /// `E-ALIGN`: `align(n)` outside the powers of two 8..65536.
    Align,
    /// `E-LENDS`: a second `lends` in one record.
    Lends,
    /// `E-EXTERN`: an extern link name that is not one C symbol.
    Extern,
    /// `E-PLAN`: a plan item that is not a word, or repeated.
    Plan,
    /// `E-RECIPE`: recipe bracket parameters other than naturals and functions.
    Recipe,
    /// `E-COLLECT-BINDING`: a collector bound mutably, or a reduction that binds and stores (or
    /// does neither).
    CollectBinding,
    /// `E-ASM-OPERANDS`: an assembly output written after an input.
    AsmOperands,
}

impl ErrorCode {
    /// The code as written in diagnostics, e.g. `E-PARSE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Lex => "E-LEX",
            ErrorCode::Parse => "E-PARSE",
            ErrorCode::Depth => "E-DEPTH",
            ErrorCode::Name => "E-NAME",
            ErrorCode::Declaration => "E-DECLARATION",
            ErrorCode::Place => "E-PLACE",
            ErrorCode::Static => "E-STATIC",
            ErrorCode::Test => "E-TEST",
            ErrorCode::ReduceOp => "E-REDUCE-OP",
            ErrorCode::Call => "E-CALL",
            ErrorCode::Type => "E-TYPE",
            ErrorCode::ExpressionBody => "E-EXPRESSION-BODY",
            ErrorCode::Align => "E-ALIGN",
            ErrorCode::Lends => "E-LENDS",
            ErrorCode::Extern => "E-EXTERN",
            ErrorCode::Plan => "E-PLAN",
            ErrorCode::Recipe => "E-RECIPE",
            ErrorCode::CollectBinding => "E-COLLECT-BINDING",
            ErrorCode::AsmOperands => "E-ASM-OPERANDS",
        }
    }

    /// Every code the syntax layer can raise.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::Lex,
        ErrorCode::Parse,
        ErrorCode::Depth,
        ErrorCode::Name,
        ErrorCode::Declaration,
        ErrorCode::Place,
        ErrorCode::Static,
        ErrorCode::Test,
        ErrorCode::ReduceOp,
        ErrorCode::Call,
        ErrorCode::Type,
        ErrorCode::ExpressionBody,
        ErrorCode::Align,
        ErrorCode::Lends,
        ErrorCode::Extern,
        ErrorCode::Plan,
        ErrorCode::Recipe,
        ErrorCode::CollectBinding,
        ErrorCode::AsmOperands,
    ];
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One syntax error: its code, its message and the text it covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub code: ErrorCode,
    pub message: String,
    pub range: TextRange,
}

impl SyntaxError {
    pub fn new(code: ErrorCode, message: impl Into<String>, range: TextRange) -> SyntaxError {
        SyntaxError { code, message: message.into(), range }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {:?}: {}", self.code, self.range, self.message)
    }
}
