//! Element types of GEMM operands, in hipBLASLt's vocabulary (`bf16_r`, `c_f32_r`, ...).
//!
//! Names flow in from the CLI and from logs, and out to kernel source generation (the C type
//! names), the database keys and reports. Parsing accepts the forms hipBLASLt writes.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use super::ProblemError;

/// One operand element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DataType {
    Bf16,
    F16,
    F32,
    /// 8-bit float e4m3 (OCP on sm_89+/gfx950, fnuz on gfx942).
    F8,
    /// 8-bit float e5m2.
    Bf8,
}

impl DataType {
    pub const ALL: [DataType; 5] = [Self::Bf16, Self::F16, Self::F32, Self::F8, Self::Bf8];

    pub fn bytes(self) -> usize {
        match self {
            Self::Bf16 | Self::F16 => 2,
            Self::F32 => 4,
            Self::F8 | Self::Bf8 => 1,
        }
    }

    /// hipBLASLt's name for the type.
    pub fn hipblaslt_name(self) -> &'static str {
        match self {
            Self::Bf16 => "bf16_r",
            Self::F16 => "f16_r",
            Self::F32 => "f32_r",
            Self::F8 => "f8_r",
            Self::Bf8 => "bf8_r",
        }
    }

    /// Short tag used in problem keys and Tensile's type letters.
    pub fn tensile_letter(self) -> char {
        match self {
            Self::Bf16 => 'B',
            Self::F16 => 'H',
            Self::F32 => 'S',
            Self::F8 => 'F',
            Self::Bf8 => 'G',
        }
    }

    pub fn is_8bit(self) -> bool {
        matches!(self, Self::F8 | Self::Bf8)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hipblaslt_name())
    }
}

impl FromStr for DataType {
    type Err = ProblemError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        // hipBLASLt logs write `bf16_r`; users also type `bf16`; fp8 has fnuz aliases on MI300.
        let t = t.strip_suffix("_r").unwrap_or(&t);
        Ok(match t {
            "bf16" | "bfloat16" => Self::Bf16,
            "f16" | "fp16" | "half" | "h" => Self::F16,
            "f32" | "fp32" | "float" | "s" => Self::F32,
            "f8" | "fp8" | "f8_fnuz" | "e4m3" | "fp8_e4m3" => Self::F8,
            "bf8" | "bf8_fnuz" | "e5m2" | "fp8_e5m2" => Self::Bf8,
            _ => return Err(ProblemError::UnknownDataType(s.trim().to_string())),
        })
    }
}

/// Accumulation type. hipBLASLt writes it as `c_f32_r` (or `f32_r` in bench command lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ComputeType {
    F32,
    /// f32 accumulation with tf32 inputs on the matrix cores (`c_xf32_r`).
    Xf32,
    F16,
}

impl ComputeType {
    pub fn hipblaslt_name(self) -> &'static str {
        match self {
            Self::F32 => "c_f32_r",
            Self::Xf32 => "c_xf32_r",
            Self::F16 => "c_f16_r",
        }
    }
}

impl fmt::Display for ComputeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hipblaslt_name())
    }
}

impl FromStr for ComputeType {
    type Err = ProblemError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let t = t.strip_prefix("c_").unwrap_or(&t);
        let t = t.strip_suffix("_r").unwrap_or(t);
        Ok(match t {
            "f32" | "fp32" | "32f" => Self::F32,
            "xf32" | "tf32" => Self::Xf32,
            "f16" | "fp16" | "16f" => Self::F16,
            _ => return Err(ProblemError::UnknownComputeType(s.trim().to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hipblaslt_names_and_aliases() {
        assert_eq!("bf16_r".parse::<DataType>().unwrap(), DataType::Bf16);
        assert_eq!("F16".parse::<DataType>().unwrap(), DataType::F16);
        assert_eq!("f8_fnuz_r".parse::<DataType>().unwrap(), DataType::F8);
        assert_eq!("c_f32_r".parse::<ComputeType>().unwrap(), ComputeType::F32);
        assert_eq!("f32_r".parse::<ComputeType>().unwrap(), ComputeType::F32);
        assert!("i8_r".parse::<DataType>().is_err());
        assert!("c_i32_r".parse::<ComputeType>().is_err());
    }

    #[test]
    fn names_round_trip() {
        for t in DataType::ALL {
            assert_eq!(t.hipblaslt_name().parse::<DataType>().unwrap(), t);
        }
    }
}
