//! Positions: LSP speaks lines and UTF-16 code units (`positionEncoding: "utf-16"`), the
//! compiler byte offsets and 1-based lines and columns in characters. One [`LineMap`] per text
//! converts between them; and `file://` URIs to paths and back.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Line starts of one text, for conversions.
#[derive(Debug, Clone)]
pub struct LineMap {
    starts: Vec<usize>,
}

impl LineMap {
    /// The map of a workspace file, from its line index (which a body edit keeps up to date)
    /// instead of a pass over its text.
    pub fn of_file(file: &cairn_hir::FileState) -> LineMap {
        LineMap { starts: file.line_index().starts().iter().map(|&s| s as usize).collect() }
    }

    pub fn new(text: &str) -> LineMap {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineMap { starts }
    }

    /// The byte offset of an LSP position (line, UTF-16 column); a column past the line's end
    /// clamps to it, a line past the text's end to the end.
    pub fn offset(&self, text: &str, line: u32, character: u32) -> usize {
        let Some(&start) = self.starts.get(line as usize) else { return text.len() };
        let end = self.starts.get(line as usize + 1).map_or(text.len(), |&next| next);
        start + column_offset(&text[start..end], character)
    }

    /// The LSP position (line, UTF-16 column) of a byte offset.
    pub fn position(&self, text: &str, offset: usize) -> (u32, u32) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let units: usize = text[self.starts[line]..offset].chars().map(char::len_utf16).sum();
        (line as u32, units as u32)
    }

    /// The byte offset of a 1-based line and 1-based column in characters (the compiler's).
    pub fn offset_of_char_column(&self, text: &str, line: u32, column: u32) -> usize {
        let Some(&start) = self.starts.get((line as usize).saturating_sub(1)) else { return text.len() };
        let end = self.starts.get(line as usize).map_or(text.len(), |&next| next);
        text[start..end]
            .char_indices()
            .nth(column.saturating_sub(1) as usize)
            .map_or(end.min(text.len()), |(i, _)| start + i)
    }

    /// An LSP range as JSON for a byte range.
    pub fn range(&self, text: &str, start: usize, end: usize) -> Value {
        let (l1, c1) = self.position(text, start);
        let (l2, c2) = self.position(text, end);
        json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
    }
}

/// The path of a `file://` URI (percent-decoded), or `None` for another scheme.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///path` (empty authority) or `file://localhost/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

/// The `file://` URI of an absolute path (percent-encoding what a URI path may not hold).
pub fn path_to_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let text = "let a = \"é😀\";\nx\r\n";
        let map = LineMap::new(text);
        let smile = text.find('😀').unwrap();
        assert_eq!(map.position(text, smile), (0, 10));
        assert_eq!(map.offset(text, 0, 10), smile);
        assert_eq!(map.position(text, smile + 4), (0, 12), "a surrogate pair is two units");
        assert_eq!(map.offset(text, 1, 5), text.find("x").unwrap() + 1, "clamped before the line break");
        assert_eq!(map.offset(text, 9, 0), text.len());
        assert_eq!(map.offset_of_char_column(text, 1, 11), smile, "columns count characters");
    }

    #[test]
    fn file_uris_round_trip() {
        let path = Path::new("/tmp/a dir/ü.cairn");
        let uri = path_to_uri(path);
        assert_eq!(uri, "file:///tmp/a%20dir/%C3%BC.cairn");
        assert_eq!(uri_to_path(&uri).as_deref(), Some(path));
        assert_eq!(uri_to_path("untitled:1"), None);
    }
}

/// The byte offset within a line (its text with its break) of UTF-16 column `character`; a
/// column past the line's end clamps to it.
fn column_offset(line: &str, character: u32) -> usize {
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= character || c == '\n' || c == '\r' {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    line.len()
}

/// The byte offset of an LSP position in a workspace file, as [`LineMap::offset`] gives it, read
/// from the file's line index and the one line: a patched file's text is not made (an editor's
/// change costs in proportion to the change, not the file).
pub fn file_offset(file: &cairn_hir::FileState, line: u32, character: u32) -> usize {
    match file.line_bounds(line as usize) {
        Some((start, end)) => start + column_offset(&file.slice(start..end), character),
        None => file.len(),
    }
}
