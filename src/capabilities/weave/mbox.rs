//! Patch files: `git format-patch` output, mboxes holding several such mails, and plain unified diffs,
//! read the way `git am` reads them (`git mailsplit -b`, then `git mailinfo` on each mail, then the
//! message clean-up of `git am`).
//!
//! - **Splitting** (`git mailsplit`): a new mail starts at every `From <id> <date>` line whose date has a
//!   `hh:mm:ss` time and a year after 1990; text before the first one is a mail of its own (a bare mail, as
//!   `-b` allows). A CR before each LF is dropped (`--keep-cr` is off by default).
//! - **Headers** (`git mailinfo`): lines up to the first empty line or the first line that is not an RFC 2822
//!   header, with folded lines joined. `From:`, `Subject:` and `Date:` are kept; RFC 2047 encoded words are
//!   decoded and converted to UTF-8; `Content-Type` gives the MIME boundary, the charset and `format=flowed`
//!   (`delsp=yes`); `Content-Transfer-Encoding` gives quoted-printable or base64.
//! - **Body**: MIME parts are walked line by line as mailinfo does (part headers are not content; an end
//!   boundary adds one empty line); each part is decoded from its transfer encoding; `format=flowed` lines
//!   are unstuffed and joined; message lines are re-encoded from the part's charset to UTF-8 (the patch
//!   lines are left as they are). The message runs up to the patch break (`---`, `diff -`, `Index: `);
//!   everything after it is the patch. At the top of the body, in-body `From:`, `Subject:` and `Date:`
//!   headers (folded ones too) and a `[PATCH] …` line override the mail's; with scissors on
//!   (`mailinfo.scissors`), a `-- >8 --` line throws away everything above it.
//! - **Clean-up** (`git am`): the subject loses `Re:`, `[…]` prefixes and runs of white space; the author
//!   comes from `From:` as mailinfo parses it (a name that is empty, too long or holds `@<>` is
//!   replaced by the address); the message is `subject\n\nbody`, cleaned like `git stripspace` (trailing
//!   white space, runs of blank lines, leading and trailing blank lines).
//!
//! MIME parameters, transfer decodings and charsets are decoded with `mail-parser`; the line walk around
//! them is mailinfo's own heuristic, kept here so the results match `git am`. RFC 2047 words are found and
//! joined by mailinfo's `decode_header`, kept here too: `mail-parser`'s header parser treats comments and
//! the white space between words its own way (`( a b )` where git gives `(ab)`), and git's B and Q
//! decoders skip garbage where a strict decoder fails; their output still goes through `mail-parser`'s
//! charset tables. A mail
//! without a diff is not an error: it is returned as [`Mail::Skipped`] (a cover letter or an empty patch).

use gix::bstr::ByteSlice;
use serde::Serialize;

use super::patch::{self, FilePatch};

/// One patch read from a file.
#[derive(Debug, Clone)]
pub struct MailPatch {
    /// `(name, email)` from `From:`; absent for a plain diff.
    pub author: Option<(String, String)>,
    /// The author date as a git time (seconds, offset).
    pub date: Option<gix::date::Time>,
    /// The raw `Date:` value, for messages about it.
    pub date_raw: Option<String>,
    /// The commit message: subject, blank line, body; empty for a plain diff.
    pub message: String,
    pub files: Vec<FilePatch>,
    /// A fingerprint of the change itself (paths and hunk lines, not line numbers nor blob ids), so the same
    /// change written twice is recognised; hex SHA-256.
    pub fingerprint: String,
}

/// Why a mail carries nothing to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// `[PATCH 0/N]`: the series' cover letter.
    CoverLetter,
    /// A mail with no diff in it.
    Empty,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::CoverLetter => "cover letter",
            SkipReason::Empty => "empty",
        }
    }
}

/// A mail that carries nothing to apply, named by its subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The mail's subject as written (with its `[PATCH …]` prefix), or `mail N`.
    pub name: String,
    pub reason: SkipReason,
    /// The commit message it would have, for `--empty=keep`.
    #[serde(skip)]
    pub message: String,
    #[serde(skip)]
    pub author: Option<(String, String)>,
    #[serde(skip)]
    pub date: Option<gix::date::Time>,
}

/// One mail (or a plain diff) of a patch file.
#[derive(Debug, Clone)]
pub enum Mail {
    Patch(MailPatch),
    Skipped(Skipped),
}

/// Why a patch file cannot be used.
pub type ReadError = String;

/// How to read mails (what `git am` takes from the configuration).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// `mailinfo.scissors`: a scissors line drops the message above it.
    pub scissors: bool,
    /// `git apply -p<n>` for the diffs (`None`: git's default).
    pub strip: Option<usize>,
}

/// Read every patch in `text`.
pub fn read(text: &[u8]) -> Result<Vec<Mail>, ReadError> {
    read_with(text, ReadOptions::default())
}

/// Read every patch in `text` with `opts`.
pub fn read_with(text: &[u8], opts: ReadOptions) -> Result<Vec<Mail>, ReadError> {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let is_mail = is_from_line(first) || is_header_line(first);
    if !is_mail {
        let files = patch::parse_with(text, opts.strip).map_err(|e| e.to_string())?;
        if files.is_empty() {
            return Err("no diff found".into());
        }
        return Ok(vec![Mail::Patch(MailPatch {
            author: None,
            date: None,
            date_raw: None,
            message: String::new(),
            fingerprint: fingerprint(&files),
            files,
        })]);
    }
    let mails = split_mbox(text);
    let many = mails.len() > 1;
    // Mails are read on every core (decoding and inflating the binary patches of a real history is a fifth
    // of a weave); each is read alone, and the first failing one in order is reported, as when reading
    // them one after another.
    let read = |n: usize, mail: &Vec<u8>| read_mail(mail, opts, n + 1);
    let mut out = Vec::with_capacity(mails.len());
    for (n, m) in crate::kit::par::map(&mails, read).into_iter().enumerate() {
        out.push(m.map_err(|e| {
            if many {
                format!("mail {}: {e}", n + 1)
            } else {
                e
            }
        })?);
    }
    if out.is_empty() {
        return Err("no mail found".into());
    }
    Ok(out)
}

/// `git mailsplit`'s test for an mbox separator: `From ` then anything, a `hh:mm:ss` time, a year > 90.
fn is_from_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    if line.len() < 19 || !line.starts_with(b"From ") {
        return false;
    }
    let Some(colon) = line[5..].rfind_byte(b':').map(|c| c + 5) else {
        return false;
    };
    let digit = |i: Option<usize>| i.and_then(|i| line.get(i)).is_some_and(u8::is_ascii_digit);
    if !(digit(colon.checked_sub(4))
        && digit(colon.checked_sub(2))
        && digit(colon.checked_sub(1))
        && digit(Some(colon + 1))
        && digit(Some(colon + 2)))
    {
        return false;
    }
    let year = line[colon + 3..].trim_start();
    let digits: Vec<u8> = year
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .take(9)
        .collect();
    std::str::from_utf8(&digits)
        .ok()
        .and_then(|d| d.parse::<u64>().ok())
        .is_some_and(|y| y > 90)
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
        "mime-version:",
        "content-type:",
        "to:",
    ]
    .iter()
    .any(|h| lower.starts_with(h.as_bytes()))
}

/// Split an mbox into mails as `git mailsplit -b` does, dropping the CR of CRLF line ends.
fn split_mbox(text: &[u8]) -> Vec<Vec<u8>> {
    let mut mails: Vec<Vec<u8>> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    // mailsplit skips leading white space before the first mail.
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    for line in text[start..].split_inclusive(|&b| b == b'\n') {
        if is_from_line(line) && !cur.is_empty() {
            mails.push(std::mem::take(&mut cur));
        }
        match line.strip_suffix(b"\r\n") {
            Some(l) => {
                cur.extend_from_slice(l);
                cur.push(b'\n');
            }
            None => cur.extend_from_slice(line),
        }
    }
    if !cur.is_empty() {
        mails.push(cur);
    }
    mails
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Transfer {
    Plain,
    QuotedPrintable,
    Base64,
}

/// `git mailinfo`'s state for one mail.
struct Info {
    scissors: bool,
    /// Headers of the mail (`p_hdr_data`) and of the body (`s_hdr_data`): from, subject, date.
    top: [Option<String>; 3],
    inbody: [Option<String>; 3],
    boundaries: Vec<Vec<u8>>,
    transfer: Transfer,
    charset: String,
    flowed: bool,
    delsp: bool,
    header_stage: bool,
    in_patch: bool,
    accum: Vec<u8>,
    log: Vec<u8>,
    patch: Vec<u8>,
    patch_lines: usize,
    error: Option<String>,
}

const HEADERS: [&str; 3] = ["From", "Subject", "Date"];

/// `Name:` followed by white space, the name compared without case.
fn cmp_header(line: &[u8], name: &str) -> bool {
    let n = name.len();
    line.len() > n + 1
        && line[..n].eq_ignore_ascii_case(name.as_bytes())
        && line[n] == b':'
        && line[n + 1].is_ascii_whitespace()
}

/// `field-name ":"`, or an mbox `From ` line, as mailinfo counts headers.
fn is_rfc2822_header(line: &[u8]) -> bool {
    if line.starts_with(b"From ") || line.starts_with(b">From ") {
        return true;
    }
    for &c in line {
        if c == b':' {
            return true;
        }
        if !((33..=57).contains(&c) || (59..=126).contains(&c)) {
            return false;
        }
    }
    false
}

/// Decode RFC 2047 encoded words into UTF-8 as mailinfo's `decode_header` does (see [`decode_header`]);
/// a value it cannot decode is returned as written.
pub fn decode_words(s: &str) -> String {
    decode_header(s.as_bytes()).unwrap_or_else(|| s.to_owned())
}

/// mailinfo's `decode_header`: every `=?charset?B|Q?text?=` is decoded and converted to UTF-8; the text
/// between two encoded words is dropped when it is only white space (RFC 2047 §6.2), wherever it is,
/// parentheses included, and kept as written otherwise (white space before the first word too). `None`
/// where git gives up on the header and `git am` refuses the mail: an `=?` that does not start a whole
/// encoded word, or an encoding other than B or Q.
fn decode_header(v: &[u8]) -> Option<String> {
    let mut out: Vec<u8> = Vec::with_capacity(v.len());
    let mut at = 0;
    let mut after_word = false;
    while let Some(rel) = v[at..].find(b"=?") {
        let ep = at + rel;
        let between = &v[at..ep];
        if !(after_word && between.iter().all(u8::is_ascii_whitespace)) {
            out.extend_from_slice(between);
        }
        let rest = &v[ep + 2..];
        let q = rest.find_byte(b'?')?;
        let charset = &rest[..q];
        let encoding = *rest.get(q + 1)?;
        if rest.get(q + 2) != Some(&b'?') {
            return None;
        }
        let text_start = q + 3;
        let end = text_start + rest[text_start..].find(b"?=")?;
        let text = &rest[text_start..end];
        let decoded = match encoding.to_ascii_lowercase() {
            b'b' => decode_b_segment(text),
            b'q' => decode_q_segment(text, true),
            _ => return None,
        };
        out.extend_from_slice(&to_utf8(&decoded, &String::from_utf8_lossy(charset)));
        at = ep + 2 + end + 2;
        after_word = true;
    }
    out.extend_from_slice(&v[at..]);
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// mailinfo's `decode_q_segment`: `=XX` is a byte, a bad escape is kept, and in a header (`rfc2047`)
/// `_` is a space; `=` at the end (a soft line break) ends the text.
fn decode_q_segment(text: &[u8], rfc2047: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        i += 1;
        if c == b'=' {
            match text.get(i) {
                None | Some(b'\n') => break,
                _ => {}
            }
            let hex = text
                .get(i..i + 2)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(b) = hex {
                out.push(b);
                i += 2;
                continue;
            }
        }
        out.push(if rfc2047 && c == b'_' { b' ' } else { c });
    }
    out
}

/// mailinfo's `decode_b_segment`: base64 where every byte outside the alphabet (`=` padding included) is
/// skipped.
fn decode_b_segment(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut pos, mut acc) = (0u8, 0u32);
    for &c in text {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        match pos {
            0 => acc = v << 2,
            1 => {
                out.push((acc | (v >> 4)) as u8);
                acc = (v & 15) << 4;
            }
            2 => {
                out.push((acc | (v >> 2)) as u8);
                acc = (v & 3) << 6;
            }
            _ => {
                out.push((acc | v) as u8);
                acc = 0;
            }
        }
        pos = (pos + 1) % 4;
    }
    out
}

/// Re-encode `bytes` from `charset` to UTF-8 (`mail-parser`'s charset tables); unknown charsets and
/// UTF-8 itself are taken as UTF-8.
fn to_utf8(bytes: &[u8], charset: &str) -> Vec<u8> {
    let cs = charset.trim();
    if cs.is_empty() || cs.eq_ignore_ascii_case("utf-8") || cs.eq_ignore_ascii_case("utf8") {
        return bytes.to_vec();
    }
    if bytes.is_ascii() && !cs.to_ascii_lowercase().starts_with("utf-16") {
        // ISO-2022-JP is ASCII with escapes: only skip when there is no escape at all.
        if !bytes.contains(&0x1b) {
            return bytes.to_vec();
        }
    }
    match mail_parser::decoders::charsets::map::charset_decoder(cs.as_bytes()) {
        Some(decode) => decode(bytes).into_bytes(),
        None => bytes.to_vec(),
    }
}

impl Info {
    fn new(scissors: bool) -> Self {
        Info {
            scissors,
            top: Default::default(),
            inbody: Default::default(),
            boundaries: Vec::new(),
            transfer: Transfer::Plain,
            charset: String::new(),
            flowed: false,
            delsp: false,
            header_stage: true,
            in_patch: false,
            accum: Vec::new(),
            log: Vec::new(),
            patch: Vec::new(),
            patch_lines: 0,
            error: None,
        }
    }

    /// `check_header`: a header line (unfolded, no line end) of the mail, a part, or the body.
    fn check_header(&mut self, line: &[u8], inbody: bool, overwrite: bool) -> bool {
        for (i, name) in HEADERS.iter().enumerate() {
            let slot = if inbody {
                &self.inbody[i]
            } else {
                &self.top[i]
            };
            if (slot.is_none() || overwrite) && cmp_header(line, name) {
                let raw = line[name.len() + 2..].trim_end();
                let value = decode_header(raw).unwrap_or_else(|| {
                    self.error = Some(format!(
                        "cannot decode the {name}: header {:?} (git am refuses it too)",
                        raw.as_bstr()
                    ));
                    String::from_utf8_lossy(raw).into_owned()
                });
                if inbody {
                    self.inbody[i] = Some(value);
                } else {
                    self.top[i] = Some(value);
                }
                return true;
            }
        }
        if cmp_header(line, "Content-Type") {
            let value = &line["Content-Type".len() + 1..];
            let mut buf = value.trim().to_vec();
            buf.push(b'\n');
            let ct = mail_parser::parsers::MessageStream::new(&buf).parse_content_type();
            if let mail_parser::HeaderValue::ContentType(ct) = ct {
                if let Some(b) = ct.attribute("boundary") {
                    if self.boundaries.len() >= 5 {
                        self.error = Some("too many MIME boundaries to handle".into());
                    } else {
                        let mut full = b"--".to_vec();
                        full.extend_from_slice(b.as_bytes());
                        self.boundaries.push(full);
                    }
                }
                self.charset = ct.attribute("charset").unwrap_or_default().to_owned();
                self.flowed = ct
                    .attribute("format")
                    .is_some_and(|f| f.eq_ignore_ascii_case("flowed"));
                self.delsp = self.flowed
                    && ct
                        .attribute("delsp")
                        .is_some_and(|f| f.eq_ignore_ascii_case("yes"));
            }
            return true;
        }
        if cmp_header(line, "Content-Transfer-Encoding") {
            let v = line.to_ascii_lowercase();
            self.transfer = if v.find(b"base64").is_some() {
                Transfer::Base64
            } else if v.find(b"quoted-printable").is_some() {
                Transfer::QuotedPrintable
            } else {
                Transfer::Plain
            };
            return true;
        }
        cmp_header(line, "Message-Id")
    }

    fn flush_accum(&mut self) {
        if self.accum.is_empty() {
            return;
        }
        let acc = std::mem::take(&mut self.accum);
        let acc = acc.strip_suffix(b"\n").unwrap_or(&acc).to_vec();
        self.check_header(&acc, true, false);
    }

    fn is_inbody_header(&self, line: &[u8]) -> bool {
        HEADERS
            .iter()
            .enumerate()
            .any(|(i, h)| self.inbody[i].is_none() && cmp_header(line, h))
    }

    fn check_inbody_header(&mut self, line: &[u8]) -> bool {
        if !self.accum.is_empty() && (line[0] == b' ' || line[0] == b'\t') {
            if self.scissors && is_scissors_line(line) {
                self.flush_accum();
                return false;
            }
            if self.accum.ends_with(b"\n") {
                self.accum.pop();
            }
            self.accum.extend_from_slice(line);
            return true;
        }
        self.flush_accum();
        if line.starts_with(b">From") && line.get(5).is_some_and(u8::is_ascii_whitespace) {
            return is_format_patch_separator(&line[1..]);
        }
        if line.starts_with(b"[PATCH]") && line.get(7).is_some_and(u8::is_ascii_whitespace) {
            let l = line.strip_suffix(b"\n").unwrap_or(line);
            self.inbody[1] = Some(String::from_utf8_lossy(l).into_owned());
            return true;
        }
        if self.is_inbody_header(line) {
            self.accum.extend_from_slice(line);
            return true;
        }
        false
    }

    /// `handle_commit_msg`: true when `line` starts the patch.
    fn commit_msg(&mut self, line: &[u8]) -> bool {
        if self.header_stage && (line.is_empty() || line == b"\n") {
            if !self.accum.is_empty() {
                self.flush_accum();
                self.header_stage = false;
            }
            return false;
        }
        if self.header_stage {
            self.header_stage = self.check_inbody_header(line);
            if self.header_stage {
                return false;
            }
        }
        let line = to_utf8(line, &self.charset.clone());
        if self.scissors && is_scissors_line(&line) {
            self.log.clear();
            self.header_stage = true;
            self.inbody = Default::default();
            return false;
        }
        if patchbreak(&line) {
            return true;
        }
        self.log.extend_from_slice(&line);
        false
    }

    fn filter(&mut self, line: &[u8]) {
        if !self.in_patch {
            if !self.commit_msg(line) {
                return;
            }
            self.in_patch = true;
        }
        self.patch.extend_from_slice(line);
        self.patch_lines += 1;
    }

    /// `handle_filter_flowed`: undo `format=flowed` before filtering.
    fn filter_flowed(&mut self, line: &[u8], prev: &mut Vec<u8>) {
        if !self.flowed {
            self.filter(line);
            return;
        }
        let mut len = line.len();
        if line.ends_with(b"\n") {
            len -= 1;
            if len > 0 && line[len - 1] == b'\r' {
                len -= 1;
            }
        }
        if &line[..len] == b"-- " {
            if !prev.is_empty() {
                let p = std::mem::take(prev);
                self.filter(&p);
            }
            self.filter(line);
            return;
        }
        let mut line = line.to_vec();
        if len > 0 && line[0] == b' ' {
            line.remove(0);
            len -= 1;
        }
        if len > 0 && line[len - 1] == b' ' {
            prev.extend_from_slice(&line[..len - usize::from(self.delsp)]);
            return;
        }
        let mut joined = std::mem::take(prev);
        joined.extend_from_slice(&line);
        self.filter(&joined);
    }

    /// `handle_body`: the lines after the mail's headers.
    fn body(&mut self, lines: &[&[u8]]) {
        let mut i = 0;
        let mut prev: Vec<u8> = Vec::new();
        let mut flowed_prev: Vec<u8> = Vec::new();
        if !self.boundaries.is_empty() {
            match self.find_boundary(lines, i) {
                Some(k) => i = k,
                None => return,
            }
        }
        while i < lines.len() {
            let mut line: Vec<u8> = lines[i].to_vec();
            i += 1;
            if self.is_boundary(&line) {
                if !prev.is_empty() {
                    let p = std::mem::take(&mut prev);
                    self.filter_flowed(&p, &mut flowed_prev);
                }
                match self.handle_boundary(lines, &mut i, &line) {
                    Some(next) => line = next,
                    None => break,
                }
            }
            match self.transfer {
                Transfer::Plain => self.filter_flowed(&line, &mut flowed_prev),
                t => {
                    let decoded = if t == Transfer::Base64 {
                        decode_base64_line(&line)
                    } else {
                        decode_qp_line(&line)
                    };
                    prev.extend_from_slice(&decoded);
                    let whole = std::mem::take(&mut prev);
                    let mut rest: &[u8] = &whole;
                    while let Some(p) = rest.find_byte(b'\n') {
                        let (l, r) = rest.split_at(p + 1);
                        self.filter_flowed(l, &mut flowed_prev);
                        rest = r;
                    }
                    prev = rest.to_vec();
                }
            }
            if self.error.is_some() {
                break;
            }
        }
        if !prev.is_empty() {
            self.filter_flowed(&prev, &mut flowed_prev);
        }
        if !flowed_prev.is_empty() {
            let p = std::mem::take(&mut flowed_prev);
            self.filter(&p);
        }
        self.flush_accum();
    }

    fn is_boundary(&self, line: &[u8]) -> bool {
        self.boundaries.last().is_some_and(|b| line.starts_with(b))
    }

    fn find_boundary(&self, lines: &[&[u8]], from: usize) -> Option<usize> {
        (from..lines.len()).find(|&k| self.is_boundary(lines[k]))
    }

    /// At a boundary line: read the part's headers and return the part's first line (`None`: no more).
    fn handle_boundary(&mut self, lines: &[&[u8]], i: &mut usize, line: &[u8]) -> Option<Vec<u8>> {
        let mut line = line.to_vec();
        loop {
            let top = self.boundaries.last()?.clone();
            if line.len() >= top.len() + 2 && &line[top.len()..top.len() + 2] == b"--" {
                self.boundaries.pop();
                if self.boundaries.is_empty() {
                    self.filter(b"\n");
                    return None;
                }
                self.filter(b"\n");
                let k = self.find_boundary(lines, *i)?;
                line = lines[k].to_vec();
                *i = k + 1;
                continue;
            }
            break;
        }
        self.transfer = Transfer::Plain;
        self.charset.clear();
        self.flowed = false;
        self.delsp = false;
        while *i < lines.len() {
            let Some((h, next)) = read_header_line(lines, *i) else {
                break;
            };
            *i = next;
            self.check_header(&h, false, false);
        }
        // The line that ended the part's headers (usually the blank line) is not content.
        if *i >= lines.len() {
            return None;
        }
        *i += 1;
        let next = lines.get(*i)?.to_vec();
        *i += 1;
        Some(next)
    }
}

/// `read_one_header_line`: a header at `lines[i]` with its continuation lines, unfolded and right-trimmed,
/// and the index after it; `None` at an empty or non-header line.
fn read_header_line(lines: &[&[u8]], i: usize) -> Option<(Vec<u8>, usize)> {
    let first = lines.get(i)?.trim_end();
    if first.is_empty() || !is_rfc2822_header(first) {
        return None;
    }
    let mut h = first.to_vec();
    let mut k = i + 1;
    while let Some(l) = lines.get(k) {
        if !(l.starts_with(b" ") || l.starts_with(b"\t")) {
            break;
        }
        // The folding white space becomes one space; a continuation of only white space adds nothing.
        let c = l.trim_end();
        if let Some(rest) = c.get(1..) {
            h.push(b' ');
            h.extend_from_slice(rest);
        }
        k += 1;
    }
    Some((h, k))
}

fn is_format_patch_separator(line: &[u8]) -> bool {
    const SAMPLE: &[u8] =
        b"From e6807f3efca28b30decfecb1732a56c7db1137ee Mon Sep 17 00:00:00 2001\n";
    if line.len() != SAMPLE.len() || !line.starts_with(b"From ") {
        return false;
    }
    let hex = &line[5..45];
    hex.iter()
        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
        && line[45..] == SAMPLE[45..]
}

/// `patchbreak`: `diff -`, `Index: `, `--- name`, or a `---` line of dashes and white space.
fn patchbreak(line: &[u8]) -> bool {
    if line.starts_with(b"diff -") || line.starts_with(b"Index: ") {
        return true;
    }
    if line.len() < 4 || !line.starts_with(b"---") {
        return false;
    }
    if line[3] == b' ' && line.get(4).is_none_or(|c| !c.is_ascii_whitespace()) {
        return true;
    }
    for &c in &line[3..] {
        if c == b'\n' {
            return true;
        }
        if !c.is_ascii_whitespace() {
            break;
        }
    }
    false
}

/// `is_scissors_line`: a perforation of dashes with `>8`, `8<`, `>%` or `%<`, at least 8 wide and more
/// than a third of the line.
fn is_scissors_line(line: &[u8]) -> bool {
    let (mut scissors, mut gap, mut perforation) = (0usize, 0usize, 0usize);
    let (mut first, mut last) = (None, None);
    let mut in_perf = false;
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        if c.is_ascii_whitespace() {
            if in_perf {
                perforation += 1;
                gap += 1;
            }
            i += 1;
            continue;
        }
        last = Some(i);
        first.get_or_insert(i);
        if c == b'-' {
            in_perf = true;
            perforation += 1;
            i += 1;
            continue;
        }
        let pair = line.get(i..i + 2).unwrap_or_default();
        if [b">8", b"8<", b">%", b"%<"].iter().any(|p| pair == *p) {
            in_perf = true;
            perforation += 2;
            scissors += 2;
            i += 2;
            last = Some(i - 1);
            continue;
        }
        in_perf = false;
        i += 1;
    }
    let visible = match (first, last) {
        (Some(f), Some(l)) => l - f + 1,
        _ => 0,
    };
    scissors > 0 && 8 <= visible && visible < perforation * 3 && gap * 2 < perforation
}

/// Quoted-printable, one line as mailinfo decodes it (`=` at the end joins the next line).
fn decode_qp_line(line: &[u8]) -> Vec<u8> {
    // A soft break: drop `=` and the line end, so the next line continues this one.
    let (body, soft) = match line.strip_suffix(b"=\n") {
        Some(b) => (b, true),
        None => (line, false),
    };
    let mut out = mail_parser::decoders::quoted_printable::quoted_printable_decode(body)
        .unwrap_or_else(|| body.to_vec());
    if soft && out.ends_with(b"\n") {
        out.pop();
    }
    out
}

/// Base64, one line (mailinfo decodes each line alone).
fn decode_base64_line(line: &[u8]) -> Vec<u8> {
    let t: Vec<u8> = line
        .iter()
        .copied()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/' || *c == b'=')
        .collect();
    if t.is_empty() {
        return Vec::new();
    }
    mail_parser::decoders::base64::base64_decode(&t).unwrap_or_default()
}

/// `cleanup_space`: every run of white space becomes one space.
fn cleanup_space(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for c in s.chars() {
        if c.is_ascii_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// `cleanup_subject`: drop leading `Re:`, white space, `:` and `[…]` groups, then trim.
fn clean_subject(s: &str) -> String {
    let mut s = s;
    loop {
        let b = s.as_bytes();
        match b.first() {
            Some(b'r' | b'R')
                if b.len() > 3 && b[1].eq_ignore_ascii_case(&b'e') && b[2] == b':' =>
            {
                s = &s[3..];
            }
            Some(b' ' | b'\t' | b':') => s = &s[1..],
            Some(b'[') => match s.find(']') {
                Some(end) => s = &s[end + 1..],
                None => break,
            },
            _ => break,
        }
    }
    s.trim().to_owned()
}

/// mailinfo's `unquote_quoted_pair`: quoted strings lose their quotes, comments keep their parentheses.
fn unquote_quoted_pair(s: &str) -> String {
    fn comment(out: &mut String, it: &mut std::str::Chars<'_>) {
        out.push('(');
        let mut literal = false;
        while let Some(c) = it.next() {
            if literal {
                literal = false;
            } else {
                match c {
                    '\\' => {
                        literal = true;
                        continue;
                    }
                    '(' => {
                        comment(out, it);
                        continue;
                    }
                    ')' => {
                        out.push(')');
                        return;
                    }
                    _ => {}
                }
            }
            out.push(c);
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match c {
            '"' => {
                let mut literal = false;
                for c in it.by_ref() {
                    if literal {
                        literal = false;
                    } else if c == '\\' {
                        literal = true;
                        continue;
                    } else if c == '"' {
                        break;
                    }
                    out.push(c);
                }
            }
            '(' => comment(&mut out, &mut it),
            c => out.push(c),
        }
    }
    out
}

/// mailinfo's `get_sane_name` as git has it since 2.33: a name that is empty, longer than
/// 60 bytes or holds `@`, `<` or `>` gives way to the address; one- and two-letter names stay (before,
/// anything shorter than 3 did).
fn sane_name(name: &str, email: &str) -> String {
    if name.is_empty() || name.len() > 60 || name.contains(['@', '<', '>']) {
        email.to_owned()
    } else {
        name.to_owned()
    }
}

/// mailinfo's `handle_from`: `(name, email)`; the email is empty when there is none.
fn parse_from(from: &str) -> (String, String) {
    let f = unquote_quoted_pair(from);
    let Some(at) = f.find('@') else {
        // parse_bogus_from: `Name <something>` without an @.
        if let (Some(bra), Some(ket)) = (from.find('<'), from.find('>')) {
            if bra < ket {
                let email = from[bra + 1..ket].to_owned();
                let name = from[..bra].trim();
                return (sane_name(name, &email), email);
            }
        }
        return (String::new(), String::new());
    };
    let bytes = f.as_bytes();
    let mut start = at;
    let mut f = f.clone();
    while start > 0 {
        let c = bytes[start - 1];
        if c.is_ascii_whitespace() {
            break;
        }
        if c == b'<' {
            f.replace_range(start - 1..start, " ");
            break;
        }
        start -= 1;
    }
    let el = f[start..]
        .find([' ', '\n', '\t', '\r', '\x0b', '\x0c', '>'])
        .unwrap_or(f.len() - start);
    let email = f[start..start + el].to_owned();
    let remove_end = (start + el + usize::from(start + el < f.len())).min(f.len());
    f.replace_range(start..remove_end, "");
    let mut name = cleanup_space(&f).trim().to_owned();
    if name.starts_with('(') && name.ends_with(')') && name.len() >= 2 {
        name = name[1..name.len() - 1].to_owned();
    }
    (sane_name(&name, &email), email)
}

/// `git stripspace`: no trailing white space, no runs of blank lines, none at either end.
pub fn stripspace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0usize;
    for line in text.split('\n') {
        let l = line.trim_end();
        if l.is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() && blank_run > 0 {
            out.push('\n');
        }
        blank_run = 0;
        out.push_str(l);
        out.push('\n');
    }
    out
}

fn read_mail(mail: &[u8], opts: ReadOptions, n: usize) -> Result<Mail, ReadError> {
    let lines: Vec<&[u8]> = mail.split_inclusive(|&b| b == b'\n').collect();
    let mut info = Info::new(opts.scissors);
    let mut i = 0;
    while let Some((h, next)) = read_header_line(&lines, i) {
        info.check_header(&h, false, true);
        i = next;
    }
    info.body(&lines[i.min(lines.len())..]);
    if let Some(e) = info.error.take() {
        return Err(e);
    }
    let pick = |k: usize| {
        if info.patch_lines > 0 && info.inbody[k].is_some() {
            info.inbody[k].clone()
        } else {
            info.top[k].clone()
        }
    };
    let raw_subject = pick(1).unwrap_or_default();
    let subject = cleanup_space(&clean_subject(&raw_subject));
    // A mail without `From:` has no address: git am refuses it, and so does the engine (an empty email).
    let author = Some(
        pick(0)
            .map(|f| parse_from(&cleanup_space(&f)))
            .unwrap_or_default(),
    );
    let date_raw = pick(2).map(|d| cleanup_space(&d));
    let log = String::from_utf8_lossy(&info.log);
    let message = stripspace(&format!("{subject}\n\n{log}"));
    let date = date_raw.as_deref().and_then(parse_date);

    let files = if info.patch.is_empty() {
        Vec::new()
    } else {
        patch::parse_with(&info.patch, opts.strip).map_err(|e| e.to_string())?
    };
    if files.is_empty() {
        let name = if raw_subject.trim().is_empty() {
            format!("mail {n}")
        } else {
            cleanup_space(raw_subject.trim())
        };
        return Ok(Mail::Skipped(Skipped {
            reason: if is_cover_letter(&raw_subject) {
                SkipReason::CoverLetter
            } else {
                SkipReason::Empty
            },
            name,
            message,
            author,
            date,
        }));
    }
    Ok(Mail::Patch(MailPatch {
        author,
        date,
        date_raw,
        message,
        fingerprint: fingerprint(&files),
        files,
    }))
}

/// A `[PATCH 0/N]`-style subject (`[RFC PATCH v2 00/12]` too).
fn is_cover_letter(subject: &str) -> bool {
    let s = subject.trim_start();
    let Some(rest) = s.strip_prefix('[') else {
        return false;
    };
    let Some(end) = rest.find(']') else {
        return false;
    };
    rest[..end].split_whitespace().any(|w| {
        w.split_once('/').is_some_and(|(a, b)| {
            !a.is_empty()
                && a.bytes().all(|c| c == b'0')
                && !b.is_empty()
                && b.bytes().all(|c| c.is_ascii_digit())
        })
    })
}

fn parse_date(v: &str) -> Option<gix::date::Time> {
    gix::date::parse(v.trim(), None).ok()
}

/// SHA-256 of a text, hex.
pub fn fingerprint_text(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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

    fn patches(text: &[u8]) -> Vec<MailPatch> {
        read(text)
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                Mail::Patch(p) => Some(p),
                Mail::Skipped(_) => None,
            })
            .collect()
    }

    #[test]
    fn format_patch_mail() {
        let p = patches(ONE.as_bytes());
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
        let p = patches(two.as_bytes());
        assert_eq!(p.len(), 2);
        assert_ne!(p[0].fingerprint, p[1].fingerprint);
        let plain = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n a\n+b\n";
        let q = patches(plain.as_bytes());
        assert!(q[0].author.is_none());
        // Same change, different numbers and ids: same fingerprint.
        assert_eq!(q[0].fingerprint, p[0].fingerprint);
        assert!(read(b"just text\n").is_err());
    }

    /// Mails are read on several threads; the error is still the first failing mail's, as when they were
    /// read in order (a later mail failing first on another thread does not win).
    #[test]
    fn the_first_failing_mail_of_many_is_the_one_reported() {
        let broken = |why: &str| {
            ONE.replace(
                "index 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n a\n+b\n",
                &format!("index 1111111..2222222 100644\nGIT binary patch\n{why}\n\n"),
            )
        };
        let mut text = ONE.to_owned();
        text.push_str(&broken("literal x"));
        for _ in 0..50 {
            text.push_str(&broken("neither"));
        }
        let e = read(text.as_bytes()).unwrap_err();
        assert!(e.starts_with("mail 2: "), "{e}");
        assert!(e.contains("bad binary patch size"), "{e}");
    }

    #[test]
    fn encoded_words_subjects_and_addresses() {
        assert_eq!(decode_words("=?utf-8?q?a_b?= =?utf-8?b?Yw==?= d"), "a bc d");
        assert_eq!(decode_words("(=?utf-8?q?a?= \t=?utf-8?q?b?=)"), "(ab)");
        assert_eq!(
            decode_words(" ( =?utf-8?q?a?= x =?utf-8?q?b?= )"),
            " ( a x b )"
        );
        assert_eq!(decode_header(b"a =? b"), None);
        assert_eq!(sane_name("wm", "x@y"), "wm");
        assert_eq!(sane_name("", "x@y"), "x@y");
        assert_eq!(clean_subject("[PATCH v2 3/7] Re: fix"), "fix");
        assert_eq!(clean_subject("Изменён"), "Изменён");
        assert_eq!(clean_subject("[PATCH] Ру"), "Ру");
        assert_eq!(
            parse_from("\"Doe, Jane\" <jane@x.org>"),
            ("Doe, Jane".into(), "jane@x.org".into())
        );
        assert_eq!(
            parse_from("Jane (the tester) Doe <jane@x.org>"),
            ("Jane (the tester) Doe".into(), "jane@x.org".into())
        );
        assert_eq!(parse_from("bogosity"), (String::new(), String::new()));
        assert!(is_cover_letter("[PATCH v3 00/12] series"));
        assert!(!is_cover_letter("[PATCH 1/2] one"));
        assert!(is_scissors_line(b"-- >8 --\n"));
        assert!(!is_scissors_line(b"-- \n"));
        assert_eq!(stripspace("a  \n\n\n b\n\n"), "a\n\n b\n");
    }

    #[test]
    fn multibyte_subject_does_not_panic() {
        let m = ONE.replace("[PATCH 1/2] tidy: sort the\n imports", "Изменён");
        let p = patches(m.as_bytes());
        assert!(p[0].message.starts_with("Изменён\n"));
    }
}
