//! `git jules guard`: the remote's `pre-receive` hook that keeps the shared logs append-only.
//!
//! A push is refused, with the reason shown to the pusher, when it would, under `refs/jules/*` or
//! `refs/notes/jules/*`:
//! - delete a log or notes ref (a writer ref of the sync layout may be deleted only when the shared ref, as
//!   it stands after this push, contains it: that is a fold, see [`crate::store::sync`]);
//! - move one to something that does not contain its old value (a force-push that drops history);
//! - point one at an object that is not a commit;
//! - add to a log (`refs/jules/*`) commits that are not valid events or merges (checked as strictly as
//!   `git jules log fsck`; a commit a log already holds is not judged again, one only another ref holds is);
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
/// tree reachable from neither the signed checkpoints' ref nor its writer refs), each that is not signed by a
/// key the remote's trust roots allow to sign checkpoints now: why it is refused. Manifests the remote already
/// holds are not judged again, so a key revoked since does not block every later push of the ref.
fn unverified_checkpoints(git_dir: &Path, u: &Update, opts: &Options) -> Result<Vec<String>> {
    // Held means held by the signed checkpoints (the shared ref or a writer ref), which judged it when it came:
    // not by any ref, or a first push to an ordinary branch, which nothing checks, would bring a manifest in
    // past the guard.
    let shared = crate::store::eventlog::checkpoint::SIGNED_REF;
    let writers = crate::store::sync::writer_ref(shared, "");
    let held = git_text(
        git_dir,
        &["for-each-ref", "--format=%(objectname)", shared, &writers],
    )?;
    let new = u.new.to_string();
    let mut args = vec!["rev-list", "--objects", &new, "--not"];
    args.extend(held.lines());
    let listed = git_text(git_dir, &args)?;
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

/// The commits this update adds that no log of the remote holds yet, each with why it is not a valid event.
fn invalid_commits(git_dir: &Path, u: &Update, opts: &Options) -> Result<Vec<(String, String)>> {
    // Held means held by a log (refs/jules/*, writer refs included), whose commits were judged when they came
    // (or came before the guard): not by any ref. An ordinary branch, a notes ref and a series version's code
    // parent are not checked as events, so a commit one of them brought in an earlier push is judged here.
    let list = git_text(
        git_dir,
        &[
            "rev-list",
            &u.new.to_string(),
            "--not",
            &format!("--exclude={}*", crate::store::version_refs::PREFIX),
            "--glob=refs/jules/*",
        ],
    )?;
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

#[cfg(test)]
mod tests {
    //! The guard on real bare repositories, without a hook or a push: [`check_with`] reads objects through
    //! the `git` binary, which sees the remote's normal objects as it sees quarantined ones. Commits are
    //! written with gix, refs moved with `git update-ref` (which runs no hook).
    use super::*;
    use crate::store::eventlog::event::{event_message, merge_message};
    use crate::store::eventlog::test_support::signed_event_message;
    use crate::store::eventlog::EventId;
    use crate::store::sign::AllowedSigners;
    use gix::objs::tree::{Entry, EntryKind};
    use ssh_key::{rand_core::OsRng, Algorithm, PrivateKey};
    use std::path::PathBuf;

    /// A bare repository standing for the remote.
    struct Remote {
        _dir: tempfile::TempDir,
        path: PathBuf,
        repo: gix::Repository,
    }

    fn remote() -> Remote {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.git");
        let repo = gix::init_bare(&path).unwrap();
        Remote {
            _dir: dir,
            path,
            repo,
        }
    }

    /// A fixed committer time: a version's signature covers it.
    const TIME: i64 = 1_700_000_000;

    impl Remote {
        fn blob(&self, bytes: &[u8]) -> ObjectId {
            self.repo.write_blob(bytes).unwrap().detach()
        }

        /// A tree of the blobs `files` (name, content), sorted as git wants.
        fn tree(&self, files: &[(&str, &[u8])]) -> ObjectId {
            let mut entries: Vec<Entry> = files
                .iter()
                .map(|(name, bytes)| Entry {
                    mode: EntryKind::Blob.into(),
                    filename: (*name).into(),
                    oid: self.blob(bytes),
                })
                .collect();
            entries.sort_by(|a, b| a.filename.cmp(&b.filename));
            self.repo
                .write_object(&gix::objs::Tree { entries })
                .unwrap()
                .detach()
        }

        fn commit_tree(&self, tree: ObjectId, parents: &[ObjectId], message: &[u8]) -> ObjectId {
            let who = crate::kit::repo::persona_signature("alice", gix::date::Time::new(TIME, 0));
            self.repo
                .write_object(&gix::objs::Commit {
                    tree,
                    parents: parents.iter().copied().collect(),
                    author: who.clone(),
                    committer: who,
                    encoding: None,
                    message: message.into(),
                    extra_headers: Vec::new(),
                })
                .unwrap()
                .detach()
        }

        /// A commit with `message` on `parents` and the empty tree.
        fn commit(&self, message: &[u8], parents: &[ObjectId]) -> ObjectId {
            self.commit_tree(self.tree(&[]), parents, message)
        }

        /// An event commit by `actor` (signed with `key` when given) on `parents`.
        fn event(&self, actor: &str, key: Option<&PrivateKey>, parents: &[ObjectId]) -> ObjectId {
            self.commit(&signed_event_message(actor, key, None).1, parents)
        }

        fn set(&self, name: &str, id: ObjectId) {
            crate::kit::gitcli::run(&self.path, ["update-ref", name, &id.to_string()]).unwrap();
        }

        fn check(&self, updates: &[Update]) -> Vec<String> {
            check(&self.path, updates).unwrap()
        }

        fn check_signed(&self, updates: &[Update], trust: Option<&AllowedSigners>) -> Vec<String> {
            let opts = Options {
                require_signed: true,
                trust: trust.cloned(),
            };
            check_with(&self.path, updates, &opts).unwrap()
        }
    }

    fn null() -> ObjectId {
        ObjectId::null(gix::hash::Kind::Sha1)
    }

    fn update(name: &str, old: Option<ObjectId>, new: Option<ObjectId>) -> Update {
        Update {
            old: old.unwrap_or_else(null),
            new: new.unwrap_or_else(null),
            name: name.to_owned(),
        }
    }

    fn key() -> PrivateKey {
        PrivateKey::random(&mut OsRng, Algorithm::Ed25519).unwrap()
    }

    fn fingerprint(key: &PrivateKey) -> String {
        key.public_key().fingerprint(Default::default()).to_string()
    }

    /// A trust line letting `key` sign as `persona` in `namespace`.
    fn trust_line(persona: &str, namespace: &str, key: &PrivateKey) -> String {
        format!(
            "{persona} namespaces=\"{namespace}\" {}\n",
            key.public_key().to_openssh().unwrap()
        )
    }

    fn trust(text: &str) -> AllowedSigners {
        AllowedSigners::parse(text, "t").unwrap()
    }

    const LOG: &str = "refs/jules/t";

    #[test]
    fn updates_are_parsed_line_by_line_and_bad_lines_refused() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let text = format!("\n{a} {b} refs/jules/t\n   \n{b}  {a}\trefs/heads/main\n\n");
        let parsed = parse_updates(&text).unwrap();
        let id = |s: &str| ObjectId::from_hex(s.as_bytes()).unwrap();
        assert_eq!(
            parsed,
            [
                Update {
                    old: id(&a),
                    new: id(&b),
                    name: "refs/jules/t".into()
                },
                Update {
                    old: id(&b),
                    new: id(&a),
                    name: "refs/heads/main".into()
                }
            ]
        );
        assert_eq!(parse_updates("").unwrap(), []);
        assert_eq!(parse_updates("\n \n").unwrap(), []);
        let err = |text: &str| parse_updates(text).unwrap_err().to_string();
        assert!(
            err(&format!("{a} {b}")).contains(&format!("not a pre-receive line: \"{a} {b}\"")),
            "{}",
            err(&format!("{a} {b}"))
        );
        assert!(err(&format!("{a} xyz refs/jules/t")).contains("not an object id: \"xyz\""));
        assert!(err(&format!("{} {b} refs/jules/t", "g".repeat(40)))
            .contains(&format!("not an object id: \"{}\"", "g".repeat(40))));
    }

    /// Outside `refs/jules/*` and `refs/notes/jules/*` anything passes: a deletion, a rewrite, a blob.
    #[test]
    fn unguarded_refs_pass_whatever_they_do() {
        let r = remote();
        let one = r.event("alice", None, &[]);
        let two = r.event("alice", None, &[one]);
        let other = r.commit(b"not an event", &[]);
        let blob = r.blob(b"x");
        for name in [
            "refs/heads/main",
            "refs/julesx/t",
            "refs/notes/commits",
            "refs/notes/julesx/t",
        ] {
            r.set(name, two);
            for (old, new) in [
                (Some(two), None),
                (Some(two), Some(other)),
                (Some(two), Some(blob)),
                (None, Some(other)),
            ] {
                assert_eq!(r.check(&[update(name, old, new)]), Vec::<String>::new());
            }
        }
    }

    /// A new log of events and joins, then a fast-forward, pass; several commits in one update are each read
    /// (a valid one after another).
    #[test]
    fn valid_events_and_merges_pass() {
        let r = remote();
        let root = r.event("alice", None, &[]);
        let left = r.event("alice", None, &[root]);
        let right = r.event("bob", None, &[root]);
        let join = r.commit(&merge_message(2), &[left, right]);
        let tip = r.event("alice", None, &[join]);
        assert_eq!(
            r.check(&[update(LOG, None, Some(tip))]),
            Vec::<String>::new()
        );
        r.set(LOG, tip);
        let next = r.event("bob", None, &[tip]);
        let after = r.event("bob", None, &[next]);
        assert_eq!(
            r.check(&[update(LOG, Some(tip), Some(after))]),
            Vec::<String>::new()
        );
        // The same commits on the notes side: no event check there.
        assert_eq!(
            r.check(&[update("refs/notes/jules/x", None, Some(after))]),
            Vec::<String>::new()
        );
        // Nothing new: a ref moved to a commit another ref holds.
        assert_eq!(
            r.check(&[update("refs/jules/u", None, Some(tip))]),
            Vec::<String>::new()
        );
    }

    /// Each kind of invalid commit, named by id; a valid commit above an invalid one does not hide it, and
    /// the valid one is not refused. A commit some ref already holds is not judged again.
    #[test]
    fn invalid_commits_are_refused_among_those_no_ref_holds() {
        let r = remote();
        let root = r.event("alice", None, &[]);
        r.set(LOG, root);

        let bad_json = {
            let json = b"{\"v\":1,";
            let id = EventId::of(json);
            r.commit(&event_message("t.x", json, &id, 1, None), &[root])
        };
        let above = r.event("alice", None, &[bad_json]);
        let lone_merge = r.commit(&merge_message(2), &[root]);
        let side = r.event("bob", None, &[root]);
        let two_parents = r.event("alice", None, &[root, side]);
        let mismatch = {
            let (_, msg) = signed_event_message("alice", None, None);
            let msg = String::from_utf8(msg)
                .unwrap()
                .replacen("\"n\":1", "\"n\":2", 1);
            r.commit(msg.as_bytes(), &[root])
        };
        let prose = r.commit(b"just a commit\n", &[root]);
        let out = r.check(&[
            update("refs/jules/a", Some(root), Some(above)),
            update("refs/jules/b", Some(root), Some(lone_merge)),
            update("refs/jules/c", Some(root), Some(two_parents)),
            update("refs/jules/d", Some(root), Some(mismatch)),
            update("refs/jules/e", Some(root), Some(prose)),
        ]);
        assert_eq!(out.len(), 5, "{out:#?}");
        assert!(
            out[0].starts_with(&format!(
                "refs/jules/a: commit {bad_json} is not a valid event: bad event JSON: "
            )),
            "{out:#?}"
        );
        assert_eq!(
            out[1],
            format!("refs/jules/b: commit {lone_merge} is not a valid event: merge commit with fewer than two parents")
        );
        assert_eq!(
            out[2],
            format!("refs/jules/c: commit {two_parents} is not a valid event: event commit with 2 parents")
        );
        assert!(
            out[3].starts_with(&format!(
                "refs/jules/d: commit {mismatch} is not a valid event: event id mismatch: message says "
            )),
            "{out:#?}"
        );
        assert!(
            out[4].starts_with(&format!(
                "refs/jules/e: commit {prose} is not a valid event: not an event commit: subject "
            )),
            "{out:#?}"
        );

        // Once a log holds the bad commits (an old log, from before the guard), what is added above them is
        // all that is judged.
        r.set("refs/jules/old", above);
        let next = r.event("alice", None, &[above]);
        assert_eq!(
            r.check(&[update("refs/jules/a", Some(root), Some(next))]),
            Vec::<String>::new()
        );
        assert_eq!(
            r.check(&[update("refs/jules/a", None, Some(above))]),
            Vec::<String>::new()
        );
    }

    /// Only what a log already holds is spared: a commit that an ordinary branch, a notes ref or a series
    /// version ref brought in an earlier push (where nothing checked it) is judged when a log takes it, and a
    /// manifest is judged unless the signed checkpoints already hold it. Otherwise a first push to an
    /// unguarded ref would let any commit or manifest into a log past the guard.
    #[test]
    fn commits_held_only_outside_the_logs_are_judged() {
        let r = remote();
        let alice = key();
        let roots = trust(&format!(
            "{}{}",
            trust_line("alice", crate::store::sign::NAMESPACE, &alice),
            trust_line("ops", crate::store::sign::CHECKPOINT_NAMESPACE, &alice)
        ));
        let root = r.event("alice", Some(&alice), &[]);
        r.set(LOG, root);
        let prose = r.commit(b"prose\n", &[root]);
        let (_, unsigned_msg) = signed_event_message("alice", None, None);
        let unsigned = r.commit(&unsigned_msg, &[root]);
        let manifest = b"format 2\nunsigned\n".to_vec();
        let manifest_id = r.blob(&manifest);
        let held = notes(&r, &[("m", &manifest)], &[]);
        // Earlier pushes, which nothing checked: a branch, a notes ref, a series version on the prose.
        r.set("refs/heads/smuggle", unsigned);
        r.set("refs/notes/jules/smuggle", prose);
        r.set("refs/heads/manifests", held);
        let v1 = version(&r, "alice", "s", 1, None, prose, None);
        r.set(SERIES, v1);

        let above = r.event("alice", Some(&alice), &[prose]);
        let out = r.check_signed(
            &[
                update(LOG, Some(root), Some(unsigned)),
                update("refs/jules/u", None, Some(above)),
            ],
            Some(&roots),
        );
        assert_eq!(out.len(), 2, "{out:#?}");
        assert!(
            out[0].starts_with(&format!("{LOG}: commit {unsigned} holds event ")),
            "{out:#?}"
        );
        assert_eq!(
            out[1],
            format!(
                "refs/jules/u: commit {prose} is not a valid event: not an event commit: subject \"prose\""
            )
        );
        let signed_ref = crate::store::eventlog::checkpoint::SIGNED_REF;
        assert_eq!(
            r.check_signed(&[update(signed_ref, None, Some(held))], Some(&roots)),
            [format!(
                "{signed_ref}: signed checkpoint manifest {manifest_id} is not verified: unsigned (the remote \
                 requires signatures; a checkpoint key's line in .jules/allowed_signers must name \
                 namespaces=\"git-jules-checkpoint\")"
            )]
        );
        // Held by a writer ref of the signed checkpoints, it is not judged again.
        r.set(&crate::store::sync::writer_ref(signed_ref, "w1"), held);
        assert_eq!(
            r.check_signed(&[update(signed_ref, None, Some(held))], Some(&roots)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn non_commits_and_rewrites_are_refused() {
        let r = remote();
        let one = r.event("alice", None, &[]);
        let two = r.event("alice", None, &[one]);
        let beside = r.event("bob", None, &[one]);
        r.set(LOG, two);
        let blob = r.blob(b"x");
        let tree = r.tree(&[("f", b"x")]);
        assert_eq!(
            r.check(&[
                update(LOG, Some(two), Some(blob)),
                update("refs/notes/jules/x", None, Some(tree)),
                update(LOG, Some(two), Some(beside)),
                update("refs/notes/jules/y", Some(two), Some(one)),
            ]),
            [
                format!("{LOG}: {blob} is a blob, not a commit; logs and notes hold commits only"),
                format!("refs/notes/jules/x: {tree} is a tree, not a commit; logs and notes hold commits only"),
                format!(
                    "{LOG}: {beside} does not contain {two} (a rewrite or force-push would drop history; \
                     `git jules sync` joins instead)"
                ),
                format!(
                    "refs/notes/jules/y: {one} does not contain {two} (a rewrite or force-push would drop \
                     history; `git jules sync` joins instead)"
                ),
            ]
        );
        // A fast-forward and a ref moved to where it is pass.
        let three = r.event("alice", None, &[two]);
        assert_eq!(
            r.check(&[
                update(LOG, Some(two), Some(three)),
                update(LOG, Some(two), Some(two))
            ]),
            Vec::<String>::new()
        );
    }

    /// A log or notes ref is never deleted; a writer ref only when the shared ref after the push (updated in
    /// it, or as it stands) contains it.
    #[test]
    fn deletions_are_refused_but_for_writer_refs_the_shared_ref_contains() {
        let r = remote();
        let one = r.event("alice", None, &[]);
        let two = r.event("alice", None, &[one]);
        let beside = r.event("bob", None, &[one]);
        let writer = crate::store::sync::writer_ref(LOG, "w1");
        let notes_writer = crate::store::sync::writer_ref("refs/notes/jules/x", "w1");
        r.set(LOG, one);
        r.set(&writer, two);

        let plain =
            |name: &str| format!("{name}: deleting a log or notes ref would drop its history");
        let uncontained = |name: &str, shared: &str| {
            format!("{name}: a writer ref may only be deleted once {shared} contains it")
        };
        assert_eq!(
            r.check(&[
                update(LOG, Some(one), None),
                update("refs/notes/jules/x", Some(one), None),
            ]),
            [plain(LOG), plain("refs/notes/jules/x")]
        );
        // The shared ref as it stands (one) does not contain the writer's two.
        assert_eq!(
            r.check(&[update(&writer, Some(two), None)]),
            [uncontained(&writer, LOG)]
        );
        // Moved to two in this push, it does.
        assert_eq!(
            r.check(&[
                update(LOG, Some(one), Some(two)),
                update(&writer, Some(two), None)
            ]),
            Vec::<String>::new()
        );
        // As it stands it does, alone in the push.
        r.set(LOG, two);
        assert_eq!(
            r.check(&[update(&writer, Some(two), None)]),
            Vec::<String>::new()
        );
        assert_eq!(
            r.check(&[update(&writer, Some(one), None)]),
            Vec::<String>::new()
        );
        // This push's value counts, not the one it replaces: moved (refused, a rewrite) to a commit that does
        // not contain the writer's.
        assert_eq!(
            r.check(&[
                update(LOG, Some(two), Some(beside)),
                update(&writer, Some(two), None)
            ]),
            [
                format!(
                    "{LOG}: {beside} does not contain {two} (a rewrite or force-push would drop history; \
                     `git jules sync` joins instead)"
                ),
                uncontained(&writer, LOG),
            ]
        );
        // Deleted in the same push: nothing contains it.
        assert_eq!(
            r.check(&[
                update(LOG, Some(two), None),
                update(&writer, Some(two), None)
            ]),
            [plain(LOG), uncontained(&writer, LOG)]
        );
        // A notes writer ref whose shared ref does not exist.
        assert_eq!(
            r.check(&[update(&notes_writer, Some(two), None)]),
            [uncontained(&notes_writer, "refs/notes/jules/x")]
        );
        r.set("refs/notes/jules/x", two);
        assert_eq!(
            r.check(&[update(&notes_writer, Some(two), None)]),
            Vec::<String>::new()
        );
    }

    /// Under `require_signed` every event a push adds must be verified for its actor; joins carry no
    /// signature and pass. Without trust roots nothing verifies.
    #[test]
    fn required_signatures_refuse_events_not_verified_for_their_actor() {
        let r = remote();
        let alice = key();
        let stranger = key();
        let roots = trust(&trust_line("alice", crate::store::sign::NAMESPACE, &alice));
        let root = r.event("alice", Some(&alice), &[]);
        r.set(LOG, root);

        let signed = r.event("alice", Some(&alice), &[root]);
        let signed2 = r.event("alice", Some(&alice), &[signed]);
        let side = r.event("alice", Some(&alice), &[root]);
        let join = r.commit(&merge_message(3), &[signed2, side]);
        assert_eq!(
            r.check_signed(&[update(LOG, Some(root), Some(join))], Some(&roots)),
            Vec::<String>::new()
        );

        let refused = |commit: ObjectId, msg: &[u8], actor: &str, state: &str| {
            let eid = match crate::store::eventlog::event::parse_message(msg) {
                Ok(Framed::Event { claimed_id, .. }) => claimed_id[..12].to_owned(),
                _ => unreachable!(),
            };
            format!(
                "{LOG}: commit {commit} holds event {eid} by {actor}, not verified for {actor}: {state} \
                 (the remote requires signed events; trust roots: .jules/allowed_signers)"
            )
        };
        let (_, unsigned_msg) = signed_event_message("alice", None, None);
        let unsigned = r.commit(&unsigned_msg, &[root]);
        let (_, bad_msg) = signed_event_message("alice", Some(&alice), Some(b"other bytes"));
        let bad = r.commit(&bad_msg, &[unsigned]);
        let (_, bob_msg) = signed_event_message("bob", Some(&alice), None);
        let bob = r.commit(&bob_msg, &[bad]);
        let (_, stranger_msg) = signed_event_message("alice", Some(&stranger), None);
        let strange = r.commit(&stranger_msg, &[bob]);
        let good = r.event("alice", Some(&alice), &[strange]);
        assert_eq!(
            r.check_signed(&[update(LOG, Some(root), Some(good))], Some(&roots)),
            [
                refused(
                    strange,
                    &stranger_msg,
                    "alice",
                    &format!("key {} not allowed for this actor", fingerprint(&stranger))
                ),
                refused(
                    bob,
                    &bob_msg,
                    "bob",
                    &format!("key {} not allowed for this actor", fingerprint(&alice))
                ),
                refused(bad, &bad_msg, "alice", "bad signature"),
                refused(
                    unsigned,
                    &unsigned_msg,
                    "alice",
                    "unsigned, but alice has a key: likely forged"
                ),
            ]
        );
        // Without trust roots, alice's own signature is not verified either.
        let (_, msg) = signed_event_message("alice", Some(&alice), None);
        let lone = r.commit(&msg, &[root]);
        assert_eq!(
            r.check_signed(&[update(LOG, Some(root), Some(lone))], None),
            [refused(
                lone,
                &msg,
                "alice",
                &format!("key {} not allowed for this actor", fingerprint(&alice))
            )]
        );
        // Not required: unsigned and badly signed events pass (they are valid events).
        assert_eq!(
            r.check(&[update(LOG, Some(root), Some(good))]),
            Vec::<String>::new()
        );
        // An invalid commit is refused as such, not also as unsigned.
        let prose = r.commit(b"prose\n", &[root]);
        assert_eq!(
            r.check_signed(&[update(LOG, Some(root), Some(prose))], Some(&roots)),
            [format!(
                "{LOG}: commit {prose} is not a valid event: not an event commit: subject \"prose\""
            )]
        );
    }

    /// A version commit of `persona`/`name` number `number` on `previous` (the version before, for v2 on)
    /// and `tip` (the series' code), signed with `key` when given, as `series record` writes one.
    fn version(
        r: &Remote,
        persona: &str,
        name: &str,
        number: u32,
        previous: Option<ObjectId>,
        tip: ObjectId,
        key: Option<&PrivateKey>,
    ) -> ObjectId {
        let rec = crate::store::version_refs::Record {
            format: crate::store::version_refs::FORMAT,
            persona: persona.into(),
            name: name.into(),
            number,
            base: crate::store::version_refs::BaseRecord {
                name: "main".into(),
                commit: tip.to_string(),
            },
            tip: tip.to_string(),
            patches: Vec::new(),
            dropped: Vec::new(),
        };
        let record = format!("{}\n", serde_json::to_string_pretty(&rec).unwrap());
        let cover = format!("{name} v{number}\n");
        let signature = key.map(|k| {
            let payload = crate::store::version_refs::signed_payload(
                &rec,
                previous,
                TIME,
                record.as_bytes(),
                cover.as_bytes(),
            );
            let sig = crate::store::sign::keys::sign_in(
                k,
                crate::store::sign::SERIES_NAMESPACE,
                &payload,
            )
            .unwrap();
            format!("{}{sig}\n", crate::store::sign::SIGNATURE_TRAILER)
        });
        let tree = r.tree(&[
            (crate::store::version_refs::COVER_FILE, cover.as_bytes()),
            (crate::store::version_refs::RECORD_FILE, record.as_bytes()),
        ]);
        let parents: Vec<ObjectId> = previous.into_iter().chain([tip]).collect();
        let message = format!(
            "series {name} v{number}\n\nJules-Series: {name}\nJules-Series-Version: {number}\n{}",
            signature.unwrap_or_default()
        );
        r.commit_tree(tree, &parents, message.as_bytes())
    }

    const SERIES: &str = "refs/jules/series/alice/s";

    /// A series version ref holds version commits of its own persona and series only, fast-forward; the
    /// versions a push adds are read back to its old value, or to v1 (whose parent is code).
    #[test]
    fn series_version_refs_hold_versions_of_their_series() {
        let r = remote();
        let code = r.commit(b"code\n", &[]);
        let v1 = version(&r, "alice", "s", 1, None, code, None);
        let v2 = version(&r, "alice", "s", 2, Some(v1), code, None);
        assert_eq!(
            r.check(&[update(SERIES, None, Some(v2))]),
            Vec::<String>::new()
        );

        let not_version =
            |id: ObjectId, why: &str| format!("{SERIES}: {id} is not a series version: {why}");
        let no_record = r.commit(b"series s v1\n", &[code]);
        let record = |text: &str| {
            r.commit_tree(r.tree(&[("series.json", text.as_bytes())]), &[code], b"x\n")
        };
        let v1_text = {
            let id = version(&r, "alice", "s", 1, None, code, None);
            String::from_utf8(
                crate::kit::gitcli::run(
                    &r.path,
                    ["cat-file", "blob", &format!("{id}:series.json")],
                )
                .unwrap()
                .stdout,
            )
            .unwrap()
        };
        let unknown = record(&v1_text.replacen("\"format\": 1", "\"format\": 2", 1));
        let garbage = record("{}");
        let out = r.check(&[
            update(SERIES, None, Some(no_record)),
            update(SERIES, None, Some(unknown)),
            update(SERIES, None, Some(garbage)),
        ]);
        assert_eq!(out.len(), 3, "{out:#?}");
        assert_eq!(
            out[0],
            not_version(no_record, "its tree has no series.json")
        );
        assert_eq!(out[1], not_version(unknown, "unknown record format 2"));
        assert!(
            out[2].starts_with(&not_version(garbage, "bad record: missing field `format`")),
            "{out:#?}"
        );

        // A version of another persona or series.
        let bobs = version(&r, "bob", "s", 1, None, code, None);
        let other = version(&r, "alice", "t", 1, None, code, None);
        assert_eq!(
            r.check(&[
                update(SERIES, None, Some(bobs)),
                update(SERIES, None, Some(other)),
                update("refs/jules/series/alice", None, Some(v1)),
            ]),
            [
                format!("{SERIES}: {bobs} holds a version of bob/s, not of this ref's series"),
                format!("{SERIES}: {other} holds a version of alice/t, not of this ref's series"),
                format!("refs/jules/series/alice: {v1} holds a version of alice/s, not of this ref's series"),
            ]
        );
        // v2 of alice on bob's v1: read back to v1 when the ref is new, not past the ref's old value.
        let on_bobs = version(&r, "alice", "s", 2, Some(bobs), code, None);
        assert_eq!(
            r.check(&[update(SERIES, None, Some(on_bobs))]),
            [format!(
                "{SERIES}: {bobs} holds a version of bob/s, not of this ref's series"
            )]
        );
        assert_eq!(
            r.check(&[update(SERIES, Some(bobs), Some(on_bobs))]),
            Vec::<String>::new()
        );
        // A version whose record does not parse, below the tip.
        let v2_on_garbage = version(&r, "alice", "s", 2, Some(garbage), code, None);
        let out = r.check(&[update(SERIES, None, Some(v2_on_garbage))]);
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(
            out[0].starts_with(&format!(
                "{SERIES}: {garbage} is not a series version: series.json is not a version record: "
            )),
            "{out:#?}"
        );
        // Not a fast-forward.
        let v1b = version(&r, "alice", "s", 1, None, r.commit(b"code 2\n", &[]), None);
        assert_eq!(
            r.check(&[update(SERIES, Some(v2), Some(v1b))]),
            [format!(
                "{SERIES}: {v1b} does not contain {v2} (a rewrite or force-push would drop history; \
                 `git jules sync` joins instead)"
            )]
        );
    }

    /// Under `require_signed` each version a push adds must be verified for its persona.
    #[test]
    fn required_signatures_refuse_versions_not_verified_for_their_persona() {
        let r = remote();
        let alice = key();
        let roots = trust(&trust_line(
            "alice",
            crate::store::sign::SERIES_NAMESPACE,
            &alice,
        ));
        let code = r.commit(b"code\n", &[]);
        let v1 = version(&r, "alice", "s", 1, None, code, Some(&alice));
        let v2 = version(&r, "alice", "s", 2, Some(v1), code, Some(&alice));
        assert_eq!(
            r.check_signed(&[update(SERIES, None, Some(v2))], Some(&roots)),
            Vec::<String>::new()
        );
        let unverified = |number: u32, id: ObjectId, state: &str| {
            format!(
                "{SERIES}: version {number} ({id}) is not verified for alice: {state} (the remote requires \
                 signed series versions; trust roots: .jules/allowed_signers)"
            )
        };
        let u1 = version(&r, "alice", "s", 1, None, code, None);
        let s2 = version(&r, "alice", "s", 2, Some(u1), code, Some(&alice));
        let u3 = version(&r, "alice", "s", 3, Some(s2), code, None);
        let forged = "unsigned, but alice has a key: likely forged";
        assert_eq!(
            r.check_signed(&[update(SERIES, None, Some(u3))], Some(&roots)),
            [unverified(3, u3, forged), unverified(1, u1, forged)]
        );
        // Back to the ref's old value only.
        assert_eq!(
            r.check_signed(&[update(SERIES, Some(u1), Some(s2))], Some(&roots)),
            Vec::<String>::new()
        );
        // Without trust roots nothing verifies; not required, unsigned versions pass.
        assert_eq!(
            r.check_signed(&[update(SERIES, None, Some(v1))], None),
            [unverified(
                1,
                v1,
                &format!("key {} not allowed for this actor", fingerprint(&alice))
            )]
        );
        assert_eq!(
            r.check(&[update(SERIES, None, Some(u3))]),
            Vec::<String>::new()
        );
    }

    /// A notes commit whose tree holds `manifests` (name, bytes) on `parents`.
    fn notes(r: &Remote, manifests: &[(&str, &[u8])], parents: &[ObjectId]) -> ObjectId {
        r.commit_tree(r.tree(manifests), parents, b"notes\n")
    }

    /// A manifest's text signed with `key` in the checkpoint namespace.
    fn manifest(text: &str, key: &PrivateKey) -> Vec<u8> {
        let sig = crate::store::sign::keys::sign_in(
            key,
            crate::store::sign::CHECKPOINT_NAMESPACE,
            text.as_bytes(),
        )
        .unwrap();
        format!("{text}signature {sig}\n").into_bytes()
    }

    /// Under `require_signed`, the signed checkpoints' notes ref (and its writer refs) takes only manifests
    /// signed by a checkpoint key; one the remote already holds is not judged again.
    #[test]
    fn signed_checkpoint_manifests_must_be_signed_by_a_checkpoint_key() {
        let r = remote();
        let ops = key();
        let stranger = key();
        let roots = trust(&trust_line(
            "ops",
            crate::store::sign::CHECKPOINT_NAMESPACE,
            &ops,
        ));
        let signed_ref = crate::store::eventlog::checkpoint::SIGNED_REF;
        let good = manifest("format 2\nfirst\n", &ops);
        let unsigned = b"format 2\nsecond\n".to_vec();
        let strange = manifest("format 2\nthird\n", &stranger);
        let unsigned_id = r.blob(&unsigned);
        let strange_id = r.blob(&strange);

        let refused = |name: &str, id: ObjectId, state: &str| {
            format!(
                "{name}: signed checkpoint manifest {id} is not verified: {state} (the remote requires \
                 signatures; a checkpoint key's line in .jules/allowed_signers must name \
                 namespaces=\"git-jules-checkpoint\")"
            )
        };
        let fine = notes(&r, &[("a", &good)], &[]);
        assert_eq!(
            r.check_signed(&[update(signed_ref, None, Some(fine))], Some(&roots)),
            Vec::<String>::new()
        );
        let mixed = notes(
            &r,
            &[("a", &good), ("b", &unsigned), ("c", &strange)],
            &[fine],
        );
        let writer = crate::store::sync::writer_ref(signed_ref, "w1");
        assert_eq!(
            r.check_signed(
                &[
                    update(signed_ref, None, Some(mixed)),
                    update(&writer, None, Some(mixed))
                ],
                Some(&roots)
            ),
            [
                refused(signed_ref, unsigned_id, "unsigned"),
                refused(
                    signed_ref,
                    strange_id,
                    &format!("key {} not allowed for this actor", fingerprint(&stranger))
                ),
                refused(&writer, unsigned_id, "unsigned"),
                refused(
                    &writer,
                    strange_id,
                    &format!("key {} not allowed for this actor", fingerprint(&stranger))
                ),
            ]
        );
        // Without trust roots no key may sign checkpoints.
        assert_eq!(
            r.check_signed(&[update(signed_ref, None, Some(fine))], None),
            [refused(
                signed_ref,
                r.blob(&good),
                &format!("key {} not allowed for this actor", fingerprint(&ops))
            )]
        );
        // Not required, or another notes ref: unsigned manifests pass.
        assert_eq!(
            r.check(&[update(signed_ref, None, Some(mixed))]),
            Vec::<String>::new()
        );
        assert_eq!(
            r.check_signed(
                &[update(
                    crate::store::eventlog::checkpoint::NOTES_REF,
                    None,
                    Some(mixed)
                )],
                Some(&roots)
            ),
            Vec::<String>::new()
        );
        // A manifest the remote already holds (a key revoked since signed it, or none did) is not judged
        // again: only the fresh one is.
        let held = notes(&r, &[("b", &unsigned)], &[]);
        r.set(signed_ref, held);
        let fresh = b"format 2\nfourth\n".to_vec();
        let later = notes(
            &r,
            &[("b", &unsigned), ("d", &fresh), ("a", &good)],
            &[held],
        );
        assert_eq!(
            r.check_signed(&[update(signed_ref, Some(held), Some(later))], Some(&roots)),
            [refused(signed_ref, r.blob(&fresh), "unsigned")]
        );
    }

    /// The trust roots: `.jules/allowed_signers` at `jules.trust.ref` (default `main`); none without the file.
    #[test]
    fn remote_trust_reads_the_file_at_the_trust_ref() {
        let r = remote();
        assert!(remote_trust(&r.path).unwrap().is_none(), "no main");
        let one = trust_line("alice", crate::store::sign::NAMESPACE, &key());
        crate::store::sign::commit_trust_on_main(&r.repo, &one);
        crate::kit::gitcli::run(
            &r.path,
            ["update-ref", "refs/heads/trust", "refs/heads/main"],
        )
        .unwrap();
        crate::kit::gitcli::run(&r.path, ["update-ref", "-d", "refs/heads/main"]).unwrap();
        assert!(remote_trust(&r.path).unwrap().is_none(), "main gone");
        let two = format!(
            "{one}{}",
            trust_line("bob", crate::store::sign::NAMESPACE, &key())
        );
        crate::store::sign::commit_trust_on_main(&r.repo, &two);
        assert_eq!(remote_trust(&r.path).unwrap().unwrap().entries.len(), 2);
        crate::kit::gitcli::run(&r.path, ["config", "jules.trust.ref", "trust"]).unwrap();
        assert_eq!(remote_trust(&r.path).unwrap().unwrap().entries.len(), 1);
        crate::kit::gitcli::run(&r.path, ["config", "jules.trust.ref", "refs/heads/none"]).unwrap();
        assert!(remote_trust(&r.path).unwrap().is_none(), "no such ref");
        // A main without the file.
        crate::kit::gitcli::run(&r.path, ["config", "jules.trust.ref", "code"]).unwrap();
        let code = r.commit(b"code\n", &[]);
        r.set("refs/heads/code", code);
        assert!(remote_trust(&r.path).unwrap().is_none(), "no file");
    }

    #[test]
    fn install_writes_the_hook_once_and_keeps_a_different_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join("r.git");
        let path = install(&git_dir).unwrap();
        assert_eq!(path, git_dir.join("hooks/pre-receive"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), HOOK);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(install(&git_dir).unwrap(), path, "the same hook again");
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        let err = install(&git_dir).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "{} exists and is not git-jules' guard",
                path.display()
            )),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#!/bin/sh\nexit 0\n"
        );
    }
}
