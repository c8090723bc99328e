//! NVIDIA compiler drivers: [`NvrtcCompiler`] (NVRTC, loaded at run time) and [`NvccCompiler`]
//! (the `nvcc` binary), both producing a CUBIN for one `sm_XX[a]` target, plus what they share:
//! arch validation and the parsing of ptxas' `-v` report into [`Resources`].
//!
//! Flow: generated source -> compiler -> (CUBIN bytes, ptxas log) -> `Resources` of the main
//! kernel (registers, spill bytes, static shared memory). A rejected source is
//! `CompileError::Failed` with the full log; a missing compiler is `CompileError::Unavailable`.

mod nvcc;
mod nvrtc;

pub use nvcc::NvccCompiler;
pub use nvrtc::NvrtcCompiler;

use super::{CompileError, Resources};

/// Checks an NVIDIA target name (`sm_90`, `sm_90a`, `sm_100a`) and returns it normalised.
pub fn check_arch(arch: &str) -> Result<String, CompileError> {
    let a = arch.trim().to_ascii_lowercase();
    let digits = a
        .strip_prefix("sm_")
        .map(|r| r.trim_end_matches(['a', 'f']))
        .unwrap_or("");
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(CompileError::Failed {
            log: format!("`{arch}` is not an NVIDIA target (expected sm_XX, e.g. sm_90a)"),
        });
    }
    Ok(a)
}

/// The `compute_XX[a]` virtual architecture that matches an `sm_XX[a]` target.
pub fn virtual_arch(arch: &str) -> String {
    arch.replacen("sm_", "compute_", 1)
}

/// Reads the ptxas `-v` report for the entry function `symbol`.
///
/// ptxas prints, per entry: `Compiling entry function 'NAME' for 'sm_90a'`, then
/// `N bytes stack frame, N bytes spill stores, N bytes spill loads` and
/// `Used N registers, ... N bytes smem ...`. Lines are attributed to the most recent entry
/// named, so the split-K epilogue's figures never mix with the main kernel's.
pub fn parse_ptxas_info(log: &str, symbol: &str) -> Resources {
    let mut res = Resources::default();
    let mut current = String::new();
    for line in log.lines() {
        if let Some(rest) = line
            .split("entry function '")
            .nth(1)
            .or_else(|| line.split("Function properties for ").nth(1))
        {
            current = rest.split('\'').next().unwrap_or("").trim().to_string();
            continue;
        }
        if current != symbol {
            continue;
        }
        let number_before = |unit: &str| -> Option<u32> {
            let idx = line.find(unit)?;
            line[..idx].split_whitespace().last()?.parse().ok()
        };
        if line.contains("spill stores") {
            let stores = number_before(" bytes spill stores").unwrap_or(0);
            let loads = number_before(" bytes spill loads").unwrap_or(0);
            res.spill_bytes = Some(stores + loads);
        }
        if let Some(r) = line.split("Used ").nth(1) {
            res.registers = r.split_whitespace().next().and_then(|n| n.parse().ok());
            res.static_shared_bytes = number_before(" bytes smem").or(Some(0));
        }
    }
    res
}

/// A compiled cubin and the resources ptxas reported for `kernel` in `log` (both drivers ask
/// ptxas for its `-v` report).
pub(crate) fn cubin_with_resources(
    bytes: Vec<u8>,
    log: &str,
    kernel: &str,
) -> (crate::compile::CodeObject, crate::compile::Resources) {
    (
        crate::compile::CodeObject {
            format: crate::compile::CodeFormat::Cubin,
            bytes,
        },
        parse_ptxas_info(log, kernel),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'K_epilogue' for 'sm_90a'
ptxas info    : Function properties for K_epilogue
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 0 barriers
ptxas info    : Compiling entry function 'K' for 'sm_90a'
ptxas info    : Function properties for K
    32 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 32 bytes cumulative stack size
";

    #[test]
    fn ptxas_report_is_read_per_entry() {
        let k = parse_ptxas_info(LOG, "K");
        assert_eq!(k.registers, Some(255));
        assert_eq!(k.spill_bytes, Some(20));
        assert_eq!(k.static_shared_bytes, Some(1024));
        let e = parse_ptxas_info(LOG, "K_epilogue");
        assert_eq!(e.registers, Some(30));
        assert_eq!(e.spill_bytes, Some(0));
        assert_eq!(parse_ptxas_info(LOG, "missing"), Resources::default());
    }

    #[test]
    fn arch_names_are_checked() {
        assert_eq!(check_arch("sm_90a").unwrap(), "sm_90a");
        assert_eq!(check_arch("SM_80").unwrap(), "sm_80");
        assert!(check_arch("gfx942").is_err());
        assert!(check_arch("sm_").is_err());
        assert_eq!(virtual_arch("sm_90a"), "compute_90a");
    }
}
