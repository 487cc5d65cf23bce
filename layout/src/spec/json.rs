//! JSON values for layout specs and the oracle files: text is read by `serde_json` into [`Json`],
//! a tree whose objects keep their members in order, and written back in the compact style of
//! Python's `json.dumps` (or pretty, with arrays of numbers on one line). Bad input is an error
//! with its line and column, never a panic: serde_json bounds the nesting, checks every escape
//! and accepts nothing after the value but whitespace; duplicate keys are rejected here.

use core::fmt;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::string::{String, ToString};
use std::vec::Vec;

/// A JSON value. Object members keep their order; duplicate keys are rejected by the reader.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number written without fraction or exponent that fits an `i64`.
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object's members in the order written.
    Object(Vec<(String, Json)>),
}

/// Where and why a JSON text is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid JSON at line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for JsonError {}

/// Deepest nesting of arrays and objects accepted (serde_json's recursion limit).
pub const MAX_JSON_DEPTH: usize = 127;

/// Parses one JSON value; only whitespace may follow it.
pub fn parse_json(text: &str) -> Result<Json, JsonError> {
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let position = std::format!(" at line {} column {}", e.line(), e.column());
        JsonError {
            line: e.line(),
            column: e.column(),
            message: message
                .strip_suffix(&position)
                .unwrap_or(&message)
                .to_string(),
        }
    })
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

/// Builds a [`Json`] from serde's events: integers that fit an `i64` stay integers, objects keep
/// their order and may not repeat a key.
struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(i64::try_from(v).map_or(Json::Float(v as f64), Json::Int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(std::format!("duplicate key \"{key}\"")));
            }
            let value = map.next_value()?;
            members.push((key, value));
        }
        Ok(Json::Object(members))
    }
}

impl Json {
    /// The member `key` of an object (None for other values or a missing key).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The text, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value, if this is a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// An integer (a float with an exact integral value counts too, e.g. `4.0`).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Json::Int(v) => Some(v),
            Json::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(f as i64),
            _ => None,
        }
    }

    /// A non-negative integer that fits `u32`.
    pub fn as_u32(&self) -> Option<u32> {
        self.as_i64().and_then(|v| u32::try_from(v).ok())
    }

    /// The value of a number (integer or not) as `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Json::Int(v) => Some(v as f64),
            Json::Float(f) => Some(f),
            _ => None,
        }
    }

    /// A short name of the value's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) | Json::Float(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    /// An object from `(key, value)` pairs.
    pub fn object<K: Into<String>>(members: impl IntoIterator<Item = (K, Json)>) -> Json {
        Json::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// An array of unsigned integers.
    pub fn u32_array(values: &[u32]) -> Json {
        Json::Array(values.iter().map(|&v| Json::Int(v as i64)).collect())
    }

    /// Writes the value on several lines, indenting by `indent` spaces per level; arrays that
    /// hold only numbers stay on one line (bases read as `[0, 4]`).
    pub fn to_pretty_string(&self, indent: usize) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, indent, 0);
        out
    }

    fn write_pretty(&self, out: &mut String, indent: usize, level: usize) {
        use core::fmt::Write;
        let pad = |out: &mut String, level: usize| {
            for _ in 0..indent * level {
                out.push(' ');
            }
        };
        match self {
            Json::Array(items) if !items.is_empty() && !items.iter().all(Json::is_scalar) => {
                // Arrays of scalars or of scalar arrays stay compact.
                if items
                    .iter()
                    .all(|i| i.as_array().is_some_and(|a| a.iter().all(Json::is_scalar)))
                {
                    let _ = write!(out, "{self}");
                    return;
                }
                out.push_str("[\n");
                for (n, item) in items.iter().enumerate() {
                    pad(out, level + 1);
                    item.write_pretty(out, indent, level + 1);
                    out.push_str(if n + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, level);
                out.push(']');
            }
            Json::Object(members) if !members.is_empty() => {
                out.push_str("{\n");
                for (n, (k, v)) in members.iter().enumerate() {
                    pad(out, level + 1);
                    write_escaped(out, k);
                    out.push_str(": ");
                    v.write_pretty(out, indent, level + 1);
                    out.push_str(if n + 1 < members.len() { ",\n" } else { "\n" });
                }
                pad(out, level);
                out.push('}');
            }
            other => {
                let _ = write!(out, "{other}");
            }
        }
    }

    fn is_scalar(&self) -> bool {
        !matches!(self, Json::Array(_) | Json::Object(_))
    }
}

fn write_escaped(out: &mut impl fmt::Write, s: &str) {
    let _ = out.write_char('"');
    for c in s.chars() {
        let _ = match c {
            '"' => out.write_str("\\\""),
            '\\' => out.write_str("\\\\"),
            '\n' => out.write_str("\\n"),
            '\r' => out.write_str("\\r"),
            '\t' => out.write_str("\\t"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32),
            c => out.write_char(c),
        };
    }
    let _ = out.write_char('"');
}

impl fmt::Display for Json {
    /// Compact JSON with `", "` and `": "` separators (Python's `json.dumps` default).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Int(v) => write!(f, "{v}"),
            Json::Float(v) => {
                if v.fract() == 0.0 && v.abs() < 1e16 {
                    write!(f, "{v:.1}")
                } else {
                    write!(f, "{v}")
                }
            }
            Json::String(s) => {
                write_escaped(f, s);
                Ok(())
            }
            Json::Array(items) => {
                f.write_str("[")?;
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Json::Object(members) => {
                f.write_str("{")?;
                for (n, (k, v)) in members.iter().enumerate() {
                    if n > 0 {
                        f.write_str(", ")?;
                    }
                    write_escaped(f, k);
                    write!(f, ": {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;
    use std::vec;

    #[test]
    fn parses_and_writes_back() {
        let text = r#"{"a": [1, -2, 3.5, 1e3], "b": {"c": null, "d": true}, "e": "x\"\u00e9\ud83d\ude00"}"#;
        let v = parse_json(text).unwrap();
        assert_eq!(v.get("a").unwrap().as_array().unwrap()[1], Json::Int(-2));
        assert_eq!(
            v.get("a").unwrap().as_array().unwrap()[3],
            Json::Float(1000.0)
        );
        assert_eq!(v.get("e").unwrap().as_str(), Some("x\"é😀"));
        let again = parse_json(&v.to_string()).unwrap();
        assert_eq!(again, v);
        let pretty = parse_json(&v.to_pretty_string(2)).unwrap();
        assert_eq!(pretty, v);
        assert_eq!(
            Json::object([("bases", Json::Array(vec![Json::u32_array(&[0, 4])]))]).to_string(),
            r#"{"bases": [[0, 4]]}"#
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let cases: &[(&str, &str, usize, usize)] = &[
            ("", "EOF while parsing a value", 1, 0),
            ("[1, 2", "EOF while parsing a list", 1, 5),
            ("{\"a\": 1,\n \"a\": 2}", "duplicate key \"a\"", 2, 4),
            ("[01]", "invalid number", 1, 3),
            ("[1.]", "invalid number", 1, 4),
            ("\"abc", "EOF while parsing a string", 1, 4),
            ("\"\\q\"", "invalid escape", 1, 3),
            ("\"\\ud800\"", "unexpected end of hex escape", 1, 8),
            ("[1] x", "trailing characters", 1, 5),
            ("tru", "EOF while parsing a value", 1, 3),
            ("{1: 2}", "key must be a string", 1, 2),
            ("\"a\nb\"", "control character", 2, 0),
            ("1e999", "number out of range", 1, 5),
            ("é", "expected value", 1, 1),
        ];
        for &(text, message, line, column) in cases {
            let e = parse_json(text).unwrap_err();
            assert!(
                e.message.contains(message),
                "{text:?}: got {e}, wanted {message}"
            );
            assert_eq!((e.line, e.column), (line, column), "{text:?}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        let e = parse_json(&text).unwrap_err();
        assert!(e.message.contains("recursion limit"), "{e}");
        let ok = "[".repeat(MAX_JSON_DEPTH) + &"]".repeat(MAX_JSON_DEPTH);
        assert!(parse_json(&ok).is_ok());
    }

    #[test]
    fn truncated_inputs_never_panic() {
        let text = r#"{"family": "slice", "params": {"dim": 1, "parent": {"x": [1.5e-3, "\u0041", false, null]}}}"#;
        for end in 0..text.len() {
            let _ = parse_json(&text[..end]);
        }
    }
}
