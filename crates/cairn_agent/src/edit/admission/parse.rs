//! Step 1 of judging a reply: it parses alone, as the form its kind demands — a block `{ … }`
//! or `= expr;` for a body (`E-EXPRESSION-BODY` for `= e;` on a function returning nothing),
//! exactly one expression for a site. Parse errors are located in the reply.
//!
//! Boundary: an expression reply is parsed on lines of its own, so a trailing comment cannot
//! hide the text after it here; the splice judges that (`E-DECLARATION`, `tokens`).

use cairn_syntax::SyntaxKind;
use cairn_syntax::ast::AstNode;

use crate::edit::EditHost;
use crate::edit::refusal::Refusal;

/// What an expression reply is wrapped in to parse: a `let` initializer on lines of its own.
const EXPR_PREFIX: &str = "fn __reply() { let __v = \n";
/// What an `= expr;` body is parsed after.
const EXPR_BODY_PREFIX: &str = "fn __reply() -> u8 ";

impl EditHost {
    /// Parses a reply alone: a block or `= expr;` for a body, one expression for a site.
    pub(super) fn parse_alone(&self, index: usize, replacement: &str, is_expr: bool) -> Result<(), Refusal> {
        if is_expr {
            return self.one_expression(replacement);
        }
        // The reply's first token decides its form (comments and spacing before it are fine).
        let first = cairn_syntax::lex(replacement).tokens.into_iter().map(|t| t.kind).find(|k| !k.is_trivia());
        match first {
            Some(SyntaxKind::L_CURLY) => self.one_block(replacement),
            Some(SyntaxKind::EQ) => {
                self.expression_body_allowed(index)?;
                self.one_expression_body(replacement)
            }
            _ => Err(self.reply_refusal("E-PARSE", "A body reply is a block `{ … }` or `= expr;`.", replacement, 0)),
        }
    }

    /// An `= expr;` body is for a function that returns something.
    fn expression_body_allowed(&self, index: usize) -> Result<(), Refusal> {
        let session = &self.sessions[index];
        let returns_nothing = self.target(session).is_some_and(|item| {
            cairn_hir::fn_signature(self.ws(session.program).db(), item).ret == cairn_hir::types::Ty::Void
        });
        if returns_nothing {
            return Err(self.rejection(
                "E-EXPRESSION-BODY",
                format!("{} returns nothing, so its body cannot be `= expr;`: write a block.", session.symbol),
            ));
        }
        Ok(())
    }

    /// An expression reply: unwrapped, on lines of its own, it must be one expression to the end
    /// of its text — the initializer of the one statement, spanning the reply.
    fn one_expression(&self, replacement: &str) -> Result<(), Refusal> {
        let text = format!("{EXPR_PREFIX}{replacement}\n; }}");
        let parse = self.parsed(cairn_syntax::parse(&text), replacement, EXPR_PREFIX.len())?;
        let root = parse.syntax_node();
        let span = non_trivia_span(replacement).map(|(a, b)| (a + EXPR_PREFIX.len(), b + EXPR_PREFIX.len()));
        let statements: Vec<cairn_syntax::SyntaxNode> = root
            .descendants()
            .find(|n| n.kind() == SyntaxKind::BLOCK)
            .map(|block| block.children().collect())
            .unwrap_or_default();
        let single = match statements.as_slice() {
            [statement] if statement.kind() == SyntaxKind::LET_STMT => {
                statement.children().filter(|c| cairn_syntax::ast::Expr::can_cast(c.kind())).last().is_some_and(|e| {
                    Some((usize::from(e.text_range().start()), usize::from(e.text_range().end()))) == span
                })
            }
            _ => false,
        };
        if !single {
            return Err(self.reply_refusal(
                "E-PARSE",
                "An expression reply is exactly one expression.",
                replacement,
                0,
            ));
        }
        Ok(())
    }

    /// A body reply `= expr;`: one expression and its `;`, nothing after.
    fn one_expression_body(&self, replacement: &str) -> Result<(), Refusal> {
        let text = format!("{EXPR_BODY_PREFIX}{replacement}");
        let parse = self.parsed(cairn_syntax::parse(&text), replacement, EXPR_BODY_PREFIX.len())?;
        if parse.syntax_node().children().filter(|c| !c.kind().is_trivia()).count() != 1 {
            return Err(self.reply_refusal(
                "E-PARSE",
                "A body reply `= expr;` is one expression and its `;`.",
                replacement,
                0,
            ));
        }
        Ok(())
    }

    /// A block body reply: one block, and nothing after it.
    fn one_block(&self, replacement: &str) -> Result<(), Refusal> {
        let parse = self.parsed(cairn_syntax::parse_block(replacement), replacement, 0)?;
        let root = parse.syntax_node();
        let blocks = root.children().filter(|c| c.kind() == SyntaxKind::BLOCK).count();
        if blocks != 1 || root.children().count() != 1 {
            return Err(self.reply_refusal("E-PARSE", "A body reply is exactly one block.", replacement, 0));
        }
        Ok(())
    }

    /// The parse, unless it has an error: then its first error, located in the reply (which
    /// starts at byte `prefix` of the parsed text).
    fn parsed(
        &self,
        parse: cairn_syntax::Parse,
        replacement: &str,
        prefix: usize,
    ) -> Result<cairn_syntax::Parse, Refusal> {
        match parse.first_error() {
            Some(error) => {
                let at = usize::from(error.range.start()).saturating_sub(prefix).min(replacement.len());
                Err(self.reply_refusal(error.code.as_str(), &error.message, replacement, at))
            }
            None => Ok(parse),
        }
    }
}

/// The byte range from the first to the end of the last token that is not a comment or spacing.
fn non_trivia_span(text: &str) -> Option<(usize, usize)> {
    let mut at = 0usize;
    let mut span: Option<(usize, usize)> = None;
    for token in cairn_syntax::lex(text).tokens {
        let len = usize::from(token.len);
        if !token.kind.is_trivia() {
            span = Some((span.map_or(at, |s| s.0), at + len));
        }
        at += len;
    }
    span
}
