//! Reading LLM replies: tolerant parsing, then strict validation.
//!
//! Models wrap JSON in code fences, surround it with prose, leave trailing commas, return a
//! single object where an array was asked for, write kernels as names (`MT128x64x64_...`,
//! even partial ones) or as objects of parameter values with long or short names. Parsing
//! accepts all of that; every config that comes out is then checked with `Space::check`, and
//! anything that fails becomes a [`Rejected`] entry with the reason, which the driver counts
//! and the next prompt reports back to the model.

use serde_json::Value;

use super::strategy::Rejected;
use crate::space::{pack_mi, GsuAlgo, KernelConfig, ParamId, Space};

/// A valid config suggested by the model, with its reasoning when given.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    pub config: KernelConfig,
    pub reasoning: Option<String>,
}

/// Everything taken from one reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedReply {
    pub suggestions: Vec<Suggestion>,
    pub rejected: Vec<Rejected>,
    pub analysis: Option<String>,
    pub strategy: Option<String>,
}

/// Finds the JSON in a reply: fenced blocks first, then the whole text, then every balanced
/// `{...}` / `[...]` span (several top-level objects become one array).
pub fn extract_json(text: &str) -> Option<Value> {
    for block in fenced_blocks(text) {
        if let Some(v) = parse_lenient(block) {
            return Some(v);
        }
    }
    if let Some(v) = parse_lenient(text) {
        return Some(v);
    }
    let spans: Vec<Value> = balanced_spans(text)
        .into_iter()
        .filter_map(parse_lenient)
        .filter(|v| {
            v.is_object()
                || v.as_array()
                    .is_some_and(|a| a.iter().any(|x| x.is_object() || x.is_string()))
        })
        .collect();
    if let Some(wrapper) = spans.iter().find(|v| list_field(v).is_some()) {
        return Some(wrapper.clone());
    }
    match spans.len() {
        0 => None,
        1 => spans.into_iter().next(),
        _ => Some(Value::Array(spans)),
    }
}

/// Parses the configs of a reply; partial configs are completed from `base`.
pub fn parse_configs(text: &str, space: &Space, base: &KernelConfig) -> ParsedReply {
    let mut out = ParsedReply::default();
    let items: Vec<Value> = match extract_json(text) {
        Some(v) => {
            out.analysis = text_field(&v, &["analysis"]);
            out.strategy = text_field(&v, &["strategy"]);
            match list_field(&v) {
                Some(list) => list.clone(),
                None => match v {
                    Value::Array(a) => a,
                    other => vec![other],
                },
            }
        }
        // No JSON at all: kernel names written in prose still count.
        None => name_tokens(text).into_iter().map(Value::String).collect(),
    };
    if items.is_empty() {
        out.rejected.push(Rejected {
            suggestion: abbreviate(text),
            reason: "the reply contains no config".into(),
        });
    }
    for item in items {
        let reasoning = text_field(&item, &["reasoning", "rationale", "why", "reason"]);
        match config_from_value(&item, base) {
            Ok(c) => {
                let c = c.canonical();
                match space.check(&c) {
                    Ok(()) => {
                        if !out.suggestions.iter().any(|s| s.config == c) {
                            out.suggestions.push(Suggestion {
                                config: c,
                                reasoning,
                            });
                        }
                    }
                    Err(v) => out.rejected.push(Rejected {
                        suggestion: c.name(),
                        reason: v.to_string(),
                    }),
                }
            }
            Err(reason) => out.rejected.push(Rejected {
                suggestion: abbreviate(&item.to_string()),
                reason,
            }),
        }
    }
    out
}

/// Turns one suggested item into a config, starting from `base` for missing parameters.
pub fn config_from_value(v: &Value, base: &KernelConfig) -> Result<KernelConfig, String> {
    match v {
        Value::String(s) => config_from_name(s, base),
        Value::Object(map) => {
            for key in ["config", "kernel", "params", "parameters", "configuration"] {
                if let Some(inner) = get_ci(map, key) {
                    return config_from_value(inner, base);
                }
            }
            let mut c = *base;
            let mut any = false;
            for (k, val) in map {
                if is_meta_key(k) {
                    if norm(k) == "name" {
                        if let Some(s) = val.as_str() {
                            if let Ok(named) = config_from_name(s, base) {
                                c = named;
                                any = true;
                            }
                        }
                    }
                    continue;
                }
                apply_param(&mut c, k, val)?;
                any = true;
            }
            if !any {
                return Err("the suggestion names no parameter".into());
            }
            Ok(c)
        }
        other => Err(format!(
            "`{}` is not a config",
            abbreviate(&other.to_string())
        )),
    }
}

/// Parses a full or partial kernel name (`MT128x64x64_MI16x8x16_PGR3`); fields not given
/// keep the value of `base`.
pub fn config_from_name(name: &str, base: &KernelConfig) -> Result<KernelConfig, String> {
    let name = name.trim();
    if let Ok(c) = KernelConfig::parse(name) {
        return Ok(c);
    }
    let mut c = *base;
    let mut any = false;
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let split = part
            .find(|ch: char| ch.is_ascii_digit())
            .ok_or_else(|| format!("`{part}` in `{name}` is not a parameter field"))?;
        let (prefix, value) = part.split_at(split);
        let nums = |n: usize| -> Result<Vec<i64>, String> {
            let v: Vec<i64> = value
                .trim_end_matches(|ch: char| GsuAlgo::from_letter(ch).is_some())
                .split('x')
                .map(|x| x.parse::<i64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("`{part}` is not {n} number(s) separated by x"))?;
            if v.len() == n || (n == 3 && prefix == "MT" && v.len() == 2) {
                Ok(v)
            } else {
                Err(format!("`{part}` needs {n} number(s)"))
            }
        };
        match prefix {
            "MT" => {
                let v = nums(3)?;
                ParamId::MacroTile0.set(&mut c, v[0]);
                ParamId::MacroTile1.set(&mut c, v[1]);
                if let Some(du) = v.get(2) {
                    ParamId::DepthU.set(&mut c, *du);
                }
            }
            "MI" => {
                let v = nums(3)?;
                c.mi = [v[0] as u32, v[1] as u32, v[2] as u32];
            }
            "WG" => {
                let v = nums(2)?;
                ParamId::WavesM.set(&mut c, v[0]);
                ParamId::WavesN.set(&mut c, v[1]);
            }
            "GSU" => {
                let v = nums(1)?;
                ParamId::GlobalSplitU.set(&mut c, v[0]);
                if let Some(algo) = value.chars().last().and_then(GsuAlgo::from_letter) {
                    c.gsu_algo = algo;
                }
            }
            other => {
                let id = ParamId::from_name(other)
                    .ok_or_else(|| format!("unknown field `{other}` in `{name}`"))?;
                let v = id
                    .parse_value(value)
                    .ok_or_else(|| format!("`{part}` is not a value of {}", id.name()))?;
                id.set(&mut c, v);
            }
        }
        any = true;
    }
    if !any {
        return Err(format!("`{name}` is not a kernel name"));
    }
    Ok(c)
}

/// Sets one parameter from a JSON key/value; knows the long and short names and the
/// combined `MacroTile`/`WorkGroup` forms models like to write.
pub fn apply_param(c: &mut KernelConfig, key: &str, val: &Value) -> Result<(), String> {
    let k = norm(key);
    let ints = |n: usize| -> Option<Vec<i64>> {
        let v: Vec<i64> = match val {
            Value::Array(a) => a.iter().map(|x| x.as_i64()).collect::<Option<_>>()?,
            Value::String(s) => s
                .trim_matches(['[', ']'])
                .split(|ch: char| ch == 'x' || ch == 'X' || ch == ',' || ch.is_whitespace())
                .filter(|p| !p.is_empty())
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?,
            _ => return None,
        };
        (v.len() == n || (n == 3 && v.len() == 2)).then_some(v)
    };
    match k.as_str() {
        "macrotile" | "mt" | "tile" => {
            let v = ints(3)
                .ok_or_else(|| format!("{key}: expected [MT0, MT1] or [MT0, MT1, DepthU]"))?;
            ParamId::MacroTile0.set(c, v[0]);
            ParamId::MacroTile1.set(c, v[1]);
            if let Some(du) = v.get(2) {
                ParamId::DepthU.set(c, *du);
            }
            return Ok(());
        }
        "workgroup" | "wg" | "waves" | "wavegroup" => {
            let v = ints(2).ok_or_else(|| format!("{key}: expected [WavesM, WavesN]"))?;
            ParamId::WavesM.set(c, v[0]);
            ParamId::WavesN.set(c, v[1]);
            return Ok(());
        }
        _ => {}
    }
    let id = ParamId::ALL
        .into_iter()
        .find(|p| norm(p.name()) == k || norm(p.short()) == k)
        .ok_or_else(|| format!("unknown parameter `{key}`"))?;
    let parsed = match val {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => id.parse_value(s),
        Value::Bool(b) => Some(*b as i64),
        Value::Array(a) if id == ParamId::MatrixInstruction => {
            let v: Option<Vec<u32>> = a.iter().map(|x| x.as_u64().map(|u| u as u32)).collect();
            v.filter(|v| v.len() == 3)
                .map(|v| pack_mi([v[0], v[1], v[2]]))
        }
        _ => None,
    };
    let v = parsed.ok_or_else(|| format!("`{val}` is not a value of {}", id.name()))?;
    if v < 0 {
        return Err(format!("{} cannot be negative", id.name()));
    }
    id.set(c, v);
    Ok(())
}

/// The list of configs in a wrapper object (`{"configs": [...]}`), if it is one.
fn list_field(v: &Value) -> Option<&Vec<Value>> {
    let map = v.as_object()?;
    [
        "configs",
        "configurations",
        "suggestions",
        "kernels",
        "candidates",
    ]
    .iter()
    .find_map(|k| get_ci(map, k))
    .and_then(|x| x.as_array())
}

fn text_field(v: &Value, keys: &[&str]) -> Option<String> {
    let map = v.as_object()?;
    keys.iter()
        .find_map(|k| get_ci(map, k))
        .and_then(|x| x.as_str())
        .map(str::to_string)
}

fn get_ci<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.iter().find(|(k, _)| norm(k) == key).map(|(_, v)| v)
}

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn is_meta_key(k: &str) -> bool {
    matches!(
        norm(k).as_str(),
        "reasoning"
            | "rationale"
            | "why"
            | "reason"
            | "comment"
            | "comments"
            | "note"
            | "notes"
            | "name"
            | "id"
            | "category"
            | "kind"
            | "label"
            | "confidence"
            | "risk"
            | "expected"
            | "expectedus"
            | "expectedlatency"
            | "expectedperformance"
    )
}

fn abbreviate(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= 160 {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(157).collect::<String>())
    }
}

/// Contents of ``` fenced blocks (the language tag line is dropped).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(0);
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                // An unclosed fence (the reply was cut off): take what is there.
                out.push(body);
                break;
            }
        }
    }
    out
}

/// Strict JSON first, then with trailing commas removed.
fn parse_lenient(s: &str) -> Option<Value> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    serde_json::from_str(s)
        .ok()
        .or_else(|| serde_json::from_str(&strip_trailing_commas(s)).ok())
}

/// Removes commas that directly precede `}` or `]` (outside strings).
fn strip_trailing_commas(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let (mut in_str, mut escaped) = (false, false);
    for (i, &ch) in chars.iter().enumerate() {
        if in_str {
            out.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_str = false;
            }
            continue;
        }
        if ch == '"' {
            in_str = true;
        } else if ch == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(ch);
    }
    out
}

/// Top-level balanced `{...}` and `[...]` spans, string-aware.
fn balanced_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack: Vec<char> = Vec::new();
    let mut start = 0;
    let (mut in_str, mut escaped) = (false, false);
    for (i, ch) in text.char_indices() {
        if in_str {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_str = false;
            }
            continue;
        }
        match ch {
            '"' if !stack.is_empty() => in_str = true,
            '{' | '[' => {
                if stack.is_empty() {
                    start = i;
                }
                stack.push(if ch == '{' { '}' } else { ']' });
            }
            '}' | ']' => {
                if stack.last() == Some(&ch) {
                    stack.pop();
                    if stack.is_empty() {
                        out.push(&text[start..=i]);
                    }
                } else {
                    // Mismatched bracket: prose, not JSON; start over.
                    stack.clear();
                }
            }
            _ => {}
        }
    }
    out
}

/// Words that look like kernel names (`MT...`), for replies without JSON.
fn name_tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| t.starts_with("MT") && t[2..].starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;

    /// An NN problem on a GPU without the warpgroup instruction: its default config takes the
    /// mma.sync path, which the names below use.
    fn setup() -> (Space, KernelConfig) {
        let mut p = GemmProblem::new(4096, 4096, 4096);
        p.trans_a = crate::problem::Trans::N;
        let mut hw = HwSpec::by_name("H200").unwrap();
        for shapes in hw.matrix_instructions.values_mut() {
            shapes.retain(|s| s[0] != 64);
        }
        let s = Space::for_problem(&p, &hw);
        let base = s.default_config().unwrap();
        (s, base)
    }

    #[test]
    fn fenced_json_with_trailing_commas_and_prose() {
        let (s, base) = setup();
        let text = format!(
            "Here you go:\n```json\n{{\"analysis\": \"a\", \"configs\": [\n {{\"reasoning\": \"r\", \"config\": {{\"DepthU\": 32,}}}},\n {{\"config\": \"{}\"}},\n]}}\n```\nGood luck.",
            base.name()
        );
        let r = parse_configs(&text, &s, &base);
        assert_eq!(r.analysis.as_deref(), Some("a"));
        assert_eq!(r.suggestions.len(), 2, "{r:?}");
        assert_eq!(r.suggestions[0].config.depth_u, 32);
        assert_eq!(r.suggestions[0].reasoning.as_deref(), Some("r"));
        assert!(r.rejected.is_empty());
    }

    #[test]
    fn single_object_short_names_and_combined_fields() {
        let (s, base) = setup();
        let r = parse_configs(
            r#"{"MT": [128, 64], "WG": "2x2", "DU": "64", "MI": [16,8,16], "GSU": 1}"#,
            &s,
            &base,
        );
        assert_eq!(r.suggestions.len(), 1, "{r:?}");
        let c = r.suggestions[0].config;
        assert_eq!((c.mt0, c.mt1, c.depth_u, c.wg), (128, 64, 64, [2, 2]));
    }

    #[test]
    fn partial_names_in_prose_and_invalid_values_are_rejected_with_reasons() {
        let (s, base) = setup();
        let r = parse_configs(
            "Try MT128x128x64_PGR2 and also MT128x128x48_PGR2.",
            &s,
            &base,
        );
        assert_eq!(r.suggestions.len(), 1, "{r:?}");
        assert_eq!(r.rejected.len(), 1);
        assert!(r.rejected[0].reason.contains("DepthU"), "{:?}", r.rejected);
        let r = parse_configs(r#"[{"Bogus": 3}, {"DepthU": "lots"}, 42]"#, &s, &base);
        assert!(r.suggestions.is_empty());
        assert_eq!(r.rejected.len(), 3);
        assert!(r.rejected[0].reason.contains("unknown parameter"));
    }

    #[test]
    fn partial_names_carry_every_split_algorithm() {
        let (_, base) = setup();
        for (field, gsu, algo) in [
            ("GSU4A", 4, GsuAlgo::Atomic),
            ("GSU3R", 3, GsuAlgo::Reduce),
            ("GSU2S", 2, GsuAlgo::StreamK),
            ("GSU2K", 2, GsuAlgo::SingleKernel),
        ] {
            let c = config_from_name(&format!("MT128x64x64_{field}"), &base).unwrap();
            assert_eq!((c.gsu, c.gsu_algo), (gsu, algo), "{field}");
        }
    }

    #[test]
    fn garbage_yields_one_rejection() {
        let (s, base) = setup();
        let r = parse_configs("I cannot help with that.", &s, &base);
        assert!(r.suggestions.is_empty());
        assert_eq!(r.rejected.len(), 1);
    }

    #[test]
    fn several_top_level_objects_become_a_list() {
        let v = extract_json(r#"first {"DepthU": 32} then {"DepthU": 64} (sizes [1, 2])"#).unwrap();
        assert_eq!(v.as_array().map(|a| a.len()), Some(2));
    }
}
