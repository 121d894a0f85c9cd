//! What can be woven, and turning what the user gave into ordered lists of commits or patches.
//!
//! - A branch or any revision `X` (`jules/curator/tidy`, `origin/jules/curator/tidy`, a tag, an id): the
//!   commits reachable from `X` but neither from the base tip nor from the integration branch, oldest
//!   first, following first parents (a merge commit is taken relative to its first parent). A persona who
//!   rebased onto the integration branch therefore contributes exactly their own new commits.
//! - A range `A..B`: the commits of `A..B`, oldest first, following first parents.
//! - A patch file: `git format-patch` output, an mbox of several such mails, or a plain unified diff; a
//!   directory stands for its `*.patch`, `*.diff`, `*.mbox` and `*.eml` files in name order.
//!
//! An input is all or nothing: if one of its commits or patches does not apply, none of them is woven.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::Serialize;

use super::mbox::{self, Mail, MailPatch, Skipped};
use super::persona::{self, PersonaMap, PersonaSource};
use crate::kit::error::{Error, Result};

/// An input as the caller names it.
#[derive(Debug, Clone)]
pub enum Spec {
    /// A revision or a range `A..B`.
    Rev(String),
    /// A patch file or a directory of them; `label` is how the user wrote it.
    File { path: PathBuf, label: String },
}

impl Spec {
    /// An input as a user names it: a file or directory that exists (relative to `dir`) is patches,
    /// anything else a revision or range.
    pub fn from_arg(dir: &std::path::Path, arg: &str) -> Spec {
        let path = dir.join(arg);
        if path.exists() {
            Spec::File {
                path,
                label: arg.to_owned(),
            }
        } else {
            Spec::Rev(arg.to_owned())
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A local or remote-tracking branch.
    Branch,
    /// Any other revision (a tag, a commit id).
    Commit,
    Range,
    Patch,
    /// A recorded series version `PERSONA/NAME@vN` (issue 26): its patches, base..tip.
    Series,
}

/// One commit to pick.
#[derive(Debug, Clone)]
pub struct CommitItem {
    pub id: ObjectId,
    /// The tree of its first parent (the empty tree for a root commit).
    pub parent_tree: ObjectId,
    pub tree: ObjectId,
    pub author: gix::actor::Signature,
    pub message: String,
}

/// One change of an input.
#[derive(Debug, Clone)]
pub enum Item {
    Commit(CommitItem),
    Patch(Box<MailPatch>),
    /// A mail with nothing to apply (a cover letter, an empty patch): reported, or kept with `--empty`.
    Skipped(Box<Skipped>),
}

impl Item {
    /// What `Woven-id` records for it.
    pub fn key(&self) -> String {
        match self {
            Item::Commit(c) => c.id.to_string(),
            Item::Patch(p) => format!("patch-{}", &p.fingerprint[..40]),
            Item::Skipped(s) => format!("empty-{}", &mbox::fingerprint_text(&s.message)[..40]),
        }
    }

    pub fn summary(&self) -> String {
        let m = match self {
            Item::Commit(c) => c.message.as_str(),
            Item::Patch(p) => p.message.as_str(),
            Item::Skipped(s) => s.name.as_str(),
        };
        m.lines().next().unwrap_or_default().trim().to_owned()
    }

    pub fn message(&self) -> &str {
        match self {
            Item::Commit(c) => &c.message,
            Item::Patch(p) => &p.message,
            Item::Skipped(s) => &s.message,
        }
    }
}

/// A loaded input.
#[derive(Debug, Clone)]
pub struct Input {
    /// 1-based position among the inputs as given (after `--branches` expansion).
    pub given: usize,
    pub label: String,
    pub kind: Kind,
    pub items: Vec<Item>,
    pub persona: Option<(String, PersonaSource)>,
    /// The input could not be read (a broken patch file): it is reported and skipped.
    pub error: Option<String>,
    /// For patch files: the path, for the fix instructions.
    pub path: Option<PathBuf>,
    /// For ranges: the lower end as given.
    pub range_from: Option<String>,
}

/// Local branches whose short name matches `glob`, in name order; integration and staging branches and
/// `exclude` (the integration branch itself) are left out.
pub fn expand_branches(repo: &gix::Repository, glob: &str, exclude: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let refs = repo.references()?;
    for r in refs.local_branches()? {
        let r = r.map_err(|e| Error::wrap("listing branches", e))?;
        let full = r.name().as_bstr().to_string();
        let short = full.trim_start_matches("refs/heads/").to_owned();
        if full == exclude
            || short.starts_with("jules/integration/")
            || short.starts_with("jules/staging/")
        {
            continue;
        }
        if persona::glob(glob, &short) {
            out.push(short);
        }
    }
    out.sort();
    Ok(out)
}

/// Resolve and read every input. `base` and `start` are hidden from branch inputs. A name that is neither
/// a file nor a revision is a usage error; a file that cannot be parsed becomes an input with an error.
pub fn load(
    repo: &gix::Repository,
    specs: &[Spec],
    base: ObjectId,
    start: ObjectId,
    map: Option<&PersonaMap>,
    read: mbox::ReadOptions,
) -> Result<Vec<Input>> {
    let mut out = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let mut input = match spec {
            Spec::Rev(rev) => load_rev(repo, rev, base, start)?,
            Spec::File { path, label } => load_file(path, label, read)?,
        };
        input.given = i + 1;
        input.persona = resolve_persona(map, &input);
        let mapped = matches!(input.persona, Some((_, PersonaSource::Map)));
        if input.kind == Kind::Series && !mapped {
            // The version's ref names its persona, more surely than an author name does.
            let persona = input.label.split('/').next().unwrap_or_default().to_owned();
            input.persona = Some((persona, PersonaSource::Branch));
        }
        out.push(input);
    }
    Ok(out)
}

fn resolve_persona(map: Option<&PersonaMap>, input: &Input) -> Option<(String, PersonaSource)> {
    let author = input.items.iter().find_map(|it| match it {
        Item::Commit(c) => Some((c.author.name.to_string(), c.author.email.to_string())),
        Item::Patch(p) => p.author.clone(),
        Item::Skipped(_) => None,
    });
    let branch = matches!(input.kind, Kind::Branch | Kind::Commit).then_some(input.label.as_str());
    let clues = persona::Clues {
        label: &input.label,
        branch,
        messages: input.items.iter().map(Item::message).collect(),
        author: author.as_ref().map(|(n, e)| (n.as_str(), e.as_str())),
    };
    persona::resolve(map, &clues)
}

fn load_file(path: &Path, label: &str, read: mbox::ReadOptions) -> Result<Input> {
    let mut input = Input {
        given: 0,
        label: label.to_owned(),
        kind: Kind::Patch,
        items: Vec::new(),
        persona: None,
        error: None,
        path: Some(path.to_owned()),
        range_from: None,
    };
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| Error::io(format!("reading directory {}", path.display()), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension().is_some_and(|x| {
                        matches!(x.to_str(), Some("patch" | "diff" | "mbox" | "eml"))
                    })
            })
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(Error::usage(format!(
                "{label}: the directory holds no *.patch, *.diff, *.mbox or *.eml file"
            )));
        }
        v
    } else {
        vec![path.to_owned()]
    };
    for f in files {
        let text =
            std::fs::read(&f).map_err(|e| Error::io(format!("reading {}", f.display()), e))?;
        match mbox::read_with(&text, read) {
            Ok(mails) => input.items.extend(mails.into_iter().map(|m| match m {
                Mail::Patch(p) => Item::Patch(Box::new(p)),
                Mail::Skipped(s) => Item::Skipped(Box::new(s)),
            })),
            Err(e) => {
                input.error = Some(if f == path {
                    e
                } else {
                    format!("{}: {e}", f.display())
                });
                break;
            }
        }
    }
    Ok(input)
}

fn resolve(repo: &gix::Repository, rev: &str) -> Result<ObjectId> {
    crate::capabilities::series::resolve_commit(repo, crate::kit::error::Thing::Revision, rev)
        .map_err(|e| match e {
            Error::NotFound { .. } => {
                Error::usage(format!("no such branch, commit or patch file: {rev}"))
            }
            other => other,
        })
}

/// The version a `PERSONA/NAME@vN` input names: always with `@`, or `PERSONA/NAME` (its latest version) when
/// no revision has that name. The label keeps the version number, so reports and mails say what was woven.
fn series_input(repo: &gix::Repository, rev: &str) -> Result<Option<Input>> {
    use crate::capabilities::series::version;
    if rev.contains("..") || !rev.contains('/') {
        return Ok(None);
    }
    if !rev.contains('@')
        && crate::capabilities::series::resolve_commit(
            repo,
            crate::kit::error::Thing::Revision,
            rev,
        )
        .is_ok()
    {
        return Ok(None);
    }
    let Ok((id, n)) = version::parse_spec(rev) else {
        return Ok(None);
    };
    if n.is_none() && version::versions(repo, &id).is_err() {
        return Ok(None);
    }
    let v = version::find(repo, &id, n)?;
    // A version whose signature does not verify is not its persona's: weaving it would put a forgery into
    // the integration branch under that persona's name (issue 40). Only a version nothing could have signed
    // (unsigned, from a persona no key is listed for) is woven unverified; `jules.requireSigned` refuses even
    // that, in `version::find`.
    if let Some(state) = v
        .signature
        .as_ref()
        .filter(|s| !s.is_verified() && **s != crate::store::sign::State::Unsigned)
    {
        return Err(Error::usage(format!(
            "{}: not verified for {}: {}; weave takes a version only from its persona's key",
            version::label(&v),
            v.record.persona,
            state.describe()
        )));
    }
    version::require_objects(repo, &v)?;
    let mut input = Input {
        given: 0,
        label: format!("{id}@v{}", v.record.number),
        kind: Kind::Series,
        items: Vec::new(),
        persona: None,
        error: None,
        path: None,
        range_from: Some(v.record.base.commit.clone()),
    };
    for c in first_parent_range(repo, v.tip()?, &[v.base()?])? {
        input.items.push(Item::Commit(commit_item(repo, c)?));
    }
    Ok(Some(input))
}

fn load_rev(repo: &gix::Repository, rev: &str, base: ObjectId, start: ObjectId) -> Result<Input> {
    if let Some(input) = series_input(repo, rev)? {
        return Ok(input);
    }
    let mut input = Input {
        given: 0,
        label: rev.to_owned(),
        kind: Kind::Commit,
        items: Vec::new(),
        persona: None,
        error: None,
        path: None,
        range_from: None,
    };
    let (tip, hidden) = if let Some((a, b)) = rev.split_once("..") {
        if b.starts_with('.') {
            return Err(Error::usage(format!(
                "{rev}: symmetric ranges (A...B) cannot be woven; use A..B"
            )));
        }
        let a_name = if a.is_empty() { "HEAD" } else { a };
        let b_name = if b.is_empty() { "HEAD" } else { b };
        input.kind = Kind::Range;
        input.range_from = Some(a_name.to_owned());
        (resolve(repo, b_name)?, vec![resolve(repo, a_name)?])
    } else {
        let tip = resolve(repo, rev)?;
        let short = rev.strip_prefix("refs/heads/").unwrap_or(rev);
        let is_branch = crate::store::refs::target(repo, &format!("refs/heads/{short}"))?.is_some()
            || crate::store::refs::target(repo, &format!("refs/remotes/{short}"))?.is_some()
            || rev.starts_with("refs/remotes/");
        if is_branch {
            input.kind = Kind::Branch;
        }
        (tip, vec![base, start])
    };
    for id in first_parent_range(repo, tip, &hidden)? {
        input.items.push(Item::Commit(commit_item(repo, id)?));
    }
    Ok(input)
}

/// The commits reachable from `tip` and from none of `hidden`, along first parents, oldest first.
pub fn first_parent_range(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
) -> Result<Vec<ObjectId>> {
    let mut set = HashSet::new();
    for info in repo
        .rev_walk([tip])
        .with_hidden(hidden.iter().copied())
        .all()?
    {
        let info = info.map_err(gix::Error::from_error)?;
        set.insert(info.id);
    }
    let mut chain = Vec::new();
    let mut cur = Some(tip);
    while let Some(id) = cur.filter(|id| set.contains(id)) {
        chain.push(id);
        cur = repo
            .find_commit(id)?
            .parent_ids()
            .next()
            .map(|p| p.detach());
    }
    chain.reverse();
    Ok(chain)
}

pub fn commit_item(repo: &gix::Repository, id: ObjectId) -> Result<CommitItem> {
    let c = repo.find_commit(id)?;
    let parent_tree = match c.parent_ids().next() {
        Some(p) => repo.find_commit(p)?.tree_id()?.detach(),
        None => crate::store::loose::empty_tree(repo)?,
    };
    let author = c.author()?;
    let author = gix::actor::Signature {
        name: author.name.into(),
        email: author.email.into(),
        time: author.time()?,
    };
    Ok(CommitItem {
        id,
        parent_tree,
        tree: c.tree_id()?.detach(),
        author,
        message: String::from_utf8_lossy(c.message_raw()?).into_owned(),
    })
}
