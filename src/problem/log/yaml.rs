//! Lines written with `HIPBLASLT_LOG_MASK=64` or `128` (profile logging): one flow-style
//! YAML mapping per distinct GEMM, e.g.
//! `- {function: matmul, M: 16032, N: 109, K: 16384, ..., call_count: 1}`.
//!
//! hipBLASLt writes these with plain scalars only (no nesting, no commas inside values), so
//! a full YAML parser is not needed: the body between the braces is split on commas and
//! each `key: value` pair goes to [`RawFields::set`] as slices of the line.

use super::fields::{unquote, RawFields};

/// True when the (left-trimmed) line is meant to be a profile entry.
pub(super) fn is_entry(line: &str) -> bool {
    line.starts_with("- {") && line.contains("function:")
}

/// Splits one entry into pairs. `line` must satisfy [`is_entry`].
pub(super) fn parse(line: &str) -> Result<RawFields<'_>, String> {
    let body = line["- {".len()..].trim_end();
    let Some(inner) = body.strip_suffix('}') else {
        return Err("unbalanced braces: the entry does not end with `}` (truncated line?)".into());
    };
    if inner.contains(['{', '}']) {
        return Err("unbalanced braces: unexpected `{` or `}` inside the entry".into());
    }
    let mut fields = RawFields::default();
    for part in inner.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((key, value)) = part.split_once(':') else {
            return Err(format!("expected `key: value`, found `{part}`"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("empty key in `{part}`"));
        }
        fields.set(key, unquote(value.trim()));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_pairs_and_unquotes() {
        let f = parse("- {function: matmul, M: 4, N: 5, K: 6, activation_type: 'gelu', zz: 1,}")
            .unwrap();
        assert_eq!(f.function, Some("matmul"));
        assert_eq!(f.features, vec![("activation_type", "gelu")]);
        assert_eq!(f.unknown, vec![("zz", "1")]);
        let p = f.build().unwrap().remove(0);
        assert_eq!((p.m, p.n, p.k), (4, 5, 6));
    }

    #[test]
    fn rejects_broken_structure() {
        assert!(parse("- {function: matmul, M: 4")
            .unwrap_err()
            .contains("unbalanced"));
        assert!(parse("- {function: matmul, M: {4}}")
            .unwrap_err()
            .contains("unbalanced"));
        assert!(parse("- {function: matmul, M 4}")
            .unwrap_err()
            .contains("key: value"));
    }

    #[test]
    fn recognises_entries_only() {
        assert!(is_entry("- {function: matmul}"));
        assert!(!is_entry("- {name: x}"));
        assert!(!is_entry("loss: 0.3 - {function: x}"));
    }
}
