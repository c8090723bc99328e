//! Lines written with `HIPBLASLT_LOG_MASK=32` (bench logging): a `hipblaslt-bench` command
//! line that reproduces one call, e.g.
//! `hipblaslt-bench --api_method c -m 16032 -n 109 -k 16384 --lda 16384 ... --transA T`.
//!
//! The arguments are read the way hipblaslt-bench's option parser reads them: long flags
//! (`--lda 5`, `--lda=5`), short flags (`-m 5`, `-m5`), flags in any order, any amount of
//! whitespace, switches without a value (`--bias_vector`), and several values after a size
//! flag for grouped GEMMs (`-m 128 256`). A token is a flag when it starts with `--`, or
//! with `-` and a letter, so negative numbers (`--alpha -1`) stay values.

use super::fields::{classify, unquote, KeyKind, RawFields};

/// The arguments after the program name, when the (left-trimmed) line runs hipblaslt-bench.
/// The program may be given by path and preceded by environment assignments
/// (`HIPBLASLT_LOG_MASK=32 /opt/rocm/bin/hipblaslt-bench ...`); anything else before it
/// means the line merely mentions the program, and it is not a command.
pub(super) fn invocation(line: &str) -> Option<&str> {
    if !line.contains("hipblaslt-bench") {
        return None;
    }
    let mut rest = line;
    loop {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        let program = token.rsplit('/').next().unwrap_or(token);
        if program == "hipblaslt-bench" || program == "hipblaslt-bench.exe" {
            return Some(&rest[end..]);
        }
        let is_env_assignment = token
            .split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && !name.starts_with('-'));
        if !is_env_assignment {
            return None;
        }
        rest = &rest[end..];
    }
}

/// Splits the arguments into pairs.
pub(super) fn parse(args: &str) -> Result<RawFields<'_>, String> {
    let mut fields = RawFields::default();
    let mut tokens = args.split_whitespace().peekable();
    while let Some(token) = tokens.next() {
        let Some((name, inline)) = flag(token) else {
            return Err(format!(
                "unexpected argument `{token}`: every value must follow a flag"
            ));
        };
        if name.is_empty() {
            return Err(format!("empty flag name in `{token}`"));
        }
        let value = match inline {
            Some(v) => Some(v),
            None => {
                // All following non-flag tokens belong to this flag (grouped sizes); the
                // value is the slice of the line that spans them.
                let mut span: Option<(&str, &str)> = None;
                while let Some(next) = tokens.peek() {
                    if flag(next).is_some() {
                        break;
                    }
                    let t = tokens.next().unwrap_or_default();
                    span = Some((span.map_or(t, |(first, _)| first), t));
                }
                span.map(|(first, last)| slice_between(args, first, last))
            }
        };
        let value = match value {
            Some(v) => unquote(v),
            None => match classify(name) {
                KeyKind::Problem(_) | KeyKind::Function | KeyKind::CallCount => {
                    return Err(format!("flag `{token}` needs a value"));
                }
                // A switch such as `--bias_vector` means "on".
                _ => "true",
            },
        };
        fields.set(name, value);
    }
    Ok(fields)
}

/// `Some((name, inline value))` when `token` is a flag.
fn flag(token: &str) -> Option<(&str, Option<&str>)> {
    if let Some(long) = token.strip_prefix("--") {
        return Some(match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        });
    }
    let short = token.strip_prefix('-')?;
    let first = short.chars().next()?;
    if !first.is_ascii_alphabetic() {
        return None;
    }
    let (name, rest) = short.split_at(first.len_utf8());
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    Some((name, (!rest.is_empty()).then_some(rest)))
}

/// The text of `whole` from the start of `first` to the end of `last`; both are slices of
/// `whole` produced by splitting it, so the offsets are in range.
fn slice_between<'a>(whole: &'a str, first: &str, last: &str) -> &'a str {
    let base = whole.as_ptr() as usize;
    let start = first.as_ptr() as usize - base;
    let end = last.as_ptr() as usize - base + last.len();
    &whole[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_program_after_paths_and_env() {
        assert_eq!(
            invocation("hipblaslt-bench -m 1").map(str::trim),
            Some("-m 1")
        );
        assert_eq!(
            invocation("/opt/rocm/bin/hipblaslt-bench -m 1").map(str::trim),
            Some("-m 1")
        );
        assert_eq!(
            invocation("A=1 B=2 ./hipblaslt-bench -m 1").map(str::trim),
            Some("-m 1")
        );
        assert_eq!(invocation("please run hipblaslt-bench -m 1"), None);
        assert_eq!(invocation("hipblaslt-bench-wrapper -m 1"), None);
    }

    #[test]
    fn flag_forms() {
        assert_eq!(flag("--lda"), Some(("lda", None)));
        assert_eq!(flag("--lda=7"), Some(("lda", Some("7"))));
        assert_eq!(flag("-m"), Some(("m", None)));
        assert_eq!(flag("-m16"), Some(("m", Some("16"))));
        assert_eq!(flag("-1.5"), None);
        assert_eq!(flag("16"), None);
    }

    #[test]
    fn switches_values_and_negative_numbers() {
        let f = parse(" -m 4  -n   5 -k 6 --bias_vector --alpha -2 --transA T").unwrap();
        assert_eq!(f.features, vec![("bias_vector", "true")]);
        let p = f.build().unwrap().remove(0);
        assert_eq!((p.m, p.n, p.k, p.alpha), (4, 5, 6, -2.0));
        assert!(parse("-m 4 -n 5 -k")
            .unwrap_err()
            .contains("`-k` needs a value"));
        assert!(parse("7 -m 4")
            .unwrap_err()
            .contains("unexpected argument `7`"));
    }

    #[test]
    fn grouped_values_span_tokens() {
        let f = parse("--grouped_gemm 1 -m 16  32 -n 8 -k 4").unwrap();
        let shapes: Vec<_> = f.build().unwrap().iter().map(|p| p.m).collect();
        assert_eq!(shapes, vec![16, 32]);
    }
}
