//! Canonical JSON and digests (protocol §2.2): object keys sorted, no spaces after `,` or `:`,
//! non-ASCII written as UTF-8; a digest is the lower-case hex SHA-256 of those bytes.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical JSON text of a value.
pub fn canonical_json(value: &Value) -> String {
    serde_json::to_string(&sorted(value)).unwrap_or_default()
}

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// An incremental SHA-256, for digests of several parts without joining them first.
#[derive(Default)]
pub struct Hasher(Sha256);

impl Hasher {
    pub fn new() -> Hasher {
        Hasher::default()
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The lower-case hex digest.
    pub fn finish_hex(self) -> String {
        self.0.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The digest of a value: SHA-256 of its canonical JSON.
pub fn digest(value: &Value) -> String {
    sha256_hex(canonical_json(value).as_bytes())
}

/// A copy with every object's keys in sorted order (serde_json keeps insertion order here).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_at_every_depth_and_unicode_stays_raw() {
        let value = json!({"b": 1, "a": {"z": [1, {"y": 2, "x": 3}], "c": "é\n"}});
        assert_eq!(canonical_json(&value), "{\"a\":{\"c\":\"é\\n\",\"z\":[1,{\"x\":3,\"y\":2}]},\"b\":1}");
    }

    #[test]
    fn the_digest_of_the_empty_object_is_sha256_of_two_braces() {
        assert_eq!(digest(&json!({})), "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    }
}
