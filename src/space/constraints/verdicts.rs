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
    let value = |d: &Domain, rng: &mut ChaCha8Rng| {
        let off = off_domain(d.id);
        if rng.gen_bool(0.2) {
            off[rng.gen_range(0..off.len())]
        } else {
            d.values[rng.gen_range(0..d.values.len())]
        }
    };
    let (mut passed, mut rules, mut digest) = (Vec::new(), Vec::new(), Sha256::new());
    for i in 0..n {
        let c = if i % 2 == 1 && !passed.is_empty() {
            let mut c: KernelConfig = passed[rng.gen_range(0..passed.len())];
            let d = &s.domains[rng.gen_range(0..s.domains.len())];
            d.id.set(&mut c, value(d, &mut rng));
            c
        } else {
            let mut c = s.raw_default();
            for d in &s.domains {
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
    // inputs (their DepthU domain reaches 256; the `dtype` message names the path they have).
    let recorded: [(usize, Rules, &str); 9] = [
        (
            10017,
            &[
                ("positive", 3849),
                ("threads", 3962),
                ("range", 11713),
                ("lds-layout", 3279),
                ("tile-granularity", 1402),
                ("matrix-instruction", 262),
                ("wgmma", 2111),
                ("producer-warp", 739),
                ("swap-ab", 609),
                ("wave-tile", 1079),
                ("depth-u", 23),
                ("global-read", 103),
                ("store", 102),
                ("lds", 390),
                ("registers", 197),
                ("split-k", 139),
                ("tile-vs-problem", 24),
            ],
            "96e57365474a1b1f9a1f27217223b283c56a7be743ecef8dc6e7431bbe201b07",
        ),
        (
            12037,
            &[
                ("positive", 3388),
                ("threads", 3553),
                ("range", 10576),
                ("lds-layout", 3087),
                ("tile-granularity", 1265),
                ("matrix-instruction", 289),
                ("wgmma", 2028),
                ("producer-warp", 832),
                ("swap-ab", 683),
                ("wave-tile", 759),
                ("depth-u", 28),
                ("global-read", 141),
                ("store", 116),
                ("lds", 177),
                ("registers", 759),
                ("split-k", 282),
            ],
            "927b400a6d4ebacc63cb214ef4910b1069cb3a385dcdeb19d2dab2f09c9d1b4b",
        ),
        (
            2834,
            &[
                ("positive", 5551),
                ("threads", 5545),
                ("range", 15663),
                ("lds-layout", 4504),
                ("tile-granularity", 1668),
                ("matrix-instruction", 240),
                ("wgmma", 2658),
                ("producer-warp", 543),
                ("swap-ab", 328),
                ("wave-tile", 133),
                ("depth-u", 9),
                ("global-read", 30),
                ("store", 22),
                ("lds", 85),
                ("registers", 75),
                ("split-k", 58),
                ("tile-vs-problem", 54),
            ],
            "2c621918d30e6b83868634b95c1fcdcd2c29051c04abba9f89992325e848ba39",
        ),
        (
            14467,
            &[
                ("positive", 3223),
                ("threads", 4712),
                ("range", 5417),
                ("lds-layout", 3813),
                ("tile-granularity", 1649),
                ("matrix-instruction", 527),
                ("producer-warp", 606),
                ("swap-ab", 574),
                ("wave-tile", 3280),
                ("depth-u", 44),
                ("global-read", 183),
                ("store", 164),
                ("lds", 698),
                ("split-k", 403),
                ("tile-vs-problem", 240),
            ],
            "cb596010653c8c880cc93c7582156812b3793ba6f30d5b63bb7289ac822e863e",
        ),
        (
            8202,
            &[
                ("positive", 4236),
                ("threads", 6248),
                ("range", 7116),
                ("lds-layout", 5109),
                ("tile-granularity", 1976),
                ("matrix-instruction", 613),
                ("producer-warp", 693),
                ("swap-ab", 640),
                ("wave-tile", 2881),
                ("depth-u", 185),
                ("global-read", 114),
                ("alignment", 651),
                ("store", 108),
                ("store-alignment", 446),
                ("lds", 174),
                ("registers", 155),
                ("split-k", 380),
                ("tile-vs-problem", 73),
            ],
            "61f3cc8adcfae0d80942470d65a94d181cfed39b38865a26afe5afcda54b6078",
        ),
        (
            16142,
            &[
                ("positive", 3195),
                ("threads", 3095),
                ("range", 5991),
                ("lds-layout", 4338),
                ("tile-granularity", 1819),
                ("matrix-instruction", 728),
                ("producer-warp", 681),
                ("swap-ab", 571),
                ("wave-tile", 2248),
                ("global-read", 250),
                ("store", 246),
                ("lds", 312),
                ("registers", 42),
                ("split-k", 342),
            ],
            "78b41f9bae1a336b7dae4d65943e56ae23ea2dc3e0e530ca45aac108fc59bf52",
        ),
        (
            15539,
            &[
                ("positive", 3221),
                ("threads", 4795),
                ("range", 5366),
                ("lds-layout", 3983),
                ("tile-granularity", 1702),
                ("matrix-instruction", 633),
                ("producer-warp", 588),
                ("swap-ab", 535),
                ("wave-tile", 1565),
                ("global-read", 243),
                ("store", 254),
                ("lds", 1386),
                ("split-k", 190),
            ],
            "0d2e3497b292bb6942c039f09f634ab40673d8d6ab7c3256f211bef6d8bb06d3",
        ),
        (
            0,
            &[
                ("positive", 5993),
                ("threads", 5920),
                ("range", 11027),
                ("lds-layout", 7834),
                ("tile-granularity", 2870),
                ("matrix-instruction", 1060),
                ("dtype", 290),
                ("producer-warp", 968),
                ("swap-ab", 770),
                ("wave-tile", 2255),
                ("global-read", 198),
                ("store", 140),
                ("lds", 237),
                ("registers", 46),
                ("split-k", 389),
                ("tile-vs-problem", 3),
            ],
            "8a900f150d3bbd3c79e7acfaeb04d29895706ecf741f42617b0f7bf0543f2908",
        ),
        (
            0,
            &[
                ("positive", 6040),
                ("threads", 8880),
                ("range", 9956),
                ("lds-layout", 6972),
                ("tile-granularity", 2472),
                ("matrix-instruction", 1161),
                ("dtype", 4519),
            ],
            "16683585e8fd5e5253abd6fb9a91bbdf03702e4e05b268879cb2a55b92692524",
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
    // (GPU, problem, valid configs of the bounded space), counted with the single-file rules.
    let recorded = [
        ("H100-SXM", GemmProblem::new(16032, 109, 16384), 4432),
        ("H200", GemmProblem::new(4096, 4096, 4096), 4850),
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
