//! Waking on ref changes: inotify (through `notify`) on a repository's refs, shared by the long-running
//! frontends (`git jules mcp`'s new-mail notification, `git jules web`'s live pages).
//!
//! Every way events reach a clone moves a ref: a local append or sync moves `refs/jules/…`, a plain
//! `git fetch` moves `refs/remotes/<remote>/jules/…` or rewrites `packed-refs`. Nothing polls: with no ref
//! moving, the watcher sleeps.

use std::path::Path;

use notify::{RecursiveMode, Watcher};

use crate::kit::error::{Error, Result};

/// Call `on_change` on every change of a ref under `<common_dir>/refs` or of `packed-refs`; the returned
/// watcher stops when dropped. Bursts (a fetch moves several refs) reach `on_change` one by one: callers
/// debounce.
pub fn watch(
    common_dir: &Path,
    on_change: impl Fn() + Send + 'static,
) -> Result<notify::RecommendedWatcher> {
    let err = |e: notify::Error| Error::wrap(format!("watching {}", common_dir.display()), e);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            // Only changes: inotify also reports every open and close, and every reader opens refs, which
            // woke the watcher after each read and kept it waking itself.
            if is_change(&event.kind) && event.paths.iter().any(|p| is_ref_path(p)) {
                on_change();
            }
        }
    })
    .map_err(err)?;
    watcher
        .watch(&common_dir.join("refs"), RecursiveMode::Recursive)
        .map_err(err)?;
    // packed-refs lives beside refs/; watching the directory itself (not recursively) sees it replaced.
    watcher
        .watch(common_dir, RecursiveMode::NonRecursive)
        .map_err(err)?;
    Ok(watcher)
}

/// A creation, modification, rename or removal; not an access (open, read, close without writing).
fn is_change(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(m) => !matches!(m, notify::event::ModifyKind::Metadata(_)),
        EventKind::Access(_) => false,
    }
}

/// A path whose change can bring events: a ref under refs/ (lock files and the like excluded) or
/// packed-refs.
fn is_ref_path(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".lock") {
        return false;
    }
    name == "packed-refs" || path.components().any(|c| c.as_os_str() == "refs")
}
