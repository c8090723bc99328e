//! Command-line arguments (clap derive). `bench` speaks hipblaslt-bench's vocabulary so a user
//! can paste a line from a hipBLASLt log.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

use crate::device::BackendKind;

#[derive(Debug, Parser)]
#[command(
    name = "gemmtune",
    version,
    about = "Tune HIP GEMM kernels for the exact shapes your workload runs, against hipBLASLt / cuBLASLt",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone)]
pub struct GlobalOpts {
    /// GPU backend: a real GPU (`cuda`, `hip`), the analytic model (`sim`), or the first real
    /// GPU found (`auto`).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    pub backend: BackendKind,
    /// Device index.
    #[arg(long, global = true, default_value_t = 0)]
    pub device: u32,
    /// Results database (default: the user cache dir, gemmtune/results.sqlite).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Also write the results as CSV to PATH.
    #[arg(long, global = true, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Hardware spec to use instead of the one matched to the device: a TOML file, or the
    /// name of a built-in spec (`gemmtune specs` lists them, e.g. `mi300x`).
    #[arg(long = "hw-spec", global = true, value_name = "PATH|NAME")]
    pub hw_spec: Option<PathBuf>,
    /// More output (per-config progress).
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Only results and errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Recorded sweep served by `--backend replay` (written by `gemmtune sweep`).
    #[arg(long, global = true, value_name = "FILE")]
    pub dataset: Option<PathBuf>,
    /// Run kernels in this process instead of an isolated worker process (debugging only: a
    /// crashing kernel then ends the run).
    #[arg(long, global = true, hide = true)]
    pub no_worker: bool,
    /// Plant a failure on configs whose name contains PATTERN (PATTERN=crash|hang|wrong|oob|
    /// compile), for testing the harness: the sim backend models it, on a GPU the generated
    /// kernel really writes out of bounds, spins forever, computes a wrong result or fails
    /// to compile.
    #[arg(
        long = "plant",
        global = true,
        value_name = "PATTERN=KIND",
        hide = true
    )]
    pub sim_plant: Vec<String>,
}

// The enum is parsed once per process, so the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Benchmark kernels for one GEMM against the vendor library.
    Bench(BenchArgs),
    /// Search the kernel space for the fastest kernel of one GEMM.
    Tune(TuneArgs),
    /// Measure every config of a bounded space and write a dataset for `--backend replay`.
    Sweep(SweepArgs),
    /// Compare search strategies offline on a recorded sweep.
    #[command(name = "eval-strategies")]
    EvalStrategies(EvalArgs),
    /// Print the generated HIP C++ source of one kernel (for reading or compiling by hand).
    Source(SourceArgs),
    /// List the hardware spec files and the detected devices.
    Specs,
    /// Parse hipBLASLt logs and list the GEMMs a workload runs.
    Log(LogArgs),
    /// Internal: serve a device to the parent process over JSON lines.
    #[command(name = "__worker", hide = true)]
    Worker,
    /// Tune every GEMM worth it in a hipBLASLt log, on one or many GPUs, and report the uplift.
    #[command(name = "tune-log")]
    TuneLog(TuneLogArgs),
    /// Combine the output directories of `tune-log --shard` runs into one report.
    Merge(MergeArgs),
    /// Export a tune-log report's winners: Tensile benchmark configs and advice per GEMM.
    Export(ExportArgs),
}

/// The GEMM, in hipblaslt-bench's vocabulary. Defaults: the seed case (bf16, TN, packed).
#[derive(Debug, Args, Clone)]
pub struct ProblemArgs {
    #[arg(
        short = 'm',
        long = "m",
        visible_alias = "sizem",
        default_value_t = 16032,
        allow_hyphen_values = true
    )]
    pub m: i64,
    #[arg(
        short = 'n',
        long = "n",
        visible_alias = "sizen",
        default_value_t = 109,
        allow_hyphen_values = true
    )]
    pub n: i64,
    #[arg(
        short = 'k',
        long = "k",
        visible_alias = "sizek",
        default_value_t = 16384,
        allow_hyphen_values = true
    )]
    pub k: i64,
    /// Leading dimensions (default: packed).
    #[arg(long)]
    pub lda: Option<i64>,
    #[arg(long)]
    pub ldb: Option<i64>,
    #[arg(long)]
    pub ldc: Option<i64>,
    #[arg(long)]
    pub ldd: Option<i64>,
    /// Batch strides in elements (default: packed when batch_count > 1).
    #[arg(long = "stride_a")]
    pub stride_a: Option<i64>,
    #[arg(long = "stride_b")]
    pub stride_b: Option<i64>,
    #[arg(long = "stride_c")]
    pub stride_c: Option<i64>,
    #[arg(long = "stride_d")]
    pub stride_d: Option<i64>,
    #[arg(
        long = "batch_count",
        alias = "batch",
        default_value_t = 1,
        allow_hyphen_values = true
    )]
    pub batch_count: i64,
    /// T or N.
    #[arg(long = "transA", default_value = "T")]
    pub trans_a: String,
    #[arg(long = "transB", default_value = "N")]
    pub trans_b: String,
    /// bf16_r, f16_r, f32_r, f8_r, bf8_r (default: --precision).
    #[arg(long = "a_type")]
    pub a_type: Option<String>,
    #[arg(long = "b_type")]
    pub b_type: Option<String>,
    #[arg(long = "c_type")]
    pub c_type: Option<String>,
    #[arg(long = "d_type")]
    pub d_type: Option<String>,
    /// The type of the four matrices not given their own.
    #[arg(short = 'r', long = "precision", default_value = "bf16_r")]
    pub precision: String,
    #[arg(long = "compute_type", default_value = "c_f32_r")]
    pub compute_type: String,
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub alpha: f64,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub beta: f64,
}

/// How each kernel is timed.
#[derive(Debug, Args, Clone)]
pub struct TimingArgs {
    /// Timed launches per kernel.
    #[arg(short = 'i', long, default_value_t = 20)]
    pub iters: u32,
    /// Warm-up launches per kernel.
    #[arg(short = 'j', long = "cold_iters", default_value_t = 3)]
    pub cold_iters: u32,
    /// MiB of rotating input buffers, so that inputs come from HBM rather than cache.
    #[arg(long, default_value_t = 512)]
    pub rotating: u64,
    /// Overwrite a buffer larger than L2 before every timed launch (`--flush 0` or
    /// `--flush false`, as hipblaslt-bench writes it, turns it off).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_parser = crate::cli::bench_compat::parse_switch)]
    pub flush: Option<bool>,
    /// Seconds one kernel may take (verification + timing) before it is declared hung.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Seed for the input data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Compile threads (0 = all cores).
    #[arg(long = "compile-threads", default_value_t = 0)]
    pub compile_threads: usize,
    /// Re-measure even if the database has results for this device, problem and kernel.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Kernel to run, by canonical name (repeatable). Default: a built-in set for the problem.
    #[arg(long = "config", value_name = "NAME")]
    pub configs: Vec<String>,
    /// File with one canonical kernel name per line (`#` comments allowed).
    #[arg(long = "configs", value_name = "FILE")]
    pub configs_file: Option<PathBuf>,
    /// Run every valid config of a bounded space (minor parameters pinned; see `--fix`).
    #[arg(long)]
    pub sweep: bool,
    /// With --sweep: set a parameter's values, e.g. `--fix DepthU=32,64 --fix GSU=1,2,4`.
    #[arg(long = "fix", value_name = "NAME=VALUES")]
    pub fix: Vec<String>,
    /// With --sweep: at most this many configs (half ranked by the analytic model, half random).
    #[arg(long = "max-configs", default_value_t = 200)]
    pub max_configs: usize,
    /// How many of the fastest kernels to re-time, beside the vendor library, before naming a winner.
    #[arg(long, default_value_t = 3)]
    pub retime: usize,
    /// Rounds of that re-timing, the vendor library timed in each: a kernel's row is its
    /// median round.
    #[arg(long = "retime-rounds", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=20))]
    pub retime_rounds: u64,
    /// Do not run the vendor library.
    #[arg(long = "no-vendor")]
    pub no_vendor: bool,
    /// Also run the kernels a solutions file (written by `tune-log`) lists for this problem.
    #[arg(long = "solutions", value_name = "FILE")]
    pub solutions: Option<PathBuf>,
    /// Also write a roofline chart (SVG) to PATH: each verified kernel's and the vendor
    /// library's TFLOP/s against the problem's arithmetic intensity, under the hw spec's roof.
    #[arg(long = "roofline", value_name = "PATH")]
    pub roofline: Option<PathBuf>,
    #[command(flatten)]
    pub hipblaslt: crate::cli::bench_compat::HipblasltBenchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct LogArgs {
    /// hipBLASLt log files (HIPBLASLT_LOG_MASK=32, 64 or 128 output).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct TuneArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    /// Directory for this run's files: LLM prompts and replies (no secrets), the convergence
    /// plot, the result JSON. Default: a new directory under the user cache dir.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// A count of configs that zero would make meaningless (`--max-evals`, `--batch-size`): a search
/// that may measure nothing has no winner to report.
fn count_at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// How a search runs: the strategy, its budget and convergence rules, and the LLM it may use.
#[derive(Debug, Args, Clone)]
pub struct SearchArgs {
    /// Search strategy (default: `llm` when an LLM is configured, else `pattern`).
    /// One of: random, pattern, genetic, exhaustive, explicit, autonomous, llm, llm-iterative.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Configs measured at most.
    #[arg(long = "max-evals", default_value_t = 160, value_parser = count_at_least_one)]
    pub max_evals: usize,
    /// Seconds of searching at most (the final re-timing still runs).
    #[arg(long = "time-budget", value_name = "SECONDS")]
    pub time_budget: Option<f64>,
    /// Rounds at most (default 5; the explicit and llm-iterative strategies default to no limit).
    #[arg(long = "max-rounds")]
    pub max_rounds: Option<usize>,
    /// Stop after this many rounds without an improvement of --min-improvement.
    #[arg(long, default_value_t = 2)]
    pub patience: usize,
    /// Relative gain that counts as an improvement.
    #[arg(long = "min-improvement", default_value_t = 0.01)]
    pub min_improvement: f64,
    /// Stop once a kernel is this fast (microseconds).
    #[arg(long = "target-us")]
    pub target_us: Option<f64>,
    /// Stop once a kernel reaches this rate.
    #[arg(long = "target-tflops")]
    pub target_tflops: Option<f64>,
    /// Configs per round for the non-LLM strategies (a round compiles in parallel, so wide
    /// rounds cost little more wall time than narrow ones).
    #[arg(long = "batch-size", default_value_t = 32, value_parser = count_at_least_one)]
    pub batch_size: usize,
    /// What replaces an LLM round that fails (timeout, transport error, no valid config).
    #[arg(long, value_parser = ["random", "pattern", "error"], default_value = "pattern")]
    pub fallback: String,
    /// How many of the best kernels to re-time before naming the winner.
    #[arg(long, default_value_t = 3)]
    pub retime: usize,
    /// Rounds of that re-timing: each kernel's time is the median of its round medians.
    #[arg(long = "retime-rounds", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=20))]
    pub retime_rounds: u64,
    /// Strategy seed.
    #[arg(long = "search-seed", default_value_t = 0)]
    pub search_seed: u64,
    /// Tuning steps for the explicit strategy (TOML).
    #[arg(long = "steps", value_name = "FILE")]
    pub steps: Option<PathBuf>,
    /// Explicit strategy: do not ask the LLM whether a step is worth running.
    #[arg(long = "no-step-evaluation")]
    pub no_step_evaluation: bool,
    /// Autonomous strategy: breakdowns of one step at most.
    #[arg(long = "max-breakdowns", default_value_t = 3)]
    pub max_breakdowns: usize,
    /// Autonomous strategy: replans at most.
    #[arg(long = "max-replanning", default_value_t = 3)]
    pub max_replanning: usize,
    /// Autonomous strategy: never break a step down.
    #[arg(long = "no-breakdown")]
    pub no_breakdown: bool,
    /// Autonomous strategy: never replan.
    #[arg(long = "no-replanning")]
    pub no_replanning: bool,
    /// LLM sampling temperature.
    #[arg(long = "llm-temperature", default_value_t = 0.7)]
    pub llm_temperature: f32,
    /// Configs the llm strategy asks for in its first round.
    #[arg(long = "llm-initial-batch", default_value_t = 25)]
    pub llm_initial_batch: usize,
    /// Configs the llm strategy asks for in later rounds.
    #[arg(long = "llm-batch", default_value_t = 15)]
    pub llm_batch: usize,
    #[command(flatten)]
    pub llm: crate::llm::config::LlmOptions,
}

#[derive(Debug, Args, Clone)]
pub struct SweepArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Set a parameter's values, e.g. `--fix DepthU=32,64 --fix GSU=1,2,4`.
    #[arg(long = "fix", value_name = "NAME=VALUES")]
    pub fix: Vec<String>,
    /// At most this many configs (half ranked by the analytic model, half random).
    #[arg(long = "max-configs", default_value_t = 200)]
    pub max_configs: usize,
    /// Where to write the dataset (JSON lines, one record per config).
    #[arg(long = "out", value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Debug, Args, Clone)]
pub struct EvalArgs {
    /// Datasets written by `gemmtune sweep`. With several, strategies that learn across
    /// shapes (model, default) are evaluated leave-one-shape-out: on each dataset they learn
    /// from the others.
    #[arg(value_name = "DATASET", required = true, num_args = 1..)]
    pub datasets: Vec<PathBuf>,
    /// Strategies to compare (default: every strategy that needs no LLM, plus the LLM ones
    /// when an LLM is configured).
    #[arg(long, value_delimiter = ',')]
    pub strategies: Vec<String>,
    /// Also write the comparison as a markdown page (docs/search.md).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Runs (seeds) per strategy.
    #[arg(long, default_value_t = 20)]
    pub seeds: u64,
    /// Evaluation budgets to report the best reached at.
    #[arg(long, value_delimiter = ',', default_value = "25,50,100,200")]
    pub budgets: Vec<usize>,
    /// Configs per round.
    #[arg(long = "batch-size", default_value_t = 8)]
    pub batch_size: usize,
    /// Write a plot of the best reached against the budget, per strategy (SVG).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub llm: crate::llm::config::LlmOptions,
}

#[derive(Debug, Args, Clone)]
pub struct SourceArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// Canonical kernel name.
    #[arg(long = "config", value_name = "NAME")]
    pub config: String,
    /// Compile target, e.g. sm_90a or gfx942 (default: the hw spec's).
    #[arg(long)]
    pub arch: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct TuneLogArgs {
    /// hipBLASLt logs (HIPBLASLT_LOG_MASK=32, 64 or 128 output; formats may be mixed).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Tune only GEMMs with at least this share of the workload's GEMM time (calls x vendor
    /// time), e.g. 0.01 for 1%.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
    pub thr: f64,
    /// Tune at most the K GEMMs with the largest share (with --thr, both apply).
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// Device indices to run on, one worker per device sharing one queue (default: --device).
    #[arg(long, value_delimiter = ',', value_name = "0,1,...")]
    pub devices: Vec<u32>,
    /// Tune only slice I of N of the workload (a GEMM belongs to shard `id % N`); combine the
    /// shards' output directories with `gemmtune merge`.
    #[arg(long, value_name = "I/N", default_value = "0/1")]
    pub shard: crate::workload::Shard,
    /// Output directory (also the results database, unless --db is given). Running the same
    /// command again resumes where it stopped.
    #[arg(long, value_name = "DIR", default_value = "gemmtune-results")]
    pub out: PathBuf,
    /// Keep a tuned kernel only if it beats the vendor library by this fraction.
    #[arg(long = "min-uplift", value_name = "FRACTION", default_value_t = 0.01)]
    pub min_uplift: f64,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub search: SearchArgs,
}

#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// Output directories of `tune-log --shard I/N` runs over the same log.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Where to write the merged report and database.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Keep/drop margin (default: the one the shards used).
    #[arg(long = "min-uplift", value_name = "FRACTION")]
    pub min_uplift: Option<f64>,
}

#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// A `tune-log` or `merge` output directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write a Tensile/TensileLite benchmark config per kept kernel.
    #[arg(long)]
    pub tensile: bool,
    /// Write advice.md per kept kernel: what made it fast, from the measurements.
    #[arg(long)]
    pub advice: bool,
    /// Where to write (default: DIR/export). Without --tensile or --advice, both are written.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub llm: crate::llm::config::LlmOptions,
}
