//! Fault isolation: kernels run in a child process (`gemmtune __worker`), one per GPU.
//!
//! The parent ([`WorkerDevice`]) implements [`Device`] by sending JSON-line requests to the
//! child's stdin and reading JSON-line responses from its stdout. An illegal memory access, an
//! abort, or a hang (no answer within `TimingOptions::timeout_s`, then the child is killed)
//! becomes that one config's [`Outcome`]; the next request starts a fresh child and replays
//! the current problem, so the run continues and nothing already measured is lost.
//! [`serve`] is the child's side: it opens the real backend in-process and answers requests.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{
    open_in_process, Device, DeviceError, DeviceInfo, DeviceSelection, Outcome, TimingOptions,
};
use crate::compile::CompiledKernel;
use crate::hw::HwSpec;
use crate::problem::GemmProblem;

/// Parent -> child.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    SetProblem {
        problem: GemmProblem,
        timing: TimingOptions,
    },
    RunKernel {
        kernel: Box<CompiledKernel>,
        timing: TimingOptions,
    },
    RunVendor {
        timing: TimingOptions,
    },
}

/// Child -> parent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Response {
    Ready { info: DeviceInfo, hw: Box<HwSpec> },
    Done,
    Failed { message: String },
    Outcome { outcome: Outcome, poisoned: bool },
}

/// How long a fresh worker may take to open its device, and to set up a problem (allocation,
/// random fill and the reference GEMM of a multi-GB problem take seconds, not milliseconds).
const START_TIMEOUT: Duration = Duration::from_secs(120);
const SETUP_TIMEOUT: Duration = Duration::from_secs(600);
/// Lines of the child's stderr kept for crash reports.
const STDERR_TAIL: usize = 20;

struct Child_ {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

/// A device in a child process.
pub struct WorkerDevice {
    selection: DeviceSelection,
    info: DeviceInfo,
    hw: HwSpec,
    child: Option<Child_>,
    /// The problem to replay into a restarted worker.
    current: Option<(GemmProblem, TimingOptions)>,
    /// How many times a worker had to be restarted (reported in summaries).
    pub restarts: u32,
}

impl WorkerDevice {
    /// Starts a worker for `selection`; fails if the child cannot open the device.
    pub fn start(selection: DeviceSelection) -> Result<Self, DeviceError> {
        let (child, info, hw) = spawn(&selection)?;
        Ok(WorkerDevice {
            selection,
            info,
            hw: *hw,
            child: Some(child),
            current: None,
            restarts: 0,
        })
    }

    fn ensure_child(&mut self) -> Result<(), DeviceError> {
        if self.child.is_some() {
            return Ok(());
        }
        let (child, _, _) = spawn(&self.selection)?;
        self.child = Some(child);
        self.restarts += 1;
        if let Some((p, t)) = self.current.clone() {
            match self.exchange(
                &Request::SetProblem {
                    problem: p,
                    timing: t,
                },
                SETUP_TIMEOUT,
            ) {
                Ok(Response::Done) => {}
                Ok(Response::Failed { message }) => return Err(DeviceError::Worker(message)),
                Ok(other) => {
                    return Err(DeviceError::Worker(format!("unexpected reply {other:?}")))
                }
                Err(e) => return Err(DeviceError::Worker(e.describe())),
            }
        }
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.child.kill();
            let _ = c.child.wait();
        }
    }

    /// Sends one request and waits for its reply.
    fn exchange(&mut self, req: &Request, timeout: Duration) -> Result<Response, Failure> {
        let Some(c) = self.child.as_mut() else {
            return Err(Failure::Crashed("worker not running".into()));
        };
        let line = serde_json::to_string(req).expect("requests serialise");
        if writeln!(c.stdin, "{line}")
            .and_then(|_| c.stdin.flush())
            .is_err()
        {
            let msg = self.reap();
            return Err(Failure::Crashed(msg));
        }
        let c = self.child.as_mut().expect("child present");
        match c.lines.recv_timeout(timeout) {
            Ok(line) => serde_json::from_str(&line).map_err(|e| {
                Failure::Crashed(format!("unreadable reply from worker: {e}: {line}"))
            }),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Failure::Timeout(timeout.as_secs_f64()))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let msg = self.reap();
                Err(Failure::Crashed(msg))
            }
        }
    }

    /// Collects a dead child's exit status and last stderr lines.
    fn reap(&mut self) -> String {
        let Some(mut c) = self.child.take() else {
            return "worker not running".into();
        };
        let status = match c.child.wait_timeout_or_kill() {
            Some(s) => describe_status(s),
            None => "killed".into(),
        };
        let tail: Vec<String> = c
            .stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default();
        if tail.is_empty() {
            format!("worker {status}")
        } else {
            format!("worker {status}; last output: {}", tail.join(" | "))
        }
    }

    fn run(&mut self, req: Request, timeout: Duration) -> Outcome {
        if let Err(e) = self.ensure_child() {
            return Outcome::LaunchFailed {
                message: format!("could not restart worker: {e}"),
            };
        }
        match self.exchange(&req, timeout) {
            Ok(Response::Outcome { outcome, poisoned }) => {
                if poisoned {
                    // The child exits by itself; collect it so the next request restarts it.
                    let _ = self.reap();
                }
                outcome
            }
            Ok(Response::Failed { message }) => Outcome::LaunchFailed { message },
            Ok(other) => Outcome::LaunchFailed {
                message: format!("unexpected reply from worker: {other:?}"),
            },
            Err(Failure::Timeout(after_s)) => Outcome::Timeout { after_s },
            Err(Failure::Crashed(message)) => Outcome::LaunchFailed { message },
        }
    }
}

impl Drop for WorkerDevice {
    fn drop(&mut self) {
        // Closing stdin ends the child's loop; kill covers a stuck one.
        self.kill();
    }
}

enum Failure {
    Timeout(f64),
    Crashed(String),
}

impl Failure {
    fn describe(&self) -> String {
        match self {
            Failure::Timeout(s) => format!("no reply within {s:.0} s"),
            Failure::Crashed(m) => m.clone(),
        }
    }
}

trait WaitOrKill {
    fn wait_timeout_or_kill(&mut self) -> Option<std::process::ExitStatus>;
}

impl WaitOrKill for Child {
    /// A child whose stdout closed is exiting; give it a moment, then kill it.
    fn wait_timeout_or_kill(&mut self) -> Option<std::process::ExitStatus> {
        for _ in 0..50 {
            if let Ok(Some(s)) = self.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.kill();
        self.wait().ok()
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            let name = match sig {
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("crashed with signal {sig}{name}");
        }
    }
    match s.code() {
        Some(c) => format!("exited with code {c}"),
        None => "exited".into(),
    }
}

fn spawn(sel: &DeviceSelection) -> Result<(Child_, DeviceInfo, Box<HwSpec>), DeviceError> {
    let exe = std::env::current_exe()
        .map_err(|e| DeviceError::Worker(format!("cannot find own executable: {e}")))?;
    let selection = serde_json::to_string(sel).map_err(|e| DeviceError::Worker(e.to_string()))?;
    let mut child = Command::new(exe)
        .arg("__worker")
        .env("GEMMTUNE_WORKER_SELECTION", selection)
        .env(PARENT_ENV, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| DeviceError::Worker(format!("cannot start worker process: {e}")))?;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let tail2 = Arc::clone(&tail);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Ok(mut t) = tail2.lock() {
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        }
    });
    let mut c = Child_ {
        child,
        stdin,
        lines: rx,
        stderr_tail: tail,
    };
    let first = c.lines.recv_timeout(START_TIMEOUT);
    match first.ok().map(|l| serde_json::from_str::<Response>(&l)) {
        Some(Ok(Response::Ready { info, hw })) => Ok((c, info, hw)),
        Some(Ok(Response::Failed { message })) => {
            let _ = c.child.wait();
            Err(DeviceError::Open(message))
        }
        _ => {
            let _ = c.child.kill();
            let _ = c.child.wait();
            let tail: Vec<String> = c
                .stderr_tail
                .lock()
                .map(|t| t.iter().cloned().collect())
                .unwrap_or_default();
            Err(DeviceError::Worker(format!(
                "worker did not start: {}",
                tail.join(" | ")
            )))
        }
    }
}

impl Device for WorkerDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn hw_spec(&self) -> &HwSpec {
        &self.hw
    }

    fn set_problem(&mut self, p: &GemmProblem, t: &TimingOptions) -> Result<(), DeviceError> {
        self.current = None;
        self.ensure_child()?;
        let req = Request::SetProblem {
            problem: p.clone(),
            timing: t.clone(),
        };
        match self.exchange(&req, SETUP_TIMEOUT) {
            Ok(Response::Done) => {
                self.current = Some((p.clone(), t.clone()));
                Ok(())
            }
            Ok(Response::Failed { message }) => Err(DeviceError::Worker(message)),
            Ok(other) => Err(DeviceError::Worker(format!("unexpected reply {other:?}"))),
            Err(e) => Err(DeviceError::Worker(e.describe())),
        }
    }

    fn run_kernel(&mut self, k: &CompiledKernel, t: &TimingOptions) -> Outcome {
        let timeout = Duration::from_secs_f64(t.timeout_s.max(0.1));
        self.run(
            Request::RunKernel {
                kernel: Box::new(k.clone()),
                timing: t.clone(),
            },
            timeout,
        )
    }

    fn run_vendor(&mut self, t: &TimingOptions) -> Outcome {
        let timeout = Duration::from_secs_f64(t.timeout_s.max(0.1));
        self.run(Request::RunVendor { timing: t.clone() }, timeout)
    }
}

/// The parent's pid, handed to the worker so it can tell whether its parent is still there.
const PARENT_ENV: &str = "GEMMTUNE_WORKER_PARENT";

/// Ends this worker when the process that started it dies, even mid-kernel (a hung kernel
/// never reads the closed stdin): on Linux the kernel sends SIGKILL when the parent goes
/// (`PR_SET_PDEATHSIG`); a parent that died before that was set is seen by its pid.
/// Elsewhere a thread polls for the parent's death.
fn die_with_parent() {
    let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok())
    else {
        return;
    };
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    // SAFETY: getppid has no preconditions.
    let orphaned = || unsafe { libc::getppid() } != parent;
    if orphaned() {
        std::process::exit(3);
    }
    #[cfg(not(target_os = "linux"))]
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        if orphaned() {
            std::process::exit(3);
        }
    });
}

/// The child's loop: open the device in-process, answer requests until stdin closes.
pub fn serve() -> Result<(), DeviceError> {
    die_with_parent();
    let sel: DeviceSelection = std::env::var("GEMMTUNE_WORKER_SELECTION")
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .ok_or_else(|| DeviceError::Worker("missing or invalid worker selection".into()))?;
    let stdout = std::io::stdout();
    let send = |r: &Response| {
        let mut out = stdout.lock();
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(r).expect("responses serialise")
        );
        let _ = out.flush();
    };
    let mut dev = match open_in_process(&sel) {
        Ok(d) => d,
        Err(e) => {
            send(&Response::Failed {
                message: e.to_string(),
            });
            return Ok(());
        }
    };
    send(&Response::Ready {
        info: dev.info().clone(),
        hw: Box::new(dev.hw_spec().clone()),
    });
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let req: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                send(&Response::Failed {
                    message: format!("bad request: {e}"),
                });
                continue;
            }
        };
        let reply = match req {
            Request::SetProblem { problem, timing } => match dev.set_problem(&problem, &timing) {
                Ok(()) => Response::Done,
                Err(e) => Response::Failed {
                    message: e.to_string(),
                },
            },
            Request::RunKernel { kernel, timing } => Response::Outcome {
                outcome: dev.run_kernel(&kernel, &timing),
                poisoned: dev.is_poisoned(),
            },
            Request::RunVendor { timing } => Response::Outcome {
                outcome: dev.run_vendor(&timing),
                poisoned: dev.is_poisoned(),
            },
        };
        let poisoned = matches!(reply, Response::Outcome { poisoned: true, .. });
        send(&reply);
        if poisoned {
            // A faulted context cannot be trusted; a fresh process takes over.
            std::process::exit(3);
        }
    }
    Ok(())
}
