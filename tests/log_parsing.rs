//! hipBLASLt log parsing through the public API: both formats, merging, defaults, and
//! every kind of broken line, plus fixtures written from public Llama-3 model shapes.

use std::path::PathBuf;

use gemmtune::problem::log::{parse_files, parse_str, LogError};
use gemmtune::problem::{ComputeType, DataType, GemmProblem, Trans};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn shapes(log: &gemmtune::problem::log::ParsedLog) -> Vec<(i64, i64, i64, u64)> {
    log.entries
        .iter()
        .map(|e| (e.problem.m, e.problem.n, e.problem.k, e.call_count))
        .collect()
}

#[test]
fn llama3_8b_profile_log() {
    let log = parse_files(&[fixture("llama3_8b_decode_mask64.log")]).unwrap();
    assert!(log.issues.is_empty(), "{:?}", log.issues);
    assert_eq!(log.lines_read, 16);
    assert_eq!(log.gemm_lines, 12);
    // y = x W^T with x [tokens, in], W [out, in] is logged column-major as
    // M = out_features, N = tokens, K = in_features, TN.
    assert_eq!(
        shapes(&log),
        vec![
            (6144, 8, 4096, 4096),
            (4096, 8, 4096, 4096),
            (28672, 8, 4096, 4096),
            (4096, 8, 14336, 4096),
            // lm_head appears twice (128 + 1 calls) and is merged.
            (128256, 8, 4096, 129),
            (6144, 512, 4096, 32),
            (4096, 512, 4096, 32),
            (28672, 512, 4096, 32),
            (4096, 512, 14336, 32),
            (16032, 109, 16384, 1),
            (16032, 113, 16384, 1),
        ]
    );
    let first = &log.entries[0];
    assert_eq!(first.first_line, 4);
    assert!(first.source.ends_with("llama3_8b_decode_mask64.log"));
    assert_eq!(first.problem.layout(), "TN");
    assert_eq!(first.problem.a_type, DataType::Bf16);
    assert_eq!(first.problem.compute_type, ComputeType::F32);
    assert!(first.extra.is_empty());
    assert_eq!(log.entries[9].problem, GemmProblem::new(16032, 109, 16384));
}

#[test]
fn llama3_70b_bench_log_counts_one_call_per_line() {
    let log = parse_files(&[fixture("llama3_70b_tp8_mask32.log")]).unwrap();
    assert!(log.issues.is_empty(), "{:?}", log.issues);
    assert_eq!((log.lines_read, log.gemm_lines), (20, 18));
    // Tensor parallel 8 shards: qkv (8192 + 2*1024)/8, o 8192x1024, gate_up 2*28672/8,
    // down 8192x3584, lm_head 128256/8 = 16032 (the seed's M).
    assert_eq!(
        shapes(&log),
        vec![
            (1280, 1, 8192, 4),
            (8192, 1, 1024, 4),
            (7168, 1, 8192, 4),
            (8192, 1, 3584, 4),
            (16032, 1, 8192, 2),
        ]
    );
    assert_eq!(log.total_calls(), 18);
}

#[test]
fn several_files_merge_and_io_errors_name_the_file() {
    let a = fixture("llama3_8b_decode_mask64.log");
    let b = fixture("llama3_70b_tp8_mask32.log");
    let log = parse_files(&[a.clone(), b.clone(), a.clone()]).unwrap();
    assert_eq!(log.entries.len(), 16);
    assert_eq!(log.entries[0].call_count, 2 * 4096);
    assert!(log.entries[11]
        .source
        .ends_with("llama3_70b_tp8_mask32.log"));
    assert_eq!(log.lines_read, 16 + 20 + 16);

    let missing = fixture("no_such.log");
    let err = parse_files(&[a, missing.clone()]).unwrap_err();
    assert!(matches!(err, LogError::Io { ref path, .. } if *path == missing));
    assert!(err.to_string().contains("no_such.log"), "{err}");
}

#[test]
fn flag_order_spacing_and_forms_do_not_matter() {
    let lines = [
        "hipblaslt-bench --api_method c -m 256 -n 16 -k 512 --transA T --transB N --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r --compute_type f32_r",
        "  /opt/rocm/bin/hipblaslt-bench   --compute_type   c_f32_r --transB N -k 512 --transA=T --sizen 16 -m256\t--precision f16_r",
        "HIPBLASLT_LOG_MASK=32 hipblaslt-bench -r f16_r --sizek=512 --sizem 256 -n 16 --transA T",
    ];
    let log = parse_str(&lines.join("\r\n"), "flags");
    assert!(log.issues.is_empty(), "{:?}", log.issues);
    assert_eq!(shapes(&log), vec![(256, 16, 512, 3)]);
    let p = &log.entries[0].problem;
    assert_eq!((p.lda, p.ldb, p.ldc, p.ldd), (512, 512, 256, 256));
}

#[test]
fn absent_optional_flags_take_hipblaslt_bench_defaults() {
    let log = parse_str("hipblaslt-bench -m 64 -n 32 -k 16", "defaults");
    assert!(log.issues.is_empty(), "{:?}", log.issues);
    let p = &log.entries[0].problem;
    assert_eq!((p.trans_a, p.trans_b), (Trans::N, Trans::N));
    assert_eq!((p.a_type, p.d_type), (DataType::F16, DataType::F16));
    assert_eq!(p.compute_type, ComputeType::F32);
    assert_eq!((p.alpha, p.beta, p.batch), (1.0, 0.0, 1));
    assert_eq!((p.lda, p.ldb, p.ldc, p.ldd), (64, 16, 64, 64));

    // Batched with absent strides: packed strides.
    let log = parse_str(
        "hipblaslt-bench -m 64 -n 32 -k 16 --batch_count 4",
        "batched",
    );
    let p = &log.entries[0].problem;
    assert_eq!((p.batch, p.stride_a, p.stride_d), (4, 64 * 16, 64 * 32));
}

#[test]
fn malformed_lines_are_errors_with_line_numbers_and_the_rest_parses() {
    let text = [
        "- {function: matmul, M: 128, N: 8, K: 256, transA: T, transB: N, a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, call_count: 2}",
        "- {function: matmul, M: 12x8, N: 8, K: 256}",
        "- {function: matmul, N: 8, K: 256}",
        "- {function: matmul, M: 128, N: 8, K: 256, a_type: i4_r}",
        "- {function: matmul, M: 128, N: 8, K: 256",
        "hipblaslt-bench -m 128 -n 8 -k",
        "hipblaslt-bench -m 128 -n 8 -k 256 --lda 4",
        "- {function: matmul, M: 128, N: 8, K: 256, call_count: many}",
        "- {function: matmul, M: -128, N: 8, K: 256}",
        "- {function: matmul, M: 128, N: 8, K: 256, transA: T, transB: N, a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, call_count: 3}",
    ]
    .join("\n");
    let log = parse_str(&text, "broken.log");
    let errors: Vec<_> = log.errors().map(|e| (e.line, e.message.clone())).collect();
    let lines: Vec<usize> = errors.iter().map(|e| e.0).collect();
    assert_eq!(lines, vec![2, 3, 4, 5, 6, 7, 8, 9], "{errors:?}");
    let expect = [
        "`12x8` for M",
        "missing M",
        "i4_r",
        "unbalanced braces",
        "`-k` needs a value",
        "lda=4",
        "call_count",
        "M must be positive",
    ];
    for ((_, message), want) in errors.iter().zip(expect) {
        assert!(
            message.contains(want),
            "`{message}` should mention `{want}`"
        );
    }
    assert_eq!(shapes(&log), vec![(128, 8, 256, 5)]);
    assert_eq!(log.gemm_lines, 10);
    let shown = log.errors().next().unwrap().to_string();
    assert!(shown.starts_with("broken.log:2: error:"), "{shown}");
}

#[test]
fn unknown_keys_warn_once_and_are_kept() {
    let line = |m: i64, tag: &str| {
        format!("- {{function: matmul, M: {m}, N: 8, K: 64, workload_tag: {tag}, future_flag: 1}}")
    };
    let text = [
        line(64, "a"),
        line(128, "b"),
        line(64, "c"),
        "hipblaslt-bench -m 32 -n 8 -k 64 --new_option 7".to_string(),
    ]
    .join("\n");
    let log = parse_str(&text, "u");
    let warnings: Vec<_> = log
        .warnings()
        .map(|w| (w.line, w.message.clone()))
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].1.contains("workload_tag") && warnings[0].0 == 1);
    assert!(warnings[1].1.contains("future_flag"));
    assert!(warnings[2].1.contains("new_option") && warnings[2].0 == 4);
    assert!(log.errors().next().is_none());
    assert_eq!(log.entries.len(), 3);
    // The first value seen wins when lines merge.
    assert_eq!(log.entries[0].extra["workload_tag"], "a");
    assert_eq!(log.entries[0].call_count, 2);
    assert_eq!(log.entries[2].extra["new_option"], "7");
}

#[test]
fn fused_epilogues_are_kept_and_warned_once() {
    let text = [
        "hipblaslt-bench -m 4096 -n 8 -k 4096 --transA T --bias_vector --bias_type bf16_r --activation_type gelu -r bf16_r",
        "hipblaslt-bench -m 1024 -n 8 -k 4096 --transA T --bias_vector --bias_type bf16_r -r bf16_r",
        "- {function: matmul, M: 512, N: 8, K: 64, use_e: true, gradient: false, scaleA: 1, bias_type: f32_r}",
        "- {function: matmul, M: 512, N: 16, K: 64, activation_type: none, bias_vector: false, bias_type: f32_r}",
    ]
    .join("\n");
    let log = parse_str(&text, "epilogue");
    assert_eq!(log.entries.len(), 4);
    let e = &log.entries[0].extra;
    assert_eq!(e.get("activation_type").map(String::as_str), Some("gelu"));
    assert_eq!(e.get("bias_vector").map(String::as_str), Some("true"));
    assert_eq!(e.get("bias_type").map(String::as_str), Some("bf16_r"));
    let e = &log.entries[2].extra;
    assert_eq!(e.get("use_e").map(String::as_str), Some("true"));
    assert!(!e.contains_key("gradient"));
    // A per-tensor scale is part of the problem, not a fused extra.
    assert!(!e.contains_key("scaleA"));
    assert_eq!(log.entries[2].problem.scale_a, 0.5);
    // Plain GEMM with default epilogue settings: nothing recorded.
    assert!(log.entries[3].extra.is_empty());
    let keys: Vec<_> = log
        .warnings()
        .map(|w| w.message.split('`').nth(1).unwrap_or("").to_string())
        .collect();
    assert_eq!(
        keys,
        vec!["bias_vector: true", "activation_type: gelu", "use_e: true",]
    );
}

#[test]
fn other_functions_and_other_output_are_skipped() {
    let text = "\
- {function: matmul_algo_query, M: 1, N: 1, K: 1}
- {name: not a hipBLASLt entry}
Epoch 1: loss 0.31 - {function: matmul}
see hipblaslt-bench --help for options
";
    let log = parse_str(text, "other");
    assert!(log.entries.is_empty());
    assert!(log.issues.is_empty(), "{:?}", log.issues);
    assert_eq!(
        (log.lines_read, log.gemm_lines, log.other_function_lines),
        (4, 0, 1)
    );
}

#[test]
fn empty_logs() {
    let log = parse_str("", "empty");
    assert_eq!(log, Default::default());
    let log = parse_str("\n\n   \n", "blank");
    assert!(log.entries.is_empty() && log.issues.is_empty());
    assert_eq!(log.lines_read, 3);
}

#[test]
fn grouped_gemm_lines_become_one_entry_per_member() {
    let log = parse_str(
        "hipblaslt-bench --grouped_gemm 1 -m 128 256 -n 8 -k 1024 2048 --transA T -r bf16_r",
        "grouped",
    );
    assert!(log.issues.is_empty(), "{:?}", log.issues);
    assert_eq!(shapes(&log), vec![(128, 8, 1024, 1), (256, 8, 2048, 1)]);
}

#[test]
fn a_large_mixed_log_parses() {
    // Correctness at scale (the speed is measured by the criterion bench, not asserted).
    let mut text = String::new();
    for i in 0..20_000 {
        let m = 64 * (1 + i % 50);
        text.push_str(&format!("- {{function: matmul, M: {m}, N: 8, K: 4096, transA: T, transB: N, a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, call_count: 2}}\n"));
        text.push_str(&format!(
            "hipblaslt-bench -m {m} -n 8 -k 4096 --transA T --transB N -r bf16_r\n"
        ));
        text.push_str("INFO step done\n");
    }
    let log = parse_str(&text, "big");
    assert_eq!(log.lines_read, 60_000);
    assert_eq!(log.entries.len(), 50);
    assert_eq!(log.total_calls(), 20_000 * 3);
    assert!(log.issues.is_empty());
}
