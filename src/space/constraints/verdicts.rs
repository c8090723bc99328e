//! The verdicts of [`check`] on fixed draws of configs, recorded with the rules in one file
//! before they were split into groups per kernel part, and asserted since: the split (and any
//! later move of a rule between groups) must give every config the same verdict, the same
//! rule, the same message, in the same order. The numbers below are what the single-file
//! rules gave; a deliberate change of a rule changes them, and its commit says why.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use super::{check, RULE_ORDER};
use crate::hw::HwSpec;
use crate::problem::{DataType, GemmProblem, Trans};
use crate::space::{pack_mi, Domain, KernelConfig, ParamId, Space};

/// What `check` said about a sequence of configs.
#[derive(Debug, PartialEq)]
struct Verdicts {
    passed: usize,
    /// Rejections per rule, in rule order.
    rules: Vec<(&'static str, usize)>,
    /// SHA-256 of every verdict (config name, rule, message), in draw order.
    digest: String,
}

/// Values outside every domain, so the rules the domains never reach are drawn too.
fn off_domain(id: ParamId) -> Vec<i64> {
    match id {
        ParamId::MatrixInstruction => [
            [1, 1, 1],
            [4, 4, 4],
            [16, 8, 16],
            [16, 16, 16],
            [32, 32, 8],
            [64, 8, 16],
        ]
        .map(pack_mi)
        .to_vec(),
        ParamId::GlobalSplitUAlgorithm => vec![0, 1, 2, 3],
        _ => vec![0, 1, 2, 3, 5, 8, 24, 48, 100, 272, 512],
    }
}

/// The verdicts of `check` on `n` configs of a space, drawn with a fixed seed: every
/// other one from the product of the domains (a fifth of the values off the domains), the
/// others one parameter away from a config drawn before that passed. Returns how many
/// pass, how many each rule rejects (in rule order), and a SHA-256 of every verdict
/// (config name, rule, message) in draw order.
fn verdicts(s: &Space, n: usize) -> Verdicts {
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    // WavesM's values are drawn as they were before it took 12 (three warpgroups along M),
    // MacroTile1's as before the warpgroup path took widths of an odd multiple of 8 (8
    // itself only as the GEMV's), GlobalSplitU's as before it took 5, MacroTile0's as before
    // it took 320.
    let gemv = s.domain(ParamId::Gemv).contains(1);
    let drawn = |d: &Domain| -> Vec<i64> {
        d.values
            .iter()
            .copied()
            .filter(|&v| d.id != ParamId::WavesM || v != i64::from(super::THREE_WARPGROUPS))
            .filter(|&v| d.id != ParamId::MacroTile1 || v % 16 == 0 || (gemv && v <= 8))
            .filter(|&v| d.id != ParamId::GlobalSplitU || v != 5)
            .filter(|&v| d.id != ParamId::MacroTile0 || v != 320)
            .collect()
    };
    let value = |d: &Domain, rng: &mut ChaCha8Rng| {
        let off = off_domain(d.id);
        if rng.gen_bool(0.2) {
            off[rng.gen_range(0..off.len())]
        } else {
            let values = drawn(d);
            values[rng.gen_range(0..values.len())]
        }
    };
    // The draws were recorded before the Gemv, ClusterN, TransposeLDS, PackUnaligned,
    // ClusterM, PackMNMajor and FlatBatch parameters existed:
    // they leave them at their defaults (their rules are tested in tests/gemv.rs and with the
    // constraints), so every other parameter is drawn as it was.
    let domains: Vec<&Domain> = s
        .domains
        .iter()
        .filter(|d| {
            ![
                ParamId::Gemv,
                ParamId::ClusterN,
                ParamId::TransposeLds,
                ParamId::PackUnaligned,
                ParamId::ClusterM,
                ParamId::PackMnMajor,
                ParamId::FlatBatch,
            ]
            .contains(&d.id)
        })
        .collect();
    let (mut passed, mut rules, mut digest) = (Vec::new(), Vec::new(), Sha256::new());
    for i in 0..n {
        let c = if i % 2 == 1 && !passed.is_empty() {
            let mut c: KernelConfig = passed[rng.gen_range(0..passed.len())];
            let d = domains[rng.gen_range(0..domains.len())];
            d.id.set(&mut c, value(d, &mut rng));
            c
        } else {
            let mut c = s.raw_default();
            for d in &domains {
                d.id.set(&mut c, value(d, &mut rng));
            }
            c
        }
        .canonical();
        match check(&c, &s.problem, &s.hw) {
            Ok(()) => {
                passed.push(c);
                digest.update(format!("{}\tok\n", c.name()));
            }
            Err(v) => {
                match rules.iter_mut().find(|(r, _)| *r == v.rule) {
                    Some((_, k)) => *k += 1,
                    None => rules.push((v.rule, 1)),
                }
                digest.update(format!("{}\t{}\t{}\n", c.name(), v.rule, v.message));
            }
        }
    }
    rules.sort_by_key(|(r, _)| RULE_ORDER.iter().position(|o| o == r));
    Verdicts {
        passed: passed.len(),
        rules,
        digest: format!("{:x}", digest.finalize()),
    }
}

/// The problems and GPUs the rules are checked on: every path of the template (wgmma,
/// mma.sync, MFMA, FMA), all four layouts, batches, beta, odd leading dimensions and the
/// types the template does not generate.
fn cases() -> Vec<(&'static str, GemmProblem)> {
    let with = |p: GemmProblem, f: &dyn Fn(&mut GemmProblem)| {
        let mut p = p;
        f(&mut p);
        p.fill_defaults();
        p
    };
    let f32 = |p: &mut GemmProblem| {
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32)
    };
    vec![
        ("H200", GemmProblem::new(16032, 109, 16384)),
        (
            "H100-SXM",
            with(GemmProblem::new(4096, 4096, 4096), &|p| {
                (p.trans_a, p.trans_b) = (Trans::N, Trans::N)
            }),
        ),
        (
            "H200",
            with(GemmProblem::new(1000, 24, 8200), &|p| {
                (p.trans_a, p.trans_b, p.batch, p.beta) = (Trans::N, Trans::T, 3, 1.0)
            }),
        ),
        ("MI300X", GemmProblem::new(8192, 128, 2048)),
        (
            "MI355X",
            with(GemmProblem::new(4099, 65, 333), &|p| {
                p.fill_defaults();
                (p.lda, p.ldc, p.beta) = (p.lda + 2, p.ldc + 1, 0.5)
            }),
        ),
        ("H200", with(GemmProblem::new(512, 768, 1024), &f32)),
        ("MI250X", with(GemmProblem::new(512, 768, 1024), &f32)),
        (
            "H200",
            with(GemmProblem::new(256, 256, 256), &|p| {
                f32(p);
                p.d_type = DataType::F16
            }),
        ),
        (
            "MI300X",
            with(GemmProblem::new(256, 256, 256), &|p| {
                (p.a_type, p.b_type) = (DataType::F8, DataType::F8)
            }),
        ),
    ]
}

#[test]
fn every_config_gets_the_verdict_the_single_file_rules_gave() {
    type Rules = &'static [(&'static str, usize)];
    // Re-recorded when the warpgroup path took every 16-bit layout (NN/NT/TT warpgroup
    // configs became valid, packing replaced the tensor-map alignment rejection) and 8-bit
    // inputs (their DepthU domain reaches 256; the `dtype` message names the path they have),
    // and again for the PersistentKernel parameter (a new domain changes every draw; its
    // `persistent` rule) and warpgroup tiles up to 512 rows (N past 256); and again when the
    // `lds` rule counted the kernels' own LDS (mbarriers, the stream-K and split-sum flags:
    // an H100 refused a stream-K kernel whose dynamic bytes alone met the limit) and the
    // `persistent` rule the 128-byte output boxes (swapped M tiles of other heights stored
    // wrong results), with the Gemv parameter left at 0 in the draws; and again when the FMA
    // path's lanes could own up to 128 outputs (MN-major LDS tiles, operands one k at a time:
    // the f32 cases pass more `wave-tile` and fewer `registers` draws, and the FMA LDS bytes
    // count the MN-major tiles); and again when an NVIDIA workgroup's register share became
    // that of the sub-partition holding the most of its warps (544 threads get 96 registers,
    // not 120) and the warpgroup and persistent register allowances were set to what ptxas
    // used (accumulators + 26; + 38 for the persistent kernel, 8 more per further 64-row
    // slice of a warpgroup's tile); and again when the persistent kernel took beta (C through
    // a tensor map: the beta case's PersistentKernel domain gained 1), and when the `lds` rule
    // counted that kernel's C barriers (the same verdicts; only the bytes its `lds` messages
    // name changed); and again when 8-bit inputs gained MFMA atoms (the MI300X e4m3 case, all
    // `dtype` rejections before, now passes where its MFMA configs pass every other rule);
    // and again when the persistent kernel took stream-K (GSU1S): the same configs pass, a
    // few persistent stream-K draws now fail the `persistent` (or `registers`) rule where the
    // `split-k` rule named them, and the producer-warp, persistent and cluster messages about
    // stream-K changed their words; and again when ProducerWarp took 2 (a producer
    // warpgroup, opt-in): the same counts, the `producer-warp` message for draws of 2 (outside
    // the 0..1 range before) changed its words; and again when MacroTile0 took 384 on the
    // warpgroup path past 256 rows (a new domain value changes every draw of the three H200
    // and H100 cases) and ProducerWarp=2 the data-parallel kernel; and again when the
    // data-parallel kernel read C through a tensor map (the beta case: the same verdicts,
    // only the bytes the `lds` messages name for its C barriers changed).
    let recorded: [(usize, Rules, &str); 9] = [
        (
            9154,
            &[
                ("positive", 3961),
                ("threads", 4078),
                ("range", 12315),
                ("lds-layout", 3604),
                ("tile-granularity", 1354),
                ("matrix-instruction", 251),
                ("wgmma", 2178),
                ("producer-warp", 730),
                ("swap-ab", 511),
                ("wave-tile", 765),
                ("depth-u", 31),
                ("global-read", 95),
                ("store", 88),
                ("lds", 45),
                ("registers", 275),
                ("split-k", 177),
                ("persistent", 360),
                ("tile-vs-problem", 28),
            ],
            "1cb8a3de3b4b7f9e12b7efe7d5e85548ca8915b06ce63fe272647315a416c896",
        ),
        (
            10140,
            &[
                ("positive", 3593),
                ("threads", 3520),
                ("range", 10932),
                ("lds-layout", 3292),
                ("tile-granularity", 1277),
                ("matrix-instruction", 265),
                ("wgmma", 2031),
                ("producer-warp", 808),
                ("swap-ab", 621),
                ("wave-tile", 1122),
                ("depth-u", 46),
                ("global-read", 125),
                ("store", 116),
                ("lds", 469),
                ("registers", 910),
                ("split-k", 247),
                ("persistent", 486),
            ],
            "665ec606f6a2a59e7d06d95077b387d863303cbb454f9fb4537e543a148189bc",
        ),
        (
            9115,
            &[
                ("positive", 4024),
                ("threads", 4050),
                ("range", 12266),
                ("lds-layout", 3557),
                ("tile-granularity", 1353),
                ("matrix-instruction", 264),
                ("wgmma", 2185),
                ("producer-warp", 726),
                ("swap-ab", 503),
                ("wave-tile", 763),
                ("depth-u", 30),
                ("global-read", 88),
                ("store", 74),
                ("lds", 31),
                ("registers", 302),
                ("split-k", 170),
                ("persistent", 369),
                ("tile-vs-problem", 130),
            ],
            "41d55ec471132a0d6d4849bff86bfaa3e13263d87eb4068a8a23fa26161126fe",
        ),
        (
            14604,
            &[
                ("positive", 3117),
                ("threads", 4664),
                ("range", 5345),
                ("lds-layout", 3891),
                ("tile-granularity", 1657),
                ("matrix-instruction", 542),
                ("producer-warp", 661),
                ("swap-ab", 575),
                ("wave-tile", 2807),
                ("depth-u", 12),
                ("global-read", 174),
                ("store", 168),
                ("lds", 1488),
                ("split-k", 69),
                ("persistent", 189),
                ("tile-vs-problem", 37),
            ],
            "d6a8608b9536c64cee0eaeae5e6cfa8e7a46a708db9220be55e4315ed7d1b63d",
        ),
        (
            7940,
            &[
                ("positive", 4213),
                ("threads", 6118),
                ("range", 6854),
                ("lds-layout", 5416),
                ("tile-granularity", 1858),
                ("matrix-instruction", 626),
                ("producer-warp", 717),
                ("swap-ab", 633),
                ("wave-tile", 2983),
                ("depth-u", 154),
                ("global-read", 128),
                ("alignment", 610),
                ("store", 104),
                ("store-alignment", 438),
                ("lds", 361),
                ("registers", 167),
                ("split-k", 472),
                ("persistent", 118),
                ("tile-vs-problem", 90),
            ],
            "1ce2c29ecf46750c6353ca11a3b73dcb92ca7e9a086926586791c7442133c4a3",
        ),
        (
            15800,
            &[
                ("positive", 3236),
                ("threads", 3091),
                ("range", 5979),
                ("lds-layout", 4239),
                ("tile-granularity", 1724),
                ("matrix-instruction", 685),
                ("producer-warp", 657),
                ("swap-ab", 547),
                ("wave-tile", 1894),
                ("global-read", 327),
                ("store", 276),
                ("lds", 422),
                ("registers", 260),
                ("split-k", 623),
                ("persistent", 240),
            ],
            "f091cb169873ca67374f1046cfc2109e276e3dec27c340a02fc026a78963cc3d",
        ),
        (
            15701,
            &[
                ("positive", 3238),
                ("threads", 4632),
                ("range", 5327),
                ("lds-layout", 3874),
                ("tile-granularity", 1623),
                ("matrix-instruction", 665),
                ("producer-warp", 586),
                ("swap-ab", 523),
                ("wave-tile", 1558),
                ("global-read", 312),
                ("store", 288),
                ("lds", 1224),
                ("split-k", 225),
                ("persistent", 224),
            ],
            "11dad7bbc0d9170c1a2a488a0a4b4efafbb0597b6dd403028ce6b737e5f89a7b",
        ),
        (
            0,
            &[
                ("positive", 6008),
                ("threads", 6055),
                ("range", 10913),
                ("lds-layout", 7811),
                ("tile-granularity", 2856),
                ("matrix-instruction", 1085),
                ("dtype", 352),
                ("producer-warp", 973),
                ("swap-ab", 732),
                ("wave-tile", 1669),
                ("global-read", 264),
                ("store", 220),
                ("lds", 315),
                ("registers", 217),
                ("split-k", 438),
                ("persistent", 87),
                ("tile-vs-problem", 5),
            ],
            "557f7cbf61141c1d5cffd9fa727ff7a37d40606c7f6ef1ebe5a6c0f47c6c32e4",
        ),
        (
            13588,
            &[
                ("positive", 3273),
                ("threads", 5028),
                ("range", 5416),
                ("lds-layout", 4051),
                ("tile-granularity", 1745),
                ("matrix-instruction", 759),
                ("producer-warp", 606),
                ("swap-ab", 520),
                ("wave-tile", 2356),
                ("depth-u", 268),
                ("global-read", 142),
                ("store", 159),
                ("lds", 1336),
                ("split-k", 548),
                ("persistent", 197),
                ("tile-vs-problem", 8),
            ],
            "9f66e999a68a5ed8bc12e340c11f68770eefcbd123541d656b173ae7f304fb5f",
        ),
    ];
    for ((spec, p), (passed, rules, digest)) in cases().into_iter().zip(recorded) {
        let s = Space::for_problem(&p, &HwSpec::by_name(spec).unwrap());
        let want = Verdicts {
            passed,
            rules: rules.to_vec(),
            digest: digest.to_string(),
        };
        assert_eq!(verdicts(&s, 40_000), want, "{spec} {}", p.label());
    }
}

#[test]
fn bounded_spaces_enumerate_the_configs_they_did() {
    // (GPU, problem, valid configs of the bounded space), counted with the single-file rules
    // (4432, 4850, 1656), then again with PersistentKernel configs and other layouts valid,
    // and again with NVIDIA's register share per sub-partition (workgroups of 288 and 544
    // threads get 168 and 96 registers a thread, not 224 and 120), and again when the
    // persistent kernel took stream-K (GSU1S: 86 and 107 more on NVIDIA), and again when its
    // output could take narrow column groups to make room for a fourth stage (8 more on each
    // NVIDIA GPU).
    let recorded = [
        ("H100-SXM", GemmProblem::new(16032, 109, 16384), 4630),
        ("H200", GemmProblem::new(4096, 4096, 4096), 5082),
        ("MI300X", GemmProblem::new(8192, 128, 2048), 1656),
    ];
    for (spec, p, count) in recorded {
        let mut s = Space::for_problem(&p, &HwSpec::by_name(spec).unwrap());
        for (param, values) in [
            ("DepthU", "64"),
            ("LdsPadA", "0,8"),
            ("LdsPadB", "0,8"),
            ("WorkGroupMapping", "8"),
            ("StaggerU", "0"),
            ("GlobalReadVectorWidth", "8"),
            ("GlobalSplitU", "1,4"),
            ("MacroTile0", "64,128,256"),
            ("MacroTile1", "16,112,128,256"),
            ("WavesN", "1,2"),
            ("PrefetchGlobalRead", "1,2,4"),
            ("GlobalSplitUAlgorithm", "1,2"),
            ("StoreVectorWidth", "4"),
        ] {
            s.fix(param, values).unwrap();
        }
        let all = s.enumerate(1_000_000).unwrap();
        assert_eq!(all.len(), count, "{spec} {}", p.label());
    }
}
