//! `KernelConfig`: one point of the kernel space, with Tensile's parameter names, and its
//! canonical name.
//!
//! The canonical name (`MT128x112x64_MI16x8x16_WG2x2_PGR3_...`) is the kernel's symbol, its
//! compile-cache key, its database key, its criterion id and its report row. `parse` inverts
//! `name` exactly: `KernelConfig::parse(&c.name()) == Ok(c.canonical())`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// How the partial sums of a split-K (GlobalSplitU) kernel are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GsuAlgo {
    /// Each split adds into one f32 workspace with atomics; a small kernel applies alpha/beta.
    /// Fast, but the summation order varies from run to run.
    Atomic,
    /// Each split writes its own f32 slice; a reduction kernel sums them in a fixed order.
    /// Deterministic.
    Reduce,
    /// Stream-K: GSU persistent workgroups per compute unit share all (tile, K tile)
    /// iterations equally; a tile split between workgroups is summed in the same kernel by the
    /// last one to finish it, in workgroup order. One launch, deterministic, no wave tail.
    /// With PersistentKernel=1 (GSU1S): the warpgroup path's persistent kernel, its clusters
    /// sharing the last one or two waves' units and completing split tiles from the
    /// accumulator registers; with three or more parts to a tile the sum order, and so D's
    /// last bits, can vary from run to run.
    StreamK,
    /// Each split writes its own f32 slice; the split of a tile that finishes last sums the
    /// slices in split order and stores D, in the same kernel (Tensile's
    /// MultipleBufferSingleKernel). Deterministic, one launch, but the summing split's
    /// reads of the others' partials sit on its tile's critical path.
    SingleKernel,
}

impl GsuAlgo {
    /// Every algorithm, in the order of their GlobalSplitUAlgorithm numbers.
    pub const ALL: [GsuAlgo; 4] = [
        GsuAlgo::Atomic,
        GsuAlgo::Reduce,
        GsuAlgo::StreamK,
        GsuAlgo::SingleKernel,
    ];

    /// Its GlobalSplitUAlgorithm number: its place in [`GsuAlgo::ALL`].
    pub fn number(self) -> u32 {
        GsuAlgo::ALL
            .iter()
            .position(|&a| a == self)
            .expect("ALL lists every algorithm") as u32
    }

    pub fn letter(self) -> char {
        match self {
            GsuAlgo::Atomic => 'A',
            GsuAlgo::Reduce => 'R',
            GsuAlgo::StreamK => 'S',
            GsuAlgo::SingleKernel => 'K',
        }
    }

    /// The algorithm a kernel name's `GSU<n><letter>` field names (`letter` inverted).
    pub fn from_letter(letter: char) -> Option<GsuAlgo> {
        GsuAlgo::ALL.into_iter().find(|a| a.letter() == letter)
    }
}

/// One kernel variant. Field names follow Tensile (MacroTile, DepthU, MatrixInstruction, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KernelConfig {
    /// MacroTile0: rows of C (along M) one workgroup computes.
    pub mt0: u32,
    /// MacroTile1: columns of C (along N) one workgroup computes.
    pub mt1: u32,
    /// DepthU: K elements loaded per main-loop iteration.
    pub depth_u: u32,
    /// MatrixInstruction `[M, N, K]`; `[1, 1, 1]` selects the FMA (non-matrix-core) path.
    pub mi: [u32; 3],
    /// Waves (warps) of the workgroup along M and N; the wave tile is MT / WG.
    pub wg: [u32; 2],
    /// PrefetchGlobalRead: global->LDS pipeline stages (1 = no prefetch).
    pub pgr: u32,
    /// PrefetchLocalRead: LDS->register fragments prefetched ahead of the matrix ops (0 or 1).
    pub plr: u32,
    /// LdsPadA / LdsPadB: elements of padding per LDS row, against bank conflicts.
    pub lpa: u32,
    pub lpb: u32,
    /// LDS XOR swizzle instead of padding (0 or 1).
    pub swizzle: u32,
    /// GlobalSplitU: K is split over this many workgroups (1 = no split); with stream-K, the
    /// persistent workgroups per compute unit.
    pub gsu: u32,
    pub gsu_algo: GsuAlgo,
    /// WorkGroupMapping: workgroups grouped along M in groups of this size, for L2 reuse.
    pub wgm: u32,
    /// GlobalReadVectorWidth: elements per global load.
    pub grvw: u32,
    /// StoreVectorWidth: elements per global store of C/D.
    pub svw: u32,
    /// StaggerU: the K loop of consecutive workgroups starts this many DepthU iterations apart,
    /// spreading reads over memory channels (0 = off).
    pub su: u32,
    /// ProducerWarp (warpgroup path only): 1 = one extra warp issues the tensor-map loads
    /// while the warpgroups only multiply (warp specialisation); 2 = a whole producer
    /// warpgroup that also hands its registers to the persistent kernel's two warpgroups.
    /// Named `_PW1` / `_PW2` at the end of the kernel name only when set, so names without it
    /// keep their meaning.
    #[serde(default)]
    pub pw: u32,
    /// SwapAB (warpgroup path only): 1 = the instruction computes the transposed tile
    /// (D^T = B^T A^T), so its 64-row slices run along N and M tiles come in steps of 16 rows
    /// (the tile granularity; the instruction itself takes steps of 8).
    /// Named `_SAB1` at the end of the kernel name only when set.
    #[serde(default)]
    pub sab: u32,
    /// PersistentKernel (warpgroup path with the producer warp only): 1 = one workgroup per
    /// compute unit walks many output tiles, its producer loading the next tile's operands
    /// while the warpgroups store the last one through the tensor memory accelerator; 2 =
    /// ping-pong: the same with two warpgroups that each compute whole tiles and take the
    /// workgroup's tiles in turn, so one stores its tile while the other multiplies (one
    /// warpgroup's worth of WorkGroup per tile, launched twice). Named `_PK1` / `_PK2` at the
    /// end of the kernel name only when set.
    #[serde(default)]
    pub pk: u32,
    /// Gemv: 1 = the GEMV path for N up to 8 (`kernels/mainloop/gt_gemv.h`): dot products of
    /// A's rows with every column of B, A read once straight from global memory, K split over
    /// GlobalSplitU workgroups. The tile, wave and vector parameters keep their meaning
    /// (MacroTile0 rows per workgroup, MacroTile1 >= N columns, WavesM waves,
    /// GlobalReadVectorWidth elements per load of A, PrefetchGlobalRead loads in flight per
    /// row); the LDS, pipeline and store parameters have none and stay at fixed values. Named
    /// `_GV1` at the end of the kernel name only when set.
    #[serde(default)]
    pub gv: u32,
    /// ClusterN (warpgroup path with the producer warp only): the workgroups run in clusters
    /// of this many along N, which share one row of tiles and so their A tile: each loads a
    /// 1/ClusterN slice of it into all of them (tensor-map multicast), so A is read from L2
    /// once per cluster instead of once per workgroup (every workgroup still receives all of
    /// it). 1 = no cluster. Named `_CN<n>` at the end of the kernel name only when above 1.
    #[serde(default = "one")]
    pub cn: u32,
    /// TransposeLDS (matrix-core LDS path, an operand MN-contiguous in global memory): 1 = the
    /// loader transposes that operand in registers into K-major LDS tiles of 16-byte packs
    /// (`kernels/loader/gt_kpack_loader.h`), which the atoms read with the vector reads of a
    /// K-contiguous operand; 0 = the tile is stored as it lies and read transposed
    /// (`ldmatrix.trans` on NVIDIA, one element per read on AMD). Named `_TLDS1` at the end of
    /// the kernel name only when set.
    #[serde(default)]
    pub tlds: u32,
    /// PackUnaligned (warpgroup path): which operands whose rows start on 16-byte but not
    /// 32-byte boundaries are copied K-major into 128-byte rows before the main kernel
    /// (`kernels/loader/gt_pack_kernel.h`), as a bit set: 1 = A, 2 = B, 3 = both. Such rows
    /// cost the tensor-map loads several L2 requests each; the copy costs a read and a write
    /// of the operand. Named `_PU<n>` at the end of the kernel name only when set.
    #[serde(default)]
    pub pu: u32,
    /// ClusterM (warpgroup path with the producer warp only): the workgroups run in clusters
    /// of this many along M, which share one column of tiles and so their B tile (each loads
    /// a share of it into all of them), the mirror of ClusterN. Both above 1 make a ClusterM x
    /// ClusterN block of tiles (at most eight workgroups) sharing A along its rows and B along
    /// its columns. Named `_CM<n>` after ClusterN's place in the kernel name only when above 1.
    #[serde(default = "one")]
    pub cm: u32,
    /// PackMNMajor (FMA path, NVIDIA): which K-contiguous operands are copied M- or N-major
    /// into the workspace before the main kernel (`kernels/loader/gt_pack_kernel.h`), as a bit
    /// set: 1 = A, 2 = B, 3 = both. The FMA mainloop keeps both operand tiles MN-major in LDS;
    /// a K-contiguous operand otherwise travels through registers and is written transposed.
    /// Named `_PM<n>` at the end of the kernel name only when set.
    #[serde(default)]
    pub pm: u32,
    /// FlatBatch: 1 = the flat batch path for many small batched GEMMs
    /// (`kernels/scheduler/gt_flat_batches.h`): each batch computed whole, with f32 FMAs, by a
    /// group of WavesN waves from LDS images of its operands copied as the flat ranges of
    /// memory they occupy; WavesM batches a workgroup; MacroTile0 x MacroTile1 at least the
    /// batch's M x N. The LDS, pipeline, vector and split parameters have no meaning there and
    /// stay at fixed values. 2 = its staged form on matrix cores
    /// (`kernels/scheduler/gt_flat_batches_staged.h`): one group a workgroup, each workgroup
    /// walking batches with the next one's operands copied into LDS while the current one
    /// multiplies. Named `_FB<n>` at the end of the kernel name only when set.
    #[serde(default)]
    pub fb: u32,
}

/// The serde default of fields whose neutral value is 1.
fn one() -> u32 {
    1
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum NameError {
    #[error("kernel name `{name}`: {reason}")]
    Malformed { name: String, reason: String },
}

impl KernelConfig {
    /// Whether the config uses the matrix cores (MFMA / mma.sync) rather than FMA.
    pub fn uses_matrix_cores(&self) -> bool {
        self.mi != [1, 1, 1]
    }

    /// Whether the config runs the FMA path's tiles: no matrix instruction, and not the GEMV
    /// path (which multiplies with FMAs too, without tiles in LDS).
    pub fn on_fma_path(&self) -> bool {
        !self.uses_matrix_cores() && self.gv == 0 && self.fb == 0
    }

    /// Threads that compute one tile (own its accumulators), for a given wave size: the
    /// workgroup's computing threads, or one set of them in ping-pong ([`Self::consumer_sets`]).
    pub fn threads(&self, wave_size: u32) -> u32 {
        self.wg[0] * self.wg[1] * wave_size
    }

    /// Whether the split partials are summed in the main kernel (`GSU<n>K`): no second launch,
    /// one workspace slot per (tile, split) and one flag per tile.
    pub fn sums_splits_in_kernel(&self) -> bool {
        self.gsu > 1 && self.gsu_algo == GsuAlgo::SingleKernel
    }

    /// Whether a second launch, the reduction kernel (kernels/epilogue/gt_reduce_kernel.h),
    /// sums the split partials (`GSU<n>R`, `GSU<n>A`): the kernel's `REDUCTION_KERNEL`.
    pub fn has_reduction_kernel(&self) -> bool {
        self.gsu > 1 && matches!(self.gsu_algo, GsuAlgo::Reduce | GsuAlgo::Atomic)
    }

    /// Sets of computing threads, each owning whole tiles: two in the ping-pong persistent
    /// kernel (PersistentKernel=2), one otherwise.
    pub fn consumer_sets(&self) -> u32 {
        if self.pk == 2 {
            2
        } else {
            1
        }
    }

    /// Threads a workgroup is launched with: the computing ones (every set of them) plus the
    /// producer warp, which ping-pong and ProducerWarp=2 launch as a whole warpgroup (it gives
    /// its registers to the computing ones, and registers move between whole warpgroups only:
    /// `kernels/scheduler/gt_persistent.h`).
    pub fn launch_threads(&self, wave_size: u32) -> u32 {
        let producer = match (self.pw, self.pk == 2) {
            (0, _) => 0,
            (1, false) => wave_size,
            _ => 4 * wave_size,
        };
        self.threads(wave_size) * self.consumer_sets() + producer
    }

    /// The wave tile: C elements along M and N one wave owns.
    pub fn wave_tile(&self) -> [u32; 2] {
        [self.mt0 / self.wg[0].max(1), self.mt1 / self.wg[1].max(1)]
    }

    /// The same config with fields that do not matter set to fixed values, so that two
    /// configs that generate the same kernel have the same name.
    pub fn canonical(mut self) -> Self {
        if self.gv == 1 {
            // The GEMV path has no LDS tiles, pipeline, staged stores or tile order: these
            // take fixed values, so they never tell two GEMV kernels apart. (SwapAB stays: it
            // says which side the GEMV runs along.)
            self = KernelConfig {
                depth_u: 16,
                plr: 0,
                lpa: 0,
                lpb: 0,
                swizzle: 0,
                wgm: 1,
                svw: 1,
                su: 0,
                pw: 0,
                pk: 0,
                cn: 1,
                cm: 1,
                tlds: 0,
                pu: 0,
                pm: 0,
                ..self
            };
        }
        if self.fb > 0 {
            // The flat batch path copies whole 16-byte chunks into LDS images, multiplies
            // from them and stores element by element, one batch a group: no LDS tiles,
            // pipeline, vectors, tile order or split.
            self = KernelConfig {
                depth_u: 16,
                pgr: 1,
                plr: 0,
                lpa: 0,
                lpb: 0,
                swizzle: 0,
                gsu: 1,
                gsu_algo: GsuAlgo::Reduce,
                wgm: 1,
                grvw: 1,
                svw: 1,
                su: 0,
                pw: 0,
                sab: 0,
                pk: 0,
                gv: 0,
                cn: 1,
                cm: 1,
                tlds: 0,
                pu: 0,
                pm: 0,
                ..self
            };
        }
        if self.gsu_algo == GsuAlgo::StreamK {
            // Stream-K ranges are contiguous by construction; there is no start to stagger.
            self.gsu = self.gsu.max(1);
            self.su = 0;
        } else if self.gsu <= 1 {
            self.gsu = 1;
            self.gsu_algo = GsuAlgo::Reduce;
        }
        self.cn = self.cn.max(1);
        self.cm = self.cm.max(1);
        self
    }

    /// The canonical name; also a valid C identifier (the kernel symbol).
    pub fn name(&self) -> String {
        let c = self.canonical();
        let gsu = if c.gsu > 1 || c.gsu_algo == GsuAlgo::StreamK {
            format!("GSU{}{}", c.gsu, c.gsu_algo.letter())
        } else {
            "GSU1".to_string()
        };
        format!(
            "MT{}x{}x{}_MI{}x{}x{}_WG{}x{}_PGR{}_PLR{}_LPA{}_LPB{}_SW{}_{}_WGM{}_GRVW{}_SVW{}_SU{}",
            c.mt0,
            c.mt1,
            c.depth_u,
            c.mi[0],
            c.mi[1],
            c.mi[2],
            c.wg[0],
            c.wg[1],
            c.pgr,
            c.plr,
            c.lpa,
            c.lpb,
            c.swizzle,
            gsu,
            c.wgm,
            c.grvw,
            c.svw,
            c.su
        ) + match c.pw {
            0 => "",
            1 => "_PW1",
            _ => "_PW2",
        } + if c.sab > 0 { "_SAB1" } else { "" }
            + match c.pk {
                0 => "",
                1 => "_PK1",
                _ => "_PK2",
            }
            + if c.gv > 0 { "_GV1" } else { "" }
            + &if c.cn > 1 {
                format!("_CN{}", c.cn)
            } else {
                String::new()
            }
            + &if c.cm > 1 {
                format!("_CM{}", c.cm)
            } else {
                String::new()
            }
            + if c.tlds > 0 { "_TLDS1" } else { "" }
            + &if c.pu > 0 {
                format!("_PU{}", c.pu)
            } else {
                String::new()
            }
            + &if c.pm > 0 {
                format!("_PM{}", c.pm)
            } else {
                String::new()
            }
            + &if c.fb > 0 {
                format!("_FB{}", c.fb)
            } else {
                String::new()
            }
    }

    /// Parses a canonical name back into the config. Every field must be present, once.
    pub fn parse(name: &str) -> Result<Self, NameError> {
        let bad = |reason: String| NameError::Malformed {
            name: name.to_string(),
            reason,
        };
        let dims = |s: &str, n: usize, field: &str| -> Result<Vec<u32>, NameError> {
            let v: Result<Vec<u32>, _> = s.split('x').map(|p| p.parse::<u32>()).collect();
            match v {
                Ok(v) if v.len() == n => Ok(v),
                _ => Err(bad(format!(
                    "`{field}{s}` needs {n} numbers separated by x"
                ))),
            }
        };
        let mut fields: [Option<&str>; 23] = [None; 23];
        const PREFIXES: [&str; 23] = [
            "MT", "MI", "WG", "PGR", "PLR", "LPA", "LPB", "SW", "GSU", "WGM", "GRVW", "SVW", "SU",
            "PW", "SAB", "PK", "GV", "CN", "TLDS", "PU", "CM", "PM", "FB",
        ];
        for part in name.trim().split('_') {
            // Longest prefix first so that `SVW` is not read as `SW`... and `SU` after `SVW`.
            let idx = (0..PREFIXES.len())
                .filter(|&i| {
                    part.starts_with(PREFIXES[i])
                        && part[PREFIXES[i].len()..]
                            .chars()
                            .next()
                            .is_some_and(|c| c.is_ascii_digit())
                })
                .max_by_key(|&i| PREFIXES[i].len())
                .ok_or_else(|| bad(format!("unknown field `{part}`")))?;
            if fields[idx].is_some() {
                return Err(bad(format!("field {} given twice", PREFIXES[idx])));
            }
            fields[idx] = Some(&part[PREFIXES[idx].len()..]);
        }
        let get = |i: usize| -> Result<&str, NameError> {
            fields[i].ok_or_else(|| bad(format!("missing field {}", PREFIXES[i])))
        };
        let num = |i: usize| -> Result<u32, NameError> {
            let s = get(i)?;
            s.parse::<u32>()
                .map_err(|_| bad(format!("`{}{s}` is not a number", PREFIXES[i])))
        };
        let mt = dims(get(0)?, 3, "MT")?;
        let mi = dims(get(1)?, 3, "MI")?;
        let wg = dims(get(2)?, 2, "WG")?;
        let gsu_s = get(8)?;
        let (gsu_digits, algo) = match gsu_s.chars().last().and_then(GsuAlgo::from_letter) {
            Some(a) => (&gsu_s[..gsu_s.len() - 1], a),
            None => (gsu_s, GsuAlgo::Reduce),
        };
        let gsu = gsu_digits
            .parse::<u32>()
            .map_err(|_| bad(format!("`GSU{gsu_s}` is not a split count")))?;
        let cfg = KernelConfig {
            mt0: mt[0],
            mt1: mt[1],
            depth_u: mt[2],
            mi: [mi[0], mi[1], mi[2]],
            wg: [wg[0], wg[1]],
            pgr: num(3)?,
            plr: num(4)?,
            lpa: num(5)?,
            lpb: num(6)?,
            swizzle: num(7)?,
            gsu,
            gsu_algo: algo,
            wgm: num(9)?,
            grvw: num(10)?,
            svw: num(11)?,
            su: num(12)?,
            // Optional: a name without it has no producer warp.
            pw: if fields[13].is_some() { num(13)? } else { 0 },
            sab: if fields[14].is_some() { num(14)? } else { 0 },
            pk: if fields[15].is_some() { num(15)? } else { 0 },
            gv: if fields[16].is_some() { num(16)? } else { 0 },
            cn: if fields[17].is_some() { num(17)? } else { 1 },
            tlds: if fields[18].is_some() { num(18)? } else { 0 },
            pu: if fields[19].is_some() { num(19)? } else { 0 },
            cm: if fields[20].is_some() { num(20)? } else { 1 },
            pm: if fields[21].is_some() { num(21)? } else { 0 },
            fb: if fields[22].is_some() { num(22)? } else { 0 },
        };
        if cfg.pw > 2 {
            return Err(bad(format!("`PW{}`: ProducerWarp is 0, 1 or 2", cfg.pw)));
        }
        if cfg.sab > 1 {
            return Err(bad(format!("`SAB{}`: SwapAB is 0 or 1", cfg.sab)));
        }
        if cfg.pk > 2 {
            return Err(bad(format!(
                "`PK{}`: PersistentKernel is 0, 1 or 2",
                cfg.pk
            )));
        }
        if cfg.gv > 1 {
            return Err(bad(format!("`GV{}`: Gemv is 0 or 1", cfg.gv)));
        }
        if cfg.fb > 2 {
            return Err(bad(format!("`FB{}`: FlatBatch is 0, 1 or 2", cfg.fb)));
        }
        if cfg.cn == 0 {
            return Err(bad("`CN0`: ClusterN is at least 1".into()));
        }
        if cfg.cm == 0 {
            return Err(bad("`CM0`: ClusterM is at least 1".into()));
        }
        if cfg.tlds > 1 {
            return Err(bad(format!("`TLDS{}`: TransposeLDS is 0 or 1", cfg.tlds)));
        }
        if cfg.pu > 3 {
            return Err(bad(format!(
                "`PU{}`: PackUnaligned is 0 (none), 1 (A), 2 (B) or 3 (both)",
                cfg.pu
            )));
        }
        if cfg.pm > 3 {
            return Err(bad(format!(
                "`PM{}`: PackMNMajor is 0 (none), 1 (A), 2 (B) or 3 (both)",
                cfg.pm
            )));
        }
        if cfg.gsu == 0 || cfg.wgm == 0 || cfg.wg.contains(&0) || cfg.mt0 == 0 || cfg.mt1 == 0 {
            return Err(bad("zero tile, wave, GSU or WGM".into()));
        }
        Ok(cfg.canonical())
    }
}

impl fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for KernelConfig {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KernelConfig::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> KernelConfig {
        KernelConfig {
            mt0: 128,
            mt1: 112,
            depth_u: 64,
            mi: [16, 8, 16],
            wg: [2, 2],
            pgr: 3,
            plr: 1,
            lpa: 8,
            lpb: 8,
            swizzle: 0,
            gsu: 2,
            gsu_algo: GsuAlgo::Atomic,
            wgm: 8,
            grvw: 8,
            svw: 4,
            su: 0,
            pw: 0,
            sab: 0,
            pk: 0,
            gv: 0,
            cn: 1,
            cm: 1,
            tlds: 0,
            pu: 0,
            pm: 0,
            fb: 0,
        }
    }

    #[test]
    fn transpose_lds_is_named_only_when_set_and_last() {
        let mut c = sample();
        assert!(!c.name().contains("_TLDS"));
        c.tlds = 1;
        let name = c.name();
        assert!(name.ends_with("_SU0_TLDS1"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
        assert_eq!(
            KernelConfig::parse(&name.replace("_TLDS1", "_TLDS0")).unwrap(),
            sample()
        );
        assert!(KernelConfig::parse(&name.replace("_TLDS1", "_TLDS2")).is_err());
        // Older records have no TransposeLDS: they read as 0.
        let json = serde_json::to_string(&sample())
            .unwrap()
            .replace(",\"tlds\":0", "");
        assert!(!json.contains("tlds"), "{json}");
        assert_eq!(
            serde_json::from_str::<KernelConfig>(&json).unwrap(),
            sample()
        );
    }

    #[test]
    fn pack_unaligned_is_named_only_when_set_and_last() {
        let mut c = sample();
        assert!(!c.name().contains("_PU"));
        c.tlds = 1;
        c.pu = 2;
        let name = c.name();
        assert!(name.ends_with("_TLDS1_PU2"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
        assert!(KernelConfig::parse(&name.replace("_PU2", "_PU4")).is_err());
        // Older records have no PackUnaligned: they read as 0.
        let json = serde_json::to_string(&sample())
            .unwrap()
            .replace(",\"pu\":0", "");
        assert!(!json.contains("\"pu\""), "{json}");
        assert_eq!(
            serde_json::from_str::<KernelConfig>(&json).unwrap(),
            sample()
        );
    }

    #[test]
    fn producer_warp_is_named_only_when_set() {
        let mut c = sample();
        assert!(!c.name().contains("_PW"));
        c.pw = 1;
        let name = c.name();
        assert!(name.ends_with("_SU0_PW1"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
        assert_eq!(
            KernelConfig::parse(&name.replace("_PW1", "_PW0")).unwrap(),
            sample()
        );
        let warpgroup = KernelConfig::parse(&name.replace("_PW1", "_PW2")).unwrap();
        assert_eq!(
            (warpgroup.pw, warpgroup.name()),
            (2, name.replace("_PW1", "_PW2"))
        );
        assert!(KernelConfig::parse(&name.replace("_PW1", "_PW3")).is_err());
        assert!(KernelConfig::parse(&format!("{name}_PW1")).is_err());
    }

    #[test]
    fn cluster_m_is_named_only_above_one_after_cluster_n() {
        let mut c = sample();
        c.pw = 1;
        assert!(!c.name().contains("_CM"));
        c.cm = 2;
        c.pu = 2;
        let name = c.name();
        assert!(name.ends_with("_PW1_CM2_PU2"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
        assert!(KernelConfig::parse(&name.replace("_CM2", "_CM0")).is_err());
        assert_eq!(
            KernelConfig::parse(&name.replace("_CM2", "_CM1")).unwrap(),
            KernelConfig { cm: 1, ..c }
        );
        // Older records have no ClusterM: they read as 1.
        let json = serde_json::to_string(&KernelConfig { cm: 1, ..c })
            .unwrap()
            .replace(",\"cm\":1", "");
        assert!(!json.contains("\"cm\""), "{json}");
        assert_eq!(
            serde_json::from_str::<KernelConfig>(&json).unwrap(),
            KernelConfig { cm: 1, ..c }
        );
    }

    #[test]
    fn cluster_n_is_named_only_above_one_and_last() {
        let mut c = sample();
        c.pw = 1;
        c.pk = 1;
        assert!(!c.name().contains("_CN"));
        c.cn = 2;
        let name = c.name();
        assert!(name.ends_with("_PW1_PK1_CN2"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
        let unclustered = KernelConfig::parse(&name.replace("_CN2", "_CN1")).unwrap();
        assert_eq!(unclustered, KernelConfig { cn: 1, ..c });
        assert_eq!(unclustered.name(), name.replace("_CN2", ""));
        assert!(KernelConfig::parse(&name.replace("_CN2", "_CN0")).is_err());
        // Older records have no ClusterN: they read as unclustered.
        let json = serde_json::to_string(&unclustered)
            .unwrap()
            .replace(",\"cn\":1", "");
        assert!(!json.contains("cn"), "{json}");
        let back: KernelConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, unclustered);
    }

    #[test]
    fn swap_ab_is_named_only_when_set_after_the_producer_warp() {
        let mut c = sample();
        assert!(!c.name().contains("_SAB"));
        c.sab = 1;
        assert!(c.name().ends_with("_SU0_SAB1"), "{}", c.name());
        assert_eq!(KernelConfig::parse(&c.name()).unwrap(), c);
        c.pw = 1;
        let name = c.name();
        assert!(name.ends_with("_SU0_PW1_SAB1"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
        let zero = KernelConfig::parse(&name.replace("_SAB1", "_SAB0")).unwrap();
        assert_eq!(zero, KernelConfig { sab: 0, ..c });
        assert!(KernelConfig::parse(&name.replace("_SAB1", "_SAB2")).is_err());
        assert!(KernelConfig::parse(&format!("{name}_SAB1")).is_err());
    }

    #[test]
    fn gemv_is_named_only_when_set_and_last() {
        let mut c = sample();
        assert!(!c.name().contains("_GV"));
        c.gv = 1;
        let name = c.name();
        assert!(name.ends_with("_SU0_GV1"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c.canonical());
        assert!(KernelConfig::parse(&name.replace("_GV1", "_GV2")).is_err());
        // The canonical GEMV name leaves out what a GEMV ignores (here LDS padding).
        assert!(name.contains("_LPA0_LPB0_"), "{name}");
        assert_eq!(
            KernelConfig::parse(&format!("{}_PK1", name.trim_end_matches("_GV1"))).map(|c| c.pk),
            Ok(1)
        );
    }

    #[test]
    fn flat_batch_is_named_only_when_set_and_fixes_what_it_ignores() {
        let mut c = sample();
        assert!(!c.name().contains("_FB"));
        c.fb = 1;
        let name = c.name();
        // No split, no LDS padding, no vectors: the flat batch path has none of them.
        assert!(name.ends_with("_GSU1_WGM1_GRVW1_SVW1_SU0_FB1"), "{name}");
        assert!(name.contains("_PGR1_PLR0_LPA0_LPB0_SW0_"), "{name}");
        assert_eq!(KernelConfig::parse(&name).unwrap(), c.canonical());
        assert!(KernelConfig::parse(&name.replace("_FB1", "_FB3")).is_err());
        let staged = KernelConfig::parse(&name.replace("_FB1", "_FB2")).unwrap();
        assert_eq!(staged.fb, 2);
        assert_eq!(staged.name(), name.replace("_FB1", "_FB2"));
        assert!(!c.on_fma_path());
    }

    #[test]
    fn name_round_trips() {
        let c = sample();
        let name = c.name();
        assert_eq!(
            name,
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4_SU0"
        );
        assert_eq!(KernelConfig::parse(&name).unwrap(), c);
    }

    #[test]
    fn gsu1_ignores_algo() {
        let mut a = sample();
        a.gsu = 1;
        let mut b = a;
        b.gsu_algo = GsuAlgo::Atomic;
        assert_eq!(a.name(), b.name());
        assert!(a.name().contains("_GSU1_"));
    }

    #[test]
    fn stream_k_names_round_trip_and_drop_stagger() {
        let mut c = sample();
        c.gsu = 1;
        c.gsu_algo = GsuAlgo::StreamK;
        c.su = 4;
        let name = c.name();
        assert!(name.contains("_GSU1S_") && name.ends_with("_SU0"), "{name}");
        let back = KernelConfig::parse(&name).unwrap();
        assert_eq!(back, c.canonical());
        assert_eq!(back.gsu_algo, GsuAlgo::StreamK);
        assert_eq!(back.su, 0);
        let two = KernelConfig::parse(&name.replace("GSU1S", "GSU2S")).unwrap();
        assert_eq!((two.gsu, two.gsu_algo), (2, GsuAlgo::StreamK));
        assert!(KernelConfig::parse(&name.replace("GSU1S", "GSU0S")).is_err());
    }

    #[test]
    fn every_split_algorithm_has_a_letter_that_parses_back() {
        let mut c = sample();
        for algo in GsuAlgo::ALL {
            c.gsu_algo = algo;
            assert_eq!(GsuAlgo::from_letter(algo.letter()), Some(algo));
            let back = KernelConfig::parse(&c.name()).unwrap();
            assert_eq!(back, c.canonical(), "{}", c.name());
        }
        assert!(c.name().contains("_GSU2K_"), "{}", c.name());
        assert_eq!(GsuAlgo::from_letter('Q'), None);
    }

    #[test]
    fn malformed_names_are_rejected() {
        for bad in [
            "",
            "MT128x112_MI16x8x16",
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4",
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4_SU0_SU0",
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSUxA_WGM8_GRVW8_SVW4_SU0",
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4_SU0_FOO1",
            "MT0x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2A_WGM8_GRVW8_SVW4_SU0",
        ] {
            assert!(KernelConfig::parse(bad).is_err(), "{bad}");
        }
    }
}
