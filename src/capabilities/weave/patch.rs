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
    /// A traditional diff naming the same file on both sides, with one hunk that removes nothing: `git
    /// apply` creates the file when it does not exist (what a whitespace-damaged `diff -N` looks like).
    pub maybe_new: bool,
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
            let mut file = traditional_file(line, lines[i + 1], &mut p_value)
                .ok_or_else(|| err(i, "cannot tell which file this diff changes"))?;
            let next = parse_hunks(&lines, i + 2, &mut file)?;
            // git: a patch that removes lines, or has several hunks, cannot be a creation.
            file.maybe_new &= file.hunks.len() == 1 && file.hunks[0].old_len == 0;
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
    // git compares the `---`/`+++` names (slashes squashed) with the name of the `diff --git` line (not
    // squashed): `a/x//y` there and `b/x//y` below is "inconsistent" and refused.
    if let Some(h) = a
        .as_ref()
        .filter(|h| b.as_ref() == Some(*h) && h.contains_str("//"))
    {
        if let Some(n) = [&minus, &plus]
            .into_iter()
            .flatten()
            .flatten()
            .find(|n| *n != h)
        {
            return Err(err(
                start,
                format!("inconsistent file name: {h} on the diff --git line, {n} below it (git apply refuses it too)"),
            ));
        }
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

/// `p` without its first `n` path components (`-p<n>`), as `git apply` counts them: every `/` ends one, so
/// `a//etc/evil` loses `a/` and keeps `/etc/evil` (which the path rules then refuse, as git does); `None`
/// when nothing is left.
fn strip_components(p: &[u8], n: usize) -> Option<BString> {
    let mut rest = p;
    for _ in 0..n {
        let slash = rest.find_byte(b'/')?;
        rest = &rest[slash + 1..];
    }
    (!rest.is_empty()).then(|| rest.into())
}

/// `squash_slash`: runs of `/` become one (git does this to every name it reads from `---`/`+++` lines).
fn squash_slash(name: BString) -> BString {
    if !name.contains_str("//") {
        return name;
    }
    let mut out = BString::from(Vec::with_capacity(name.len()));
    for &c in name.iter() {
        if !(c == b'/' && out.last() == Some(&b'/')) {
            out.push(c);
        }
    }
    out
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
    Some(Some(squash_slash(
        strip_components(&path, n).unwrap_or(path),
    )))
}

/// `is_dev_null`: `/dev/null` followed by white space (the line end counts).
fn is_dev_null(raw: &[u8]) -> bool {
    raw.strip_prefix(b"/dev/null")
        .is_some_and(|r| r.first().is_some_and(u8::is_ascii_whitespace))
}

/// `find_name_traditional`: the name in a traditional `--- `/`+++ ` line (without its line end), with `p`
/// components stripped. A C-quoted name is taken whole. Otherwise, when the line ends in a timestamp (after
/// a tab, or after spaces when a mailer turned the tab into them), the name is everything before it, tabs
/// and spaces included; without a timestamp it ends at the first tab. `def` (the other side's name) wins
/// when it is shorter and a prefix of this one (`x.c` against `x.c.orig`).
fn find_name_traditional(line: &[u8], def: Option<&BString>, p: usize) -> Option<BString> {
    if line.starts_with(b"\"") {
        if let Some((name, _)) = split_quoted(line) {
            return strip_components(&name, p).map(squash_slash);
        }
    }
    match diff_timestamp_len(line) {
        0 => find_name_common(line, def, p, None),
        n => find_name_common(line, def, p, Some(line.len() - n)),
    }
}

/// `find_name_common`: the name from `p` components on, up to `end`, or without an end up to a tab or any
/// other white space but a space.
fn find_name_common(
    line: &[u8],
    def: Option<&BString>,
    p: usize,
    end: Option<usize>,
) -> Option<BString> {
    let stop = end.unwrap_or(line.len());
    let mut start = (p == 0).then_some(0);
    let mut left = p;
    let mut i = 0;
    while i < stop {
        let c = line[i];
        if end.is_none() && c.is_ascii_whitespace() && c != b' ' {
            break;
        }
        i += 1;
        if c == b'/' && left > 0 {
            left -= 1;
            if left == 0 {
                start = Some(i);
            }
        }
    }
    let fallback = || def.cloned().map(squash_slash);
    let Some(start) = start else {
        return fallback();
    };
    let name = &line[start..i];
    if name.is_empty() {
        return fallback();
    }
    if let Some(d) = def {
        if d.len() < name.len() && name.starts_with(d.as_slice()) {
            return Some(squash_slash(d.clone()));
        }
    }
    Some(squash_slash(name.into()))
}

/// `diff_timestamp_len`: how many bytes at the end of `line` are a `diff` timestamp (POSIX
/// `2010-07-05 19:41:17`, GNU `2010-07-05 19:41:17.620000023 -0500`, a zone as `-05:00`) with the tab
/// before it, or the spaces before it (a whitespace-damaged patch); 0 when there is none.
fn diff_timestamp_len(line: &[u8]) -> usize {
    let len = line.len();
    if !line.last().is_some_and(u8::is_ascii_digit) {
        return 0;
    }
    let digit = |i: usize| line[i].is_ascii_digit();
    // `line[..end]` ends with `pat` (`d` a digit, `s` a sign, anything else itself): its length, else 0.
    let ends_with = |end: usize, pat: &[u8]| -> usize {
        let fits = end >= pat.len()
            && pat
                .iter()
                .zip(&line[end - pat.len()..end])
                .all(|(&p, &c)| match p {
                    b'd' => c.is_ascii_digit(),
                    b's' => c == b'+' || c == b'-',
                    _ => c == p,
                });
        if fits {
            pat.len()
        } else {
            0
        }
    };
    let sane_tz = |end: usize| ends_with(end, b" sdddd");
    let tz_colon = |end: usize| ends_with(end, b" sdd:dd");
    let short_time = |end: usize| ends_with(end, b" dd:dd:dd");
    let fractional_time = |len: usize| -> usize {
        if len == 0 || !digit(len - 1) {
            return 0;
        }
        let mut p = len - 1;
        while p > 0 && digit(p) {
            p -= 1;
        }
        if line[p] != b'.' {
            return 0;
        }
        match short_time(p) {
            0 => 0,
            n => len - p + n,
        }
    };
    // A two-digit year, widened to four when two more digits come before it.
    let date = |end: usize| -> usize {
        match ends_with(end, b"dd-dd-dd") {
            0 => 0,
            n if end >= n + 2 && digit(end - n - 1) && digit(end - n - 2) => n + 2,
            n => n,
        }
    };
    let mut end = len;
    end -= match sane_tz(end) {
        0 => tz_colon(end),
        n => n,
    };
    end -= match short_time(end) {
        0 => fractional_time(end),
        n => n,
    };
    match date(end) {
        0 => return 0,
        n => end -= n,
    }
    match end.checked_sub(1).map(|e| line[e]) {
        Some(b'\t') => len - (end - 1),
        Some(b' ') => {
            let spaces = line[..end].iter().rev().take_while(|&&c| c == b' ').count();
            len - (end - spaces)
        }
        _ => 0,
    }
}

/// `has_epoch_timestamp`: the text after the last tab is `diff -N`'s epoch, the mark of a missing file.
fn has_epoch_timestamp(line: &[u8]) -> bool {
    line.rfind_byte(b'\t')
        .is_some_and(|t| is_epoch(line[t + 1..].trim()))
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

/// `guess_p_value` for one name: 0 when it has no `/`, unknown (`None`) otherwise or for `/dev/null`.
fn guess_p_value(raw: &[u8]) -> Option<usize> {
    if is_dev_null(raw) {
        return None;
    }
    let name = find_name_traditional(trim_eol(raw), None, 0)?;
    (!name.contains(&b'/')).then_some(0)
}

/// A traditional (`diff -u`) file header, read as `git apply`'s `parse_traditional_patch` does. The `-p`
/// is guessed from each header until one settles it (both names without `/`: `-p0`), else it is 1.
/// `/dev/null` or an epoch timestamp marks a created or deleted file; otherwise both sides name the same
/// file, the shorter name winning when it prefixes the other, and whether it is created is left to the
/// hunks and the tree ([`FilePatch::maybe_new`]).
fn traditional_file(minus: &[u8], plus: &[u8], p_known: &mut Option<usize>) -> Option<FilePatch> {
    let (first, second) = (&minus[4..], &plus[4..]);
    if p_known.is_none() {
        *p_known = match (guess_p_value(first), guess_p_value(second)) {
            (None, q) => q,
            (p, q) if p == q => p,
            _ => None,
        };
    }
    let p = p_known.unwrap_or(1);
    let (first_line, second_line) = (trim_eol(first), trim_eol(second));
    let mut file = FilePatch::default();
    if is_dev_null(first) {
        file.new_path = Some(find_name_traditional(second_line, None, p)?);
    } else if is_dev_null(second) {
        file.old_path = Some(find_name_traditional(first_line, None, p)?);
    } else {
        let first_name = find_name_traditional(first_line, None, p);
        let name = find_name_traditional(second_line, first_name.as_ref(), p)?;
        if has_epoch_timestamp(first_line) {
            file.new_path = Some(name);
        } else if has_epoch_timestamp(second_line) {
            file.old_path = Some(name);
        } else {
            file.old_path = Some(name.clone());
            file.new_path = Some(name);
            file.maybe_new = true;
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

/// `@@ -a[,b] +c[,d] @@` → (a, b, c, d), read as `git apply`'s `parse_fragment_header`: digits only (no
/// sign), a missing count is 1, anything may follow the closing `@@`. A number too large for a machine word
/// saturates, as `strtoul` does in the git this is checked against (2.47; git 2.49 refuses it instead,
/// see docs/weave.md): such a hunk is then placed by its content alone.
fn parse_range_header(line: &[u8]) -> Option<(usize, usize, usize, usize)> {
    fn num(s: &[u8]) -> Option<(usize, &[u8])> {
        let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let v = s[..n].iter().fold(0usize, |acc, &c| {
            acc.saturating_mul(10).saturating_add(usize::from(c - b'0'))
        });
        Some((v, &s[n..]))
    }
    fn range(s: &[u8]) -> Option<(usize, usize, &[u8])> {
        let (start, rest) = num(s)?;
        match rest.strip_prefix(b",") {
            Some(r) => {
                let (len, rest) = num(r)?;
                Some((start, len, rest))
            }
            None => Some((start, 1, rest)),
        }
    }
    let rest = line.strip_prefix(b"@@ -")?;
    let (a, b, rest) = range(rest)?;
    let rest = rest.strip_prefix(b" +")?;
    let (c, d, rest) = range(rest)?;
    rest.starts_with(b" @@").then_some((a, b, c, d))
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
    fn traditional_names_end_where_git_apply_ends_them() {
        let name = |l: &str| {
            find_name_traditional(l.as_bytes(), None, 0)
                .unwrap()
                .to_string()
        };
        assert_eq!(
            name("post\timage.txt\t2010-08-18 20:13:31.6 -0500"),
            "post\timage.txt"
        );
        assert_eq!(
            name("post image.txt   2010-08-18 20:13:31 -05:00"),
            "post image.txt"
        );
        assert_eq!(name("x.c\tno stamp"), "x.c");
        assert_eq!(name("a//b.c"), "a/b.c");
        assert_eq!(diff_timestamp_len(b"x 2010-08-18"), 11);
        assert_eq!(diff_timestamp_len(b"x2010-08-18"), 0);
        assert!(has_epoch_timestamp(
            b"a\t1969-12-31 18:00:00.000000000 -0600"
        ));
        assert!(!has_epoch_timestamp(
            b"a 1969-12-31 18:00:00.000000000 -0600"
        ));
        assert_eq!(
            parse_range_header(b"@@ -98765432109876543210 +3 @@ fn x"),
            Some((usize::MAX, 1, 3, 1))
        );
        assert_eq!(parse_range_header(b"@@ -+1 +1 @@"), None);
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
