//! The fields of a GEMM's log line that its timings do not cover, as the report states them.
//!
//! A log line may ask for more than the plain GEMM: a fused epilogue (`bias_vector`,
//! `activation_type: gelu`, `use_e`), vector scaling, amax outputs, swizzled layouts; or it
//! may carry fields the parser does not know. The parser keeps them in
//! [`LogEntry::extra`](crate::problem::log::LogEntry::extra); they flow unchanged through
//! [`WorkloadGemm`](super::selection::WorkloadGemm) and
//! [`GemmRecord`](super::record::GemmRecord) (`log_fields`, a JSON
//! object in the CSVs, so `merge` keeps them) into one numbered note per distinct text under
//! the table of `summary.md` and of the table printed at the end ([`Footnotes`]).
//!
//! What the note says was checked against the code that times: the vendor baseline is a
//! cuBLASLt / hipBLASLt matmul whose descriptor is built from the
//! [`GemmProblem`](crate::problem::GemmProblem) alone (transposes, types, layouts; no
//! epilogue, bias or activation attribute), and the generated kernel computes
//! `D = alpha*A*B + beta*C` with the per-tensor scales folded into alpha and beta. Both are
//! timed as the plain GEMM, so a kept kernel stands for the GEMM without these features and its
//! uplift is not the fused operation's.

use std::collections::BTreeMap;

use crate::problem::log::{extra_kind, ExtraKind};

/// A GEMM's extra log fields, key -> value as the log wrote them.
pub type LogFields = BTreeMap<String, String>;

/// What the report says about one GEMM's fields, or `None` when there is nothing to say.
pub fn note(fields: &LogFields) -> Option<String> {
    let of = |kind: ExtraKind| fields.iter().filter(move |(k, _)| extra_kind(k) == kind);
    // A switch (`--bias_vector`) reads best by its name alone.
    let features: Vec<String> = of(ExtraKind::Feature)
        .map(|(k, v)| {
            if v == "true" {
                k.clone()
            } else {
                format!("{k}={v}")
            }
        })
        .collect();
    let pairs = |kind| {
        of(kind)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
    };
    let details = pairs(ExtraKind::Detail);
    let unknown = pairs(ExtraKind::Unknown);
    let mut parts = Vec::new();
    if !features.is_empty() {
        let details = if details.is_empty() {
            String::new()
        } else {
            format!(" ({})", details.join(", "))
        };
        parts.push(format!(
            "{}{details}: timed as the plain GEMM, by the vendor library and the tuned kernel \
             alike; these features are not part of the tuned kernel",
            features.join(", ")
        ));
    }
    if !unknown.is_empty() {
        parts.push(format!(
            "unknown log fields, ignored for tuning: {}",
            unknown.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The fields as one CSV cell: a JSON object, empty when there are none.
pub fn to_cell(fields: &LogFields) -> String {
    if fields.is_empty() {
        String::new()
    } else {
        serde_json::to_string(fields).unwrap_or_default()
    }
}

/// Reads a cell written by [`to_cell`].
pub fn from_cell(cell: &str) -> Result<LogFields, String> {
    if cell.trim().is_empty() {
        return Ok(LogFields::new());
    }
    serde_json::from_str(cell)
        .map_err(|e| format!("`{cell}` is not a JSON object of log fields: {e}"))
}

/// The notes of a table's rows, numbered in row order; rows with the same note share it.
#[derive(Debug, Default)]
pub struct Footnotes {
    /// GEMM id -> 1-based note number.
    number: BTreeMap<usize, usize>,
    /// Each note with the ids of its GEMMs.
    notes: Vec<(String, Vec<usize>)>,
}

impl Footnotes {
    /// Notes for the rows `(GEMM id, its log fields)`, in table order.
    pub fn of<'a>(rows: impl IntoIterator<Item = (usize, &'a LogFields)>) -> Self {
        let mut f = Footnotes::default();
        for (id, fields) in rows {
            let Some(text) = note(fields) else {
                continue;
            };
            let i = match f.notes.iter().position(|(t, _)| *t == text) {
                Some(i) => i,
                None => {
                    f.notes.push((text, Vec::new()));
                    f.notes.len() - 1
                }
            };
            f.notes[i].1.push(id);
            f.number.insert(id, i + 1);
        }
        f
    }

    /// ` [n]` after the GEMM of a row that has a note, else nothing.
    pub fn marker(&self, id: usize) -> String {
        self.number
            .get(&id)
            .map(|n| format!(" [{n}]"))
            .unwrap_or_default()
    }

    /// One line per note: `[n] #0, #3: text`.
    pub fn lines(&self) -> Vec<String> {
        self.notes
            .iter()
            .enumerate()
            .map(|(i, (text, ids))| {
                let ids: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
                format!("[{}] {}: {text}", i + 1, ids.join(", "))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> LogFields {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn features_are_named_with_what_was_timed() {
        let f = fields(&[
            ("activation_type", "gelu"),
            ("bias_type", "f32_r"),
            ("bias_vector", "true"),
            ("zz", "3"),
        ]);
        let n = note(&f).unwrap();
        assert!(
            n.starts_with(
                "activation_type=gelu, bias_vector (bias_type=f32_r): timed as the plain GEMM"
            ),
            "{n}"
        );
        assert!(
            n.ends_with("unknown log fields, ignored for tuning: zz=3"),
            "{n}"
        );
        assert_eq!(note(&LogFields::new()), None);
        assert_eq!(from_cell(&to_cell(&f)).unwrap(), f);
        assert_eq!(from_cell("").unwrap(), LogFields::new());
    }

    #[test]
    fn rows_with_the_same_fields_share_a_note() {
        let bias = fields(&[("bias_vector", "true")]);
        let none = LogFields::new();
        let f = Footnotes::of([(0, &bias), (1, &none), (2, &bias)]);
        assert_eq!(
            (f.marker(0), f.marker(1), f.marker(2)),
            (" [1]".into(), String::new(), " [1]".into())
        );
        let lines = f.lines();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("[1] #0, #2: bias_vector: timed as the plain GEMM"),
            "{lines:?}"
        );
    }
}
