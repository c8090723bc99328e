//! JSON schemas for the replies the LLM strategies ask for, generated from the [`Space`].
//!
//! A schema goes with every request, and endpoints that constrain decoding to it (OpenAI's
//! strict `json_schema`, llama.cpp's grammar, Ollama's `format`, Anthropic's forced tool)
//! can then only produce replies of the right shape with values from the space. How a config
//! is written depends on the space:
//! - when its valid configs can be listed (the product of the domains is small enough to
//!   enumerate and at most [`NAME_ENUM_MAX`] configs are valid), `config` is one of their
//!   canonical names, those already measured left out: every suggestion is then a valid,
//!   new kernel by construction;
//! - otherwise `config` is an object with one property per parameter, each an `enum` of its
//!   domain's values: every value is allowed, though a combination may still break a rule
//!   (the reply parser checks each one and the prompt reports the ones that did).
//!
//! Batches carry `maxItems` = the number asked for, so a reply cannot run past its token
//! limit by listing more. Strings (reasoning, analysis) have a `maxLength`, which keeps a
//! small model from spending its reply on prose; transports whose strict mode does not take
//! length limits drop them.

use serde_json::{json, Map, Value};

use super::history::History;
use super::llm_port::ReplySchema;
use crate::space::{KernelConfig, ParamId, Space};

/// Most names a schema lists as an enum (beyond this the param form is used).
pub const NAME_ENUM_MAX: usize = 400;
/// Most points enumerated to find the valid names (a fraction of a second).
pub const ENUMERATION_POINTS_MAX: u128 = 400_000;
/// Length limits of the free-text fields, in characters.
pub const REASONING_CHARS: usize = 160;
pub const ANALYSIS_CHARS: usize = 400;

/// How configs are written in the replies of one search; built once per space.
#[derive(Debug, Clone)]
pub struct ConfigSchema {
    /// Every valid config when the space is small enough to list them, in name order.
    listed: Option<Vec<KernelConfig>>,
    /// The param form, for spaces that cannot be listed.
    params: Value,
}

impl ConfigSchema {
    pub fn for_space(space: &Space) -> Self {
        let listed = (space.size() <= ENUMERATION_POINTS_MAX)
            .then(|| space.enumerate(ENUMERATION_POINTS_MAX).ok())
            .flatten()
            .filter(|all| !all.is_empty() && all.len() <= NAME_ENUM_MAX)
            .map(|mut all| {
                all.sort_by_key(KernelConfig::name);
                all
            });
        ConfigSchema {
            listed,
            params: params_schema(space),
        }
    }

    /// Whether configs are written as one of the listed names.
    pub fn lists_names(&self) -> bool {
        self.listed.is_some()
    }

    /// The schema of one config: a listed name not yet measured (all of them when every one
    /// was), or the param object.
    pub fn config(&self, history: &History) -> Value {
        let Some(all) = &self.listed else {
            return self.params.clone();
        };
        let fresh: Vec<String> = all
            .iter()
            .filter(|c| !history.contains(c))
            .map(KernelConfig::name)
            .collect();
        let names = if fresh.is_empty() {
            all.iter().map(KernelConfig::name).collect()
        } else {
            fresh
        };
        json!({"type": "string", "enum": names})
    }

    /// `{analysis?, strategy?, configs: [{reasoning, config}] (1..=n)}`.
    pub fn batch(&self, history: &History, n: usize, with_analysis: bool) -> ReplySchema {
        let item = object(&[
            ("reasoning", text(REASONING_CHARS)),
            ("config", self.config(history)),
        ]);
        let configs = json!({
            "type": "array",
            "items": item,
            "minItems": 1,
            "maxItems": n.max(1),
        });
        let mut fields = Vec::new();
        if with_analysis {
            fields.push(("analysis", text(ANALYSIS_CHARS)));
            fields.push(("strategy", text(REASONING_CHARS)));
        }
        fields.push(("configs", configs));
        ReplySchema {
            name: "kernel_configs".into(),
            schema: object(&fields),
        }
    }

    /// `{reasoning, config}`: one edited config.
    pub fn edit(&self, history: &History) -> ReplySchema {
        ReplySchema {
            name: "kernel_edit".into(),
            schema: object(&[
                ("reasoning", text(REASONING_CHARS)),
                ("config", self.config(history)),
            ]),
        }
    }
}

/// `{steps: [{description, changes: {<Parameter>: [values]}}]}` for the autonomous planner:
/// every parameter is listed (strict mode wants every field), each with values from its
/// domain; an empty list leaves the parameter as it is.
pub fn steps(space: &Space) -> ReplySchema {
    let changes: Vec<(&str, Value)> = space
        .domains
        .iter()
        .map(|d| {
            (
                d.id.name(),
                json!({"type": "array", "items": value_enum(d.id, &d.values), "maxItems": d.values.len()}),
            )
        })
        .collect();
    let step = object(&[
        ("description", text(REASONING_CHARS)),
        ("changes", object(&changes)),
    ]);
    ReplySchema {
        name: "tuning_steps".into(),
        schema: object(&[(
            "steps",
            json!({"type": "array", "items": step, "maxItems": 12}),
        )]),
    }
}

/// `{run: bool, reason}` for the explicit strategy's question whether a step is worth it.
pub fn verdict() -> ReplySchema {
    ReplySchema {
        name: "step_verdict".into(),
        schema: object(&[
            ("run", json!({"type": "boolean"})),
            ("reason", text(REASONING_CHARS)),
        ]),
    }
}

/// One property per parameter, each an enum of its domain's values.
fn params_schema(space: &Space) -> Value {
    let fields: Vec<(&str, Value)> = space
        .domains
        .iter()
        .map(|d| (d.id.name(), value_enum(d.id, &d.values)))
        .collect();
    object(&fields)
}

/// The values of a parameter as the reply parser reads them (`"16x8x16"` for instruction
/// shapes, numbers otherwise).
fn value_enum(id: ParamId, values: &[i64]) -> Value {
    match id {
        ParamId::MatrixInstruction => json!({
            "type": "string",
            "enum": values.iter().map(|v| id.format_value(*v)).collect::<Vec<_>>(),
        }),
        _ => json!({"type": "integer", "enum": values}),
    }
}

fn text(max_chars: usize) -> Value {
    json!({"type": "string", "maxLength": max_chars})
}

/// A closed object whose fields are all required, in order (strict mode's rules; the order
/// is the order a model writes them in, so reasoning comes before the config it explains).
fn object(fields: &[(&str, Value)]) -> Value {
    let mut properties = Map::new();
    for (k, v) in fields {
        properties.insert(k.to_string(), v.clone());
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": fields.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;
    use crate::search::reply::parse_configs;

    fn small() -> Space {
        let mut s = Space::for_problem(
            &GemmProblem::new(2048, 256, 4096),
            &HwSpec::by_name("H200").unwrap(),
        );
        for (p, v) in [
            ("MI", "16x8x16"),
            ("MT0", "64,128"),
            ("MT1", "64,128"),
            ("DepthU", "32,64"),
            ("PGR", "2,3"),
            ("WG0", "1,2"),
            ("WG1", "1,2"),
            ("PLR", "1"),
            ("PW", "0"),
            ("SAB", "0"),
            ("LPA", "8"),
            ("LPB", "8"),
            ("SW", "0"),
            ("GSU", "1"),
            ("WGM", "8"),
            ("GRVW", "8"),
            ("SVW", "4"),
            ("SU", "0"),
        ] {
            s.fix(p, v).unwrap();
        }
        s
    }

    #[test]
    fn small_spaces_list_the_untried_valid_names() {
        let s = small();
        let schema = ConfigSchema::for_space(&s);
        let all = s.enumerate(1 << 20).unwrap();
        assert!(schema.lists_names(), "{} valid configs", all.len());
        let mut h = History::new();
        h.push(0, all[0], crate::device::Outcome::modelled(vec![1.0]));
        let b = schema.batch(&h, 5, true).schema;
        assert_eq!(b["properties"]["configs"]["maxItems"], 5);
        assert_eq!(
            b["required"],
            json!(["analysis", "strategy", "configs"]),
            "strict mode needs every field required"
        );
        let names = b["properties"]["configs"]["items"]["properties"]["config"]["enum"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(names.len(), all.len() - 1, "the measured one is left out");
        assert!(!names.contains(&json!(all[0].name())));
        // Every name the schema allows is a valid config of the space.
        let reply = json!({"configs": names.iter().map(|n| json!({"reasoning": "", "config": n})).collect::<Vec<_>>()});
        let parsed = parse_configs(&reply.to_string(), &s, &all[0]);
        assert!(parsed.rejected.is_empty(), "{:?}", parsed.rejected);
        assert_eq!(parsed.suggestions.len(), names.len());
    }

    #[test]
    fn large_spaces_constrain_each_parameter_to_its_domain() {
        let s = Space::for_problem(
            &GemmProblem::new(4096, 4096, 4096),
            &HwSpec::by_name("MI300X").unwrap(),
        );
        let schema = ConfigSchema::for_space(&s);
        assert!(!schema.lists_names());
        let c = schema.config(&History::new());
        for d in &s.domains {
            let p = &c["properties"][d.id.name()];
            assert_eq!(
                p["enum"].as_array().unwrap().len(),
                d.values.len(),
                "{:?}",
                d.id
            );
        }
        assert_eq!(c["properties"]["MatrixInstruction"]["enum"][0], "32x32x8");
        // A reply made of any domain values parses (it may still break a rule).
        let mut pick = Map::new();
        for d in &s.domains {
            let v = d.values[d.values.len() / 2];
            let v = match d.id {
                ParamId::MatrixInstruction => json!(d.id.format_value(v)),
                _ => json!(v),
            };
            pick.insert(d.id.name().into(), v);
        }
        let base = s.default_config().unwrap();
        let r = crate::search::reply::config_from_value(&Value::Object(pick), &base);
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(steps(&s).schema["type"], "object");
        assert_eq!(verdict().schema["required"], json!(["run", "reason"]));
    }
}
