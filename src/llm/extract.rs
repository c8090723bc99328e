//! Finding JSON in what a language model actually writes.
//!
//! Models wrap JSON in code fences, put prose before and after it, emit several objects, and
//! write JavaScript-ish JSON: trailing commas, `//` and `/* */` comments, single-quoted
//! strings, bare keys, Python's `True`/`False`/`None`, raw newlines inside strings. The
//! helpers here scan a reply for every `{` or `[`, [`normalize`] the text from there up to the
//! matching bracket into strict JSON, and keep what `serde_json` accepts; a span that does
//! not parse is skipped one character at a time. Nothing here panics on any input, and the
//! work is bounded (see [`SCAN_BUDGET`]), so a hostile reply costs milliseconds, not minutes.
//!
//! Fences need no special case: ```` ```json ```` and the backticks are outside the brackets.

use serde_json::{Map, Value};

/// Replies longer than this are only searched in their first part.
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// Total characters the normalizer may visit for one reply. Each failed start rescans from
/// the next bracket, which is quadratic on adversarial text like `{{{{...`; the budget caps it.
pub const SCAN_BUDGET: usize = 20_000_000;

/// Every top-level JSON object or array in `text`, in order. Values nested inside a value
/// that parsed are not reported again.
pub fn json_values(text: &str) -> Vec<Value> {
    let text = truncate(text, MAX_INPUT_BYTES);
    let mut out = Vec::new();
    let mut budget = SCAN_BUDGET;
    let mut pos = 0;
    while pos < text.len() && budget > 0 {
        let Some(off) = text[pos..].find(['{', '[']) else {
            break;
        };
        let start = pos + off;
        match normalize(text, start, &mut budget) {
            Some((json, end)) => match serde_json::from_str::<Value>(&json) {
                Ok(v) => {
                    out.push(v);
                    pos = end;
                }
                Err(_) => pos = start + 1,
            },
            None => pos = start + 1,
        }
    }
    out
}

/// Every JSON object in `text`; the objects inside a top-level array are included one by one
/// (models often answer "a list of configs" as an array).
pub fn json_objects(text: &str) -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    for v in json_values(text) {
        match v {
            Value::Object(m) => out.push(m),
            Value::Array(items) => out.extend(items.into_iter().filter_map(|i| match i {
                Value::Object(m) => Some(m),
                _ => None,
            })),
            _ => {}
        }
    }
    out
}

/// The first JSON object in `text` (including the first object inside an array).
pub fn first_json_object(text: &str) -> Option<Map<String, Value>> {
    json_objects(text).into_iter().next()
}

/// The largest prefix of `text` no longer than `max` bytes that ends on a char boundary.
fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[derive(Clone, Copy, PartialEq)]
enum Container {
    Object,
    Array,
}

/// Where the scanner is inside a container: what may come next.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    /// After `{` or after `,` in an object: a key.
    Key,
    /// After `:` or `[` or `,` in an array: a value.
    Value,
    /// After a key, a value or a closing bracket: `,`, `:` or a closer.
    After,
}

/// Rewrites the JS-ish JSON that starts at the bracket `text[start]` into strict JSON.
/// Returns the rewritten text and the byte offset just past the matching closing bracket, or
/// `None` when brackets do not match or the text ends first.
pub fn normalize(text: &str, start: usize, budget: &mut usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut stack: Vec<Container> = Vec::new();
    let mut slot = Slot::Value;
    // A comma is held back until the next token shows it is not a trailing one.
    let mut pending_comma = false;
    let mut i = start;

    while i < text.len() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        let c = text[i..].chars().next()?;
        match c {
            '{' | '[' => {
                flush_comma(&mut out, &mut pending_comma);
                out.push(c);
                if c == '{' {
                    stack.push(Container::Object);
                    slot = Slot::Key;
                } else {
                    stack.push(Container::Array);
                    slot = Slot::Value;
                }
                i += 1;
            }
            '}' | ']' => {
                // A held comma right before a closer is a trailing comma: dropped.
                pending_comma = false;
                let want = if c == '}' {
                    Container::Object
                } else {
                    Container::Array
                };
                if stack.pop()? != want {
                    return None;
                }
                out.push(c);
                i += 1;
                slot = Slot::After;
                if stack.is_empty() {
                    return Some((out, i));
                }
            }
            ',' => {
                if pending_comma {
                    // ",," is not JSON and no rewrite makes it unambiguous.
                    return None;
                }
                pending_comma = true;
                slot = match stack.last() {
                    Some(Container::Object) => Slot::Key,
                    _ => Slot::Value,
                };
                i += 1;
            }
            ':' => {
                flush_comma(&mut out, &mut pending_comma);
                out.push(':');
                slot = Slot::Value;
                i += 1;
            }
            '"' => {
                flush_comma(&mut out, &mut pending_comma);
                i = copy_string(text, i, '"', &mut out, budget)?;
                slot = Slot::After;
            }
            '\'' if slot != Slot::After => {
                flush_comma(&mut out, &mut pending_comma);
                i = copy_string(text, i, '\'', &mut out, budget)?;
                slot = Slot::After;
            }
            '/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(text.len(), |n| i + n);
            }
            '/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map(|n| i + 2 + n + 2)?;
            }
            c if c.is_whitespace() => {
                out.push(c);
                i += c.len_utf8();
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '+' || c == '.' => {
                flush_comma(&mut out, &mut pending_comma);
                let len = text[i..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || "_-+.".contains(ch)))
                    .unwrap_or(text.len() - i);
                let word = &text[i..i + len];
                *budget = budget.saturating_sub(len);
                i += len;
                if slot == Slot::Key
                    && is_identifier(word)
                    && next_significant(text, i) == Some(':')
                {
                    // A bare key: quoting it is the only reading.
                    out.push('"');
                    out.push_str(word);
                    out.push('"');
                } else {
                    out.push_str(match word {
                        "True" => "true",
                        "False" => "false",
                        "None" => "null",
                        w => w,
                    });
                }
                slot = Slot::After;
            }
            other => {
                flush_comma(&mut out, &mut pending_comma);
                out.push(other);
                i += other.len_utf8();
            }
        }
    }
    None
}

fn flush_comma(out: &mut String, pending: &mut bool) {
    if *pending {
        out.push(',');
        *pending = false;
    }
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The next character after whitespace, from byte `i`.
fn next_significant(text: &str, i: usize) -> Option<char> {
    text.get(i..)?.chars().find(|c| !c.is_whitespace())
}

/// Copies the string literal quoted by `quote` starting at `text[start]` as a strict JSON
/// string; returns the offset past its closing quote.
fn copy_string(
    text: &str,
    start: usize,
    quote: char,
    out: &mut String,
    budget: &mut usize,
) -> Option<usize> {
    out.push('"');
    let mut chars = text[start + 1..].char_indices();
    while let Some((off, c)) = chars.next() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        match c {
            '\\' => {
                let (_, e) = chars.next()?;
                if e == '\'' {
                    // \' is not a JSON escape; the apostrophe needs none.
                    out.push('\'');
                } else {
                    out.push('\\');
                    out.push(e);
                }
            }
            c if c == quote => {
                out.push('"');
                return Some(start + 1 + off + c.len_utf8());
            }
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde_json::json;

    #[test]
    fn plain_and_fenced() {
        assert_eq!(json_values(r#"{"a": 1}"#), vec![json!({"a": 1})]);
        let reply = "Here you go:\n```json\n{\"MT0\": 128, \"MT1\": 64}\n```\nGood luck!";
        assert_eq!(json_values(reply), vec![json!({"MT0": 128, "MT1": 64})]);
    }

    #[test]
    fn several_objects_and_arrays() {
        let reply = "First {\"a\":1} then {\"b\":[1,2]} and finally [ {\"c\":3}, {\"d\":4} ].";
        let vals = json_values(reply);
        assert_eq!(
            vals,
            vec![json!({"a":1}), json!({"b":[1,2]}), json!([{"c":3},{"d":4}])]
        );
        let objs = json_objects(reply);
        assert_eq!(objs.len(), 4);
        assert_eq!(first_json_object(reply).unwrap()["a"], json!(1));
    }

    #[test]
    fn trailing_commas_and_comments() {
        let reply = "{\n  \"a\": 1, // the tile\n  /* block */ \"b\": [1, 2, 3,],\n}";
        assert_eq!(json_values(reply), vec![json!({"a": 1, "b": [1, 2, 3]})]);
    }

    #[test]
    fn single_quotes_bare_keys_and_python_literals() {
        let reply = "{'name': 'it\\'s \"MT\"', flag: True, none: None, 'x': -1.5e3}";
        assert_eq!(
            json_values(reply),
            vec![json!({"name": "it's \"MT\"", "flag": true, "none": null, "x": -1500.0})]
        );
        // An apostrophe inside a double-quoted string is just a character.
        assert_eq!(
            json_values(r#"{"why": "it's faster"}"#),
            vec![json!({"why": "it's faster"})]
        );
    }

    #[test]
    fn comment_markers_inside_strings_are_kept() {
        let reply = r#"{"url": "http://x/y", "c": "/* no */"}"#;
        assert_eq!(
            json_values(reply),
            vec![json!({"url": "http://x/y", "c": "/* no */"})]
        );
    }

    #[test]
    fn raw_newlines_in_strings_are_escaped() {
        assert_eq!(
            json_values("{\"why\": \"line one\nline two\"}"),
            vec![json!({"why": "line one\nline two"})]
        );
    }

    #[test]
    fn prose_braces_are_skipped() {
        let reply = "Use {MT} as a placeholder; set [the] values: {\"MT0\": 256}";
        assert_eq!(json_values(reply), vec![json!({"MT0": 256})]);
        assert!(json_values("no json here { at all").is_empty());
        assert!(json_values("").is_empty());
        assert!(json_values("{{{{{{{{{{").is_empty());
        assert!(json_values("{\"a\":1,,}").is_empty());
    }

    #[test]
    fn unicode_survives() {
        assert_eq!(
            json_values("→ {'ключ': 'значение ✓'} ←"),
            vec![json!({"ключ": "значение ✓"})]
        );
    }

    /// A random JSON value without floats (whose text form need not round-trip exactly).
    fn random_value(rng: &mut impl Rng, depth: u32) -> Value {
        let pick = if depth >= 3 {
            rng.gen_range(0..4)
        } else {
            rng.gen_range(0..6)
        };
        match pick {
            0 => Value::Null,
            1 => json!(rng.gen::<bool>()),
            2 => json!(rng.gen_range(-1_000_000i64..1_000_000)),
            3 => json!(random_text(rng, "ab \\\"'{}[],:/*#\n\té→", 12)),
            4 => Value::Array(
                (0..rng.gen_range(0..4))
                    .map(|_| random_value(rng, depth + 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..rng.gen_range(0..4))
                    .map(|_| {
                        (
                            random_text(rng, "kMT_0'\" ", 6),
                            random_value(rng, depth + 1),
                        )
                    })
                    .collect(),
            ),
        }
    }

    fn random_text(rng: &mut impl Rng, palette: &str, max_len: usize) -> String {
        let chars: Vec<char> = palette.chars().collect();
        (0..rng.gen_range(0..=max_len))
            .map(|_| chars[rng.gen_range(0..chars.len())])
            .collect()
    }

    #[test]
    fn random_garbage_never_panics_and_yields_only_containers() {
        let mut rng = ChaCha8Rng::seed_from_u64(0x6e6d);
        let palette = "{}[]\"'\\:,/*#\n\t abcTrueFalseNone0123456789.-+eé→✓`";
        for _ in 0..3000 {
            let text = random_text(&mut rng, palette, 80);
            for v in json_values(&text) {
                assert!(v.is_object() || v.is_array(), "{text:?} gave {v}");
            }
            let _ = json_objects(&text);
        }
    }

    #[test]
    fn random_values_are_found_in_random_prose() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let prose = "The best tile is: 128x64 because it's fast. Note \"quotes\" and ' marks.\n";
        for i in 0..1000 {
            let value = match random_value(&mut rng, 0) {
                v @ (Value::Object(_) | Value::Array(_)) => v,
                v => json!({ "v": v }),
            };
            let body = if i % 2 == 0 {
                serde_json::to_string(&value).unwrap()
            } else {
                serde_json::to_string_pretty(&value).unwrap()
            };
            let before = random_text(&mut rng, prose, 40);
            let after = random_text(&mut rng, prose, 40);
            let text = if i % 3 == 0 {
                format!("{before}\n```json\n{body}\n```\n{after}")
            } else {
                format!("{before}{body}{after}")
            };
            assert_eq!(json_values(&text), vec![value], "in {text:?}");
        }
    }

    #[test]
    fn adversarial_input_is_bounded() {
        let text = "{[".repeat(200_000);
        assert!(json_values(&text).is_empty());
    }
}
