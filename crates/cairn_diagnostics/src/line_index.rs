//! Byte offsets to 1-based lines and columns, at the boundary where diagnostics leave the compiler.
//!
//! Columns count Unicode scalar values (characters), 1-based, as the original's records do; a
//! tab is one column. Lines are split at `\n` only (a `\r` before it belongs to the line's text
//! and is trimmed from excerpts). Building the index is one pass over the text; each lookup is a
//! binary search plus a walk over one line.

use cairn_syntax::TextSize;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineColumn {
    pub line: u32,
    pub column: u32,
}

/// The start offset of every line of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0u32];
        starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i as u32 + 1));
        LineIndex { starts }
    }

    /// The line and column of `offset` in `text` (the text this index was built from). An offset
    /// past the end is clamped to the end.
    pub fn line_column(&self, text: &str, offset: TextSize) -> LineColumn {
        let offset = u32::from(offset).min(text.len() as u32);
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.starts[line] as usize;
        let mut end = offset as usize;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let column = text[line_start..end].chars().count() as u32 + 1;
        LineColumn { line: line as u32 + 1, column }
    }

    /// The text of 1-based `line`, without its line break.
    pub fn line_text<'a>(&self, text: &'a str, line: u32) -> Option<&'a str> {
        let index = (line as usize).checked_sub(1)?;
        let start = *self.starts.get(index)? as usize;
        let end = self.starts.get(index + 1).map_or(text.len(), |&next| next as usize - 1);
        let line_text = &text[start..end];
        Some(line_text.strip_suffix('\r').unwrap_or(line_text))
    }

    /// How many lines the text has (a final line without a break counts).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_lines_start_at_one() {
        let text = "ab\n\u{e9}x\r\nlast";
        let index = LineIndex::new(text);
        assert_eq!(index.line_column(text, 0.into()), LineColumn { line: 1, column: 1 });
        assert_eq!(index.line_column(text, 3.into()), LineColumn { line: 2, column: 1 });
        // 'x' follows a two-byte character.
        assert_eq!(index.line_column(text, 5.into()), LineColumn { line: 2, column: 2 });
        assert_eq!(index.line_column(text, 8.into()), LineColumn { line: 3, column: 1 });
        assert_eq!(index.line_text(text, 2), Some("\u{e9}x"));
        assert_eq!(index.line_text(text, 3), Some("last"));
        assert_eq!(index.line_text(text, 4), None);
        assert_eq!(index.line_column(text, 1000.into()), LineColumn { line: 3, column: 5 });
    }
}
