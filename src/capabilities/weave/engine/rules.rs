//! The rules every object weave writes must pass, so that `git fsck --strict` (and so every remote with
//! `receive.fsckObjects`) accepts the integration branch. An input breaking one of them is reported and
//! skipped; the rest of the batch is woven.
//!
//! Paths (git's `verify_path` for `git apply`, and fsck's tree checks):
//! - relative, not empty, not ending in `/`, no empty, `.` or `..` component (fsck `hasDot`, `hasDotdot`,
//!   `emptyName`);
//! - no component that is `.git` as any file system may read it: any case, with trailing dots or spaces
//!   (NTFS), `git~1` (the NTFS short name), after a `\` (NTFS reads it as a separator), `.git` with
//!   characters HFS+ ignores (fsck `hasDotgit`). git on Linux does not protect HFS+ by default
//!   (`core.protectHFS`), so `git apply` takes that last form; weave refuses it so that a clone on a Mac
//!   is safe;
//! - no NUL byte (a tree entry name ends at NUL);
//! - no component longer than 4096 bytes (fsck `largePathname`, git's `fsck.largePathname` default);
//! - `.gitmodules` (any case, with NTFS variants) never a symbolic link (fsck `gitmodulesSymlink`).
//!
//! Author identities (fsck `fsck_ident`, and `git am`'s strict ident):
//! - a name and an email with no `<`, `>`, newline or NUL (fsck `badName`, `badEmail`, `nulInHeader`, and a
//!   header line that would end early);
//! - an email that is not empty (`git am`: "Patch does not have a valid e-mail address") and a name that is
//!   not empty (`git am`: "empty ident name not allowed").
//!
//! Commit messages: no NUL byte (git stops reading a commit message at NUL).

use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryKind;

/// The longest path component git accepts (`fsck.largePathname`).
pub const MAX_COMPONENT: usize = 4096;

/// A path a patch may write: see the module documentation for the rules. The error reads as `git apply`'s
/// (`invalid path '…'`) followed by the rule it breaks.
pub fn safe_path(path: &BString) -> std::result::Result<(), String> {
    let refuse = |why: &str| {
        Err(format!(
            "invalid path '{}': {why}",
            show_path(path.as_ref())
        ))
    };
    if path.is_empty() {
        return refuse("it is empty");
    }
    if path.starts_with(b"/") {
        return refuse("it is absolute (git apply refuses it too)");
    }
    if path.ends_with(b"/") {
        return refuse("it ends with / (git apply refuses it too)");
    }
    if path.contains(&0) {
        return refuse("it holds a NUL byte");
    }
    for c in path.split(|&b| b == b'/') {
        if c.is_empty() {
            return refuse("it has an empty component (git apply refuses it too)");
        }
        if c == b"." || c == b".." {
            return refuse(&format!(
                "it has a `{}` component (git apply refuses it too)",
                c.as_bstr()
            ));
        }
        if is_dotgit(c.as_bstr()) {
            return refuse(
                "git refuses a `.git` component in any case or spelling (git apply refuses it too; fsck hasDotgit)",
            );
        }
        if c.len() > MAX_COMPONENT {
            return refuse(&format!(
                "a component of {} bytes is longer than git accepts ({MAX_COMPONENT}, fsck largePathname)",
                c.len()
            ));
        }
    }
    Ok(())
}

/// A path for messages: whole when short, else its first 60 characters and its length.
pub fn show_path(path: &BStr) -> String {
    let s = path.to_str_lossy();
    if s.chars().count() > 80 {
        format!(
            "{}… ({} bytes)",
            s.chars().take(60).collect::<String>(),
            path.len()
        )
    } else {
        s.into_owned()
    }
}

/// Whether `path` may be written as `kind` (a `.gitmodules` symlink is refused).
pub fn safe_entry(path: &BString, kind: EntryKind) -> std::result::Result<(), String> {
    if kind == EntryKind::Link {
        let last = path.rsplit(|&b| b == b'/').next().unwrap_or_default();
        if is_named(last.as_bstr(), ".gitmodules", "gitmod~1") {
            return Err(format!(
                "refusing {path}: git refuses a .gitmodules that is a symbolic link (fsck gitmodulesSymlink)"
            ));
        }
    }
    Ok(())
}

/// `.git`, in the forms NTFS and HFS+ read as `.git`; NTFS also splits at `\`, so `x\.git` is one too
/// (git's `verify_path` checks after every backslash when `core.protectNTFS` is on, its default).
fn is_dotgit(c: &BStr) -> bool {
    c.split(|&b| b == b'\\')
        .any(|part| is_named(part.as_bstr(), ".git", "git~1"))
}

/// `c` names `name` once case, trailing dots and spaces (NTFS), and HFS+-ignored characters are gone, or is
/// the NTFS short name `short`.
fn is_named(c: &BStr, name: &str, short: &str) -> bool {
    let s = c.to_str_lossy();
    let cleaned: String = s
        .chars()
        .filter(|ch| {
            !matches!(*ch as u32,
                0x200C..=0x200F | 0x202A..=0x202E | 0x206A..=0x206F | 0xFEFF)
        })
        .collect();
    let lower = cleaned.to_lowercase();
    let lower = lower.split(':').next().unwrap_or_default();
    let trimmed = lower.trim_end_matches(['.', ' ']);
    trimmed == name || trimmed == short
}

pub fn mode_kind(mode: u32) -> std::result::Result<EntryKind, String> {
    match mode {
        0o100644 | 0o100664 | 0o100600 => Ok(EntryKind::Blob),
        0o100755 => Ok(EntryKind::BlobExecutable),
        0o120000 => Ok(EntryKind::Link),
        0o160000 => Err("submodule changes are not supported".into()),
        m => Err(format!("unsupported file mode {m:o}")),
    }
}

/// An author git can write and fsck accepts: see the module documentation.
pub fn check_ident(name: &str, email: &str) -> std::result::Result<(), String> {
    let bad = |s: &str| s.contains(['<', '>', '\n', '\0']);
    if email.trim().is_empty() {
        return Err(
            "the patch does not have a valid e-mail address (git am refuses it too)".into(),
        );
    }
    if name.trim().is_empty() {
        return Err(format!(
            "the author of the patch has an empty name (<{}>; git am refuses it too)",
            email.escape_debug()
        ));
    }
    if bad(name) || bad(email) {
        return Err(format!(
            "refusing the author \"{} <{}>\": a name or email holding <, >, a newline or NUL makes a commit git fsck rejects",
            name.escape_debug(),
            email.escape_debug()
        ));
    }
    Ok(())
}

/// A commit message git can read back whole.
pub fn check_message(message: &str) -> std::result::Result<(), String> {
    if message.contains('\0') {
        return Err("the commit message holds a NUL byte".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_git_refuses() {
        for bad in [
            "",
            "/abs",
            "a//b",
            "a/",
            "a/./b",
            "x\\.git\\y",
            "../x",
            ".git/config",
            "x/.GIT/y",
            ".git. /x",
            "GIT~1/x",
            ".g\u{200c}it/x",
            "a\0b",
        ] {
            assert!(safe_path(&bad.into()).is_err(), "{bad:?}");
        }
        let long = "x".repeat(MAX_COMPONENT + 1);
        assert!(safe_path(&long.as_str().into()).is_err());
        let ok = "x".repeat(MAX_COMPONENT);
        assert!(safe_path(&format!("d/{ok}").into()).is_ok());
        assert!(safe_path(&".gitignore".into()).is_ok());
        assert!(safe_path(&"a/.github/x".into()).is_ok());
        assert!(safe_entry(&".gitmodules".into(), EntryKind::Link).is_err());
        assert!(safe_entry(&".gitmodules".into(), EntryKind::Blob).is_ok());
    }

    #[test]
    fn idents_git_refuses() {
        assert!(check_ident("Eve", "eve@x").is_ok());
        assert!(check_ident("Eve <", "eve@x").is_err());
        assert!(check_ident("Eve\nEvil", "eve@x").is_err());
        assert!(check_ident("Eve\0", "eve@x").is_err());
        assert!(check_ident("Eve", "").is_err());
        assert!(check_ident("", "eve@x").is_err());
    }
}
