//! Strict JSON (protocol §3.3): a duplicate key in any object is refused, as is anything
//! serde_json refuses (malformed text, `NaN`, `Infinity`). Used wherever a reply is parsed.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses `text` as strict JSON.
pub fn parse(text: &str) -> Result<Value, String> {
    parse_value(text).map_err(|e| e.to_string())
}

/// [`parse`], with serde_json's error: a duplicate key or a non-finite number is classified
/// `Data`, malformed text `Syntax` or `Eof` (a transport answers the two differently).
pub fn parse_value(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Strict::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value.0)
}

/// Checks an already parsed value for non-finite numbers (a client that built it in memory may
/// hold them); duplicate keys cannot survive into a `Value`.
pub fn finite(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_none_or(f64::is_finite),
        Value::Array(items) => items.iter().all(finite),
        Value::Object(map) => map.values().all(finite),
        _ => true,
    }
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom(format!("the key `{key}` appears twice")));
            }
            let Strict(value) = access.next_value()?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_and_non_finite_numbers_are_refused() {
        assert!(parse(r#"{"a":1,"b":{"c":2}}"#).is_ok());
        assert!(parse(r#"{"a":1,"a":2}"#).unwrap_err().contains("twice"));
        assert!(parse(r#"{"a":{"b":1,"b":1}}"#).is_err());
        assert!(parse(r#"{"a":NaN}"#).is_err());
        assert!(parse(r#"{"a":Infinity}"#).is_err());
        assert!(parse(r#"{"a":1} x"#).is_err());
        assert!(parse("").is_err());
    }
}
