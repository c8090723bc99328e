//! The sim backend's "compiler": produces no machine code, only the launch plan, and fails
//! for configs planted to fail to compile (so the harness's failure paths can be tested).

use super::codegen::KernelSource;
use super::{CodeFormat, CodeObject, CompileError, Compiler, Resources, Target};
use crate::plant::{Plant, PlantKind};

pub struct SimCompiler {
    pub plants: Vec<Plant>,
}

impl Compiler for SimCompiler {
    fn id(&self) -> String {
        "sim-1".to_string()
    }

    fn compile(
        &self,
        source: &KernelSource,
        _target: &Target,
    ) -> Result<(CodeObject, Resources), CompileError> {
        if self
            .plants
            .iter()
            .any(|p| p.kind == PlantKind::CompileError && p.matches(&source.name))
        {
            return Err(CompileError::Failed {
                log: format!(
                    "{}.hip(1): error: planted compile failure for testing",
                    source.name
                ),
            });
        }
        Ok((
            CodeObject {
                format: CodeFormat::Sim,
                bytes: Vec::new(),
            },
            Resources::default(),
        ))
    }
}
