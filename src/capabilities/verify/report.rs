//! What a verify run found, per commit, and its Markdown rendering (the seed's report table).
//!
//! The serialized [`Report`] is the `--json` contract (documented in `docs/series.md`); `version` changes
//! when a field changes meaning or disappears, not when one is added.

use gix::ObjectId;
use serde::Serialize;

use crate::capabilities::base::Base;
use crate::kit::id::ser_oid as ser_id;

pub const REPORT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Fail,
    /// Not run: an earlier commit failed (without `--keep-going`) or the run was interrupted.
    Skipped,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommitResult {
    /// 1-based position in the series, oldest first.
    pub index: usize,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    /// The shortest unique abbreviation of `commit`.
    pub short: String,
    #[serde(serialize_with = "ser_id")]
    pub tree: ObjectId,
    pub summary: String,
    pub result: Outcome,
    /// The result came from the notes cache; nothing ran.
    pub cached: bool,
    /// How long the command ran (for a cached result: when it was measured); absent when skipped.
    pub duration_ms: Option<u64>,
    /// The command's exit code; absent when skipped or killed by a signal.
    pub exit_code: Option<i32>,
    /// The end of the command's output (stdout and stderr interleaved), for failures.
    pub tail: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub version: u32,
    pub command: String,
    pub base: Base,
    #[serde(serialize_with = "ser_id")]
    pub tip: ObjectId,
    /// Every commit passed.
    pub passed: bool,
    /// The index of the first failing commit in series order (not the first to finish failing).
    pub first_failure: Option<usize>,
    pub interrupted: bool,
    pub keep_going: bool,
    /// Jobs that actually ran (at most `--jobs`, at most the number of commits to run).
    pub jobs: usize,
    /// Commits whose command ran in this invocation.
    pub ran: usize,
    /// Commits answered from the cache.
    pub cached: usize,
    pub duration_ms: u64,
    pub commits: Vec<CommitResult>,
}

impl Report {
    pub fn first_failure(&self) -> Option<&CommitResult> {
        self.first_failure
            .and_then(|i| self.commits.get(i.saturating_sub(1)))
    }

    /// A Markdown table (index, short id, summary, result, duration), then the output tail of each failure.
    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        md.push_str(&format!(
            "### Verify `{}` on {}..{} ({} {})\n\n",
            self.command.replace('`', "'"),
            self.base.name,
            self.tip.to_hex_with_len(7),
            self.commits.len(),
            if self.commits.len() == 1 {
                "patch"
            } else {
                "patches"
            }
        ));
        md.push_str("| # | commit | summary | result | duration |\n|---:|---|---|---|---:|\n");
        for c in &self.commits {
            let result = match (c.result, c.cached) {
                (Outcome::Pass, false) => "pass".to_owned(),
                (Outcome::Pass, true) => "pass (cached)".to_owned(),
                (Outcome::Fail, cached) => format!(
                    "**FAIL**{}{}",
                    c.exit_code
                        .map(|e| format!(" (exit {e})"))
                        .unwrap_or_default(),
                    if cached { " (cached)" } else { "" }
                ),
                (Outcome::Skipped, _) => "skipped".to_owned(),
            };
            md.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                c.index,
                c.short,
                escape_cell(&c.summary),
                result,
                c.duration_ms.map(format_ms).unwrap_or_else(|| "–".into())
            ));
        }
        md.push('\n');
        match self.first_failure() {
            Some(f) => md.push_str(&format!(
                "**Patch {} of {} fails** (`{}` {}).\n",
                f.index,
                self.commits.len(),
                f.short,
                escape_cell(&f.summary)
            )),
            None if self.interrupted => {
                md.push_str("**Interrupted**: not every patch was verified.\n")
            }
            None if self.passed => md.push_str(&format!(
                "All {} patches pass ({} ran, {} cached).\n",
                self.commits.len(),
                self.ran,
                self.cached
            )),
            None => {}
        }
        for c in self.commits.iter().filter(|c| c.result == Outcome::Fail) {
            if let Some(tail) = c.tail.as_deref().filter(|t| !t.trim().is_empty()) {
                md.push_str(&format!(
                    "\nOutput of patch {} (`{}`), last lines:\n\n```text\n{}\n```\n",
                    c.index,
                    c.short,
                    tail.replace("```", "'''")
                ));
            }
        }
        md
    }
}

/// "0.23 s", "12 ms", "1 m 05 s".
pub fn format_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.2} s", ms as f64 / 1000.0)
    } else {
        format!("{} m {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

fn escape_cell(text: &str) -> String {
    text.replace('|', "\\|")
}
