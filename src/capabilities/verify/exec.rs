//! Running the user's command for one commit: `sh -c CMD` in its own process group, output to a file,
//! cancellable.
//!
//! The command gets its own process group so that cancelling it (a later commit after an earlier failure, or
//! Ctrl-C) reaches every process it started, not just the shell. The runner polls instead of blocking in
//! `wait`, so only the thread that owns the child ever signals its group, and never after reaping it (no race
//! with pid reuse). stdout and stderr go to one file, interleaved as written.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::Signal;

use crate::kit::error::{Error, Result};

/// Environment variables that would point the command at the user's repository instead of its worktree.
/// They are set when git-jules runs from a git hook.
const REPO_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
];

/// Remove the repository-locating variables from a command's environment.
pub fn isolate(cmd: &mut Command) -> &mut Command {
    for v in REPO_ENV {
        cmd.env_remove(v);
    }
    cmd
}

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    /// The command exited (or was killed by a signal it did not get from us).
    Exited {
        success: bool,
        exit_code: Option<i32>,
        signal: Option<i32>,
    },
    /// We stopped it because `cancel` said so.
    Cancelled,
}

#[derive(Debug)]
pub struct Run {
    pub ended: Ended,
    pub duration: Duration,
}

/// Run `command` with `sh -c` in `dir`, output to `log`, extra environment `env`. `cancel` is polled while
/// it runs; when it turns true the whole process group is terminated (SIGTERM, then SIGKILL after a second).
pub fn run(
    command: &str,
    dir: &Path,
    log: &Path,
    env: &[(&str, String)],
    cancel: &dyn Fn() -> bool,
) -> Result<Run> {
    let out = File::create(log).map_err(|e| Error::io(format!("creating {}", log.display()), e))?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io(format!("opening {}", log.display()), e))?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    isolate(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::io(format!("running `sh -c {command}`"), e))?;
    let ended = wait(&mut child, cancel)?;
    Ok(Run {
        ended,
        duration: started.elapsed(),
    })
}

fn wait(child: &mut Child, cancel: &dyn Fn() -> bool) -> Result<Ended> {
    // A pidfd turns readable the moment the child exits, so the exit is noticed at once and the thread sleeps
    // in between, waking only to look at `cancel`. Without one (a kernel before 5.3, a sandbox that filters
    // the call) we poll.
    let exit_fd = rustix::process::Pid::from_raw(child.id() as i32).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::io("waiting for the verify command", e))?
        {
            return Ok(Ended::Exited {
                success: status.success(),
                exit_code: status.code(),
                signal: status.signal(),
            });
        }
        if cancel() {
            terminate(child)?;
            return Ok(Ended::Cancelled);
        }
        match &exit_fd {
            Some(fd) => {
                // Cancellation is looked at every 10 ms; the exit wakes us at once.
                let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
                let tick = rustix::event::Timespec {
                    tv_sec: 0,
                    tv_nsec: 10_000_000,
                };
                // EINTR and the like: look again.
                let _ = rustix::event::poll(&mut fds, Some(&tick));
            }
            None => {
                // Noticing the exit late costs wall time, polling costs CPU: nap 1% of the time run so far
                // (0.5 ms to 10 ms), so a short command is noticed within a millisecond or two.
                let nap = (started.elapsed() / 100)
                    .clamp(Duration::from_micros(500), Duration::from_millis(10));
                std::thread::sleep(nap);
            }
        }
    }
}

/// SIGTERM to the child's process group, SIGKILL a second later if the shell is still there, then reap it.
fn terminate(child: &mut Child) -> Result<()> {
    let group = rustix::process::Pid::from_raw(child.id() as i32);
    signal_group(group, Signal::TERM);
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        if child
            .try_wait()
            .map_err(|e| Error::io("waiting for the verify command", e))?
            .is_some()
        {
            // The shell is gone; stragglers in its group get no grace.
            signal_group(group, Signal::KILL);
            return Ok(());
        }
        if Instant::now() >= deadline {
            signal_group(group, Signal::KILL);
            child
                .wait()
                .map_err(|e| Error::io("waiting for the verify command", e))?;
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal_group(group: Option<rustix::process::Pid>, signal: Signal) {
    // The group that `process_group(0)` created for our child, whose leader we have not reaped while it was
    // alive. Best effort: the group may be gone already.
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, signal);
    }
}

/// The last `max_lines` lines of `log`, reading at most `max_bytes` from its end.
pub fn tail(log: &Path, max_lines: usize, max_bytes: u64) -> String {
    let Ok(mut f) = File::open(log) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(max_bytes);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    if f.read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        lines.remove(0); // most likely cut in the middle
    }
    let keep = lines.len().saturating_sub(max_lines);
    lines[keep..].join("\n")
}
