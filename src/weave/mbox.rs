//! Patch files: `git format-patch` output, mboxes holding several such mails, and plain unified diffs.
//!
//! A file whose first non-blank line is an mbox separator (`From <id> <date>`) or a mail header is read as
//! mail: it is split at each separator line, and each mail gives its author (`From:`, or a `From:` line
//! at the top of the body as `format-patch` writes for other people's patches), its date, its subject
//! (without `[PATCH …]` prefixes, RFC 2047 encoded words decoded) and its message (the body up to the `---`
//! line). Quoted-printable bodies are decoded; base64 bodies are refused. Anything else is a plain diff
//! with no author or message of its own.

use gix::bstr::ByteSlice;

use super::patch::{self, FilePatch};

/// One patch read from a file.
#[derive(Debug, Clone)]
pub struct MailPatch {
    /// `(name, email)` from `From:`; absent for a plain diff.
    pub author: Option<(String, String)>,
    /// The author date as a git time (seconds, offset).
    pub date: Option<gix::date::Time>,
    /// The commit message: subject, blank line, body; empty for a plain diff.
    pub message: String,
    pub files: Vec<FilePatch>,
    /// A fingerprint of the change itself (paths and hunk lines, not line numbers nor blob ids), so the same
    /// change written twice is recognised; hex SHA-256.
    pub fingerprint: String,
}

/// Why a patch file cannot be used.
pub type ReadError = String;

/// Read every patch in `text`.
pub fn read(text: &[u8]) -> Result<Vec<MailPatch>, ReadError> {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let is_mail = is_separator(first) || is_header_line(first);
    if !is_mail {
        let files = patch::parse(text).map_err(|e| e.to_string())?;
        if files.is_empty() {
            return Err("no diff found".into());
        }
        return Ok(vec![MailPatch {
            author: None,
            date: None,
            message: String::new(),
            fingerprint: fingerprint(&files),
            files,
        }]);
    }
    let mut out = Vec::new();
    for (n, mail) in split_mbox(text).into_iter().enumerate() {
        let p = read_mail(mail).map_err(|e| {
            if out.is_empty() && n == 0 {
                e
            } else {
                format!("mail {}: {e}", n + 1)
            }
        })?;
        if let Some(p) = p {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err("no patch found in the mails".into());
    }
    Ok(out)
}

/// `From <something> <date…>`, as mbox separators are (not `From:`).
fn is_separator(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"From ") else {
        return false;
    };
    let rest = rest.trim_end();
    // "From 1234abcd Mon Sep 17 00:00:00 2001": an address or id, then a date with a time in it.
    let mut parts = rest.splitn(2, |&b| b == b' ');
    let who = parts.next().unwrap_or_default();
    let date = parts.next().unwrap_or_default();
    !who.is_empty() && date.contains(&b':') && date.iter().any(u8::is_ascii_digit)
}

fn is_header_line(line: &[u8]) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "from:",
        "subject:",
        "date:",
        "message-id:",
        "return-path:",
        "received:",
    ]
    .iter()
    .any(|h| lower.starts_with(h.as_bytes()))
}

fn split_mbox(text: &[u8]) -> Vec<&[u8]> {
    let mut mails = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    let mut prev_blank = true;
    for line in text.split_inclusive(|&b| b == b'\n') {
        if prev_blank && is_separator(line) && pos > start {
            mails.push(&text[start..pos]);
            start = pos;
        }
        prev_blank = line.trim().is_empty();
        pos += line.len();
    }
    mails.push(&text[start..]);
    mails.into_iter().filter(|m| !m.trim().is_empty()).collect()
}

fn read_mail(mail: &[u8]) -> Result<Option<MailPatch>, ReadError> {
    let all: Vec<&[u8]> = mail.split_inclusive(|&b| b == b'\n').collect();
    let mut consumed = 0usize;
    let mut i = 0;
    if all.first().is_some_and(|l| is_separator(l)) {
        consumed += all[0].len();
        i = 1;
    }
    // Headers, with folded continuation lines joined.
    let mut headers: Vec<(String, String)> = Vec::new();
    while i < all.len() {
        let line = all[i];
        i += 1;
        consumed += line.len();
        let l = line.trim_end_with(|c| c == '\n' || c == '\r');
        if l.is_empty() {
            break;
        }
        if (l[0] == b' ' || l[0] == b'\t') && !headers.is_empty() {
            let last = headers.last_mut().expect("checked");
            last.1.push(' ');
            last.1.push_str(l.trim().to_str_lossy().as_ref());
            continue;
        }
        if let Some((k, v)) = l.split_once_str(":") {
            headers.push((
                k.trim().to_str_lossy().to_ascii_lowercase(),
                v.trim().to_str_lossy().into_owned(),
            ));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let body_raw = &mail[consumed.min(mail.len())..];
    let body: Vec<u8> = match header("content-transfer-encoding").map(|s| s.to_ascii_lowercase()) {
        Some(e) if e == "quoted-printable" => decode_qp(body_raw),
        Some(e) if e == "base64" => {
            return Err("base64-encoded mail bodies are not supported".into())
        }
        _ => body_raw.to_vec(),
    };

    let mut author = header("from").map(parse_address);
    let mut date = header("date").and_then(parse_date);
    let subject = clean_subject(&decode_words(header("subject").unwrap_or_default()));

    // The message ends at `---` (format-patch) or at the diff itself.
    let body_lines: Vec<&[u8]> = body.split_inclusive(|&b| b == b'\n').collect();
    let mut msg_end = body_lines.len();
    let mut diff_start = None;
    for (i, l) in body_lines.iter().enumerate() {
        let t = l.trim_end();
        if t == b"---" && msg_end == body_lines.len() {
            msg_end = i;
        }
        if l.starts_with(b"diff --git ")
            || (l.starts_with(b"--- ")
                && body_lines
                    .get(i + 1)
                    .is_some_and(|n| n.starts_with(b"+++ ")))
        {
            msg_end = msg_end.min(i);
            diff_start = Some(i);
            break;
        }
    }
    let Some(diff_start) = diff_start else {
        // A cover letter or a mail without a diff: nothing to apply.
        return Ok(None);
    };
    let mut msg_lines = &body_lines[..msg_end];
    // In-body headers (From:, Date:, Subject:) as format-patch writes them when the sender is not the author.
    let mut in_body_subject = None;
    while let Some(first) = msg_lines.first() {
        let t = first.trim_end().to_str_lossy().into_owned();
        if let Some(v) = t.strip_prefix("From: ") {
            author = Some(parse_address(v));
        } else if let Some(v) = t.strip_prefix("Date: ") {
            date = parse_date(v).or(date);
        } else if let Some(v) = t.strip_prefix("Subject: ") {
            in_body_subject = Some(clean_subject(&decode_words(v)));
        } else {
            break;
        }
        msg_lines = &msg_lines[1..];
        if msg_lines.first().is_some_and(|l| l.trim().is_empty()) {
            msg_lines = &msg_lines[1..];
            break;
        }
    }
    let subject = in_body_subject.unwrap_or(subject);
    let body_text = msg_lines.concat().to_str_lossy().trim().to_owned();
    let message = if body_text.is_empty() {
        format!("{subject}\n")
    } else {
        format!("{subject}\n\n{body_text}\n")
    };

    let diff = body_lines[diff_start..].concat();
    let files = patch::parse(&diff).map_err(|e| e.to_string())?;
    if files.is_empty() {
        return Ok(None);
    }
    Ok(Some(MailPatch {
        author,
        date,
        message,
        fingerprint: fingerprint(&files),
        files,
    }))
}

/// `Name <email>` (possibly encoded or quoted) → (name, email).
fn parse_address(v: &str) -> (String, String) {
    let v = decode_words(v);
    match (v.rfind('<'), v.rfind('>')) {
        (Some(l), Some(r)) if l < r => {
            let name = v[..l].trim().trim_matches('"').trim().to_owned();
            let email = v[l + 1..r].trim().to_owned();
            let name = if name.is_empty() {
                email.split('@').next().unwrap_or_default().to_owned()
            } else {
                name
            };
            (name, email)
        }
        _ => {
            let email = v.trim().to_owned();
            (
                email.split('@').next().unwrap_or_default().to_owned(),
                email,
            )
        }
    }
}

fn parse_date(v: &str) -> Option<gix::date::Time> {
    gix::date::parse(v.trim(), None).ok()
}

/// Drop `[PATCH …]`-style prefixes and `Re:` as `git am` does.
fn clean_subject(s: &str) -> String {
    let mut s = s.trim();
    loop {
        if s.starts_with('[') {
            if let Some(end) = s.find(']') {
                s = s[end + 1..].trim_start();
                continue;
            }
        }
        if s.len() >= 3 && s[..3].eq_ignore_ascii_case("re:") {
            s = s[3..].trim_start();
            continue;
        }
        break;
    }
    s.to_owned()
}

/// Decode RFC 2047 encoded words (`=?utf-8?q?…?=`, `=?utf-8?b?…?=`); whitespace between two encoded
/// words disappears.
pub fn decode_words(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    let mut last_was_word = false;
    while let Some(start) = rest.find("=?") {
        let (before, tail) = rest.split_at(start);
        let decoded = tail[2..].split_once('?').and_then(|(_charset, t)| {
            let (enc, t) = t.split_once('?')?;
            let (text, after) = t.split_once("?=")?;
            let bytes = match enc {
                "q" | "Q" => decode_q(text),
                "b" | "B" => decode_b64(text)?,
                _ => return None,
            };
            Some((String::from_utf8_lossy(&bytes).into_owned(), after))
        });
        match decoded {
            Some((word, after)) => {
                if !(last_was_word && before.trim().is_empty()) {
                    out.push_str(before);
                }
                out.push_str(&word);
                rest = after;
                last_was_word = true;
            }
            None => {
                out.push_str(before);
                out.push_str("=?");
                rest = &tail[2..];
                last_was_word = false;
            }
        }
    }
    out.push_str(rest);
    out
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

fn decode_q(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'_' => out.push(b' '),
            b'=' => match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'='),
            },
            c => out.push(c),
        }
        i += 1;
    }
    out
}

fn decode_b64(text: &str) -> Option<Vec<u8>> {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
    {
        let v = T.iter().position(|&t| t == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Quoted-printable: `=XX` escapes and `=` soft line breaks.
fn decode_qp(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'=' {
            if body.get(i + 1) == Some(&b'\n') {
                i += 2;
                continue;
            }
            if body.get(i + 1) == Some(&b'\r') && body.get(i + 2) == Some(&b'\n') {
                i += 3;
                continue;
            }
            if let (Some(h), Some(l)) = (
                body.get(i + 1).and_then(|&c| hex(c)),
                body.get(i + 2).and_then(|&c| hex(c)),
            ) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(body[i]);
        i += 1;
    }
    out
}

/// SHA-256 over each file's paths and its hunks' tagged lines, hex.
pub fn fingerprint(files: &[FilePatch]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for f in files {
        h.update(
            f.old_path
                .as_deref()
                .map(|p| p.as_bytes())
                .unwrap_or(b"/dev/null"),
        );
        h.update([0]);
        h.update(
            f.new_path
                .as_deref()
                .map(|p| p.as_bytes())
                .unwrap_or(b"/dev/null"),
        );
        h.update([0]);
        // Modes count only when they change (an `index` line repeats an unchanged one).
        if f.old_mode != f.new_mode {
            h.update(format!("{:?}{:?}", f.old_mode, f.new_mode));
        }
        for hunk in &f.hunks {
            h.update(b"@@");
            for (tag, line) in &hunk.lines {
                h.update([*tag]);
                h.update(line);
            }
        }
        match &f.binary {
            Some(patch::Binary::Literal(data)) => {
                h.update(b"literal");
                h.update(data);
            }
            Some(_) => {
                h.update(b"binary");
                h.update(f.new_id.as_deref().unwrap_or_default());
            }
            None => {}
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "From 1b2c3d4e5f60718293a4b5c6d7e8f90112233445 Mon Sep 17 00:00:00 2001
From: =?UTF-8?q?Ren=C3=A9e=20Curator?= <curator@jules.invalid>
Date: Sat, 9 Mar 2024 16:00:00 +0100
Subject: [PATCH 1/2] tidy: sort the\n imports

Body line.

Persona: curator
---
 a.txt | 1 +
 1 file changed, 1 insertion(+)

diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1 +1,2 @@
 a
+b
-- 
2.47.3
\n";

    #[test]
    fn format_patch_mail() {
        let p = read(ONE.as_bytes()).unwrap();
        assert_eq!(p.len(), 1);
        let p = &p[0];
        assert_eq!(
            p.author,
            Some(("Renée Curator".into(), "curator@jules.invalid".into()))
        );
        assert_eq!(
            p.message,
            "tidy: sort the imports\n\nBody line.\n\nPersona: curator\n"
        );
        assert_eq!(p.date.unwrap().seconds, 1_709_996_400);
        assert_eq!(p.date.unwrap().offset, 3600);
        assert_eq!(p.files.len(), 1);
        assert_eq!(p.files[0].hunks[0].postimage.len(), 2);
    }

    #[test]
    fn mbox_with_two_mails_and_a_plain_diff() {
        let two = format!("{ONE}{}", ONE.replace("+b\n", "+c\n").replace("1/2", "2/2"));
        let p = read(two.as_bytes()).unwrap();
        assert_eq!(p.len(), 2);
        assert_ne!(p[0].fingerprint, p[1].fingerprint);
        let plain = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n a\n+b\n";
        let q = read(plain.as_bytes()).unwrap();
        assert!(q[0].author.is_none());
        // Same change, different numbers and ids: same fingerprint.
        assert_eq!(q[0].fingerprint, p[0].fingerprint);
        assert!(read(b"just text\n").is_err());
    }

    #[test]
    fn encoded_words_and_subjects() {
        assert_eq!(decode_words("=?utf-8?q?a_b?= =?utf-8?b?Yw==?= d"), "a bc d");
        assert_eq!(clean_subject("[PATCH v2 3/7] Re: fix"), "fix");
        assert_eq!(
            parse_address("\"Doe, Jane\" <jane@x.org>"),
            ("Doe, Jane".into(), "jane@x.org".into())
        );
    }
}
