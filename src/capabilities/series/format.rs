//! `series format`: a series as a mail package, for people (Markdown), for `git am` (mbox) and for tools
//! (JSON).
//!
//! Every form has a cover letter (series, base, the patches with their summaries, the shortstat of the whole
//! series) and each patch with its summary, its whole Rationale (every line of it) and its unified diff (see
//! [`super::diff`]). The mbox messages are what `git format-patch --full-index --binary` writes: `git am` on
//! the base recreates every patch's tree.

use gix::bstr::{BString, ByteSlice};
use gix::ObjectId;
use serde::Serialize;

use super::commit::rationale_of;
use super::diff::{self, PatchDiff, ShortStat};
use super::{base, branch_name, branch_ref, current_branch, ser_id, series_of_branch, Base};
use crate::kit::error::{Error, ErrorKind, Remedy, Result};

/// The version of the JSON shape.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Person {
    pub name: String,
    pub email: String,
    /// RFC 3339.
    pub date: String,
    #[serde(skip)]
    pub time: gix::date::Time,
}

#[derive(Debug, Clone, Serialize)]
pub struct FormattedPatch {
    pub index: usize,
    pub total: usize,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub parent: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub tree: ObjectId,
    pub author: Person,
    pub summary: String,
    /// The `Rationale:` trailer's value, unfolded, every line of it.
    pub rationale: Option<String>,
    /// The whole commit message.
    pub message: String,
    pub shortstat: ShortStat,
    /// The `--stat` block.
    pub stat: String,
    /// The unified diff (lossy UTF-8 in JSON; the mbox carries the exact bytes).
    #[serde(serialize_with = "ser_diff")]
    pub diff: PatchDiff,
}

fn ser_diff<S: serde::Serializer>(d: &PatchDiff, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(&d.text()))
}

#[derive(Debug, Clone, Serialize)]
pub struct Formatted {
    pub version: u32,
    pub series: String,
    pub branch: String,
    pub base: Base,
    #[serde(serialize_with = "ser_id")]
    pub tip: ObjectId,
    /// Of the whole series (base to tip).
    pub shortstat: ShortStat,
    pub patches: Vec<FormattedPatch>,
    #[serde(skip)]
    pub stat: String,
}

/// Collect series `name` (default: the one HEAD is on), or only its patch `only`.
pub fn collect(
    repo: &gix::Repository,
    name: Option<&str>,
    explicit_base: Option<&str>,
    only: Option<usize>,
) -> Result<Formatted> {
    // With `--base`, HEAD on any other local branch is formatted as it is, without adopting it as a series.
    let (series, branch, tip) = match name {
        Some(n) => {
            let tip = crate::store::refs::target(repo, &branch_ref(n))?
                .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Series, n))?;
            (n.to_owned(), branch_name(n), tip)
        }
        None => {
            let cur = current_branch(repo)?;
            match cur.as_deref() {
                Some(b) if series_of_branch(b).is_some() => {
                    let n = series_of_branch(b).unwrap_or_default().to_owned();
                    let tip = crate::store::refs::target(repo, &branch_ref(&n))?
                        .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Series, &n))?;
                    (n.clone(), branch_name(&n), tip)
                }
                Some(b) if explicit_base.is_some() => {
                    let tip = crate::store::refs::target(repo, &format!("refs/heads/{b}"))?
                        .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Branch, b))?;
                    (b.to_owned(), b.to_owned(), tip)
                }
                other => {
                    return Err(Error::needs(
                        ErrorKind::Usage,
                        format!(
                            "HEAD is not on a series branch but on {}; name a series, check one out, or name a base to use the current branch",
                            other.unwrap_or("a detached commit")
                        ),
                        Remedy::Base,
                    ))
                }
            }
        }
    };
    let base = base::resolve(repo, explicit_base, Some(&branch))?;
    collect_range(repo, series, branch, base, tip, only)
}

/// Collect the patches of `base..tip` as series `series` on `branch` (a recorded version's, for one).
pub fn collect_range(
    repo: &gix::Repository,
    series: String,
    branch: String,
    base: Base,
    tip: ObjectId,
    only: Option<usize>,
) -> Result<Formatted> {
    let patches = super::patches(repo, base.commit, tip)?;
    let total = patches.len();
    if total == 0 {
        return Err(Error::usage(format!(
            "series {series} has no patches ({}..{branch} is empty)",
            base.name
        )));
    }
    if let Some(i) = only {
        if i == 0 || i > total {
            return Err(Error::usage(format!(
                "patch {i} does not exist: the series has patches 1 to {total}"
            )));
        }
    }
    let opts = diff::Options {
        binary: true,
        ..Default::default()
    };
    let mut out = Vec::new();
    for p in &patches {
        if only.is_some_and(|i| i != p.index) {
            continue;
        }
        let commit = repo.find_commit(p.commit)?;
        let parent = commit
            .parent_ids()
            .next()
            .map(|i| i.detach())
            .ok_or_else(|| Error::usage(format!("patch {} is a root commit", p.index)))?;
        let parent_tree = repo.find_commit(parent)?.tree_id()?.detach();
        let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
        let author = commit.author()?;
        let time = author.time()?;
        let d = diff::diff_trees(repo, Some(parent_tree), Some(p.tree), opts)?;
        out.push(FormattedPatch {
            index: p.index,
            total,
            commit: p.commit,
            parent,
            tree: p.tree,
            author: Person {
                name: author.name.to_str_lossy().into_owned(),
                email: author.email.to_str_lossy().into_owned(),
                date: time.format_or_unix(gix::date::time::format::ISO8601_STRICT),
                time,
            },
            summary: p.summary.clone(),
            rationale: rationale_of(&message),
            message,
            shortstat: d.shortstat(),
            stat: d.stat(72),
            diff: d,
        });
    }
    let base_tree = repo.find_commit(base.commit)?.tree_id()?.detach();
    let tip_tree = repo.find_commit(tip)?.tree_id()?.detach();
    let whole = diff::diff_trees(
        repo,
        Some(base_tree),
        Some(tip_tree),
        diff::Options::default(),
    )?;
    Ok(Formatted {
        version: VERSION,
        series,
        branch,
        base,
        tip,
        shortstat: whole.shortstat(),
        stat: whole.stat(72),
        patches: out,
    })
}

/// `0001-Add-the-parser`: git format-patch's file name stem.
pub fn file_stem(index: usize, summary: &str) -> String {
    let mut slug = String::new();
    for c in summary.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let mut slug = slug.trim_matches(|c| c == '-' || c == '.').to_owned();
    if slug.len() > 52 {
        slug.truncate(52);
        slug = slug.trim_end_matches(['-', '.']).to_owned();
    }
    format!("{index:04}-{slug}")
}

/// A code fence longer than any backtick run at the start of a line of `text`.
fn fence(text: &str) -> String {
    let longest = text
        .lines()
        .map(|l| l.trim_start().chars().take_while(|&c| c == '`').count())
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

impl Formatted {
    pub fn total(&self) -> usize {
        self.patches.first().map_or(0, |p| p.total)
    }

    /// The cover letter in Markdown.
    pub fn cover_markdown(&self) -> String {
        let mut s = format!(
            "# Series `{}`: {} patch{} on `{}`\n\n",
            self.series,
            self.total(),
            if self.total() == 1 { "" } else { "es" },
            self.base.name
        );
        s.push_str(&format!(
            "- branch: `{}` at `{}`\n- base: `{}` at `{}`\n- {}\n\n",
            self.branch,
            self.tip.to_hex_with_len(7),
            self.base.name,
            self.base.commit.to_hex_with_len(7),
            self.shortstat.text().trim()
        ));
        s.push_str("| # | commit | summary | changes |\n|---:|---|---|---|\n");
        for p in &self.patches {
            s.push_str(&format!(
                "| {}/{} | `{}` | {} | {} |\n",
                p.index,
                p.total,
                p.commit.to_hex_with_len(7),
                p.summary.replace('|', "\\|"),
                p.shortstat.text().trim()
            ));
        }
        s
    }

    /// One patch in Markdown.
    pub fn patch_markdown(&self, p: &FormattedPatch) -> String {
        let mut s = format!("## Patch {}/{}: {}\n\n", p.index, p.total, p.summary);
        s.push_str(&format!(
            "- commit `{}`\n- author {} <{}>, {}\n- {}\n\n",
            p.commit,
            p.author.name,
            p.author.email,
            p.author.date,
            p.shortstat.text().trim()
        ));
        s.push_str("### Rationale\n\n");
        match &p.rationale {
            Some(r) => {
                s.push_str(r);
                s.push_str("\n\n");
            }
            None => s.push_str("_(no Rationale: trailer)_\n\n"),
        }
        let d = String::from_utf8_lossy(&p.diff.text()).into_owned();
        let f = fence(&d);
        s.push_str(&format!("### Diff\n\n{f}diff\n{d}{f}\n"));
        s
    }

    /// Cover letter and every patch in Markdown.
    pub fn markdown(&self) -> String {
        let mut s = self.cover_markdown();
        for p in &self.patches {
            s.push('\n');
            s.push_str(&self.patch_markdown(p));
        }
        s
    }

    /// The mbox message of one patch, as `git format-patch` writes it.
    pub fn mbox_patch(&self, p: &FormattedPatch) -> Vec<u8> {
        let prefix = if p.total == 1 {
            "[PATCH]".to_owned()
        } else {
            format!("[PATCH {}/{}]", p.index, p.total)
        };
        let body = body_of(&p.message);
        let mut out = headers(
            p.commit,
            &p.author.name,
            &p.author.email,
            p.author.time,
            (&prefix, &p.summary),
            !(p.author.name.is_ascii() && p.summary.is_ascii() && body.is_ascii()),
        );
        if !body.is_empty() {
            out.extend_from_slice(body.as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(b"---\n");
        out.extend_from_slice(p.stat.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&p.diff.text());
        out.extend_from_slice(signature().as_bytes());
        out
    }

    /// The cover letter as an mbox message (`[PATCH 0/N]`), from `author`.
    pub fn mbox_cover(&self, author: &gix::actor::Signature) -> Vec<u8> {
        let mut out = headers(
            self.tip,
            &author.name.to_str_lossy(),
            &author.email.to_str_lossy(),
            author.time,
            (
                &format!("[PATCH 0/{}]", self.total()),
                &format!("Series {}", self.series),
            ),
            true,
        );
        let mut body = format!(
            "Series {} ({}), {} patch{} on {} ({}).\n\n",
            self.series,
            self.branch,
            self.total(),
            if self.total() == 1 { "" } else { "es" },
            self.base.name,
            self.base.commit.to_hex_with_len(12)
        );
        for p in &self.patches {
            body.push_str(&format!("  {}/{} {}\n", p.index, p.total, p.summary));
        }
        body.push('\n');
        body.push_str(&self.stat);
        out.extend_from_slice(body.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(b"base-commit: ");
        out.extend_from_slice(self.base.commit.to_string().as_bytes());
        out.push(b'\n');
        out.extend_from_slice(signature().as_bytes());
        out
    }
}

fn signature() -> String {
    format!("-- \ngit-jules {}\n\n", env!("CARGO_PKG_VERSION"))
}

/// The message without its subject paragraph, as `git format-patch` puts it in the body.
fn body_of(message: &str) -> String {
    let mut lines = message.lines();
    for line in lines.by_ref() {
        if line.trim().is_empty() {
            break;
        }
    }
    let rest: Vec<&str> = lines.collect();
    let text = rest.join("\n");
    let text = text.trim_matches('\n');
    text.trim_end().to_owned()
}

/// `subject` is the `[PATCH …]` prefix, written as is, and the title, encoded when it needs it. The MIME
/// headers come with `eight_bit` (git writes them when the author, subject or message is not ASCII; the
/// diff does not count).
fn headers(
    commit: ObjectId,
    name: &str,
    email: &str,
    time: gix::date::Time,
    subject: (&str, &str),
    eight_bit: bool,
) -> Vec<u8> {
    let date = time.format_or_unix(gix::date::time::format::GIT_RFC2822);
    let mime = if eight_bit {
        "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n"
    } else {
        ""
    };
    format!(
        "From {commit} Mon Sep 17 00:00:00 2001\nFrom: {} <{email}>\nDate: {date}\n{}\n{mime}\n",
        display_name(name),
        subject_header(subject.0, subject.1)
    )
    .into_bytes()
}

/// A display name for a `From:` header: RFC 2047 when not ASCII, quoted when it has specials.
fn display_name(name: &str) -> String {
    if needs_encoding(name) {
        return encode_word("From: ".len(), name, true);
    }
    let atext = |c: char| c.is_ascii_alphanumeric() || " !#$%&'*+-/=?^_`{|}~".contains(c);
    if name.chars().all(atext) {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The `Subject:` line as `git format-patch` writes it: the prefix as is, then the title, encoded only
/// when it needs to be (git's pretty.c keeps the prefix outside the encoded word).
fn subject_header(prefix: &str, title: &str) -> String {
    let start = format!("Subject: {prefix} ");
    if needs_encoding(title) {
        let word = encode_word(start.len(), title, false);
        start + &word
    } else {
        start + title
    }
}

/// Whether git encodes a header text (pretty.c, `needs_rfc2047_encoding`): any non-ASCII byte, a newline,
/// or `=?`, which a reader would take for the start of an encoded word.
fn needs_encoding(text: &str) -> bool {
    !text.is_ascii() || text.contains('\n') || text.contains("=?")
}

/// RFC 2047 Q-encoding as git writes it (pretty.c, `add_rfc2047`): a character is written as is unless it
/// is special: not ASCII (all its bytes encoded, never split), a space or control character (`=20`, not
/// `_`, which many readers leave as is), `=`, `?` or `_`; in an address (a display name) also anything
/// but letters, digits and `!*+-/`. Encoded words are folded so no line passes 76 columns, counting from
/// `column`, where the word starts.
fn encode_word(column: usize, text: &str, address: bool) -> String {
    const MAX: usize = 76;
    const OPEN: &str = "=?UTF-8?q?";
    let special = |b: u8| {
        !b.is_ascii_graphic()
            || matches!(b, b'=' | b'?' | b'_')
            || (address
                && !(b.is_ascii_alphanumeric() || matches!(b, b'!' | b'*' | b'+' | b'-' | b'/')))
    };
    let mut s = String::from(OPEN);
    let mut line = column + OPEN.len();
    let mut buf = [0u8; 4];
    for c in text.chars() {
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        let encode = bytes.len() > 1 || special(bytes[0]);
        let width = if encode { 3 * bytes.len() } else { 1 };
        if line + width + 2 > MAX {
            s.push_str("?=\n ");
            s.push_str(OPEN);
            line = OPEN.len() + 1;
        }
        for &b in bytes {
            if encode {
                s.push_str(&format!("={b:02X}"));
            } else {
                s.push(b as char);
            }
        }
        line += width;
    }
    s.push_str("?=");
    s
}

/// The bytes of the whole series as one mbox: the patches only, so that `git am` applies it as is (a cover
/// letter has no diff and would stop `git am`).
pub fn mbox(f: &Formatted) -> Vec<u8> {
    let mut out = Vec::new();
    for p in &f.patches {
        out.extend_from_slice(&f.mbox_patch(p));
    }
    out
}

/// A patch's text for people and reviewers: header, indented message, stat and diff.
pub fn patch_text(p: &FormattedPatch) -> BString {
    let mut s = format!(
        "commit {}\nAuthor: {} <{}>\nDate:   {}\n\n",
        p.commit, p.author.name, p.author.email, p.author.date
    );
    for line in p.message.trim_end().lines() {
        if line.is_empty() {
            s.push('\n');
        } else {
            s.push_str("    ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s.push_str("---\n");
    s.push_str(&p.stat);
    s.push('\n');
    let mut out: BString = s.into();
    out.extend_from_slice(&p.diff.text());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_like_format_patch() {
        assert_eq!(file_stem(1, "Add the parser"), "0001-Add-the-parser");
        assert_eq!(file_stem(12, "fix: a/b (c)!"), "0012-fix-a-b-c");
    }

    /// git writes the day of the month unpadded (`Sat, 9 Mar 2024`, its `%aD`); a padded day (`09`) made
    /// every patch formatted on the first nine days of a month differ from `git format-patch`.
    #[test]
    fn the_date_header_is_gits_rfc2822_with_an_unpadded_day() {
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let time = gix::date::Time::new(1_710_000_000, 3600); // 2024-03-09 16:00 UTC, written at +0100
        let h = String::from_utf8(headers(id, "Ann", "a@x.org", time, ("[PATCH]", "t"), false))
            .unwrap();
        assert!(
            h.contains("\nDate: Sat, 9 Mar 2024 17:00:00 +0100\n"),
            "{h}"
        );
    }

    #[test]
    fn body_drops_the_subject_paragraph() {
        assert_eq!(body_of("Summary\n\nRationale: a\n b\n"), "Rationale: a\n b");
        assert_eq!(body_of("Only a summary\n"), "");
    }

    #[test]
    fn header_encoding() {
        assert_eq!(display_name("Ann Lee"), "Ann Lee");
        assert_eq!(display_name("A. Lee"), "\"A. Lee\"");
        assert_eq!(encode_word(0, "Zoë", false), "=?UTF-8?q?Zo=C3=AB?=");
        // As git format-patch writes them: spaces as =20, the prefix outside, ' and : as they are.
        assert_eq!(
            subject_header("[PATCH 1/2]", "Zoë's parser: tokens"),
            "Subject: [PATCH 1/2] =?UTF-8?q?Zo=C3=AB's=20parser:=20tokens?="
        );
        assert_eq!(
            display_name("Zoë O'Neil"),
            "=?UTF-8?q?Zo=C3=AB=20O=27Neil?="
        );
        // Folded before 76 columns, never inside a character.
        let long = subject_header("[PATCH]", &"é".repeat(40));
        assert!(long.lines().all(|l| l.len() <= 76), "{long}");
        assert_eq!(long.matches("=C3=A9").count(), 40, "{long}");
        // git format-patch 2.47 on the same title: 7 characters on the first line, 10 on the next.
        let lines: Vec<&str> = long.lines().collect();
        assert_eq!(
            lines[0],
            format!("Subject: [PATCH] =?UTF-8?q?{}?=", "=C3=A9".repeat(7))
        );
        assert_eq!(lines[1], format!(" =?UTF-8?q?{}?=", "=C3=A9".repeat(10)));
    }

    #[test]
    fn fences_outgrow_backticks() {
        assert_eq!(fence("a\n+```\n"), "```");
        assert_eq!(fence("```\n"), "````");
    }
}
