//! Parameters as data: each knows its Tensile name, a plain-words description (fed to the LLM
//! prompt), its domain, its default, how to sample and its neighbours.
//!
//! Strategies work only through [`ParamId`] + [`Domain`]; none special-cases a parameter.
//! Values are `i64`; the matrix-instruction shape is packed as `M*1_000_000 + N*1_000 + K`.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::config::{GsuAlgo, KernelConfig};

/// Every tunable parameter of [`KernelConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ParamId {
    MacroTile0,
    MacroTile1,
    DepthU,
    MatrixInstruction,
    WavesM,
    WavesN,
    PrefetchGlobalRead,
    PrefetchLocalRead,
    LdsPadA,
    LdsPadB,
    LdsSwizzle,
    GlobalSplitU,
    GlobalSplitUAlgorithm,
    WorkGroupMapping,
    GlobalReadVectorWidth,
    StoreVectorWidth,
    StaggerU,
    ProducerWarp,
    SwapAB,
    PersistentKernel,
    Gemv,
    ClusterN,
    TransposeLds,
    PackUnaligned,
    ClusterM,
    PackMnMajor,
    FlatBatch,
}

impl ParamId {
    pub const ALL: [ParamId; 27] = [
        ParamId::MacroTile0,
        ParamId::MacroTile1,
        ParamId::DepthU,
        ParamId::MatrixInstruction,
        ParamId::WavesM,
        ParamId::WavesN,
        ParamId::PrefetchGlobalRead,
        ParamId::PrefetchLocalRead,
        ParamId::LdsPadA,
        ParamId::LdsPadB,
        ParamId::LdsSwizzle,
        ParamId::GlobalSplitU,
        ParamId::GlobalSplitUAlgorithm,
        ParamId::WorkGroupMapping,
        ParamId::GlobalReadVectorWidth,
        ParamId::StoreVectorWidth,
        ParamId::StaggerU,
        ParamId::ProducerWarp,
        ParamId::SwapAB,
        ParamId::PersistentKernel,
        ParamId::Gemv,
        ParamId::ClusterN,
        ParamId::TransposeLds,
        ParamId::PackUnaligned,
        ParamId::ClusterM,
        ParamId::PackMnMajor,
        ParamId::FlatBatch,
    ];

    /// The name used in configs, prompts, TOML files and Tensile exports.
    pub fn name(self) -> &'static str {
        match self {
            ParamId::MacroTile0 => "MacroTile0",
            ParamId::MacroTile1 => "MacroTile1",
            ParamId::DepthU => "DepthU",
            ParamId::MatrixInstruction => "MatrixInstruction",
            ParamId::WavesM => "WavesM",
            ParamId::WavesN => "WavesN",
            ParamId::PrefetchGlobalRead => "PrefetchGlobalRead",
            ParamId::PrefetchLocalRead => "PrefetchLocalRead",
            ParamId::LdsPadA => "LdsPadA",
            ParamId::LdsPadB => "LdsPadB",
            ParamId::LdsSwizzle => "LdsSwizzle",
            ParamId::GlobalSplitU => "GlobalSplitU",
            ParamId::GlobalSplitUAlgorithm => "GlobalSplitUAlgorithm",
            ParamId::WorkGroupMapping => "WorkGroupMapping",
            ParamId::GlobalReadVectorWidth => "GlobalReadVectorWidth",
            ParamId::StoreVectorWidth => "StoreVectorWidth",
            ParamId::StaggerU => "StaggerU",
            ParamId::ProducerWarp => "ProducerWarp",
            ParamId::SwapAB => "SwapAB",
            ParamId::PersistentKernel => "PersistentKernel",
            ParamId::Gemv => "Gemv",
            ParamId::ClusterN => "ClusterN",
            ParamId::TransposeLds => "TransposeLDS",
            ParamId::PackUnaligned => "PackUnaligned",
            ParamId::ClusterM => "ClusterM",
            ParamId::PackMnMajor => "PackMNMajor",
            ParamId::FlatBatch => "FlatBatch",
        }
    }

    pub fn from_name(s: &str) -> Option<ParamId> {
        let want = s.trim().to_ascii_lowercase();
        ParamId::ALL.into_iter().find(|p| {
            p.name().to_ascii_lowercase() == want || p.short().to_ascii_lowercase() == want
        })
    }

    /// The abbreviation used in canonical kernel names (and accepted on input).
    pub fn short(self) -> &'static str {
        match self {
            ParamId::MacroTile0 => "MT0",
            ParamId::MacroTile1 => "MT1",
            ParamId::DepthU => "DU",
            ParamId::MatrixInstruction => "MI",
            ParamId::WavesM => "WG0",
            ParamId::WavesN => "WG1",
            ParamId::PrefetchGlobalRead => "PGR",
            ParamId::PrefetchLocalRead => "PLR",
            ParamId::LdsPadA => "LPA",
            ParamId::LdsPadB => "LPB",
            ParamId::LdsSwizzle => "SW",
            ParamId::GlobalSplitU => "GSU",
            ParamId::GlobalSplitUAlgorithm => "GSUAlgo",
            ParamId::WorkGroupMapping => "WGM",
            ParamId::GlobalReadVectorWidth => "GRVW",
            ParamId::StoreVectorWidth => "SVW",
            ParamId::StaggerU => "SU",
            ParamId::ProducerWarp => "PW",
            ParamId::SwapAB => "SAB",
            ParamId::PersistentKernel => "PK",
            ParamId::Gemv => "GV",
            ParamId::ClusterN => "CN",
            ParamId::TransposeLds => "TLDS",
            ParamId::PackUnaligned => "PU",
            ParamId::ClusterM => "CM",
            ParamId::PackMnMajor => "PM",
            ParamId::FlatBatch => "FB",
        }
    }

    /// What the parameter does, in the words a kernel engineer uses (the LLM sees this).
    pub fn description(self) -> &'static str {
        match self {
            ParamId::MacroTile0 => "rows of C (along M) computed by one workgroup",
            ParamId::MacroTile1 => "columns of C (along N) computed by one workgroup: a multiple of 16, or of 8 on the Hopper wgmma path without SwapAB (the instruction's N step)",
            ParamId::DepthU => "K elements staged in LDS per main-loop iteration (unroll depth)",
            ParamId::MatrixInstruction => "matrix-core instruction shape MxNxK (MFMA on AMD, mma.sync on NVIDIA); 1x1x1 = FMA path",
            ParamId::WavesM => "waves (warps) of a workgroup along M; wave tile M = MacroTile0 / WavesM",
            ParamId::WavesN => "waves (warps) of a workgroup along N; wave tile N = MacroTile1 / WavesN",
            ParamId::PrefetchGlobalRead => "global->LDS pipeline stages; >1 overlaps loads of later K tiles with math (async copies where the hardware has them)",
            ParamId::PrefetchLocalRead => "1 = load the next LDS->register fragments while the current ones are in the matrix unit",
            ParamId::LdsPadA => "elements of padding added to each LDS row of A to avoid bank conflicts",
            ParamId::LdsPadB => "elements of padding added to each LDS row of B to avoid bank conflicts",
            ParamId::LdsSwizzle => "1 = XOR-swizzle LDS rows instead of padding them",
            ParamId::GlobalSplitU => "split K over this many workgroups (split-K) to fill the GPU when M*N is small; with GlobalSplitUAlgorithm=2 (stream-K), persistent workgroups per compute unit",
            ParamId::GlobalSplitUAlgorithm => "how split-K partials combine: 0 = atomic adds into an f32 workspace, 1 = per-split workspace + deterministic reduction, 2 = stream-K: GlobalSplitU persistent workgroups per compute unit share all K iterations evenly and finish split tiles in the same kernel (one launch, deterministic), 3 = per-split workspace summed in the same kernel by the split of each tile that finishes last (one launch, deterministic)",
            ParamId::WorkGroupMapping => "workgroups are launched in groups of this many along M so neighbours share L2 lines",
            ParamId::GlobalReadVectorWidth => "elements per global load instruction (16 bytes is the widest)",
            ParamId::StoreVectorWidth => "elements per global store of the result",
            ParamId::StaggerU => "offset in DepthU iterations between the K start of consecutive workgroups, spreading reads over memory channels (0 = off)",
            ParamId::ProducerWarp => "1 = warp specialisation on the Hopper wgmma path: one extra warp issues the tensor-map loads into every free pipeline stage while the warpgroups only multiply (no workgroup barrier in the main loop); 2 = a whole producer warpgroup that also hands its registers to the computing warpgroups (PersistentKernel=1, two or more warpgroups: 232 registers a thread for two, so tiles like 192x192 and 256x192 fit); 0 = the warpgroups take turns loading",
            ParamId::PersistentKernel => "1 = on the Hopper wgmma path with the producer warp, one workgroup per compute unit walks many output tiles: the next tile's operands load while the last tile is stored through the tensor memory accelerator, so no pipeline refill and no epilogue sit between tiles (compute-bound and output-heavy shapes; C, where beta reads it, loads through a tensor map of its own; no split-K)",
            ParamId::Gemv => "1 = the GEMV path for N up to 8 (decode), or for M up to 8 along N with SwapAB=1: dot products of A's rows with every column of B, A read once straight from global memory in GlobalReadVectorWidth vectors with PrefetchGlobalRead of them in flight per row, MacroTile0 rows per workgroup over WavesM waves, MacroTile1 >= N columns (1, 2, 4 or 8), K split over GlobalSplitU workgroups (algorithm 0 or 1); MatrixInstruction 1x1x1, the LDS, pipeline and store parameters at fixed values",
            ParamId::ClusterN => "on the Hopper wgmma path with the producer warp, workgroups run in clusters of this many along N that share one row of tiles and read their common A tile from L2 once for the cluster (each loads a share, multicast to all; every workgroup still receives the whole tile); searched where A's rows start on 16-byte but not 32-byte boundaries, opt-in elsewhere (measured no faster than 1 there); with ClusterM > 1 a block of tiles sharing A along its rows and B along its columns, at most 8 workgroups; 1 = no cluster",
            ParamId::TransposeLds => "on the matrix-core LDS path (MFMA on AMD, mma.sync on NVIDIA) with an operand that is M- or N-contiguous in memory (A with transA=N, B with transB=T): 1 = the loader transposes that operand in registers into K-major LDS tiles of 16-byte packs, so the matrix instructions' operands are read with wide LDS reads; 0 = the tile is stored as it lies and read transposed (one element per read on AMD, ldmatrix.trans on NVIDIA); that operand's LDS padding must be 0 with 1",
            ParamId::ClusterM => "on the Hopper wgmma path with the producer warp, workgroups run in clusters of this many along M that share one column of tiles and read their common B tile from L2 once for the cluster (each loads a share, multicast to all); searched where B's rows start on 16-byte but not 32-byte boundaries, opt-in elsewhere; with ClusterN > 1 a block of tiles, at most 8 workgroups; 1 = no cluster",
            ParamId::PackUnaligned => "on the Hopper wgmma path, operands whose rows start on 16-byte but not 32-byte boundaries (a leading dimension such as 3000 or 1000 in bf16, whose tensor-map box rows cost the L2 more requests), and an N-major B whose rows are not whole 128-byte lines (N = 176 in bf16), are first copied K-major into the workspace with rows of whole 128-byte lines by a packing kernel of their own: 1 = A, 2 = B, 3 = both, 0 = read in place; pays where the operand is small next to the work or read many times",
            ParamId::PackMnMajor => "on the FMA path (f32 inputs, MatrixInstruction 1x1x1) on NVIDIA, operands that are K-contiguous in memory (A with transA=T, B with transB=N) are first copied M- or N-major into the workspace by a transposing kernel of their own: 1 = A, 2 = B, 3 = both, 0 = read in place; the main loop then copies them into LDS as they lie (cp.async, deeper pipelines pay) instead of through registers with transposed LDS writes; M- or N-contiguous operands whose rows start off the 16-byte grid (a leading dimension of 4095) are copied onto aligned rows as they lie, so the main loop reads them in 16-byte vectors; the copy costs a read and a write of the operand, small next to the multiply-adds of large GEMMs",
            ParamId::FlatBatch => "1 = the flat batch path for many small batched GEMMs (each batch at most 128 x 128 outputs): a group of WavesN waves computes one batch whole with f32 FMAs, from LDS images of its A and B copied as the flat ranges of memory they occupy (16-byte chunks, whatever the leading dimensions), WavesM batches a workgroup; MacroTile0 x MacroTile1 covers the batch's M x N and sets each lane's sub-tile; MatrixInstruction 1x1x1; the LDS, pipeline, vector and split parameters at fixed values; wins where the batches' rows are off the 16-byte grid (17, 33, 45 ...) and small",
            ParamId::SwapAB => "1 = on the Hopper wgmma path, compute the transposed tile (B^T A^T): the instruction's 64-row slices run along N (MacroTile1 per warpgroup a multiple of 64) and MacroTile0 may be any multiple of 16, so skinny problems get M tiles (48, 80, 224 ...) that fill every compute unit in one wave; on the GEMV path (Gemv=1), run along N for M up to 8: the GEMV of D^T = B^T A^T",
        }
    }

    /// Every parameter of `c` with its value: the preferences that make `c` a space's
    /// default.
    pub fn values_of(c: &KernelConfig) -> Vec<(ParamId, i64)> {
        ParamId::ALL.iter().map(|&p| (p, p.get(c))).collect()
    }

    pub fn get(self, c: &KernelConfig) -> i64 {
        (match self {
            ParamId::MacroTile0 => c.mt0,
            ParamId::MacroTile1 => c.mt1,
            ParamId::DepthU => c.depth_u,
            ParamId::MatrixInstruction => return pack_mi(c.mi),
            ParamId::WavesM => c.wg[0],
            ParamId::WavesN => c.wg[1],
            ParamId::PrefetchGlobalRead => c.pgr,
            ParamId::PrefetchLocalRead => c.plr,
            ParamId::LdsPadA => c.lpa,
            ParamId::LdsPadB => c.lpb,
            ParamId::LdsSwizzle => c.swizzle,
            ParamId::GlobalSplitU => c.gsu,
            ParamId::GlobalSplitUAlgorithm => c.gsu_algo.number(),
            ParamId::WorkGroupMapping => c.wgm,
            ParamId::GlobalReadVectorWidth => c.grvw,
            ParamId::StoreVectorWidth => c.svw,
            ParamId::StaggerU => c.su,
            ParamId::ProducerWarp => c.pw,
            ParamId::SwapAB => c.sab,
            ParamId::PersistentKernel => c.pk,
            ParamId::Gemv => c.gv,
            ParamId::ClusterN => c.cn,
            ParamId::TransposeLds => c.tlds,
            ParamId::PackUnaligned => c.pu,
            ParamId::ClusterM => c.cm,
            ParamId::PackMnMajor => c.pm,
            ParamId::FlatBatch => c.fb,
        }) as i64
    }

    pub fn set(self, c: &mut KernelConfig, v: i64) {
        let u = v.clamp(0, u32::MAX as i64) as u32;
        match self {
            ParamId::MacroTile0 => c.mt0 = u,
            ParamId::MacroTile1 => c.mt1 = u,
            ParamId::DepthU => c.depth_u = u,
            ParamId::MatrixInstruction => c.mi = unpack_mi(v),
            ParamId::WavesM => c.wg[0] = u,
            ParamId::WavesN => c.wg[1] = u,
            ParamId::PrefetchGlobalRead => c.pgr = u,
            ParamId::PrefetchLocalRead => c.plr = u,
            ParamId::LdsPadA => c.lpa = u,
            ParamId::LdsPadB => c.lpb = u,
            ParamId::LdsSwizzle => c.swizzle = u,
            ParamId::GlobalSplitU => c.gsu = u,
            ParamId::GlobalSplitUAlgorithm => {
                c.gsu_algo = usize::try_from(v)
                    .ok()
                    .and_then(|i| GsuAlgo::ALL.get(i).copied())
                    .unwrap_or(GsuAlgo::Reduce)
            }
            ParamId::WorkGroupMapping => c.wgm = u,
            ParamId::GlobalReadVectorWidth => c.grvw = u,
            ParamId::StoreVectorWidth => c.svw = u,
            ParamId::StaggerU => c.su = u,
            ParamId::ProducerWarp => c.pw = u,
            ParamId::SwapAB => c.sab = u,
            ParamId::PersistentKernel => c.pk = u,
            ParamId::Gemv => c.gv = u,
            ParamId::ClusterN => c.cn = u,
            ParamId::TransposeLds => c.tlds = u,
            ParamId::PackUnaligned => c.pu = u,
            ParamId::ClusterM => c.cm = u,
            ParamId::PackMnMajor => c.pm = u,
            ParamId::FlatBatch => c.fb = u,
        }
    }

    /// Whether the values are names of alternatives rather than points on a scale: every
    /// other value is one step away (the split algorithms have no order).
    pub fn is_categorical(self) -> bool {
        // PackUnaligned's and PackMNMajor's values are sets of operands (A, B, both).
        matches!(
            self,
            ParamId::GlobalSplitUAlgorithm | ParamId::PackUnaligned | ParamId::PackMnMajor
        )
    }

    /// Formats a value the way a user writes it (`16x8x16` for MI shapes).
    pub fn format_value(self, v: i64) -> String {
        match self {
            ParamId::MatrixInstruction => {
                let s = unpack_mi(v);
                format!("{}x{}x{}", s[0], s[1], s[2])
            }
            _ => v.to_string(),
        }
    }

    /// Parses a value as a user (or an LLM) writes it: numbers, `16x8x16`, `[16,8,16]`.
    pub fn parse_value(self, s: &str) -> Option<i64> {
        let t = s.trim().trim_matches(|c| c == '"' || c == '\'');
        match self {
            ParamId::MatrixInstruction => {
                let nums: Vec<u32> = t
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(|c: char| c == 'x' || c == 'X' || c == ',' || c.is_whitespace())
                    .filter(|p| !p.is_empty())
                    .map(|p| p.parse::<u32>().ok())
                    .collect::<Option<Vec<u32>>>()?;
                (nums.len() == 3).then(|| pack_mi([nums[0], nums[1], nums[2]]))
            }
            ParamId::GlobalSplitUAlgorithm => match t.to_ascii_lowercase().as_str() {
                "0" | "atomic" | "a" => Some(0),
                "1" | "reduce" | "reduction" | "r" | "multiplebuffer" => Some(1),
                "2" | "streamk" | "stream-k" | "stream_k" | "s" => Some(2),
                "3" | "singlekernel" | "single-kernel" | "multiplebuffersinglekernel" | "k" => {
                    Some(3)
                }
                _ => None,
            },
            _ => t.parse::<i64>().ok().or_else(|| {
                t.parse::<f64>()
                    .ok()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f as i64)
            }),
        }
    }
}

pub fn pack_mi(s: [u32; 3]) -> i64 {
    s[0] as i64 * 1_000_000 + s[1] as i64 * 1_000 + s[2] as i64
}

pub fn unpack_mi(v: i64) -> [u32; 3] {
    [
        (v / 1_000_000) as u32,
        ((v / 1_000) % 1_000) as u32,
        (v % 1_000) as u32,
    ]
}

/// The values one parameter may take, in order (neighbours are adjacent entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Domain {
    pub id: ParamId,
    pub kind: DomainKind,
    /// Ordered allowed values: what the search samples and steps through.
    pub values: Vec<i64>,
    pub default: i64,
    /// Values that are valid when asked for by name (`--fix`, `--config`) but that the
    /// search never visits on its own: kernel variants measured to pay nowhere tried, kept
    /// for the user who wants to try them (ClusterN).
    #[serde(default)]
    pub opt_in: Vec<i64>,
}

/// How a domain was described; decides how its values were generated and how to display it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum DomainKind {
    /// Powers of two between two bounds.
    Pow2,
    /// An integer range with a step.
    Range,
    /// An explicit list.
    Choice,
}

impl Domain {
    pub fn pow2(id: ParamId, min: i64, max: i64, default: i64) -> Self {
        let mut values = Vec::new();
        let mut v = min.max(1);
        while v <= max {
            values.push(v);
            v *= 2;
        }
        Self::new(id, DomainKind::Pow2, values, default)
    }

    pub fn range(id: ParamId, min: i64, max: i64, step: i64, default: i64) -> Self {
        let values = (min..=max).step_by(step.max(1) as usize).collect();
        Self::new(id, DomainKind::Range, values, default)
    }

    pub fn choice(id: ParamId, values: Vec<i64>, default: i64) -> Self {
        Self::new(id, DomainKind::Choice, values, default)
    }

    fn new(id: ParamId, kind: DomainKind, values: Vec<i64>, default: i64) -> Self {
        let default = if values.contains(&default) {
            default
        } else {
            values.first().copied().unwrap_or(default)
        };
        Domain {
            id,
            kind,
            values,
            default,
            opt_in: Vec::new(),
        }
    }

    /// The same domain with values valid only when asked for (see `opt_in`).
    pub fn with_opt_in(mut self, values: Vec<i64>) -> Self {
        self.opt_in = values
            .into_iter()
            .filter(|v| !self.values.contains(v))
            .collect();
        self
    }

    pub fn contains(&self, v: i64) -> bool {
        self.values.contains(&v)
    }

    /// Whether `v` may be named: a value of the domain or one of its opt-in values.
    pub fn admits(&self, v: i64) -> bool {
        self.contains(v) || self.opt_in.contains(&v)
    }

    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        if self.values.is_empty() {
            return self.default;
        }
        self.values[rng.gen_range(0..self.values.len())]
    }

    /// The values next to `v` (one step down and one step up). A value not in the domain
    /// gets the closest value(s).
    pub fn neighbors(&self, v: i64) -> Vec<i64> {
        match self.values.iter().position(|&x| x == v) {
            Some(i) => {
                let mut out = Vec::new();
                if i > 0 {
                    out.push(self.values[i - 1]);
                }
                if i + 1 < self.values.len() {
                    out.push(self.values[i + 1]);
                }
                out
            }
            None => self
                .values
                .iter()
                .min_by_key(|&&x| (x - v).abs())
                .copied()
                .into_iter()
                .collect(),
        }
    }

    /// Restricts the domain to `keep`, preserving order; opt-in values in `keep` join it
    /// (after the others, in `keep`'s order). Other values outside the domain are ignored.
    /// A default that is no longer allowed moves to the closest allowed value.
    pub fn restrict(&mut self, keep: &[i64]) {
        self.values.retain(|v| keep.contains(v));
        for v in keep {
            if self.opt_in.contains(v) && !self.values.contains(v) {
                self.values.push(*v);
            }
        }
        if !self.values.contains(&self.default) {
            let old = self.default;
            if let Some(&closest) = self.values.iter().min_by_key(|&&v| (v - old).abs()) {
                self.default = closest;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow2_domain_neighbors_and_sample() {
        let d = Domain::pow2(ParamId::MacroTile0, 16, 256, 128);
        assert_eq!(d.values, vec![16, 32, 64, 128, 256]);
        assert_eq!(d.neighbors(128), vec![64, 256]);
        assert_eq!(d.neighbors(16), vec![32]);
        assert_eq!(d.neighbors(100), vec![128]);
        let mut rng = rand::thread_rng();
        for _ in 0..50 {
            assert!(d.contains(d.sample(&mut rng)));
        }
    }

    #[test]
    fn mi_values_pack_and_parse() {
        let v = ParamId::MatrixInstruction
            .parse_value("[16, 8, 16]")
            .unwrap();
        assert_eq!(unpack_mi(v), [16, 8, 16]);
        assert_eq!(ParamId::MatrixInstruction.format_value(v), "16x8x16");
        assert_eq!(ParamId::DepthU.parse_value("64"), Some(64));
        assert_eq!(ParamId::DepthU.parse_value("64.0"), Some(64));
        assert_eq!(ParamId::DepthU.parse_value("big"), None);
        assert_eq!(ParamId::from_name("gsu"), Some(ParamId::GlobalSplitU));
        let algo = ParamId::GlobalSplitUAlgorithm;
        assert_eq!(algo.parse_value("stream-K"), Some(2));
        assert_eq!(algo.parse_value("reduce"), Some(1));
        let mut c = KernelConfig::parse(
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4_SU0",
        )
        .unwrap();
        algo.set(&mut c, 2);
        assert_eq!(c.gsu_algo, GsuAlgo::StreamK);
        assert_eq!(algo.get(&c), 2);
        assert_eq!(algo.parse_value("MultipleBufferSingleKernel"), Some(3));
        assert_eq!(algo.parse_value("3"), Some(3));
        algo.set(&mut c, 3);
        assert_eq!(c.gsu_algo, GsuAlgo::SingleKernel);
        assert_eq!(algo.get(&c), 3);
    }

    #[test]
    fn get_set_round_trip_every_param() {
        let mut c = KernelConfig::parse(
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4_SU0",
        )
        .unwrap();
        for p in ParamId::ALL {
            let v = p.get(&c);
            p.set(&mut c, v);
            assert_eq!(p.get(&c), v, "{p:?}");
        }
    }
}
