//! Unified diffs as `git diff`, `git format-patch` and `diff -u` write them, parsed into per-file changes.
//!
//! Understood: git's extended headers (`new file mode`, `deleted file mode`, `old mode`/`new mode`,
//! `rename from`/`rename to`, `copy from`/`copy to`, `similarity index`, `index A..B [MODE]`), quoted paths,
//! `--- `/`+++ ` headers with or without git's `a/` and `b/` prefixes (plain diffs lose their first path
//! component, as `git apply -p1` does), hunks with `\ No newline at end of file`, `Binary files … differ`
//! and `GIT binary patch` blocks (`literal` and `delta`, decoded). Lines outside
//! a file's diff (a mail's signature, a diffstat) are ignored.

use gix::bstr::{BString, ByteSlice};

use super::binary;

/// One line of a hunk, with its line terminator (absent when the file ends without a newline).
pub type Line = Vec<u8>;

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// As written in the header: the first old line (1-based; 0 for an insertion into an empty file).
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    /// The header line without its terminator, for reports.
    pub header: String,
    /// Context and removed lines, in order: what must be found in the file.
    pub preimage: Vec<Line>,
    /// Context and added lines, in order: what replaces it.
    pub postimage: Vec<Line>,
    /// Context lines before the first change and after the last one.
    pub leading: usize,
    pub trailing: usize,
    /// Every line in order, tagged `b' '`, `b'-'` or `b'+'` (for fingerprints and footprints).
    pub lines: Vec<(u8, Line)>,
}

/// What a binary diff carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binary {
    /// `Binary files a/x and b/x differ`: no content; only usable when the new blob is in the repository.
    NoData,
    /// `GIT binary patch` / `literal N`: the whole new content, decoded.
    Literal(Vec<u8>),
    /// `GIT binary patch` / `delta N`: a git delta against the old blob, decoded.
    Delta(Vec<u8>),
}

/// The change to one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before (absent for a new file).
    pub old_path: Option<BString>,
    /// The path after (absent for a deleted file).
    pub new_path: Option<BString>,
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
    /// The (usually abbreviated) blob ids of the `index` line.
    pub old_id: Option<String>,
    pub new_id: Option<String>,
    pub rename: bool,
    pub copy: bool,
    pub hunks: Vec<Hunk>,
    pub binary: Option<Binary>,
}

impl FilePatch {
    pub fn is_new(&self) -> bool {
        self.old_path.is_none()
    }

    pub fn is_delete(&self) -> bool {
        self.new_path.is_none()
    }

    /// The path people know the change by: the new path, else the old one.
    pub fn path(&self) -> &BString {
        self.new_path
            .as_ref()
            .or(self.old_path.as_ref())
            .expect("a file patch has at least one path")
    }
}

/// A diff that cannot be read, with the 1-based line of the diff text where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parse every file diff in `text`. An empty result means `text` holds no diff at all.
pub fn parse(text: &[u8]) -> Result<Vec<FilePatch>, ParseError> {
    parse_with(text, None)
}

/// [`parse`] with `git apply -p<strip>`: that many leading components go from every name of the diff
/// headers (`None`: git's default, 1 for git diffs, guessed for traditional ones).
pub fn parse_with(text: &[u8], strip: Option<usize>) -> Result<Vec<FilePatch>, ParseError> {
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let mut files = Vec::new();
    let mut i = 0;
    let git_p = strip.unwrap_or(1);
    // The `-p` of traditional diffs, guessed once from the first of them as `git apply` does.
    let mut p_value: Option<usize> = strip;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with(b"diff --git ") {
            let (file, next) = parse_git_file(&lines, i, git_p)?;
            files.push(file);
            i = next;
        } else if line.starts_with(b"--- ")
            && lines.get(i + 1).is_some_and(|l| l.starts_with(b"+++ "))
            && lines.get(i + 2).is_some_and(|l| l.starts_with(b"@@ "))
        {
            let file = traditional_file(
                line,
                lines[i + 1],
                p_value.get_or_insert_with(|| guess_p_value(&line[4..], &lines[i + 1][4..])),
            )
            .ok_or_else(|| err(i, "cannot tell which file this diff changes"))?;
            let mut file = file;
            let next = parse_hunks(&lines, i + 2, &mut file)?;
            files.push(file);
            i = next;
        } else {
            i += 1;
        }
    }
    Ok(files)
}

fn err(i: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line: i + 1,
        message: message.into(),
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn parse_mode(s: &[u8]) -> Option<u32> {
    u32::from_str_radix(std::str::from_utf8(s.trim()).ok()?, 8).ok()
}

/// Parse `diff --git` and the extended header lines after it, then the hunks or binary data.
fn parse_git_file(
    lines: &[&[u8]],
    start: usize,
    p: usize,
) -> Result<(FilePatch, usize), ParseError> {
    let mut file = FilePatch::default();
    let (a, b) = git_header_paths(trim_eol(&lines[start][11..]), p);
    let (mut new_file, mut deleted) = (false, false);
    let mut i = start + 1;
    let mut minus: Option<Option<BString>> = None;
    let mut plus: Option<Option<BString>> = None;
    while i < lines.len() {
        let line = trim_eol(lines[i]);
        if let Some(m) = line.strip_prefix(b"old mode ") {
            file.old_mode = parse_mode(m);
        } else if let Some(m) = line.strip_prefix(b"new mode ") {
            file.new_mode = parse_mode(m);
        } else if let Some(m) = line.strip_prefix(b"deleted file mode ") {
            file.old_mode = parse_mode(m);
            deleted = true;
        } else if let Some(m) = line.strip_prefix(b"new file mode ") {
            file.new_mode = parse_mode(m);
            new_file = true;
        } else if let Some(p) = line
            .strip_prefix(b"rename from ")
            .or_else(|| line.strip_prefix(b"rename old "))
        {
            file.old_path = Some(unquote(p));
            file.rename = true;
        } else if let Some(p) = line
            .strip_prefix(b"rename to ")
            .or_else(|| line.strip_prefix(b"rename new "))
        {
            file.new_path = Some(unquote(p));
            file.rename = true;
        } else if let Some(p) = line.strip_prefix(b"copy from ") {
            file.old_path = Some(unquote(p));
            file.copy = true;
        } else if let Some(p) = line.strip_prefix(b"copy to ") {
            file.new_path = Some(unquote(p));
            file.copy = true;
        } else if line.starts_with(b"similarity index ")
            || line.starts_with(b"dissimilarity index ")
        {
        } else if let Some(rest) = line.strip_prefix(b"index ") {
            let mut parts = rest.splitn(2, |&b| b == b' ');
            let ids = parts.next().unwrap_or_default();
            if let Some((o, n)) = ids.split_once_str("..") {
                file.old_id = Some(String::from_utf8_lossy(o).into_owned());
                file.new_id = Some(String::from_utf8_lossy(n).into_owned());
            }
            if let Some(m) = parts.next().and_then(parse_mode) {
                file.old_mode.get_or_insert(m);
                file.new_mode.get_or_insert(m);
            }
        } else if let Some(path) = line.strip_prefix(b"--- ") {
            minus = git_side_path(path, p);
        } else if let Some(path) = line.strip_prefix(b"+++ ") {
            plus = git_side_path(path, p);
        } else {
            break;
        }
        i += 1;
    }
    // The most reliable names first: ---/+++, then rename/copy lines, then the `diff --git` line.
    if let Some(m) = minus {
        file.old_path = m;
    } else if !(file.rename || file.copy || new_file) {
        file.old_path = a.clone();
    }
    if let Some(p) = plus {
        file.new_path = p;
    } else if !(file.rename || file.copy || deleted) {
        file.new_path = b.clone();
    }
    if new_file {
        file.old_path = None;
    }
    if deleted {
        file.new_path = None;
    }
    if file.old_path.is_none() && file.new_path.is_none() {
        return Err(err(start, "cannot tell which file this diff changes"));
    }
    let next_line = lines.get(i).map(|l| trim_eol(l)).unwrap_or_default();
    if next_line.starts_with(b"@@ ") {
        i = parse_hunks(lines, i, &mut file)?;
    } else if next_line.starts_with(b"Binary files ") {
        file.binary = Some(Binary::NoData);
        i += 1;
    } else if next_line == b"GIT binary patch" {
        let (bin, next) = parse_binary(lines, i + 1)?;
        file.binary = Some(bin);
        i = next;
    }
    Ok((file, i))
}

/// The two names of the `diff --git` line, each without its first component (`a/`, `b/`, or a mnemonic
/// prefix such as `i/`, `w/`, `c/`, `o/`: `git apply -p1` strips whatever it is). Unambiguous when quoted;
/// otherwise, as `git apply` does, the split is where both names are the same after stripping, and for
/// different names (a rename or copy, named again on its own lines) the first ` b/`.
fn git_header_paths(rest: &[u8], n: usize) -> (Option<BString>, Option<BString>) {
    let strip_component = |p: &[u8]| strip_components(p, n);
    if rest.starts_with(b"\"") {
        if let Some((a, tail)) = split_quoted(rest) {
            let b = tail.trim_start();
            let b = if b.starts_with(b"\"") {
                split_quoted(b).map(|(p, _)| p)
            } else {
                Some(b.into())
            };
            return (strip_component(&a), b.and_then(|b| strip_component(&b)));
        }
    }
    if let Some(q) = rest.find(b" \"") {
        if let Some((b, _)) = split_quoted(&rest[q + 1..]) {
            return (strip_component(&rest[..q]), strip_component(&b));
        }
    }
    // Same name on both sides: the one split where both halves agree once stripped.
    let mut found = None;
    for (p, _) in rest.iter().enumerate().filter(|(_, &c)| c == b' ') {
        let (a, b) = (strip_component(&rest[..p]), strip_component(&rest[p + 1..]));
        if a.is_some() && a == b {
            if found.is_some() {
                found = None;
                break;
            }
            found = Some((a, b));
        }
    }
    if let Some(f) = found {
        return f;
    }
    match rest.find(" b/") {
        Some(p) => (strip_component(&rest[..p]), strip_component(&rest[p + 1..])),
        None => (None, None),
    }
}

/// `p` without its first `n` path components (`-p<n>`); `None` when nothing is left.
fn strip_components(p: &[u8], n: usize) -> Option<BString> {
    let mut rest = p;
    for _ in 0..n {
        let slash = rest.find_byte(b'/')?;
        rest = rest[slash + 1..].trim_start_with(|c| c == '/');
    }
    (!rest.is_empty()).then(|| rest.into())
}

/// A `--- `/`+++ ` name of a git diff: `/dev/null` is absent, otherwise the first component goes (`-p1`).
fn git_side_path(raw: &[u8], n: usize) -> Option<Option<BString>> {
    let raw = trim_eol(raw);
    let path: BString = if raw.starts_with(b"\"") {
        split_quoted(raw)
            .map(|(p, _)| p)
            .unwrap_or_else(|| raw.into())
    } else {
        let end = raw.find_byte(b'\t').unwrap_or(raw.len());
        raw[..end].trim_end().into()
    };
    if path == "/dev/null" {
        return Some(None);
    }
    Some(Some(strip_components(&path, n).unwrap_or(path)))
}

/// The name in a traditional `--- `/`+++ ` line and whether its timestamp is the epoch (`diff -N`'s mark
/// of a missing file): the name ends at a tab, or before a trailing timestamp, as `git apply` reads it.
fn traditional_name(raw: &[u8]) -> (BString, bool) {
    let raw = trim_eol(raw);
    if raw.starts_with(b"\"") {
        if let Some((p, rest)) = split_quoted(raw) {
            return (p, is_epoch(rest.trim()));
        }
    }
    // Only a timestamp after a tab can mark a missing file (`has_epoch_timestamp` looks after the last tab).
    match raw.find_byte(b'\t') {
        Some(t) => {
            let last = raw.rfind_byte(b'\t').unwrap_or(t);
            (raw[..t].trim_end().into(), is_epoch(raw[last + 1..].trim()))
        }
        None => match timestamp_start(raw) {
            Some(s) => (raw[..s].trim_end().into(), false),
            None => (raw.trim_end().into(), false),
        },
    }
}

/// Where a trailing `YYYY-MM-DD hh:mm:ss…` timestamp after spaces begins.
fn timestamp_start(line: &[u8]) -> Option<usize> {
    let mut at = None;
    for (i, w) in line.windows(11).enumerate() {
        let date = w[1..].iter().enumerate().all(|(k, &c)| match k {
            4 | 7 => c == b'-',
            _ => c.is_ascii_digit(),
        });
        if w[0] == b' ' && date {
            at = Some(i + 1);
        }
    }
    at
}

/// `git apply`'s `has_epoch_timestamp`: `1970-01-01 00:00:00` (or `1969-12-31` with a negative zone) and
/// the zone bringing it back to the epoch.
fn is_epoch(stamp: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(stamp) else {
        return false;
    };
    let (date, rest) = match s.split_once(' ') {
        Some(x) => x,
        None => return false,
    };
    let epoch_hour = match date {
        "1970-01-01" => 0,
        "1969-12-31" => 24,
        _ => return false,
    };
    let rest = rest.trim_start();
    let (time, zone) = match rest.split_once(' ') {
        Some((t, z)) => (t, z.trim()),
        None => return false,
    };
    let mut tp = time.split(':');
    let (Some(h), Some(m), Some(sec)) = (tp.next(), tp.next(), tp.next()) else {
        return false;
    };
    let sec_ok = sec.split_once('.').map_or(sec == "00", |(w, f)| {
        w == "00" && f.bytes().all(|c| c == b'0')
    });
    let (Ok(h), Ok(m)) = (h.parse::<i64>(), m.parse::<i64>()) else {
        return false;
    };
    if !sec_ok || zone.len() < 5 {
        return false;
    }
    let sign = match zone.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return false,
    };
    let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
    let Ok(z) = digits.parse::<i64>() else {
        return false;
    };
    let offset = sign * ((z / 100) * 60 + z % 100);
    h * 60 + m - offset == epoch_hour * 60
}

/// `-p0` when both names of the first traditional diff have no `/`, else `-p1` (`git apply`'s guess).
fn guess_p_value(first: &[u8], second: &[u8]) -> usize {
    let has_slash = |raw: &[u8]| {
        let (name, _) = traditional_name(raw);
        (name != "/dev/null").then(|| name.contains(&b'/'))
    };
    match (has_slash(first), has_slash(second)) {
        (Some(false), None | Some(false)) | (None, Some(false)) => 0,
        _ => 1,
    }
}

fn strip_p(name: &BString, p: usize) -> Option<BString> {
    let mut rest: &[u8] = name.as_ref();
    for _ in 0..p {
        let slash = rest.find_byte(b'/')?;
        rest = rest[slash + 1..].trim_start_with(|c| c == '/');
    }
    (!rest.is_empty()).then(|| rest.into())
}

/// A traditional (`diff -u`) file header, read as `git apply` does: `/dev/null` or an epoch timestamp
/// marks a created or deleted file, and of two names the shorter one wins when it is a prefix of the other
/// (`x.c.orig` against `x.c` keeps `x.c`; both sides then name the same file).
fn traditional_file(minus: &[u8], plus: &[u8], p: &mut usize) -> Option<FilePatch> {
    let (first, first_epoch) = traditional_name(&minus[4..]);
    let (second, second_epoch) = traditional_name(&plus[4..]);
    let mut file = FilePatch::default();
    if first == "/dev/null" {
        file.new_path = Some(strip_p(&second, *p)?);
    } else if second == "/dev/null" {
        file.old_path = Some(strip_p(&first, *p)?);
    } else {
        let a = strip_p(&first, *p)?;
        let b = strip_p(&second, *p)?;
        let name = if a.len() < b.len() && b.starts_with(a.as_slice()) {
            a
        } else {
            b
        };
        if first_epoch {
            file.new_path = Some(name);
        } else if second_epoch {
            file.old_path = Some(name);
        } else {
            file.old_path = Some(name.clone());
            file.new_path = Some(name);
        }
    }
    Some(file)
}

fn unquote(p: &[u8]) -> BString {
    let p = trim_eol(p);
    if p.starts_with(b"\"") {
        if let Some((s, _)) = split_quoted(p) {
            return s;
        }
    }
    p.into()
}

/// A C-quoted string at the start of `s` (git's quoting of unusual paths), and what follows it; `None` when
/// `s` is not quoted or the quoting is broken (an unknown escape, an octal escape over `\377`, no closing
/// quote), which `git apply` also refuses. gix's reader follows git's `unquote_c_style`.
fn split_quoted(s: &[u8]) -> Option<(BString, &[u8])> {
    if !s.starts_with(b"\"") {
        return None;
    }
    let (path, consumed) = gix::quote::ansi_c::undo(s.as_bstr()).ok()?;
    Some((path.into_owned(), &s[consumed..]))
}

/// `@@ -a[,b] +c[,d] @@` → (a, b, c, d).
fn parse_range_header(line: &[u8]) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix(b"@@ -")?;
    let end = rest.find(b" @@")?;
    let (old, new) = rest[..end].split_once_str(" +")?;
    let range = |r: &[u8]| -> Option<(usize, usize)> {
        let r = std::str::from_utf8(r).ok()?;
        match r.split_once(',') {
            Some((s, l)) => Some((s.parse().ok()?, l.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

fn parse_hunks(lines: &[&[u8]], mut i: usize, file: &mut FilePatch) -> Result<usize, ParseError> {
    while i < lines.len() && lines[i].starts_with(b"@@ ") {
        let header = trim_eol(lines[i]);
        let (old_start, old_len, new_start, new_len) =
            parse_range_header(header).ok_or_else(|| err(i, "malformed hunk header"))?;
        let mut hunk = Hunk {
            old_start,
            old_len,
            new_start,
            new_len,
            header: String::from_utf8_lossy(header).into_owned(),
            preimage: Vec::new(),
            postimage: Vec::new(),
            leading: 0,
            trailing: 0,
            lines: Vec::new(),
        };
        let (mut old_left, mut new_left) = (old_len, new_len);
        i += 1;
        let mut seen_change = false;
        while old_left > 0 || new_left > 0 {
            let Some(&raw) = lines.get(i) else {
                return Err(err(i, format!("hunk {} ends early", hunk.header)));
            };
            // Some tools strip the single space of an empty context line.
            let (tag, body): (u8, &[u8]) = if raw == b"\n" || raw == b"\r\n" {
                (b' ', raw)
            } else {
                (raw[0], &raw[1..])
            };
            match tag {
                b' ' if old_left > 0 && new_left > 0 => {
                    old_left -= 1;
                    new_left -= 1;
                    hunk.preimage.push(body.to_vec());
                    hunk.postimage.push(body.to_vec());
                    if seen_change {
                        hunk.trailing += 1;
                    } else {
                        hunk.leading += 1;
                    }
                }
                b'-' if old_left > 0 => {
                    old_left -= 1;
                    hunk.preimage.push(body.to_vec());
                    seen_change = true;
                    hunk.trailing = 0;
                }
                b'+' if new_left > 0 => {
                    new_left -= 1;
                    hunk.postimage.push(body.to_vec());
                    seen_change = true;
                    hunk.trailing = 0;
                }
                b'\\' => {
                    i += 1;
                    no_newline(&mut hunk);
                    continue;
                }
                _ => return Err(err(i, format!("unexpected line in hunk {}", hunk.header))),
            }
            hunk.lines.push((tag, body.to_vec()));
            i += 1;
        }
        if lines.get(i).is_some_and(|l| l.starts_with(b"\\")) {
            no_newline(&mut hunk);
            i += 1;
        }
        file.hunks.push(hunk);
    }
    Ok(i)
}

/// `\ No newline at end of file`: the line before it has no terminator.
fn no_newline(hunk: &mut Hunk) {
    let Some((tag, last)) = hunk.lines.last_mut() else {
        return;
    };
    let strip = |l: &mut Vec<u8>| {
        if l.ends_with(b"\n") {
            l.pop();
        }
    };
    strip(last);
    match *tag {
        b' ' => {
            hunk.preimage.last_mut().map(strip);
            hunk.postimage.last_mut().map(strip);
        }
        b'-' => {
            hunk.preimage.last_mut().map(strip);
        }
        _ => {
            hunk.postimage.last_mut().map(strip);
        }
    }
}

fn parse_binary(lines: &[&[u8]], mut i: usize) -> Result<(Binary, usize), ParseError> {
    let header = lines.get(i).map(|l| trim_eol(l)).unwrap_or_default();
    let (delta, size) = if let Some(n) = header.strip_prefix(b"literal ") {
        (false, n)
    } else if let Some(n) = header.strip_prefix(b"delta ") {
        (true, n)
    } else {
        return Err(err(i, "GIT binary patch without literal or delta"));
    };
    let size: usize = std::str::from_utf8(size)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| err(i, "bad binary patch size"))?;
    i += 1;
    let start = i;
    while i < lines.len() && !trim_eol(lines[i]).is_empty() {
        i += 1;
    }
    let encoded: Vec<&[u8]> = lines[start..i].iter().map(|l| trim_eol(l)).collect();
    // Skip the reverse block git writes after the forward one.
    let mut end = i + 1;
    if lines
        .get(end)
        .is_some_and(|l| l.starts_with(b"literal ") || l.starts_with(b"delta "))
    {
        end += 1;
        while end < lines.len() && !trim_eol(lines[end]).is_empty() {
            end += 1;
        }
        end += 1;
    }
    let data = binary::decode_literal(&encoded, size).map_err(|m| err(start, m))?;
    let bin = if delta {
        Binary::Delta(data)
    } else {
        Binary::Literal(data)
    };
    Ok((bin, end.min(lines.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_diff_with_rename_mode_and_no_newline() {
        let text = b"diff --git a/old.txt b/new.txt
similarity index 90%
rename from old.txt
rename to new.txt
index 1234567..89abcde 100644
--- a/old.txt
+++ b/new.txt
@@ -1,2 +1,2 @@
 one
-two
\\ No newline at end of file
+deux
\\ No newline at end of file
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 1111111..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
-- 
2.47.3\n";
        let files = parse(text).unwrap();
        assert_eq!(files.len(), 3);
        let f = &files[0];
        assert!(f.rename);
        assert_eq!(f.old_path.as_ref().unwrap(), "old.txt");
        assert_eq!(f.new_path.as_ref().unwrap(), "new.txt");
        assert_eq!(f.old_id.as_deref(), Some("1234567"));
        assert_eq!(f.new_mode, Some(0o100644));
        assert_eq!(
            f.hunks[0].preimage,
            vec![b"one\n".to_vec(), b"two".to_vec()]
        );
        assert_eq!(
            f.hunks[0].postimage,
            vec![b"one\n".to_vec(), b"deux".to_vec()]
        );
        assert_eq!(f.hunks[0].leading, 1);
        let m = &files[1];
        assert_eq!((m.old_mode, m.new_mode), (Some(0o100644), Some(0o100755)));
        assert_eq!(m.old_path, m.new_path);
        assert!(m.hunks.is_empty());
        assert!(files[2].is_delete());
        assert_eq!(files[2].hunks[0].preimage, vec![b"bye\n".to_vec()]);
    }

    #[test]
    fn plain_diff_strips_one_component_and_timestamps() {
        let text = b"--- a/src/x.c\t2024-01-01 00:00:00\n+++ b/src/x.c\t2024-01-02 00:00:00\n@@ -3 +3,2 @@\n x\n+y\n";
        let files = parse(text).unwrap();
        assert_eq!(files[0].old_path.as_ref().unwrap(), "src/x.c");
        assert_eq!(files[0].hunks[0].old_len, 1);
        assert_eq!(files[0].hunks[0].trailing, 0);
        let new = b"--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n";
        let files = parse(new).unwrap();
        assert!(files[0].is_new());
        assert_eq!(files[0].hunks[0].old_start, 0);
    }

    #[test]
    fn quoted_paths_and_truncated_hunks() {
        let text = b"diff --git \"a/sp ace\\303\\251.txt\" \"b/sp ace\\303\\251.txt\"\nnew file mode 100644\nindex 0000000..e69de29\n";
        let files = parse(text).unwrap();
        assert_eq!(files[0].new_path.as_ref().unwrap(), "sp ace\u{e9}.txt");
        assert!(files[0].is_new());
        let bad = b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n";
        assert!(parse(bad).unwrap_err().message.contains("ends early"));
    }

    #[test]
    fn c_quoting_is_read_as_git_reads_it() {
        let (path, rest) = split_quoted(b"\"a\\b\\\"c\\t\\001\" tail").unwrap();
        assert_eq!(path, "a\u{8}\"c\t\u{1}");
        assert_eq!(rest, b" tail");
        // git's unquote_c_style refuses these, and so does the reader.
        for broken in [
            &b"\"unknown \\q escape\""[..],
            b"\"\\477\"",
            b"\"no end",
            b"unquoted",
        ] {
            assert_eq!(split_quoted(broken), None, "{}", broken.as_bstr());
        }
    }
}
