//! Parsing speed of a 100k-line hipBLASLt log: profile entries, bench command lines and
//! unrelated program output interleaved, as a real workload's stderr looks.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gemmtune::problem::log::parse_str;

/// A deterministic mixed log of `lines` lines with a few hundred distinct problems.
fn mixed_log(lines: usize) -> String {
    let mut text = String::with_capacity(lines * 300);
    for i in 0..lines {
        let m = 128 * (1 + i % 97);
        let n = [1, 8, 32, 109, 512][i % 5];
        match i % 4 {
            0 | 1 => text.push_str(&format!(
                "- {{function: matmul, M: {m}, N: {n}, K: 4096, lda: 4096, ldb: 4096, ldc: {m}, ldd: {m}, stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0, beta: 0.0, transA: T, transB: N, batch_count: 1, scaleA: 0, scaleB: 0, scaleAlpha_vector: false, gradient: false, use_e: false, bias_vector: false, bias_source: d, a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, scale_type: f32_r, bias_type: f32_r, compute_type: c_f32_r, activation_type: none, flush: false, rotating: 512, cold_iters: 0, iters: 0, call_count: {}}}\n",
                1 + i % 7
            )),
            2 => text.push_str(&format!(
                "hipblaslt-bench --api_method c -m {m} -n {n} -k 4096 --lda 4096 --ldb 4096 --ldc {m} --ldd {m}  --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 --beta 0.000000 --transA T --transB N --batch_count 1 --scaleA 0 --scaleB 0  --a_type bf16_r --b_type bf16_r --c_type bf16_r --d_type bf16_r --scale_type f32_r --bias_type f32_r   --compute_type f32_r --activation_type none\n"
            )),
            _ => text.push_str("INFO 01-07 10:02:15 metrics.py:351] Avg generation throughput: 912.4 tokens/s\n"),
        }
    }
    text
}

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("log_parse");
    for lines in [10_000usize, 100_000] {
        let text = mixed_log(lines);
        group.throughput(Throughput::Elements(lines as u64));
        group.bench_with_input(BenchmarkId::new("parse_str", lines), &text, |b, text| {
            b.iter(|| {
                let log = parse_str(text, "bench.log");
                assert!(log.issues.is_empty());
                log.entries.len()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_parse
}
criterion_main!(benches);
