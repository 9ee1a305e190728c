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
        let line = self.line_of(offset);
        let line_start = self.starts[line] as usize;
        let end = self.starts.get(line + 1).map_or(text.len(), |&next| next as usize);
        self.line_column_in(line, &text[line_start..end], offset)
    }

    /// The 0-based line holding `offset`.
    pub fn line_of(&self, offset: u32) -> usize {
        self.starts.partition_point(|&start| start <= offset) - 1
    }

    /// The line and column of `offset` on 0-based `line`, whose text (from its start, at least
    /// up to `offset`) is `line_text`: for a caller that reads one line, not the whole text.
    pub fn line_column_in(&self, line: usize, line_text: &str, offset: u32) -> LineColumn {
        let mut end = (offset - self.starts[line]) as usize;
        end = end.min(line_text.len());
        while !line_text.is_char_boundary(end) {
            end -= 1;
        }
        let column = line_text[..end].chars().count() as u32 + 1;
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

    /// Brings the index up to date after the bytes `start..end` of its text were replaced by
    /// `insert`: the lines inside the replaced bytes go, those `insert` breaks are added, and the
    /// later ones move by the length change. Integer work per line after the edit, no pass over
    /// the text (an editor's change should not rescan the file).
    pub fn edited(&mut self, start: u32, end: u32, insert: &str) {
        let first = self.starts.partition_point(|&s| s <= start);
        let last = self.starts.partition_point(|&s| s <= end);
        let delta = insert.len() as i64 - i64::from(end - start);
        let added = insert.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| start + i as u32 + 1);
        let moved: Vec<u32> = self.starts[last..].iter().map(|&s| (i64::from(s) + delta) as u32).collect();
        self.starts.truncate(first);
        self.starts.extend(added);
        self.starts.extend(moved);
    }

    /// Where 0-based line `line` starts and where the next one starts (or `len`, the text's
    /// length, for the last line): the line's bytes with its break.
    pub fn line_bounds(&self, line: usize, len: u32) -> Option<(u32, u32)> {
        let start = *self.starts.get(line)?;
        Some((start, self.starts.get(line + 1).copied().unwrap_or(len)))
    }

    /// Where each line starts, in order.
    pub fn starts(&self) -> &[u32] {
        &self.starts
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

    #[test]
    fn an_edited_index_is_the_index_of_the_edited_text() {
        let texts = ["", "a", "\n", "ab\ncd\n\nef", "x\r\ny\n"];
        let inserts = ["", "q", "\n", "1\n2\n", "\n\n"];
        for text in texts {
            for start in 0..=text.len() {
                for end in start..=text.len() {
                    for insert in inserts {
                        let mut index = LineIndex::new(text);
                        index.edited(start as u32, end as u32, insert);
                        let edited = format!("{}{insert}{}", &text[..start], &text[end..]);
                        assert_eq!(index, LineIndex::new(&edited), "{text:?} {start}..{end} <- {insert:?}");
                    }
                }
            }
        }
    }
}
