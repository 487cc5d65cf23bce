//! `tessera-examples --bench NAME --json` on the emulator, for every family of
//! `shared/bench/triton_ref.py`, at tiny shapes: the process succeeds, every stdout line is one
//! JSON object with the protocol's keys (`name`, `shape`, `dtype`, `ms`, `gbps` or `tflops`,
//! `ok`) and says `ok`, in the script's dtype order, with the figure counted as the script
//! counts it. Also: the GPU shapes are refused on the emulator, an unknown family is an error.

use std::collections::BTreeMap;
use std::process::{Command, Output};

/// A JSON value (what the protocol lines contain).
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

/// A strict parser of one JSON text (RFC 8259 without surrogate-pair joining).
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser {
            text: text.as_bytes(),
            at: 0,
        };
        let value = p.value()?;
        p.space();
        if p.at != p.text.len() {
            return Err(format!("trailing text at byte {}", p.at));
        }
        Ok(value)
    }

    fn space(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|c| b" \t\r\n".contains(c))
        {
            self.at += 1;
        }
    }

    fn expect(&mut self, literal: &str) -> Result<(), String> {
        if self.text[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            Ok(())
        } else {
            Err(format!("expected {literal:?} at byte {}", self.at))
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.space();
        match self.text.get(self.at) {
            Some(b'n') => self.expect("null").map(|_| Json::Null),
            Some(b't') => self.expect("true").map(|_| Json::Bool(true)),
            Some(b'f') => self.expect("false").map(|_| Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => {
                let mut items = Vec::new();
                self.items(b']', |p| {
                    items.push(p.value()?);
                    Ok(())
                })?;
                Ok(Json::Array(items))
            }
            Some(b'{') => {
                let mut fields = BTreeMap::new();
                self.items(b'}', |p| {
                    p.space();
                    let key = p.string()?;
                    p.space();
                    p.expect(":")?;
                    let value = p.value()?;
                    if fields.insert(key.clone(), value).is_some() {
                        return Err(format!("duplicate key {key:?}"));
                    }
                    Ok(())
                })?;
                Ok(Json::Object(fields))
            }
            Some(c) if *c == b'-' || c.is_ascii_digit() => self.number(),
            _ => Err(format!("expected a value at byte {}", self.at)),
        }
    }

    /// The comma-separated items of an array or object after its opening bracket (at `self.at`),
    /// each read by `item`, up to and past `close`.
    fn items(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        self.at += 1;
        self.space();
        if self.text.get(self.at) == Some(&close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.space();
            match self.text.get(self.at) {
                Some(b',') => self.at += 1,
                Some(&c) if c == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => {
                    return Err(format!(
                        "expected , or {} at byte {}",
                        close as char, self.at
                    ))
                }
            }
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        if self.text[self.at] == b'-' {
            self.at += 1;
        }
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.text.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at > from
        };
        let int_start = self.at;
        if !digits(self) {
            return Err(format!("expected digits at byte {}", self.at));
        }
        if self.text[int_start] == b'0' && self.at - int_start > 1 {
            return Err(format!("leading zero at byte {int_start}"));
        }
        if self.text.get(self.at) == Some(&b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(format!("expected fraction digits at byte {}", self.at));
            }
        }
        if matches!(self.text.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.text.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(format!("expected exponent digits at byte {}", self.at));
            }
        }
        let text = std::str::from_utf8(&self.text[start..self.at]).map_err(|e| e.to_string())?;
        text.parse::<f64>()
            .map(Json::Number)
            .map_err(|e| format!("{text}: {e}"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect("\"")?;
        let mut out = String::new();
        loop {
            let rest = std::str::from_utf8(&self.text[self.at..]).map_err(|e| e.to_string())?;
            let mut chars = rest.chars();
            let c = chars.next().ok_or("unterminated string")?;
            self.at += c.len_utf8();
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let e = chars.next().ok_or("unterminated escape")?;
                    self.at += 1;
                    match e {
                        '"' | '\\' | '/' => out.push(e),
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'u' => {
                            let hex = rest.get(2..6).ok_or("short \\u escape")?;
                            let code = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                            self.at += 4;
                        }
                        other => return Err(format!("bad escape \\{other}")),
                    }
                }
                c if (c as u32) < 0x20 => return Err("control character in a string".into()),
                c => out.push(c),
            }
        }
    }
}

#[test]
fn the_parser_is_strict() {
    let ok = Parser::parse(r#"{"a":[1,-2.5e3,true,null],"b":"x\"\u0041"}"#).unwrap();
    let Json::Object(fields) = ok else {
        panic!("{ok:?}")
    };
    assert_eq!(fields["b"], Json::String("x\"A".into()));
    assert_eq!(
        fields["a"],
        Json::Array(vec![
            Json::Number(1.0),
            Json::Number(-2500.0),
            Json::Bool(true),
            Json::Null
        ])
    );
    for bad in [
        "{\"a\":1,}",
        "{\"a\":01}",
        "{\"a\":1} x",
        "{'a':1}",
        "{\"a\":NaN}",
        "{\"a\":1,\"a\":2}",
        "[1 2]",
    ] {
        assert!(Parser::parse(bad).is_err(), "{bad}");
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera-examples"))
        .args(args)
        .env("TESSERA_DEVICE", "emulator")
        .output()
        .expect("the tessera-examples binary runs")
}

/// The fields of one protocol line.
struct Line {
    name: String,
    shape: Vec<usize>,
    dtype: String,
    ms: f64,
    figure: (String, f64),
    fields: BTreeMap<String, Json>,
}

fn protocol_line(text: &str) -> Line {
    let Ok(Json::Object(fields)) = Parser::parse(text) else {
        panic!("not a JSON object: {text}")
    };
    let string = |key: &str| match fields.get(key) {
        Some(Json::String(s)) => s.clone(),
        other => panic!("{key}: {other:?} in {text}"),
    };
    let number = |key: &str| match fields.get(key) {
        Some(Json::Number(x)) => *x,
        other => panic!("{key}: {other:?} in {text}"),
    };
    let shape = match fields.get("shape") {
        Some(Json::Array(dims)) => dims
            .iter()
            .map(|d| match d {
                Json::Number(x) if x.fract() == 0.0 && *x > 0.0 => *x as usize,
                other => panic!("shape entry {other:?} in {text}"),
            })
            .collect(),
        other => panic!("shape: {other:?} in {text}"),
    };
    assert_eq!(fields.get("ok"), Some(&Json::Bool(true)), "{text}");
    assert_eq!(string("clock"), "emulator_wall_time", "{text}");
    let figure = match (fields.get("gbps"), fields.get("tflops")) {
        (Some(_), None) => ("gbps".to_string(), number("gbps")),
        (None, Some(_)) => ("tflops".to_string(), number("tflops")),
        _ => panic!("exactly one of gbps and tflops in {text}"),
    };
    let line = Line {
        name: string("name"),
        shape,
        dtype: string("dtype"),
        ms: number("ms"),
        figure,
        fields: fields.clone(),
    };
    assert!(line.ms > 0.0 && line.figure.1 > 0.0, "{text}");
    assert!(!string("entry").is_empty() && !string("checked").is_empty());
    line
}

/// Runs one family at `sizes` and checks every line: the (shape, dtype) sequence must be
/// `expected` (dtype-major, as the script), the figure `count(shape, dtype) / ms`.
fn bench_family(
    name: &str,
    sizes: &str,
    expected: &[(&[usize], &str)],
    count: impl Fn(&[usize], &str) -> f64,
) -> Vec<Line> {
    let out = run(&["--bench", name, "--json", "--sizes", sizes]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: {stdout}\n{stderr}");
    let lines: Vec<Line> = stdout.lines().map(protocol_line).collect();
    let got: Vec<(Vec<usize>, String)> = lines
        .iter()
        .map(|l| (l.shape.clone(), l.dtype.clone()))
        .collect();
    let want: Vec<(Vec<usize>, String)> = expected
        .iter()
        .map(|(s, d)| (s.to_vec(), d.to_string()))
        .collect();
    assert_eq!(got, want, "{name}: {stdout}");
    for line in &lines {
        assert_eq!(line.name, name);
        let want = count(&line.shape, &line.dtype)
            / line.ms
            / if line.figure.0 == "tflops" { 1e9 } else { 1e6 };
        assert!(
            (line.figure.1 - want).abs() <= 1e-9 * want,
            "{name}: {} {} vs {want}",
            line.figure.0,
            line.figure.1
        );
    }
    lines
}

fn size(dtype: &str) -> f64 {
    match dtype {
        "float32" => 4.0,
        "float16" | "bfloat16" => 2.0,
        other => panic!("dtype {other}"),
    }
}

#[test]
fn every_family_runs_on_the_emulator_and_speaks_the_protocol() {
    let bytes_2mn = |s: &[usize], d: &str| 2.0 * (s[0] * s[1]) as f64 * size(d);
    bench_family("copy", "1000", &[(&[1000], "float32")], |s, _| {
        8.0 * s[0] as f64
    });
    bench_family(
        "add",
        "1000,33",
        &[(&[1000], "float32"), (&[33], "float32")],
        |s, _| 12.0 * s[0] as f64,
    );
    bench_family(
        "softmax",
        "2x100",
        &[(&[2, 100], "float32"), (&[2, 100], "float16")],
        bytes_2mn,
    );
    bench_family("layernorm", "2x100", &[(&[2, 100], "float16")], bytes_2mn);
    bench_family(
        "transpose",
        "70x45",
        &[(&[70, 45], "float32"), (&[70, 45], "float16")],
        bytes_2mn,
    );
    bench_family(
        "gather",
        "20x32,3x256",
        &[
            (&[20, 32], "float32"),
            (&[3, 256], "float32"),
            (&[20, 32], "float16"),
            (&[3, 256], "float16"),
        ],
        |s, d| (s[0] * s[1]) as f64 * (2.0 * size(d) + 4.0),
    );
    let matmul = bench_family(
        "matmul",
        "16x24x40",
        &[(&[16, 24, 40], "float16"), (&[16, 24, 40], "bfloat16")],
        |s, _| 2.0 * (s[0] * s[1] * s[2]) as f64,
    );
    for line in &matmul {
        assert_eq!(line.figure.0, "tflops");
        let Some(Json::Array(config)) = line.fields.get("config") else {
            panic!("matmul without config")
        };
        assert_eq!(config.len(), 4);
    }
}

#[test]
fn gpu_shapes_and_bad_names_are_refused_on_the_emulator() {
    let out = run(&["--bench", "softmax", "--json"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--small"), "{stderr}");

    let out = run(&["--bench", "conv", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown benchmark family"));

    let out = run(&["--bench", "gather", "--json", "--sizes", "8x48"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("N = 32, 64, 128, 256"));
}
