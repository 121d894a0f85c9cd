//! What a weave did, per input, and its Markdown rendering.
//!
//! The serialized [`Report`] is the `--json` contract, documented in `docs/weave.md`; `version` changes when
//! a field changes meaning or disappears, not when one is added.

use gix::ObjectId;
use serde::Serialize;

use super::input::Kind;
use super::mbox::Skipped;
use super::persona::PersonaSource;
use crate::capabilities::series::{ser_id, Base};

pub const REPORT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Woven: new commits on the integration branch.
    Applied,
    /// Nothing to do: every change of the input is already on the integration branch.
    Already,
    /// Skipped: it does not apply to the integration branch.
    Conflict,
    /// Woven, then removed again because it broke `--verify`.
    Dropped,
    /// Skipped: the input cannot be used (a broken or unsupported patch).
    Error,
    /// Nothing to apply: every mail of the input is a cover letter or an empty patch (listed in
    /// `skipped`).
    Skipped,
}

/// A commit weave wrote.
#[derive(Debug, Clone, Serialize)]
pub struct WovenCommit {
    /// The `Woven-id` of the change: the source commit id, or `patch-…` for a patch.
    pub source: String,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    pub summary: String,
}

/// An earlier woven input whose lines a failing hunk touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counterpart {
    pub input: String,
    pub persona: Option<String>,
    /// The woven commit (abbreviated) that carries it.
    pub commit: String,
    pub path: String,
    /// 1-based, inclusive, in the integration tip's lines.
    pub lines: [u32; 2],
}

#[derive(Debug, Clone, Serialize)]
pub struct HunkConflict {
    /// The hunk's header, `@@ -a,b +c,d @@`.
    pub header: String,
    /// Where its preimage lies in the integration tip (1-based, inclusive), as near as can be told.
    pub lines: [u32; 2],
    pub counterparts: Vec<Counterpart>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileConflict {
    pub path: String,
    /// What went wrong, in a few words ("content conflict", "does not exist in the integration branch", …).
    pub reason: String,
    pub hunks: Vec<HunkConflict>,
    /// Earlier inputs involved with the whole file (a deletion, an addition), when no hunk says more.
    pub counterparts: Vec<Counterpart>,
    /// Live exclusive leases on this path when the weave ran (`refs/jules/lease`): whose work it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leases: Vec<LeaseNote>,
}

/// A lease on a conflicting path.
#[derive(Debug, Clone, Serialize)]
pub struct LeaseNote {
    pub lease: String,
    pub persona: String,
    pub expires_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Why `--verify` dropped an input.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyFailure {
    pub command: String,
    /// The commit that failed: the integration tip right after this input.
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    pub exit_code: Option<i32>,
    /// The end of the command's output.
    pub tail: Option<String>,
}

/// What `--order smart` expects of an input.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub applies: bool,
    /// Other inputs touching the same lines (in their own base's coordinates), with the first shared place.
    pub overlaps: Vec<Overlap>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Overlap {
    pub input: String,
    pub path: String,
    pub lines: [u32; 2],
}

/// The mail weave sent (or would send) about an input.
#[derive(Debug, Clone, Serialize)]
pub struct MailNote {
    pub to: String,
    pub subject: String,
    #[serde(rename = "type")]
    pub msg_type: String,
    /// The thread name that makes the mail idempotent: `weave-<40 hex>`.
    pub thread: String,
    /// `sent`, `already-sent` (a mail with this thread exists), `not-sent` (`--check` or `--no-mail`).
    pub status: String,
    /// The message id, when sent by this run.
    pub id: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InputReport {
    /// 1-based position among the inputs as given.
    pub given: usize,
    /// 1-based position in the order they were tried.
    pub tried: usize,
    pub input: String,
    pub kind: Kind,
    pub persona: Option<String>,
    pub persona_from: Option<PersonaSource>,
    pub status: Status,
    /// Commits written (for `dropped`: the ones written before the drop; they are not on the branch).
    pub commits: Vec<WovenCommit>,
    /// Remarks: offsets hunks applied at, 3-way merges, changes found already present.
    pub notes: Vec<String>,
    pub conflicts: Vec<FileConflict>,
    /// Mails of the input with nothing to apply, by subject: `cover-letter` or `empty`. Kept as empty
    /// commits with `--empty=keep` (then not listed here).
    pub skipped: Vec<Skipped>,
    pub error: Option<String>,
    pub verify: Option<VerifyFailure>,
    pub prediction: Option<Prediction>,
    pub mail: Option<MailNote>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifySummary {
    pub command: String,
    /// The final tip passes.
    pub passed: bool,
    /// Commands run or answered from the cache while weaving (tips and bisection steps).
    pub checks: usize,
    /// The starting point (before this run's inputs) fails too: nothing could be blamed on an input.
    pub start_fails: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub version: u32,
    /// `--check`: nothing was written.
    pub check: bool,
    pub base: Base,
    /// The integration branch, short name, and its full ref.
    pub into: String,
    pub into_ref: String,
    /// Where the branch was before (absent: it did not exist).
    #[serde(serialize_with = "ser_opt_id")]
    pub previous: Option<ObjectId>,
    /// Where weaving started: the previous tip when it contains the base, else the base.
    #[serde(serialize_with = "ser_id")]
    pub start: ObjectId,
    /// The resulting tip and its tree.
    #[serde(serialize_with = "ser_id")]
    pub tip: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub tree: ObjectId,
    /// The previous tip, kept because the branch moved non-fast-forward.
    pub backup: Option<String>,
    /// `given` or `smart`.
    pub order: String,
    pub verify: Option<VerifySummary>,
    pub applied: Vec<InputReport>,
    pub already: Vec<InputReport>,
    pub conflicted: Vec<InputReport>,
    pub dropped: Vec<InputReport>,
    pub failed: Vec<InputReport>,
    /// Inputs with nothing to apply (only cover letters or empty patches).
    pub skipped: Vec<InputReport>,
}

fn ser_opt_id<S: serde::Serializer>(id: &Option<ObjectId>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.serialize_str(&id.to_string()),
        None => s.serialize_none(),
    }
}

impl Report {
    /// Everything applied (or was there already): exit 0; otherwise a check failed.
    pub fn clean(&self) -> bool {
        self.conflicted.is_empty()
            && self.dropped.is_empty()
            && self.failed.is_empty()
            && self.verify.as_ref().is_none_or(|v| v.passed)
    }

    /// Every input, in the order tried.
    pub fn inputs(&self) -> Vec<&InputReport> {
        let mut all: Vec<&InputReport> = self
            .applied
            .iter()
            .chain(&self.already)
            .chain(&self.conflicted)
            .chain(&self.dropped)
            .chain(&self.failed)
            .chain(&self.skipped)
            .collect();
        all.sort_by_key(|r| r.tried);
        all
    }

    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        md.push_str(&format!(
            "### Weave onto `{}`{} (base {} at {})\n\n",
            self.into,
            if self.check { " — check only" } else { "" },
            self.base.name,
            self.base.commit.to_hex_with_len(7)
        ));
        md.push_str("| # | input | persona | result | commits |\n|---:|---|---|---|---|\n");
        for r in self.inputs() {
            let result = match r.status {
                Status::Applied => "applied".to_owned(),
                Status::Already => "already woven".to_owned(),
                Status::Conflict => "**conflict**".to_owned(),
                Status::Dropped => "**dropped** (verify)".to_owned(),
                Status::Error => "**error**".to_owned(),
                Status::Skipped => "skipped".to_owned(),
            };
            let commits = r
                .commits
                .iter()
                .filter(|_| r.status == Status::Applied)
                .map(|c| format!("`{}`", c.commit.to_hex_with_len(7)))
                .collect::<Vec<_>>()
                .join(" ");
            md.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                r.tried,
                r.input.replace('`', "'"),
                r.persona.as_deref().unwrap_or("?"),
                result,
                commits
            ));
        }
        md.push('\n');
        for r in self.inputs() {
            let head = format!("`{}`", r.input.replace('`', "'"));
            match r.status {
                Status::Conflict => {
                    md.push_str(&format!("**{head}** does not apply:\n\n"));
                    md.push_str(&conflict_lines(&r.conflicts));
                    md.push('\n');
                }
                Status::Error => md.push_str(&format!(
                    "**{head}** cannot be used: {}\n\n",
                    r.error.as_deref().unwrap_or("unknown error")
                )),
                Status::Dropped => {
                    if let Some(v) = &r.verify {
                        md.push_str(&format!(
                            "**{head}** breaks `{}` (exit {}); it was dropped.\n\n",
                            v.command.replace('`', "'"),
                            v.exit_code.map_or("?".into(), |c| c.to_string())
                        ));
                        if let Some(t) = v.tail.as_deref().filter(|t| !t.trim().is_empty()) {
                            md.push_str(&format!("```text\n{}\n```\n\n", t.replace("```", "'''")));
                        }
                    }
                }
                _ => {}
            }
            for sk in &r.skipped {
                md.push_str(&format!(
                    "`{}`: skipped: {} (`{}`)\n\n",
                    r.input.replace('`', "'"),
                    sk.reason.as_str(),
                    sk.name.replace('`', "'")
                ));
            }
            if let Some(m) = &r.mail {
                if r.status != Status::Applied && r.status != Status::Already {
                    md.push_str(&format!(
                        "Mail to {} ({}): {}\n\n",
                        m.to, m.msg_type, m.status
                    ));
                }
            }
        }
        let n = self.applied.len();
        md.push_str(&format!(
            "{n} applied, {} already woven, {} conflicted, {} dropped, {} failed, {} skipped; tip `{}`{}.\n",
            self.already.len(),
            self.conflicted.len(),
            self.dropped.len(),
            self.failed.len(),
            self.skipped.len(),
            self.tip.to_hex_with_len(7),
            self.backup
                .as_deref()
                .map(|b| format!(", previous tip kept as `{b}`"))
                .unwrap_or_default()
        ));
        md
    }
}

/// The conflict list as Markdown bullets (also the heart of the conflict mail).
pub fn conflict_lines(conflicts: &[FileConflict]) -> String {
    let mut md = String::new();
    for f in conflicts {
        md.push_str(&format!("- `{}`: {}\n", f.path, f.reason));
        for h in &f.hunks {
            md.push_str(&format!(
                "  - hunk `{}` (lines {}-{} of the integration branch)\n",
                h.header, h.lines[0], h.lines[1]
            ));
            for c in &h.counterparts {
                md.push_str(&format!("    - {}\n", counterpart_line(c)));
            }
        }
        for c in &f.counterparts {
            md.push_str(&format!("  - {}\n", counterpart_line(c)));
        }
    }
    md
}

pub fn counterpart_line(c: &Counterpart) -> String {
    let place = match c.lines {
        [0, 0] => c.path.clone(),
        [a, b] if a == b => format!("{}:{a}", c.path),
        [a, b] => format!("{}:{a}-{b}", c.path),
    };
    format!(
        "conflicts with {}'s change to {place}, woven from {} (commit {})",
        c.persona.as_deref().unwrap_or("an unknown persona"),
        c.input,
        c.commit
    )
}
