//! `series review`: the series (or one patch) in a buffer with `### Patch [n/total] ###` headers, `R:`
//! comments parsed back and kept as git notes on the patches' commits under `refs/notes/jules/review`.
//!
//! The buffer quotes every line of the patches with `> `, the way a mail reply quotes the message it answers,
//! so that what the reviewer writes can never be mistaken for the patch (a diff's context lines start with a
//! space, so indentation alone could not tell them apart). Rules of the buffer:
//!
//! - `### Patch [n/total] ###` starts the section of patch n; `total` must be the series' length and n one of
//!   the patches in the buffer (anything may follow the closing `###`).
//! - A line starting with `R:` starts a comment on the patch of the section it is in; the lines after it that
//!   are neither quoted (`>`), nor a header, nor another `R:` continue it (blank lines included; trailing
//!   blank lines are dropped).
//! - Lines starting with `#` are ignored; so are quoted lines. Any other text is an error, as is an `R:` line
//!   before the first header: a review comment is never dropped silently.
//!
//! Each comment remembers the file (`diff --git` line) and the quoted line just above it, so a tool acting
//! on the review knows where it points.
//!
//! Notes are JSON Lines, one line per review of that patch, appended to what the note already holds (a note
//! written by someone else is kept, also when the notes ref moves meanwhile):
//! `{"version":1,"reviewer":"Name <email>","at":"RFC 3339","series":"feat","patch":1,"total":3,
//!   "comments":[{"text":"…","path":"src/a.rs","line":"+let x = 1;"}]}`

use gix::bstr::ByteSlice;
use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::format::{self, Formatted};
use super::ser_id;
use crate::kit::error::{Error, Result};

pub const NOTES_REF: &str = "refs/notes/jules/review";
pub const NOTE_VERSION: u32 = 1;

/// The file name of the buffer in the git dir (kept after editing, like `COMMIT_EDITMSG`).
pub const EDIT_FILE: &str = "JULES_REVIEW_EDITMSG";

/// The header of patch `index` of `total`.
pub fn header(index: usize, total: usize) -> String {
    format!("### Patch [{index}/{total}] ###")
}

/// The buffer for `f` (all its patches, or the one it was collected for).
pub fn buffer(f: &Formatted) -> String {
    let total = f.total();
    let which = if f.patches.len() == 1 && total > 1 {
        format!("patch {} of {total}", f.patches[0].index)
    } else {
        format!("{total} patch{}", if total == 1 { "" } else { "es" })
    };
    let mut s = format!(
        "# Review of series {} ({}), {which} on {} at {}.\n\
         #\n\
         # Write each comment on a line starting with \"R:\" in the section of the patch it is about,\n\
         # below the quoted line it concerns. Unquoted lines after an R: line continue the comment.\n\
         # Quoted lines (\">\", the patches) and lines starting with \"#\" are ignored; other text is an\n\
         # error. Keep the \"### Patch [n/total] ###\" headers. No R: line: nothing is stored.\n\n",
        f.series,
        f.branch,
        f.base.name,
        f.base.commit.to_hex_with_len(7)
    );
    for p in &f.patches {
        s.push_str(&header(p.index, p.total));
        s.push('\n');
        let text = format::patch_text(p);
        for line in text.lines() {
            if line.is_empty() {
                s.push_str(">\n");
            } else {
                s.push_str("> ");
                s.push_str(&line.to_str_lossy());
                s.push('\n');
            }
        }
        s.push('\n');
    }
    s
}

/// One review comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub text: String,
    /// The file of the diff the comment sits in.
    pub path: Option<String>,
    /// The quoted patch line just above the comment.
    pub line: Option<String>,
    /// Where the comment starts in the buffer (1-based).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub buffer_line: Option<usize>,
}

/// The comments on one patch.
#[derive(Debug, Clone, Serialize)]
pub struct PatchReview {
    pub index: usize,
    pub total: usize,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    pub summary: String,
    pub comments: Vec<Comment>,
}

/// A parsed review.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    pub version: u32,
    pub series: String,
    pub branch: String,
    pub total: usize,
    pub reviewer: String,
    pub notes_ref: &'static str,
    /// The recorded version reviewed, `PERSONA/NAME@vN` (issue 26), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series_version: Option<String>,
    /// Only the patches that got comments, in series order.
    pub patches: Vec<PatchReview>,
}

impl Review {
    pub fn comment_count(&self) -> usize {
        self.patches.iter().map(|p| p.comments.len()).sum()
    }
}

fn bad(line: usize, msg: impl std::fmt::Display) -> Error {
    Error::usage(format!("review buffer line {line}: {msg}"))
}

/// Parse a header line: `Some((n, total))`, an error for a malformed one, `None` for other lines.
fn parse_header(line: &str, at: usize) -> Result<Option<(usize, usize)>> {
    let Some(rest) = line.strip_prefix("### Patch") else {
        return Ok(None);
    };
    let malformed = || {
        bad(
            at,
            format!("malformed patch header {line:?}; expected `### Patch [n/total] ###`"),
        )
    };
    let rest = rest.trim_start();
    let inner = rest.strip_prefix('[').ok_or_else(malformed)?;
    let (nums, after) = inner.split_once(']').ok_or_else(malformed)?;
    if !after.trim_start().starts_with("###") {
        return Err(malformed());
    }
    let (n, t) = nums.split_once('/').ok_or_else(malformed)?;
    let n: usize = n.trim().parse().map_err(|_| malformed())?;
    let t: usize = t.trim().parse().map_err(|_| malformed())?;
    Ok(Some((n, t)))
}

/// The comments of a buffer, per patch index (in the order of the buffer). `total` is the series' length,
/// `allowed` the patches the buffer may speak about.
pub fn parse(text: &str, total: usize, allowed: &[usize]) -> Result<Vec<(usize, Vec<Comment>)>> {
    let mut out: Vec<(usize, Vec<Comment>)> = Vec::new();
    let mut section: Option<usize> = None;
    let mut path: Option<String> = None;
    let mut last_quoted: Option<String> = None;
    let mut open: Option<Comment> = None;
    let close = |open: &mut Option<Comment>,
                 section: Option<usize>,
                 out: &mut Vec<(usize, Vec<Comment>)>| {
        if let (Some(mut c), Some(s)) = (open.take(), section) {
            c.text = c.text.trim_end().to_owned();
            match out.iter_mut().find(|(i, _)| *i == s) {
                Some((_, v)) => v.push(c),
                None => out.push((s, vec![c])),
            }
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let at = i + 1;
        let line = raw.trim_end_matches('\r');
        if let Some((n, t)) = parse_header(line, at)? {
            close(&mut open, section, &mut out);
            if t != total {
                return Err(bad(
                    at,
                    format!("the header says the series has {t} patches, but it has {total}: the buffer does not match the series (was it rerolled since?)"),
                ));
            }
            if !allowed.contains(&n) {
                return Err(bad(
                    at,
                    format!(
                        "patch {n}/{t} is not part of this review (it covers {})",
                        allowed
                            .iter()
                            .map(|i| format!("{i}/{total}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            section = Some(n);
            path = None;
            last_quoted = None;
            continue;
        }
        if let Some(rest) = line.strip_prefix("R:") {
            close(&mut open, section, &mut out);
            if section.is_none() {
                return Err(bad(
                    at,
                    "an R: comment outside any patch; put it under a `### Patch [n/total] ###` header",
                ));
            }
            open = Some(Comment {
                text: rest.strip_prefix(' ').unwrap_or(rest).trim_end().to_owned(),
                path: path.clone(),
                line: last_quoted.clone(),
                buffer_line: Some(at),
            });
            continue;
        }
        if let Some(q) = line.strip_prefix('>') {
            close(&mut open, section, &mut out);
            let q = q.strip_prefix(' ').unwrap_or(q);
            if let Some(files) = q.strip_prefix("diff --git ") {
                path = files
                    .rsplit_once(" b/")
                    .map(|(_, b)| b.trim_end_matches('"').to_owned());
            }
            last_quoted = Some(q.to_owned());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if let Some(c) = open.as_mut() {
            c.text.push('\n');
            c.text.push_str(line.trim_end());
            continue;
        }
        if !line.trim().is_empty() {
            return Err(bad(
                at,
                format!("text outside an R: comment ({:?}); start review comments with `R:` (quoted `>` lines are the patch)",
                    line.chars().take(40).collect::<String>()),
            ));
        }
    }
    close(&mut open, section, &mut out);
    Ok(out)
}

/// Build the review of `f` from a parsed buffer.
pub fn review(f: &Formatted, parsed: Vec<(usize, Vec<Comment>)>, reviewer: String) -> Review {
    let mut patches: Vec<PatchReview> = parsed
        .into_iter()
        .filter_map(|(i, comments)| {
            let p = f.patches.iter().find(|p| p.index == i)?;
            Some(PatchReview {
                index: i,
                total: p.total,
                commit: p.commit,
                summary: p.summary.clone(),
                comments,
            })
        })
        .collect();
    patches.sort_by_key(|p| p.index);
    Review {
        version: NOTE_VERSION,
        series: f.series.clone(),
        branch: f.branch.clone(),
        total: f.total(),
        reviewer,
        notes_ref: NOTES_REF,
        series_version: None,
        patches,
    }
}

/// One line of a review note.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NoteLine {
    pub version: u32,
    pub reviewer: String,
    pub at: String,
    pub series: String,
    pub patch: usize,
    pub total: usize,
    pub comments: Vec<Comment>,
    /// The recorded version reviewed, `PERSONA/NAME@vN`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series_version: Option<String>,
}

/// Append the review to the notes of the reviewed commits (one notes commit).
pub fn store(repo: &gix::Repository, r: &Review) -> Result<()> {
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let lines: Vec<(ObjectId, String)> = r
        .patches
        .iter()
        .map(|p| {
            let line = NoteLine {
                version: NOTE_VERSION,
                reviewer: r.reviewer.clone(),
                at: at.clone(),
                series: r.series.clone(),
                patch: p.index,
                total: p.total,
                series_version: r.series_version.clone(),
                comments: p
                    .comments
                    .iter()
                    .map(|c| Comment {
                        buffer_line: None,
                        ..c.clone()
                    })
                    .collect(),
            };
            serde_json::to_string(&line)
                .map(|l| (p.commit, l))
                .map_err(|e| Error::wrap("encoding a review note", e))
        })
        .collect::<Result<_>>()?;
    let objects: Vec<ObjectId> = lines.iter().map(|(o, _)| *o).collect();
    crate::store::notes::update_many(
        repo,
        NOTES_REF,
        &objects,
        |object, current| {
            let mut text = current.map(<[u8]>::to_vec).unwrap_or_default();
            if !text.is_empty() && !text.ends_with(b"\n") {
                text.push(b'\n');
            }
            for (o, l) in &lines {
                if *o == object {
                    text.extend_from_slice(l.as_bytes());
                    text.push(b'\n');
                }
            }
            text
        },
        &format!("jules: review of series {}", r.series),
    )
}

/// The review as the text of a mail: the commented patches' headers and their `R:` comments.
pub fn mail_body(r: &Review) -> String {
    let mut s = format!(
        "Review of series {} ({}): {} comment{} on {} of its {} patches.\n\
         Address a comment on patch N by changing the files and running `git jules series reroll N`.\n\
         The comments are also in the notes {NOTES_REF} of each patch's commit.\n",
        r.series,
        r.branch,
        r.comment_count(),
        if r.comment_count() == 1 { "" } else { "s" },
        r.patches.len(),
        r.total
    );
    if let Some(v) = &r.series_version {
        s.push_str(&format!(
            "The comments are about version {v} (`git jules series show {v}`).\n"
        ));
    }
    for p in &r.patches {
        s.push_str(&format!(
            "\n{} {} {}\n",
            header(p.index, p.total),
            p.commit.to_hex_with_len(7),
            p.summary
        ));
        for c in &p.comments {
            let mut lines = c.text.lines();
            s.push_str(&format!("R: {}\n", lines.next().unwrap_or_default()));
            for l in lines {
                s.push_str(&format!("   {l}\n"));
            }
            if let Some(path) = &c.path {
                match &c.line {
                    Some(l) => s.push_str(&format!("   (in {path}, after the line {l:?})\n")),
                    None => s.push_str(&format!("   (in {path})\n")),
                }
            }
        }
    }
    s
}

/// The review as a mail event (type `task`, tag `review`, thread `review-<series>`) from persona `from` to the
/// personas or groups `to`, checked but not written: build it before storing anything, so that a bad
/// recipient changes nothing.
pub fn mail_event(
    repo: &gix::Repository,
    r: &Review,
    from: &str,
    to: &[String],
) -> Result<crate::store::eventlog::NewEvent> {
    use crate::capabilities::mail::{api, recipients::Groups, SendRequest};
    let groups = Groups::load(repo)?;
    let req = SendRequest {
        from: from.to_owned(),
        to: to.to_vec(),
        subject: format!(
            "Review of series {}: {} comment{} on {} patch{}",
            r.series_version.as_deref().unwrap_or(&r.series),
            r.comment_count(),
            if r.comment_count() == 1 { "" } else { "s" },
            r.patches.len(),
            if r.patches.len() == 1 { "" } else { "es" }
        ),
        body: mail_body(r),
        msg_type: "task".into(),
        tags: vec!["review".into()],
        needs_response: true,
        thread: Some(format!("review-{}", r.series)),
        ..SendRequest::default()
    };
    api::notice_event(&groups, req)
}

/// Append a mail event built by [`mail_event`] to the mail log.
pub fn send_mail(
    repo: &gix::Repository,
    event: crate::store::eventlog::NewEvent,
) -> Result<crate::store::eventlog::Appended> {
    Ok(crate::capabilities::mail::api::append(repo, vec![event])?.remove(0))
}

/// The review notes of `commit`, oldest first (lines that are not this JSON are skipped).
pub fn notes_of(repo: &gix::Repository, commit: ObjectId) -> Result<Vec<NoteLine>> {
    let Some(bytes) = crate::store::notes::read(repo, NOTES_REF, commit)? else {
        return Ok(Vec::new());
    };
    Ok(bytes
        .lines()
        .filter_map(|l| serde_json::from_slice::<NoteLine>(l).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_attach_to_the_section_they_are_in() {
        let buf = "# intro\n\
                   ### Patch [1/3] ###\n\
                   > diff --git a/src/a.rs b/src/a.rs\n\
                   > +let x = 1;\n\
                   R: use a constant\n\
                   \x20  and name it\n\
                   \n\
                   > +more\n\
                   ### Patch [3/3] ### extra text\n\
                   R: one\n\
                   R: two\n\
                   \n\
                   continued after a blank line\n\
                   \n";
        let parsed = parse(buf, 3, &[1, 2, 3]).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].0, 1);
        let c = &parsed[0].1[0];
        assert_eq!(c.text, "use a constant\n   and name it");
        assert_eq!(c.path.as_deref(), Some("src/a.rs"));
        assert_eq!(c.line.as_deref(), Some("+let x = 1;"));
        assert_eq!(c.buffer_line, Some(5));
        assert_eq!(parsed[1].0, 3);
        assert_eq!(parsed[1].1.len(), 2);
        assert_eq!(parsed[1].1[1].text, "two\n\ncontinued after a blank line");
    }

    #[test]
    fn misplaced_comments_and_foreign_headers_are_errors() {
        let e = parse("R: too early\n### Patch [1/2] ###\n", 2, &[1, 2]).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = parse("### Patch [1/4] ###\nR: x\n", 3, &[1, 2, 3]).unwrap_err();
        assert!(e.to_string().contains("4 patches"), "{e}");
        let e = parse("### Patch [2/3] ###\n", 3, &[1]).unwrap_err();
        assert!(e.to_string().contains("not part of this review"), "{e}");
        let e = parse("### Patch [1/3] ###\nstray words\n", 3, &[1]).unwrap_err();
        assert!(e.to_string().contains("outside an R: comment"), "{e}");
        let e = parse("### Patch 1/3 ###\n", 3, &[1]).unwrap_err();
        assert!(e.to_string().contains("malformed"), "{e}");
        assert!(parse("# only comments\n\n", 3, &[1]).unwrap().is_empty());
    }
}
