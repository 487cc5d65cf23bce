//! A small, strict JSON reader and writer (RFC 8259), enough for layout specs and the oracle
//! files. Bad input is an error with its line and column, never a panic: nesting is bounded, every
//! escape is checked, and nothing after the value but whitespace is accepted.

use core::fmt;
use std::string::String;
use std::vec::Vec;

/// A JSON value. Object members keep their order; duplicate keys are rejected by the parser.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number written without fraction or exponent that fits an `i64`.
    Int(i64),
    /// Any other number.
    Float(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Where and why a JSON text is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
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

/// Deepest nesting of arrays and objects accepted (keeps recursion bounded).
pub const MAX_JSON_DEPTH: usize = 256;

/// Parses one JSON value; only whitespace may follow it.
pub fn parse_json(text: &str) -> Result<Json, JsonError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    p.skip_ws();
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.error("unexpected text after the JSON value"));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> JsonError {
        self.error_at(self.pos, message)
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> JsonError {
        let offset = offset.min(self.bytes.len());
        let before = &self.bytes[..offset];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        // Count characters, not bytes (a continuation byte does not start a character).
        let column = 1 + before[line_start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        JsonError {
            offset,
            line,
            column,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect_literal(&mut self, word: &str, value: Json) -> Result<Json, JsonError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error(format_args_string(format_args!("expected `{word}`"))))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        match self.peek() {
            None => Err(self.error("unexpected end of input, expected a value")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.expect_literal("true", Json::Bool(true)),
            Some(b'f') => self.expect_literal("false", Json::Bool(false)),
            Some(b'n') => self.expect_literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error(format_args_string(format_args!(
                "unexpected character `{}`, expected a value",
                self.char_here()
            )))),
        }
    }

    fn char_here(&self) -> char {
        self.text[self.pos..].chars().next().unwrap_or('?')
    }

    fn enter(&self, depth: usize) -> Result<usize, JsonError> {
        if depth >= MAX_JSON_DEPTH {
            Err(self.error(format_args_string(format_args!(
                "nesting deeper than {MAX_JSON_DEPTH} levels"
            ))))
        } else {
            Ok(depth + 1)
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, JsonError> {
        let depth = self.enter(depth)?;
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                None => return Err(self.error("unexpected end of input inside an array")),
                Some(_) => return Err(self.error("expected `,` or `]` in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, JsonError> {
        let depth = self.enter(depth)?;
        self.pos += 1; // '{'
        let mut members: Vec<(String, Json)> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            let key_at = self.pos;
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key in an object"));
            }
            let key = self.string()?;
            if members.iter().any(|(k, _)| *k == key) {
                return Err(self.error_at(
                    key_at,
                    format_args_string(format_args!("duplicate key \"{key}\"")),
                ));
            }
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after an object key"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth)?;
            members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                None => return Err(self.error("unexpected end of input inside an object")),
                Some(_) => return Err(self.error("expected `,` or `}` in an object")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let start = self.pos;
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.error_at(start, "`\\u` needs four hex digits")),
            };
            v = v * 16 + d as u32;
            self.pos += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        let open = self.pos;
        self.pos += 1; // '"'
        let mut out = String::new();
        let mut run_start = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error_at(open, "unterminated string"));
            };
            match b {
                b'"' => {
                    out.push_str(&self.text[run_start..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[run_start..self.pos]);
                    let escape_at = self.pos;
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error_at(open, "unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                // A high surrogate must be followed by `\u` and a low one.
                                if !self.bytes[self.pos..].starts_with(b"\\u") {
                                    return Err(self.error_at(
                                        escape_at,
                                        "a high surrogate `\\u` escape must be followed by a low one",
                                    ));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.error_at(
                                        escape_at,
                                        "a high surrogate `\\u` escape must be followed by a low one",
                                    ));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(
                                    self.error_at(escape_at, "unpaired low surrogate `\\u` escape")
                                );
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(c) => out.push(c),
                                None => {
                                    return Err(self.error_at(escape_at, "invalid `\\u` escape"))
                                }
                            }
                        }
                        _ => return Err(self.error_at(escape_at, "invalid escape in a string")),
                    }
                    run_start = self.pos;
                }
                0x00..=0x1F => {
                    return Err(self.error("control character inside a string (escape it)"))
                }
                _ => self.pos += 1,
            }
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while let Some(b'0'..=b'9') = p.peek() {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.error_at(start, "a number may not have leading zeros"));
                }
            }
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error_at(start, "malformed number")),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error_at(start, "a number needs digits after `.`"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integral = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error_at(start, "a number needs digits in its exponent"));
            }
        }
        let literal = &self.text[start..self.pos];
        if integral {
            if let Ok(v) = literal.parse::<i64>() {
                return Ok(Json::Int(v));
            }
        }
        match literal.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Json::Float(v)),
            _ => Err(self.error_at(start, "number out of range")),
        }
    }
}

fn format_args_string(args: fmt::Arguments<'_>) -> String {
    std::fmt::format(args)
}

impl Json {
    /// The member `key` of an object (None for other values or a missing key).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

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
            ("", "unexpected end of input", 1, 1),
            ("[1, 2", "end of input inside an array", 1, 6),
            ("{\"a\": 1,\n \"a\": 2}", "duplicate key \"a\"", 2, 2),
            ("[01]", "leading zeros", 1, 2),
            ("[1.]", "digits after", 1, 2),
            ("\"abc", "unterminated string", 1, 1),
            ("\"\\q\"", "invalid escape", 1, 2),
            ("\"\\ud800\"", "high surrogate", 1, 2),
            ("[1] x", "after the JSON value", 1, 5),
            ("tru", "expected `true`", 1, 1),
            ("{1: 2}", "string key", 1, 2),
            ("\"a\nb\"", "control character", 1, 3),
            ("1e999", "out of range", 1, 1),
            ("é", "unexpected character `é`", 1, 1),
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
        assert!(e.message.contains("nesting deeper"), "{e}");
        let ok = "[".repeat(200) + &"]".repeat(200);
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
