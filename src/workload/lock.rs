//! One run per output directory: `tune-log` and `merge` hold an exclusive lock on
//! `<out>/.gemmtune.lock` for as long as they run, so a second run on the same directory is
//! refused at once instead of tuning the same GEMMs again, overwriting the first run's reports
//! and, on a GPU, disturbing its timings. The lock is the operating system's (`flock`), so a
//! killed run releases it with its process; the file itself stays and only records the pid of
//! the last holder for the message.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::WorkloadError;

/// The lock file's name inside an output directory.
pub const LOCK_FILE: &str = ".gemmtune.lock";

/// Held while a run writes into its output directory; dropping it releases the lock.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// Takes the lock of `dir` (which must exist), or says which process holds it.
pub fn lock(dir: &Path) -> Result<DirLock, WorkloadError> {
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| WorkloadError::io(format!("cannot open {}", path.display()), e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(WorkloadError::file(
                dir,
                format!(
                    "another gemmtune run{} is writing to this output directory; wait for it to finish or give another --out",
                    if holder.is_empty() {
                        String::new()
                    } else {
                        format!(" (pid {holder})")
                    }
                ),
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(WorkloadError::io(
                format!("cannot lock {}", path.display()),
                e,
            ))
        }
    }
    // Only for the message a second run prints; the lock does not depend on it.
    let _ = file
        .set_len(0)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()));
    Ok(DirLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path()).unwrap();
        let err = lock(dir.path()).unwrap_err().to_string();
        assert!(err.contains("another gemmtune run"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        lock(dir.path()).unwrap();
    }
}
