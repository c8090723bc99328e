//! `bench --hipblaslt-csv`: the results in hipblaslt-bench's CSV columns (the problem's
//! flags, then `hipblaslt-Gflops`, `hipblaslt-GB/s` and `us`), one row per measured kernel
//! and the vendor library, so scripts that read hipblaslt-bench's output read gemmtune's.
//! A last column, `kernel_name`, says which kernel a row is (what `--print_kernel_info`
//! prints beside hipblaslt-bench's rows). Failed kernels have empty rates.

use super::BenchReport;
use crate::bench::session::BenchRow;

/// hipblaslt-bench's columns, in its order.
const COLUMNS: &str = "transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,activation_type,bias_vector,bias_type,hipblaslt-Gflops,hipblaslt-GB/s,us,kernel_name";

/// The CSV text: the header, then every kernel row and the vendor row.
pub fn render_hipblaslt_csv(rep: &BenchReport) -> String {
    let p = &rep.problem;
    let problem = format!(
        "{},{},0,{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},0,0,0,0,0,none,0,{}",
        p.trans_a,
        p.trans_b,
        p.batch,
        p.m,
        p.n,
        p.k,
        p.alpha,
        p.lda,
        p.stride_a,
        p.beta,
        p.ldb,
        p.stride_b,
        p.ldc,
        p.stride_c,
        p.ldd,
        p.stride_d,
        p.a_type,
        p.b_type,
        p.c_type,
        p.d_type,
        // hipblaslt-bench writes the compute type without the `c_` of the log's YAML form.
        p.compute_type.to_string().trim_start_matches("c_"),
        p.d_type
    );
    let mut out = format!("{COLUMNS}\n");
    for r in rep.rows.iter().chain(rep.vendor.iter()) {
        out.push_str(&format!("{problem},{}\n", rates(r)));
    }
    out
}

/// `Gflops,GB/s,us,kernel_name` of one row; empty rates when it did not pass.
fn rates(r: &BenchRow) -> String {
    let name = super::csv_escape(&r.name);
    match (r.is_ok(), r.rates, r.median_us()) {
        (true, Some(x), Some(us)) => format!("{:.3},{:.3},{us:.3},{name}", x.tflops * 1e3, x.gbps),
        _ => format!(",,,{name}"),
    }
}
