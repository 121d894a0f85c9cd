//! Names of the layout-2 refs (docs/format.md, *Sync layout*): this clone's writer id, the writer ref of a
//! shared ref and back, and the remote-tracking names a fetch writes.

use crate::kit::error::{Error, Result};
use crate::store::refs::WRITERS;

pub(super) fn tracking_prefixes(remote: &str) -> [(String, &'static str); 2] {
    [
        (format!("refs/remotes/{remote}/jules/"), "refs/jules/"),
        (
            format!("refs/remotes/{remote}/notes/jules/"),
            "refs/notes/jules/",
        ),
    ]
}

/// This clone's writer id (16 hex digits), made once and kept in `.git/jules/writer-id`. Losing the file only
/// means a new writer ref next time; the old one is folded and deleted like any other.
pub fn writer_id(repo: &gix::Repository) -> Result<String> {
    let dir = crate::kit::repo::jules_dir(repo);
    let path = dir.join("writer-id");
    let valid = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Ok(text) = std::fs::read_to_string(&path) {
        if valid(text.trim()) {
            return Ok(text.trim().to_owned());
        }
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let id: String = crate::store::eventlog::event::fresh_nonce()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    let id = format!("{id:0>16}");
    // Write aside, then link into place: concurrent first syncs agree on whichever id landed first.
    let tmp = dir.join(format!("writer-id.{}.tmp", std::process::id()));
    std::fs::write(&tmp, format!("{id}\n")).map_err(|e| Error::io("writing the writer id", e))?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(id),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if valid(text.trim()) {
                Ok(text.trim().to_owned())
            } else {
                Err(Error::Other(format!(
                    "{} does not hold a writer id; remove it and sync again",
                    path.display()
                )))
            }
        }
        Err(e) => Err(Error::io(format!("creating {}", path.display()), e)),
    }
}

/// The writer ref of `shared` (`refs/jules/mail` or `refs/notes/jules/x`) for `writer`.
pub fn writer_ref(shared: &str, writer: &str) -> String {
    for prefix in ["refs/notes/jules/", "refs/jules/"] {
        if let Some(rest) = shared.strip_prefix(prefix) {
            return format!("{prefix}{WRITERS}{rest}/{writer}");
        }
    }
    format!("{shared}/{WRITERS}{writer}")
}

/// The shared ref and writer id of a writer ref name, `None` if `name` is not one.
pub fn shared_of_writer(name: &str) -> Option<(String, &str)> {
    for prefix in ["refs/notes/jules/", "refs/jules/"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            let (log, writer) = rest.strip_prefix(WRITERS)?.rsplit_once('/')?;
            return (!log.is_empty() && !writer.is_empty())
                .then(|| (format!("{prefix}{log}"), writer));
        }
    }
    None
}

/// The remote-tracking ref of a local jules log or notes ref.
pub fn tracking_name(remote: &str, name: &str) -> String {
    name.replacen("refs/jules/", &format!("refs/remotes/{remote}/jules/"), 1)
        .replacen(
            "refs/notes/jules/",
            &format!("refs/remotes/{remote}/notes/jules/"),
            1,
        )
}
