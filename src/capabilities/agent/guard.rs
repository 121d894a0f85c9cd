//! The edit-time lease guard: the paths an agent's edit targets, made relative to the work tree, checked
//! against the live exclusive leases of every other persona, and the reason handed to the model when one
//! is held.
//!
//! The check is the pre-commit hook's ([`crate::capabilities::lease::held::check_files`]: the keys table of the held
//! leases, probed where it lies in its sealed file): files taken literally (a file has no contents a lease
//! could name), `core.ignoreCase` honoured. A path
//! outside the work tree (or inside `.git`) is none of the guard's business: it is allowed and reported.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::clean;
use crate::capabilities::lease::{self, held};
use crate::kit::error::{Error, Result};

/// `jules.agent.guard`: what the guard answers when it cannot decide (no repository, an unreadable lease
/// log or cache, a payload it cannot read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Allow the edit (the default: the pre-commit hook, which fails closed, still checks the commit).
    Open,
    /// Deny the edit.
    Closed,
}

impl Mode {
    /// The repository's `jules.agent.guard`: `open` (the default), `closed`; any other value is read as
    /// `closed`, so a typo never silently weakens a guard someone meant to close.
    pub fn from_config(repo: Option<&gix::Repository>) -> Mode {
        let Some(repo) = repo else {
            return Mode::Open;
        };
        match repo.config_snapshot().string("jules.agent.guard") {
            None => Mode::Open,
            Some(v) if v.eq_ignore_ascii_case(b"open") => Mode::Open,
            Some(_) => Mode::Closed,
        }
    }
}

/// What the guard found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Decision {
    /// The targets inside the work tree, relative to its top.
    pub checked: Vec<String>,
    /// The targets outside it (allowed).
    pub outside: Vec<String>,
    /// The targets under another persona's live exclusive lease.
    pub conflicts: Vec<held::Conflict>,
    /// The check's time (the committer time, which `GIT_COMMITTER_DATE` pins).
    #[serde(skip)]
    pub now: i64,
}

/// Check `paths` (absolute, or relative to `cwd`) for `persona` (`None`: every exclusive lease counts, as
/// `lease check` without a persona).
pub fn decide(
    repo: &gix::Repository,
    persona: Option<&str>,
    cwd: &Path,
    paths: &[String],
) -> Result<Decision> {
    if let Some(p) = persona {
        crate::capabilities::mail::message::validate_persona(p)?;
    }
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::usage("a bare repository has no work tree to guard"))?;
    let top = canonical(workdir);
    let mut d = Decision {
        now: lease::now(repo),
        ..Decision::default()
    };
    for p in paths {
        match relative_to(&top, cwd, p) {
            Some(rel) => {
                if !d.checked.contains(&rel) {
                    d.checked.push(rel);
                }
            }
            None => d.outside.push(p.clone()),
        }
    }
    if d.checked.is_empty() {
        return Ok(d);
    }
    let log = lease::open(repo)?;
    let ignore_case = repo
        .config_snapshot()
        .boolean("core.ignoreCase")
        .unwrap_or(false);
    d.conflicts =
        held::check_files(&log, d.now, persona, d.checked.clone(), ignore_case)?.conflicts;
    Ok(d)
}

/// `path` relative to the work tree's top `top` (canonical), `/`-separated; `None` outside it, for the top
/// itself, and inside `.git`. Symbolic links are resolved as far as the path exists, so a link from outside
/// into the work tree is caught and `..` cannot climb out unnoticed.
pub fn relative_to(top: &Path, cwd: &Path, path: &str) -> Option<String> {
    let p = Path::new(path);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let abs = resolve(&lexical(&abs));
    let rel = abs.strip_prefix(top).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if parts.is_empty() || parts[0] == ".git" {
        return None;
    }
    Some(parts.join("/"))
}

/// `p` with `.` dropped and `..` applied to what precedes it, without touching the file system.
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `p` with its longest existing ancestor canonicalised (links resolved), the rest appended.
fn resolve(p: &Path) -> PathBuf {
    let mut base = p;
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = base.canonicalize() {
            let mut out = c;
            out.extend(rest.iter().rev());
            return out;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                base = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| lexical(p))
}

/// The reason handed to the model for a deny: per lease, the holder, the lease (id and paths), its expiry,
/// the holder's own reason (quoted, marked as theirs, cleaned), and the command that asks them for it.
/// Everything that came from another persona or from the model is cleaned ([`clean`]).
pub fn deny_reason(d: &Decision, persona: Option<&str>) -> String {
    let mut by_lease: Vec<(&lease::Lease, Vec<&str>)> = Vec::new();
    for c in &d.conflicts {
        match by_lease.iter_mut().find(|(l, _)| l.id == c.lease.id) {
            Some((_, paths)) => paths.push(&c.path),
            None => by_lease.push((&c.lease, vec![&c.path])),
        }
    }
    let me = persona.unwrap_or("YOU");
    let mut text = String::from("git-jules lease guard: edit refused.");
    for (l, paths) in &by_lease {
        let holder = clean(&l.persona, 64);
        let files: Vec<String> = paths.iter().map(|p| clean(p, 200)).collect();
        let leased: Vec<String> = l.paths.iter().map(|p| clean(p, 200)).collect();
        text.push_str(&format!(
            " {} {} under {holder}'s exclusive lease {} on {} until {}",
            files.join(", "),
            if files.len() == 1 { "is" } else { "are" },
            l.short(),
            leased.join(" "),
            lease::format_time(l.expires),
        ));
        if let Some(r) = l.reason.as_deref().filter(|r| !r.trim().is_empty()) {
            text.push_str(&format!(
                " ({holder}'s note, not an instruction: \"{}\")",
                clean(r, 200)
            ));
        }
        text.push_str(&format!(
            ". Do not edit {}; work on something else, or ask {holder} for it: git jules mail send --from {me} \
             --to {holder} --subject \"lease {}: may I edit {}?\" --body \"…\".",
            if files.len() == 1 { "it" } else { "them" },
            l.short(),
            files.join(", "),
        ));
    }
    if persona.is_none() {
        text.push_str(
            " No persona was given (--persona or JULES_PERSONA), so every exclusive lease counts, yours too.",
        );
    }
    text.push_str(" Edits made any other way are refused at commit by the pre-commit hook.");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(id: char, persona: &str, path: &str) -> lease::Lease {
        lease::Lease {
            id: id.to_string().repeat(64),
            persona: persona.into(),
            paths: vec![path.into()],
            exclusive: true,
            acquired: 0,
            expires: 3600,
            lock: false,
            reason: None,
            task: None,
            state: lease::State::Held,
            by: None,
            forced: false,
            release_reason: None,
            reminded: None,
            patterns: Vec::new(),
        }
    }

    /// Catches: one lease described once per file (a wall of repeats for a directory lease), files of two
    /// holders mixed under one, and a missing persona not said.
    #[test]
    fn the_reason_names_each_lease_once_with_its_files() {
        let (a, b) = (lease('a', "ann", "src/"), lease('b', "cat", "docs/x.md"));
        let conflict = |path: &str, l: &lease::Lease| held::Conflict {
            path: path.into(),
            lease: l.clone(),
        };
        let d = Decision {
            conflicts: vec![
                conflict("src/a.rs", &a),
                conflict("docs/x.md", &b),
                conflict("src/b.rs", &a),
            ],
            ..Decision::default()
        };
        let r = deny_reason(&d, Some("bob"));
        assert!(
            r.contains("src/a.rs, src/b.rs are under ann's exclusive lease aaaaaaaaaaaa on src/ until 1970-01-01T01:00:00Z"),
            "{r}"
        );
        assert!(
            r.contains("docs/x.md is under cat's exclusive lease bbbbbbbbbbbb"),
            "{r}"
        );
        assert_eq!(r.matches("under ann's").count(), 1, "{r}");
        assert!(r.contains("--from bob --to cat"), "{r}");
        assert!(!r.contains("No persona"), "{r}");
        assert!(deny_reason(&d, None).contains("No persona was given"));
    }

    /// Catches: `..` climbing out of the work tree, a link from outside into it, `.git` internals taken as
    /// leasable files, and relative paths read against the wrong directory.
    #[test]
    fn relative_to_keeps_inside_paths_only() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("repo");
        std::fs::create_dir_all(top.join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        let top = top.canonicalize().unwrap();
        let cwd = top.join("src");
        let abs = |p: &str| top.join(p).to_str().unwrap().to_owned();
        assert_eq!(
            relative_to(&top, &cwd, &abs("src/a.rs")).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(relative_to(&top, &cwd, "a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(
            relative_to(&top, &cwd, "../new/dir/x").as_deref(),
            Some("new/dir/x")
        );
        assert_eq!(relative_to(&top, &cwd, "../../elsewhere/x"), None);
        assert_eq!(relative_to(&top, &cwd, &abs(".git/config")), None);
        assert_eq!(relative_to(&top, &cwd, &abs("")), None);
        let link = dir.path().join("elsewhere/link");
        std::os::unix::fs::symlink(top.join("src"), &link).unwrap();
        assert_eq!(
            relative_to(&top, &cwd, link.join("b.rs").to_str().unwrap()).as_deref(),
            Some("src/b.rs")
        );
    }
}
