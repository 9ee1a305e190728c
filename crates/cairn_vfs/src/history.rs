//! The candidate history's storage (protocol §18.1): a directory (default `.cairn/history` beside
//! the manifest) holding `records.jsonl`, one record per line, appended under an exclusive lock on
//! `.lock` (read-then-append is one step). Reading skips any line that does not parse or is not a
//! `cairn.history/1` record: the file is kept by people and tools, not trusted blindly. A record
//! whose `id` is already there is not appended again; the kept one is returned. Files are opened
//! without following links.

use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;

use crate::safe::Dir;

/// The records file inside a history directory.
pub const RECORDS: &str = "records.jsonl";
/// The protocol every kept record carries.
pub const PROTOCOL: &str = "cairn.history/1";
/// The most bytes the records file is read up to.
const LIMIT: u64 = 256 << 20;

/// The records of the history in `dir`, in order (none when it does not exist).
pub fn read(dir: &Path) -> io::Result<Vec<Value>> {
    let Ok(history) = Dir::root(dir) else { return Ok(Vec::new()) };
    let bytes = match history.read_regular(RECORDS, LIMIT) {
        Ok(bytes) => bytes,
        Err(crate::safe::ReadError::Missing) => return Ok(Vec::new()),
        Err(e) => return Err(io::Error::other(format!("{RECORDS}: {e:?}"))),
    };
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

fn parse(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record.get("protocol").and_then(Value::as_str) == Some(PROTOCOL))
        .collect()
}

/// Appends `record` (a finished record with its `id`) unless a record with its id is kept; returns
/// the record kept under that id.
pub fn append(dir: &Path, record: &Value) -> io::Result<Value> {
    std::fs::create_dir_all(dir)?;
    let history = Dir::root(dir)?;
    let lock = history.open_lock(".lock", true)?;
    lock.lock()?;
    let id = record.get("id").and_then(Value::as_str).unwrap_or_default();
    let kept = match history.read_regular(RECORDS, LIMIT) {
        Ok(bytes) => parse(&String::from_utf8_lossy(&bytes)),
        Err(_) => Vec::new(),
    };
    if let Some(existing) = kept.into_iter().find(|r| r.get("id").and_then(Value::as_str) == Some(id)) {
        return Ok(existing);
    }
    let mut file = history.open_append(RECORDS)?;
    let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.sync_data()?;
    Ok(record.clone())
}
