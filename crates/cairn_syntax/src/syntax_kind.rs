//! Every kind of token and node a CAIRN syntax tree can hold.
//!
//! Tokens come first, then nodes; `SyntaxKind` is `#[repr(u16)]` so that rowan can store it.
//! Reserved words (language §1) each have their own token kind and the lexer produces them
//! directly; contextual words are lexed as `IDENT` and re-kinded by the parser only in the
//! position that gives them meaning (so `test` stays an identifier everywhere else).
//! Invariant: the order of this enum is not part of any API; nothing persists raw kind numbers.

macro_rules! syntax_kinds {
    (
        punct { $($p_name:ident = $p_text:literal,)* }
        keywords { $($k_name:ident = $k_text:literal,)* }
        contextual { $($c_name:ident = $c_text:literal,)* }
        tokens { $($(#[$t_meta:meta])* $t_name:ident,)* }
        nodes { $($(#[$n_meta:meta])* $n_name:ident,)* }
    ) => {
        /// The kind of a token or node.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        pub enum SyntaxKind {
            $($p_name,)*
            $($k_name,)*
            $($c_name,)*
            $($(#[$t_meta])* $t_name,)*
            $($(#[$n_meta])* $n_name,)*
            /// Sentinel; never appears in a tree.
            __LAST,
        }

        impl SyntaxKind {
            /// The reserved word spelled `text`, if it is one.
            pub fn from_keyword(text: &str) -> Option<SyntaxKind> {
                match text {
                    $($k_text => Some(SyntaxKind::$k_name),)*
                    _ => None,
                }
            }

            /// The contextual word spelled `text`, if it is one (only the parser decides whether it
            /// acts as a keyword where it stands).
            pub fn from_contextual_keyword(text: &str) -> Option<SyntaxKind> {
                match text {
                    $($c_text => Some(SyntaxKind::$c_name),)*
                    _ => None,
                }
            }

            /// True for reserved words.
            pub fn is_keyword(self) -> bool {
                matches!(self, $(SyntaxKind::$k_name)|*)
            }

            /// True for contextual words that the parser re-kinded.
            pub fn is_contextual_keyword(self) -> bool {
                matches!(self, $(SyntaxKind::$c_name)|*)
            }

            /// True for punctuation tokens.
            pub fn is_punct(self) -> bool {
                matches!(self, $(SyntaxKind::$p_name)|*)
            }

            /// The fixed text of a punctuation or keyword token.
            pub fn fixed_text(self) -> Option<&'static str> {
                match self {
                    $(SyntaxKind::$p_name => Some($p_text),)*
                    $(SyntaxKind::$k_name => Some($k_text),)*
                    $(SyntaxKind::$c_name => Some($c_text),)*
                    _ => None,
                }
            }

            /// Every kind, in declaration order (used by tests that walk the whole grammar).
            pub const ALL: &'static [SyntaxKind] = &[
                $(SyntaxKind::$p_name,)*
                $(SyntaxKind::$k_name,)*
                $(SyntaxKind::$c_name,)*
                $(SyntaxKind::$t_name,)*
                $(SyntaxKind::$n_name,)*
            ];
        }
    };
}

syntax_kinds! {
    punct {
        FAT_ARROW = "=>",
        THIN_ARROW = "->",
        DOT2 = "..",
        EQ2 = "==",
        NEQ = "!=",
        LTEQ = "<=",
        GTEQ = ">=",
        AMP2 = "&&",
        PIPE2 = "||",
        PLUSEQ = "+=",
        MINUSEQ = "-=",
        STAREQ = "*=",
        SLASHEQ = "/=",
        PERCENTEQ = "%=",
        AMPEQ = "&=",
        PIPEEQ = "|=",
        CARETEQ = "^=",
        L_CURLY = "{",
        R_CURLY = "}",
        L_PAREN = "(",
        R_PAREN = ")",
        L_BRACK = "[",
        R_BRACK = "]",
        COMMA = ",",
        SEMICOLON = ";",
        COLON = ":",
        DOT = ".",
        AT = "@",
        PLUS = "+",
        MINUS = "-",
        STAR = "*",
        SLASH = "/",
        PERCENT = "%",
        LT = "<",
        GT = ">",
        EQ = "=",
        BANG = "!",
        AMP = "&",
        PIPE = "|",
        CARET = "^",
        TILDE = "~",
    }
    keywords {
        FN_KW = "fn",
        STRUCT_KW = "struct",
        ENUM_KW = "enum",
        FAMILY_KW = "family",
        LET_KW = "let",
        MUT_KW = "mut",
        REG_KW = "reg",
        IF_KW = "if",
        ELSE_KW = "else",
        FOR_KW = "for",
        EACH_KW = "each",
        IN_KW = "in",
        WHILE_KW = "while",
        RETURN_KW = "return",
        TRUE_KW = "true",
        FALSE_KW = "false",
        RO_KW = "ro",
        RW_KW = "rw",
        NAT_KW = "nat",
        EFFECTS_KW = "effects",
        PURE_KW = "pure",
        EXTERN_KW = "extern",
        UNSAFE_KW = "unsafe",
        DEFER_KW = "defer",
        MATCH_KW = "match",
        KERNEL_KW = "kernel",
        MODULE_KW = "module",
        IMPORT_KW = "import",
        COMPACT_KW = "compact",
        WHERE_KW = "where",
        YIELD_KW = "yield",
        DERIVE_KW = "derive",
        BUFFER_KW = "buffer",
        STACK_KW = "stack",
        ZEROED_KW = "zeroed",
        BREAK_KW = "break",
        CONTINUE_KW = "continue",
        TRAIT_KW = "trait",
        IMPL_KW = "impl",
        DYN_KW = "dyn",
        CONST_KW = "const",
        PUB_KW = "pub",
        LINEAR_KW = "linear",
        PARALLEL_KW = "parallel",
        REDUCE_KW = "reduce",
        SPAWN_KW = "spawn",
        TRY_KW = "try",
        AS_KW = "as",
        TYPE_KW = "type",
    }
    contextual {
        TEST_KW = "test",
        PLAN_KW = "plan",
        USE_KW = "use",
        IMPLEMENTS_KW = "implements",
        WHEN_KW = "when",
        TUNE_KW = "tune",
        NEEDS_KW = "needs",
        RECIPE_KW = "recipe",
        REQUIRE_KW = "require",
        FOLD_KW = "fold",
        LAYOUT_KW = "layout",
        LENDS_KW = "lends",
        PACKED_KW = "packed",
        ALIGN_KW = "align",
        SCAN_KW = "scan",
        EXCLUSIVE_KW = "exclusive",
        INTO_KW = "into",
        AFTER_KW = "after",
        BLOCKS_KW = "blocks",
        THREADS_KW = "threads",
        THEN_KW = "then",
        SHARED_KW = "shared",
        PIPELINE_KW = "pipeline",
        DEPTH_KW = "depth",
        BARRIER_KW = "barrier",
        WARP_KW = "warp",
        VOLATILE_KW = "volatile",
        OUT_KW = "out",
        CLOBBERS_KW = "clobbers",
        LAUNCH_KW = "launch",
        ASM_KW = "asm",
        HOST_KW = "host",
        DEVICE_KW = "device",
        PINNED_KW = "pinned",
        UNIFIED_KW = "unified",
    }
    tokens {
        WHITESPACE,
        COMMENT,
        IDENT,
        INT_NUMBER,
        FLOAT_NUMBER,
        STRING,
        CHAR,
        /// Text the lexer could not turn into a token (an `E-LEX` covers it).
        ERROR_TOKEN,
        /// The end of the input; never stored in a tree.
        EOF,
    }
    nodes {
        SOURCE_FILE,
        /// Tokens the parser could not fit anywhere; an error covers them.
        ERROR,

        // Items.
        MODULE_DECL,
        IMPORT,
        IMPORT_LIST,
        CONST,
        STRUCT,
        FIELD_LIST,
        FIELD,
        FIELD_EXTENT,
        LENDS_CLAUSE,
        ALIGN_CLAUSE,
        ENUM,
        VARIANT_LIST,
        VARIANT,
        FN,
        EXTERN_FN,
        LAUNCH_CLAUSE,
        TRAIT,
        TRAIT_MEMBER,
        IMPL,
        FAMILY,
        RECIPE,
        RECIPE_PARAM_LIST,
        RECIPE_PARAM,
        RECIPE_WHERE,
        WHERE_BINDING,
        RECIPE_BODY,
        REQUIRE,
        EACH_ITEM,
        DERIVE,
        DERIVE_ARG_LIST,
        PLAN,
        PLAN_ITEM,
        PLAN_USE,
        TEST,
        LAYOUT,

        // Pieces of signatures.
        NAME,
        NAME_REF,
        PATH,
        VISIBILITY,
        GENERIC_PARAM_LIST,
        GENERIC_PARAM,
        BOUND_LIST,
        PARAM_LIST,
        PARAM,
        RET_TYPE,
        CEILING,
        EFFECT,
        IMPLEMENTS_CLAUSE,
        WHEN_CLAUSE,
        TUNE_CLAUSE,
        TUNE_PARAM,
        NEEDS_CLAUSE,
        EXPR_BODY,

        // Types.
        PATH_TYPE,
        GENERIC_ARG_LIST,
        BORROW_TYPE,
        EXTENT,
        PLACEMENT,
        FN_TYPE,
        FN_TYPE_PARAMS,
        DYN_TYPE,
        NAT_ARG,

        // Statements.
        BLOCK,
        LET_STMT,
        UNPACK_STMT,
        UNPACK_LIST,
        COLLECT_STMT,
        STACK_STMT,
        BUFFER_STMT,
        SHARED_STMT,
        PIPELINE_STMT,
        IF_STMT,
        ELSE_BRANCH,
        WHILE_STMT,
        FOR_STMT,
        EACH_STMT,
        MATCH_STMT,
        MATCH_ARM_LIST,
        MATCH_ARM,
        ARM_BINDER,
        BREAK_STMT,
        CONTINUE_STMT,
        RETURN_STMT,
        DEFER_STMT,
        UNSAFE_STMT,
        PARALLEL_STMT,
        AFTER_CLAUSE,
        REDUCE_EXPR,
        REDUCE_INTO_STMT,
        COMPACT_EXPR,
        SCAN_EXPR,
        REDUCER,
        COOP_STMT,
        COOP_AXES,
        THEN_CLAUSE,
        BARRIER_STMT,
        ASM_STMT,
        ASM_OPERAND_LIST,
        ASM_OPERAND,
        CLOBBERS_CLAUSE,
        ASM_EFFECTS,
        EXPR_STMT,
        ASSIGN_STMT,
        INTO_CLAUSE,

        // Expressions.
        LITERAL,
        NAME_EXPR,
        PAREN_EXPR,
        CALL_EXPR,
        ARG_LIST,
        INDEX_EXPR,
        PART_EXPR,
        FIELD_EXPR,
        PREFIX_EXPR,
        BIN_EXPR,
        TRY_EXPR,
        SPAWN_EXPR,
        CLOSURE_EXPR,
        FOLD_EXPR,
        EACH_EXPR,
        /// A written type standing as a type argument in an expression (`Buf[fn(u64) -> u64](3)`).
        TYPE_ARG_EXPR,
    }
}

impl SyntaxKind {
    /// Whitespace and comments: kept in the tree, skipped by the parser.
    pub fn is_trivia(self) -> bool {
        matches!(self, SyntaxKind::WHITESPACE | SyntaxKind::COMMENT)
    }

    /// True for token kinds (as opposed to node kinds).
    pub fn is_token(self) -> bool {
        (self as u16) < (SyntaxKind::SOURCE_FILE as u16)
    }

    /// True for any word the user writes as a name or keyword.
    pub fn is_word(self) -> bool {
        self == SyntaxKind::IDENT || self.is_keyword() || self.is_contextual_keyword()
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

/// `T![+]`-style shorthand for token kinds, used by the grammar.
#[macro_export]
macro_rules! T {
    [=>] => { $crate::SyntaxKind::FAT_ARROW };
    [->] => { $crate::SyntaxKind::THIN_ARROW };
    [..] => { $crate::SyntaxKind::DOT2 };
    [==] => { $crate::SyntaxKind::EQ2 };
    [!=] => { $crate::SyntaxKind::NEQ };
    [<=] => { $crate::SyntaxKind::LTEQ };
    [>=] => { $crate::SyntaxKind::GTEQ };
    [&&] => { $crate::SyntaxKind::AMP2 };
    [||] => { $crate::SyntaxKind::PIPE2 };
    [+=] => { $crate::SyntaxKind::PLUSEQ };
    [-=] => { $crate::SyntaxKind::MINUSEQ };
    [*=] => { $crate::SyntaxKind::STAREQ };
    [/=] => { $crate::SyntaxKind::SLASHEQ };
    [%=] => { $crate::SyntaxKind::PERCENTEQ };
    [&=] => { $crate::SyntaxKind::AMPEQ };
    [|=] => { $crate::SyntaxKind::PIPEEQ };
    [^=] => { $crate::SyntaxKind::CARETEQ };
    ['{'] => { $crate::SyntaxKind::L_CURLY };
    ['}'] => { $crate::SyntaxKind::R_CURLY };
    ['('] => { $crate::SyntaxKind::L_PAREN };
    [')'] => { $crate::SyntaxKind::R_PAREN };
    ['['] => { $crate::SyntaxKind::L_BRACK };
    [']'] => { $crate::SyntaxKind::R_BRACK };
    [,] => { $crate::SyntaxKind::COMMA };
    [;] => { $crate::SyntaxKind::SEMICOLON };
    [:] => { $crate::SyntaxKind::COLON };
    [.] => { $crate::SyntaxKind::DOT };
    [@] => { $crate::SyntaxKind::AT };
    [+] => { $crate::SyntaxKind::PLUS };
    [-] => { $crate::SyntaxKind::MINUS };
    [*] => { $crate::SyntaxKind::STAR };
    [/] => { $crate::SyntaxKind::SLASH };
    [%] => { $crate::SyntaxKind::PERCENT };
    [<] => { $crate::SyntaxKind::LT };
    [>] => { $crate::SyntaxKind::GT };
    [=] => { $crate::SyntaxKind::EQ };
    [!] => { $crate::SyntaxKind::BANG };
    [&] => { $crate::SyntaxKind::AMP };
    [|] => { $crate::SyntaxKind::PIPE };
    [^] => { $crate::SyntaxKind::CARET };
    [~] => { $crate::SyntaxKind::TILDE };
}
