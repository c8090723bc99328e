//! The multi-device queue: one thread per device index, each owning the context it opened
//! (a device worker process, a compiler, a results-database connection), all pulling jobs
//! from one shared queue.
//!
//! Flow: [`DevicePool::open`] starts the threads; each opens its context in the thread (so
//! nothing that is not `Send` crosses threads) and reports back; if any device fails to open,
//! the pool is shut down and the first error is returned. [`DevicePool::map`] then pushes
//! jobs onto the shared queue; whichever thread is free takes the next one, so a device that
//! finishes early never idles while work is left, and results come back tagged with their
//! job index and the device that ran them. The pool can run several `map` phases (baselines,
//! then tuning) on the same open devices.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::WorkloadError;

type Task<C> = Box<dyn FnOnce(&mut C) + Send>;

struct Queue<C> {
    tasks: VecDeque<Task<C>>,
    closed: bool,
}

struct Shared<C> {
    queue: Mutex<Queue<C>>,
    ready: Condvar,
}

/// One thread per device, each with its own context `C`, fed from one queue.
pub struct DevicePool<C> {
    shared: Arc<Shared<C>>,
    threads: Vec<JoinHandle<()>>,
    indices: Vec<u32>,
}

/// A job's result with the device that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Done<R> {
    pub device: u32,
    pub value: R,
}

impl<C: 'static> DevicePool<C> {
    /// Starts one thread per index; each calls `open(index)` to build its context. Fails
    /// with the first device that could not be opened (all threads are stopped then).
    pub fn open<F>(indices: &[u32], open: F) -> Result<Self, WorkloadError>
    where
        F: Fn(u32) -> Result<C, String> + Send + Sync + 'static,
    {
        if indices.is_empty() {
            return Err(WorkloadError::Usage("no device to run on".into()));
        }
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                tasks: VecDeque::new(),
                closed: false,
            }),
            ready: Condvar::new(),
        });
        let open = Arc::new(open);
        let (tx, rx) = mpsc::channel::<(u32, Result<(), String>)>();
        let mut threads = Vec::new();
        for &index in indices {
            let shared = Arc::clone(&shared);
            let open = Arc::clone(&open);
            let tx = tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("device-{index}"))
                .spawn(move || {
                    let mut ctx = match open(index) {
                        Ok(c) => {
                            let _ = tx.send((index, Ok(())));
                            c
                        }
                        Err(e) => {
                            let _ = tx.send((index, Err(e)));
                            return;
                        }
                    };
                    drop(tx);
                    while let Some(task) = next_task(&shared) {
                        // A panicking job loses its own result (which `map` reports) but
                        // must not take the device's remaining jobs down with it.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            task(&mut ctx)
                        }));
                    }
                })
                .map_err(|e| WorkloadError::Io {
                    what: "starting a device thread".into(),
                    source: e,
                })?;
            threads.push(handle);
        }
        drop(tx);
        let mut pool = DevicePool {
            shared,
            threads,
            indices: indices.to_vec(),
        };
        let mut first_error = None;
        for _ in indices {
            match rx.recv() {
                Ok((_, Ok(()))) => {}
                Ok((index, Err(e))) => {
                    first_error.get_or_insert(WorkloadError::Device { index, message: e });
                }
                Err(_) => {
                    first_error.get_or_insert(WorkloadError::Thread(
                        "a device thread stopped while opening its device".into(),
                    ));
                }
            }
        }
        match first_error {
            Some(e) => {
                pool.shutdown();
                Err(e)
            }
            None => Ok(pool),
        }
    }

    /// The device indices, in the order given.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Runs `f` on every job, each on whichever device is free first. Results come back in
    /// job order. Fails only if a job panicked (its result is missing).
    pub fn map<J, R, F>(&self, jobs: Vec<J>, f: F) -> Result<Vec<Done<R>>, WorkloadError>
    where
        J: Send + 'static,
        R: Send + 'static,
        F: Fn(&mut C, u32, J) -> R + Send + Sync + 'static,
        C: DeviceIndex,
    {
        let n = jobs.len();
        let f = Arc::new(f);
        let (tx, rx) = mpsc::channel::<(usize, Done<R>)>();
        {
            let mut q = lock(&self.shared.queue);
            for (i, job) in jobs.into_iter().enumerate() {
                let f = Arc::clone(&f);
                let tx = tx.clone();
                q.tasks.push_back(Box::new(move |ctx: &mut C| {
                    let device = ctx.device_index();
                    let value = f(ctx, device, job);
                    let _ = tx.send((i, Done { device, value }));
                }));
            }
        }
        drop(tx);
        self.shared.ready.notify_all();
        let mut out: Vec<Option<Done<R>>> = (0..n).map(|_| None).collect();
        for _ in 0..n {
            match rx.recv() {
                Ok((i, done)) => out[i] = Some(done),
                // Every sender is gone before all results came: a job panicked.
                Err(_) => break,
            }
        }
        let got = out.iter().filter(|o| o.is_some()).count();
        if got < n {
            return Err(WorkloadError::Thread(format!(
                "a job failed unexpectedly ({got} of {n} jobs finished)"
            )));
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn shutdown(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.ready.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl<C> Drop for DevicePool<C> {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.ready.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A context knows which device index it drives (results are tagged with it).
pub trait DeviceIndex {
    fn device_index(&self) -> u32;
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking job poisons nothing we rely on: the queue is consistent between pushes.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Blocks until a task is available; `None` once the pool is closed and drained.
fn next_task<C>(shared: &Shared<C>) -> Option<Task<C>> {
    let mut q = lock(&shared.queue);
    loop {
        if let Some(t) = q.tasks.pop_front() {
            return Some(t);
        }
        if q.closed {
            return None;
        }
        q = shared.ready.wait(q).unwrap_or_else(|p| p.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Ctx(u32);
    impl DeviceIndex for Ctx {
        fn device_index(&self) -> u32 {
            self.0
        }
    }

    #[test]
    fn every_device_takes_work_and_results_keep_job_order() {
        let pool = DevicePool::open(&[0, 1, 2, 3], |i| Ok(Ctx(i))).unwrap();
        let done = pool
            .map((0..16).collect(), |_ctx, _dev, j: u64| {
                // Long enough that no single thread can drain the queue alone.
                std::thread::sleep(Duration::from_millis(20));
                j * 10
            })
            .unwrap();
        assert_eq!(
            done.iter().map(|d| d.value).collect::<Vec<_>>(),
            (0..16).map(|j| j * 10).collect::<Vec<_>>()
        );
        let mut used: Vec<u32> = done.iter().map(|d| d.device).collect();
        used.sort();
        used.dedup();
        assert_eq!(used, vec![0, 1, 2, 3]);
        // A second phase runs on the same open devices.
        let again = pool.map(vec![1, 2], |c, _, j: u32| c.0 + j).unwrap();
        assert_eq!(again.len(), 2);
    }

    #[test]
    fn a_device_that_cannot_open_fails_the_pool() {
        let err = DevicePool::open(&[0, 7], |i| {
            if i == 7 {
                Err("device index 7 does not exist".to_string())
            } else {
                Ok(Ctx(i))
            }
        })
        .err()
        .unwrap();
        assert!(err.to_string().contains("7"), "{err}");
    }

    #[test]
    fn a_panicking_job_is_an_error_not_a_hang() {
        let pool = DevicePool::open(&[0], |i| Ok(Ctx(i))).unwrap();
        let r = pool.map(vec![1, 2, 3], |_, _, j: u32| {
            if j == 2 {
                panic!("boom");
            }
            j
        });
        assert!(r.is_err());
    }
}
