//! `git jules guard`: the remote's `pre-receive` hook that keeps the shared logs append-only.
//!
//! A push is refused, with the reason shown to the pusher, when it would, under `refs/jules/*` or
//! `refs/notes/jules/*`:
//! - delete a log or notes ref (a writer ref of the sync layout may be deleted only when the shared ref, as
//!   it stands after this push, contains it: that is a fold, see [`crate::store::sync`]);
//! - move one to something that does not contain its old value (a force-push that drops history);
//! - point one at an object that is not a commit;
//! - add to a log (`refs/jules/*`) commits that are not valid events or merges (checked as strictly as
//!   `git jules log fsck`);
//! - with `--require-signed`, add to a log an event that is not verified for its actor under the remote's
//!   trust roots (`.jules/allowed_signers` at its `jules.trust.ref`, default `main`, as it stands before
//!   the push): unsigned, a bad signature, or a key not allowed for that persona;
//! - point a series version ref (`refs/jules/series/<persona>/<name>`) at anything but a version commit of
//!   that persona and series, and with `--require-signed`, add a version whose signature
//!   (`git-jules-series`, see [`crate::store::version_refs::signed_payload`]) is not verified for that persona;
//! - with `--require-signed`, add to `refs/notes/jules/checkpoints-signed` a manifest whose signature a
//!   checkpoint key of the trust roots did not make. (Other notes refs carry no signatures: they are only
//!   kept append-only.)
//!
//! Everything else passes: ordinary branches, and the fast-forwards, folds and writer-ref updates sync makes.
//!
//! The hook runs before the refs move, while the pushed objects sit in git's quarantine directory, which gix
//! cannot see; so the objects are read through the `git` binary, which the hook's environment points there.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use gix::ObjectId;

use crate::kit::error::{Error, Result};
use crate::store::eventlog::event::{decode_event, parse_message, Framed};

/// One line of a pre-receive hook's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub old: ObjectId,
    pub new: ObjectId,
    pub name: String,
}

/// The hook shim installed by [`install`] (also in `hooks/pre-receive`).
pub const HOOK: &str = include_str!("../../hooks/pre-receive");

/// Parse the hook's standard input: `<old> <new> <ref>` per line.
pub fn parse_updates(text: &str) -> Result<Vec<Update>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split_whitespace();
            let (Some(old), Some(new), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(Error::usage(format!("not a pre-receive line: {line:?}")));
            };
            let id = |s: &str| {
                ObjectId::from_hex(s.as_bytes())
                    .map_err(|_| Error::usage(format!("not an object id: {s:?}")))
            };
            Ok(Update {
                old: id(old)?,
                new: id(new)?,
                name: name.to_owned(),
            })
        })
        .collect()
}

fn guarded(name: &str) -> bool {
    name.starts_with("refs/jules/") || name.starts_with("refs/notes/jules/")
}

/// What the guard demands beyond append-only, valid commits.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Every event a push adds must be verified for its actor; `trust` holds the remote's trust roots
    /// (`None`: there are none, so no event can be verified).
    pub require_signed: bool,
    pub trust: Option<crate::store::sign::AllowedSigners>,
}

/// The remote's trust roots as the guard sees them: read through `git` (the hook runs with the pushed
/// objects in quarantine), from the trust ref as it stands before the push.
pub fn remote_trust(git_dir: &Path) -> Result<Option<crate::store::sign::AllowedSigners>> {
    let trust_ref = crate::kit::gitcli::command(git_dir)
        .args(["config", "jules.trust.ref"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "main".to_owned());
    let spec = format!("{trust_ref}:{}", crate::store::sign::TRUST_FILE);
    let Some(bytes) = cat_blob(git_dir, &spec)? else {
        return Ok(None);
    };
    let text =
        String::from_utf8(bytes).map_err(|_| Error::usage(format!("{spec} is not UTF-8")))?;
    Ok(Some(crate::store::sign::AllowedSigners::parse(
        &text, &spec,
    )?))
}

/// Why each refused update is refused (empty: the push passes). `git_dir` is the remote repository.
pub fn check(git_dir: &Path, updates: &[Update]) -> Result<Vec<String>> {
    check_with(git_dir, updates, &Options::default())
}

/// [`check`] with [`Options`].
pub fn check_with(git_dir: &Path, updates: &[Update], opts: &Options) -> Result<Vec<String>> {
    let mut refusals = Vec::new();
    for u in updates.iter().filter(|u| guarded(&u.name)) {
        if u.new.is_null() {
            if let Some(reason) = deletion_refused(git_dir, updates, u)? {
                refusals.push(reason);
            }
            continue;
        }
        let kind = git_text(git_dir, &["cat-file", "-t", &u.new.to_string()])?;
        if kind != "commit" {
            refusals.push(format!(
                "{}: {} is a {kind}, not a commit; logs and notes hold commits only",
                u.name, u.new
            ));
            continue;
        }
        if !u.old.is_null() && !is_ancestor(git_dir, u.old, u.new)? {
            refusals.push(format!(
                "{}: {} does not contain {} (a rewrite or force-push would drop history; \
                 `git jules sync` joins instead)",
                u.name, u.new, u.old
            ));
            continue;
        }
        // Series versions (issue 26): fast-forward only, like logs (checked above), and the new tip must be
        // a version commit.
        if u.name.starts_with(crate::store::version_refs::PREFIX) {
            if let Some(why) = not_a_version(git_dir, u.new)? {
                refusals.push(format!(
                    "{}: {} is not a series version: {why}",
                    u.name, u.new
                ));
            } else {
                refusals.extend(
                    unverified_versions(git_dir, u, opts)?
                        .into_iter()
                        .map(|why| format!("{}: {why}", u.name)),
                );
            }
            continue;
        }
        if opts.require_signed && checkpoints_signed(&u.name) {
            refusals.extend(
                unverified_checkpoints(git_dir, u, opts)?
                    .into_iter()
                    .map(|why| format!("{}: {why}", u.name)),
            );
            continue;
        }
        if u.name.starts_with("refs/jules/") {
            refusals.extend(
                invalid_commits(git_dir, u, opts)?
                    .into_iter()
                    .map(|(c, why)| format!("{}: commit {c} {why}", u.name)),
            );
        }
    }
    Ok(refusals)
}

/// Why `id` is not a series version commit (its tree's record), `None` when it is one.
fn not_a_version(git_dir: &Path, id: ObjectId) -> Result<Option<String>> {
    let spec = format!("{id}:{}", crate::store::version_refs::RECORD_FILE);
    let Some(record) = cat_blob(git_dir, &spec)? else {
        return Ok(Some(format!(
            "its tree has no {}",
            crate::store::version_refs::RECORD_FILE
        )));
    };
    Ok(
        match serde_json::from_slice::<crate::store::version_refs::Record>(&record) {
            Ok(r) if r.format == crate::store::version_refs::FORMAT => None,
            Ok(r) => Some(format!("unknown record format {}", r.format)),
            Err(e) => Some(format!("bad record: {e}")),
        },
    )
}

/// The versions `u` adds (from its new tip back along first parents to its old value, or to v1) whose
/// record does not belong on this ref, and under `--require-signed` those not verified for their persona.
fn unverified_versions(git_dir: &Path, u: &Update, opts: &Options) -> Result<Vec<String>> {
    let mut bad = Vec::new();
    let expected = u
        .name
        .strip_prefix(crate::store::version_refs::PREFIX)
        .and_then(|rest| rest.split_once('/'))
        .map(|(p, n)| (p.to_owned(), n.to_owned()));
    let mut next = Some(u.new);
    while let Some(id) = next.take() {
        if id == u.old {
            break;
        }
        let raw = git_bytes(git_dir, &["cat-file", "commit", &id.to_string()])?;
        let (header, message) = match raw.windows(2).position(|w| w == b"\n\n") {
            Some(at) => (&raw[..at], &raw[at + 2..]),
            None => (&raw[..], &raw[..0]),
        };
        let header = String::from_utf8_lossy(header);
        let first_parent = header
            .lines()
            .find_map(|l| l.strip_prefix("parent "))
            .and_then(|p| ObjectId::from_hex(p.trim().as_bytes()).ok());
        let time = header
            .lines()
            .find_map(|l| l.strip_prefix("committer "))
            .and_then(|l| l.rsplit(' ').nth(1))
            .and_then(|t| t.parse::<i64>().ok())
            .unwrap_or(0);
        let record = cat_blob(
            git_dir,
            &format!("{id}:{}", crate::store::version_refs::RECORD_FILE),
        )?
        .unwrap_or_default();
        let cover = cat_blob(
            git_dir,
            &format!("{id}:{}", crate::store::version_refs::COVER_FILE),
        )?
        .unwrap_or_default();
        let (rec, state) = match crate::store::version_refs::check_version(
            opts.trust.as_ref(),
            &crate::store::version_refs::VersionCommit {
                message,
                first_parent,
                time,
                record: &record,
                cover: &cover,
            },
        ) {
            Ok(r) => r,
            Err(why) => {
                bad.push(format!("{id} is not a series version: {why}"));
                break;
            }
        };
        if expected.as_ref() != Some(&(rec.persona.clone(), rec.name.clone())) {
            bad.push(format!(
                "{id} holds a version of {}/{}, not of this ref's series",
                rec.persona, rec.name
            ));
            break;
        }
        if opts.require_signed && !state.is_verified() {
            bad.push(format!(
                "version {} ({id}) is not verified for {}: {} (the remote requires signed series \
                 versions; trust roots: {})",
                rec.number,
                rec.persona,
                state.describe(),
                crate::store::sign::TRUST_FILE
            ));
        }
        if rec.number > 1 {
            next = first_parent;
        }
    }
    Ok(bad)
}

/// Whether `name` is the signed checkpoints' notes ref or one of its writer refs.
fn checkpoints_signed(name: &str) -> bool {
    let shared =
        crate::store::sync::shared_of_writer(name).map_or_else(|| name.to_owned(), |(s, _)| s);
    shared == crate::store::eventlog::checkpoint::SIGNED_REF
}

/// The signed checkpoint manifests `u` brings that the remote does not hold yet (blobs of the new value's
/// tree reachable from no ref of the remote), each that is not signed by a key the remote's trust roots allow
/// to sign checkpoints now: why it is refused. Manifests the remote already holds are not judged again, so a
/// key revoked since does not block every later push of the ref.
fn unverified_checkpoints(git_dir: &Path, u: &Update, opts: &Options) -> Result<Vec<String>> {
    let listed = git_text(
        git_dir,
        &[
            "rev-list",
            "--objects",
            &u.new.to_string(),
            "--not",
            "--all",
        ],
    )?;
    let fresh: std::collections::HashSet<&str> = listed
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(id, _)| id))
        .collect();
    // Readers read the notes tree at the tip: its manifests are what a push adds. (One replaced by a later
    // notes commit stays in history, unread.)
    let tree = git_text(git_dir, &["ls-tree", "-r", &u.new.to_string()])?;
    let mut bad = Vec::new();
    for line in tree.lines() {
        // `<mode> blob <id>\t<path>`
        let mut fields = line.split_whitespace();
        let (Some(_mode), Some("blob"), Some(id)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !fresh.contains(id) {
            continue;
        }
        let data = git_bytes(git_dir, &["cat-file", "blob", id])?;
        let (body, signature) = crate::store::eventlog::checkpoint::split_signature(&data);
        let state = match signature {
            None => crate::store::sign::State::Unsigned,
            Some(sig) => {
                crate::store::sign::verdict::check_checkpoint(opts.trust.as_ref(), body, sig)
            }
        };
        if !state.is_verified() {
            bad.push(format!(
                "signed checkpoint manifest {id} is not verified: {} (the remote requires signatures; \
                 a checkpoint key's line in {} must name namespaces=\"{}\")",
                state.describe(),
                crate::store::sign::TRUST_FILE,
                crate::store::sign::CHECKPOINT_NAMESPACE
            ));
        }
    }
    Ok(bad)
}

fn git_bytes(git_dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    Ok(crate::kit::gitcli::run(git_dir, args)?.stdout)
}

/// The blob `spec` (`<rev>:<path>`) names, through `git` (the quarantine is visible to it); `None` when
/// there is none.
fn cat_blob(git_dir: &Path, spec: &str) -> Result<Option<Vec<u8>>> {
    let out = crate::kit::gitcli::command(git_dir)
        .args(["cat-file", "blob", spec])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| Error::io("running `git cat-file`", e))?;
    Ok(out.status.success().then_some(out.stdout))
}

fn deletion_refused(git_dir: &Path, updates: &[Update], u: &Update) -> Result<Option<String>> {
    let Some((shared, _)) = crate::store::sync::shared_of_writer(&u.name) else {
        return Ok(Some(format!(
            "{}: deleting a log or notes ref would drop its history",
            u.name
        )));
    };
    // The shared ref's value after this push: updated in it, or as it stands.
    let after = match updates.iter().find(|x| x.name == shared) {
        Some(x) if x.new.is_null() => None,
        Some(x) => Some(x.new),
        None => {
            let out = crate::kit::gitcli::command(git_dir)
                .args([
                    "rev-parse",
                    "--verify",
                    "-q",
                    &format!("{shared}^{{commit}}"),
                ])
                .output()
                .map_err(|e| Error::io("running `git rev-parse`", e))?;
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<ObjectId>()
                .ok()
        }
    };
    match after {
        Some(after) if is_ancestor(git_dir, u.old, after)? => Ok(None),
        _ => Ok(Some(format!(
            "{}: a writer ref may only be deleted once {shared} contains it",
            u.name
        ))),
    }
}

fn is_ancestor(git_dir: &Path, a: ObjectId, b: ObjectId) -> Result<bool> {
    let status = crate::kit::gitcli::command(git_dir)
        .args([
            "merge-base",
            "--is-ancestor",
            &a.to_string(),
            &b.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| Error::io("running `git merge-base`", e))?;
    Ok(status.success())
}

fn git_text(git_dir: &Path, args: &[&str]) -> Result<String> {
    let out = crate::kit::gitcli::run(git_dir, args)?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The commits this update adds that no ref of the remote holds yet, each with why it is not a valid event.
fn invalid_commits(git_dir: &Path, u: &Update, opts: &Options) -> Result<Vec<(String, String)>> {
    let list = git_text(git_dir, &["rev-list", &u.new.to_string(), "--not", "--all"])?;
    let ids: Vec<&str> = list.lines().filter(|l| !l.is_empty()).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = crate::kit::gitcli::command(git_dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| Error::io("running `git cat-file --batch`", e))?;
    let input = ids.iter().map(|i| format!("{i}\n")).collect::<String>();
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| Error::io("running `git cat-file --batch`", e))?;
    let _ = writer.join();
    let data = out.stdout;
    let mut bad = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let Some(nl) = data[pos..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&data[pos..pos + nl]).into_owned();
        pos += nl + 1;
        let mut fields = header.split_whitespace();
        let (Some(id), Some(_kind), Some(size)) = (fields.next(), fields.next(), fields.next())
        else {
            break;
        };
        let size: usize = size.parse().unwrap_or(0);
        let body = &data[pos..(pos + size).min(data.len())];
        pos += size + 1;
        if let Err(why) = check_commit(body) {
            bad.push((id.to_owned(), format!("is not a valid event: {why}")));
        } else if opts.require_signed {
            let message = body
                .windows(2)
                .position(|w| w == b"\n\n")
                .map_or(&body[..0], |at| &body[at + 2..]);
            if let Some((eid, actor, state)) =
                crate::store::eventlog::signed::check_event(opts.trust.as_ref(), message)
            {
                if !state.is_verified() {
                    bad.push((
                        id.to_owned(),
                        format!(
                            "holds event {} by {actor}, not verified for {actor}: {} \
                             (the remote requires signed events; trust roots: {})",
                            eid.short(12),
                            state.describe(),
                            crate::store::sign::TRUST_FILE
                        ),
                    ));
                }
            }
        }
    }
    Ok(bad)
}

/// The strict check `log fsck` applies, on a raw commit object.
fn check_commit(raw: &[u8]) -> std::result::Result<(), String> {
    let split = raw
        .windows(2)
        .position(|w| w == b"\n\n")
        .ok_or("no message")?;
    let parents = raw[..split]
        .split(|b| *b == b'\n')
        .filter(|l| l.starts_with(b"parent "))
        .count();
    match parse_message(&raw[split + 2..]).map_err(|e| e.to_string())? {
        Framed::Merge { .. } if parents < 2 => {
            Err("merge commit with fewer than two parents".into())
        }
        Framed::Merge { .. } => Ok(()),
        Framed::Event { .. } if parents > 1 => Err(format!("event commit with {parents} parents")),
        Framed::Event {
            json, claimed_id, ..
        } => decode_event(json, claimed_id, true)
            .map(|_| ())
            .map_err(|e| e.to_string()),
    }
}

/// Install the hook into the bare (or not) repository at `git_dir`: `hooks/pre-receive`, executable. Refuses
/// to replace a different hook already there.
pub fn install(git_dir: &Path) -> Result<std::path::PathBuf> {
    let hooks = git_dir.join("hooks");
    std::fs::create_dir_all(&hooks)
        .map_err(|e| Error::io(format!("creating {}", hooks.display()), e))?;
    let path = hooks.join("pre-receive");
    if let Ok(existing) = std::fs::read_to_string(&path) {
        if existing != HOOK {
            return Err(Error::usage(format!(
                "{} exists and is not git-jules' guard: call `git jules guard` from it instead",
                path.display()
            )));
        }
    }
    std::fs::write(&path, HOOK).map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io(format!("making {} executable", path.display()), e))?;
    Ok(path)
}
