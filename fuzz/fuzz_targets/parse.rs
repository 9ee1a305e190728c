//! Fuzz target for the parser: any UTF-8 input must parse without panicking into a lossless
//! tree, and re-parsing after an edit (taken from the input's first bytes) must equal a full
//! parse of the edited text. Run with `cargo fuzz run parse` from the repository root (see
//! docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (head, body) = data.split_at(4);
    let Ok(text) = std::str::from_utf8(body) else { return };
    let parse = cairn_syntax::parse(text);
    assert_eq!(parse.syntax_node().to_string(), text);

    // An edit: delete `len` bytes at `at` and insert a piece of the text itself.
    let mut at = usize::from(u16::from_le_bytes([head[0], head[1]])) % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let mut end = (at + usize::from(head[2] % 16)).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = end.max(at);
    let mut take = usize::from(head[3] % 8).min(text.len());
    while !text.is_char_boundary(take) {
        take -= 1;
    }
    let edit = cairn_syntax::TextEdit {
        delete: cairn_syntax::TextRange::new((at as u32).into(), (end as u32).into()),
        insert: text[..take].to_string(),
    };
    let new_text = edit.apply(text);
    let incremental = parse.reparse(&edit, &new_text);
    let full = cairn_syntax::parse(&new_text);
    assert_eq!(incremental.green(), full.green());
    assert_eq!(incremental.errors(), full.errors());
});
