//! Disk cache of compiled kernels, keyed by a hash of the generated source (which embeds
//! the template and the config), the compiler id and the target arch.
//!
//! Layout: `<dir>/<key>.bin` (code bytes) and `<dir>/<key>.json` (format and resources).
//! Writes go through a temporary file and a rename, so a crash never leaves a torn entry.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

use super::codegen::{hex, KernelSource};
use super::{CodeFormat, CodeObject, Resources, Target};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey(pub String);

impl CacheKey {
    pub fn new(source: &KernelSource, compiler_id: &str, target: &Target, name: &str) -> Self {
        let mut h = Sha256::new();
        for part in [source.text.as_str(), compiler_id, target.arch.as_str(), name] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        CacheKey(hex(&h.finalize()[..16]))
    }
}

#[derive(Serialize, Deserialize)]
struct Meta {
    format: CodeFormat,
    resources: Resources,
}

/// A directory of compiled kernels.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CompileCache { dir: dir.into() }
    }

    /// `$XDG_CACHE_HOME/gemmtune/kernels` (or the platform equivalent).
    pub fn default_dir() -> PathBuf {
        dirs::cache_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("gemmtune")
            .join("kernels")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn get(&self, key: &CacheKey) -> Option<(CodeObject, Resources)> {
        let meta: Meta =
            serde_json::from_slice(&std::fs::read(self.dir.join(format!("{}.json", key.0))).ok()?)
                .ok()?;
        let bytes = std::fs::read(self.dir.join(format!("{}.bin", key.0))).ok()?;
        Some((
            CodeObject {
                format: meta.format,
                bytes,
            },
            meta.resources,
        ))
    }

    pub fn put(
        &self,
        key: &CacheKey,
        code: &CodeObject,
        resources: &Resources,
    ) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let write = |name: String, data: &[u8]| -> std::io::Result<()> {
            let tmp = self
                .dir
                .join(format!(".{name}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, data)?;
            std::fs::rename(tmp, self.dir.join(name))
        };
        // Code first, metadata last: an entry counts only once its metadata exists.
        write(format!("{}.bin", key.0), &code.bytes)?;
        let meta = Meta {
            format: code.format,
            resources: resources.clone(),
        };
        write(
            format!("{}.json", key.0),
            &serde_json::to_vec(&meta).expect("meta serialises"),
        )
    }
}
