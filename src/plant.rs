//! Fault planting: kernels made to fail on purpose, so the harness's failure paths can be
//! exercised (`--plant PATTERN=crash|hang|wrong|oob|compile`).
//!
//! Flow: the CLI parses [`Plant`]s and installs them for the process ([`set_plants`]); code
//! generation asks [`planted`] for each kernel name and adds the kind's `#define`
//! ([`PlantKind::define`], the `GT_PLANT_*` switches the kernel template reads), so on a GPU
//! the generated kernel really faults; the sim device and the sim compiler take the same list
//! and model the failure. Both `compile/` and `device/` use this module; it uses neither.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Failure planted on configs whose name contains `pattern` (`*` = all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plant {
    pub pattern: String,
    pub kind: PlantKind,
}

/// How a planted kernel misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlantKind {
    CompileError,
    Crash,
    Hang,
    Wrong,
    OutOfBounds,
}

impl Plant {
    pub fn matches(&self, name: &str) -> bool {
        self.pattern == "*" || name.contains(&self.pattern)
    }
}

impl FromStr for Plant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (pattern, kind) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("plant `{s}` must be PATTERN=crash|hang|wrong|oob|compile"))?;
        let kind = match kind {
            "crash" => PlantKind::Crash,
            "hang" => PlantKind::Hang,
            "wrong" => PlantKind::Wrong,
            "oob" => PlantKind::OutOfBounds,
            "compile" => PlantKind::CompileError,
            other => return Err(format!("unknown plant kind `{other}`")),
        };
        Ok(Plant {
            pattern: pattern.to_string(),
            kind,
        })
    }
}

impl PlantKind {
    /// The `#define` that makes the kernel template misbehave this way (a crash is an
    /// out-of-bounds write on a GPU).
    pub fn define(self) -> &'static str {
        match self {
            PlantKind::Crash | PlantKind::OutOfBounds => "GT_PLANT_OOB",
            PlantKind::Hang => "GT_PLANT_HANG",
            PlantKind::Wrong => "GT_PLANT_WRONG",
            PlantKind::CompileError => "GT_PLANT_COMPILE_ERROR",
        }
    }
}

/// Failures planted for this process, applied to matching kernels' generated source.
static PLANTS: std::sync::OnceLock<Vec<Plant>> = std::sync::OnceLock::new();

/// Sets the planted failures for this process (first call wins).
pub fn set_plants(plants: &[Plant]) {
    let _ = PLANTS.set(plants.to_vec());
}

/// The failure planted in this process for the kernel `name`, if any.
pub fn planted(name: &str) -> Option<PlantKind> {
    PLANTS
        .get()?
        .iter()
        .find(|p| p.matches(name))
        .map(|p| p.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plants_parse() {
        let p: Plant = "MT64=crash".parse().unwrap();
        assert!(p.matches("MT64x64x32_x"));
        assert!("MT64=explode".parse::<Plant>().is_err());
        assert!("nokind".parse::<Plant>().is_err());
    }
}
