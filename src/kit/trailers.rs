//! Commit-message trailers with git's rules, read by gix's trailer parser: the one reader every module uses
//! (`Rationale:` of series, `Persona:` and `Woven-*:` of weave).
//!
//! git's rules (`git interpret-trailers --parse`): trailers live in the message's last paragraph, and only
//! when that paragraph is a trailer block (all trailer lines, or a recognised git trailer such as
//! `Signed-off-by:` and at least a quarter trailer lines); a token is letters, digits and `-`, may have
//! blanks before the `:`; a line that starts with a blank continues the previous value (folding). Tokens
//! compare case-insensitively.

use gix::bstr::ByteSlice;

/// One trailer of the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    pub key: String,
    /// The value as git gives it: folded lines joined by single spaces, trimmed.
    pub value: String,
    /// The value keeping its lines: the continuation lines without their first blank (how
    /// [`fold`] wrote them), joined with `\n`.
    pub lines: String,
}

/// The trailers of `message` (a whole commit message: subject, blank line, body), in order.
pub fn parse(message: &str) -> Vec<Trailer> {
    let msg = gix::objs::commit::MessageRef::from_bytes(message.as_bytes());
    let Some(body) = msg.body() else {
        return Vec::new();
    };
    let raw = raw_entries(block_text(message, &body));
    let mut raw = raw.into_iter();
    body.trailers()
        .map(|t| {
            let key = t.token.to_str_lossy().into_owned();
            let value = t.value.to_str_lossy().trim().to_owned();
            let lines = raw
                .by_ref()
                .find(|(k, _)| k.eq_ignore_ascii_case(&key))
                .map(|(_, lines)| lines)
                .unwrap_or_else(|| value.clone());
            Trailer { key, value, lines }
        })
        .collect()
}

/// The text of the trailer block: what follows the body without its trailers, up to the message's end.
fn block_text<'a>(message: &'a str, body: &gix::objs::commit::message::BodyRef<'_>) -> &'a str {
    // `body` borrows from `message`, so the offset of its kept part locates the block.
    let kept = body.without_trailer();
    let start = kept.as_ptr() as usize - message.as_ptr() as usize + kept.len();
    message.get(start..).unwrap_or_default()
}

/// `(token, value lines)` of each trailer-looking entry of a block, continuation lines attached.
fn raw_entries(block: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut open = false;
    for line in block.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            open = false;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if open {
                if let Some((_, v)) = out.last_mut() {
                    v.push(line[1..].trim_end().to_owned());
                }
            }
            continue;
        }
        match line.split_once(':') {
            Some((k, v))
                if !k.trim().is_empty()
                    && k.trim_end()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-') =>
            {
                out.push((k.trim_end().to_owned(), vec![v.trim().to_owned()]));
                open = true;
            }
            _ => open = false,
        }
    }
    out.into_iter().map(|(k, v)| (k, v.join("\n"))).collect()
}

/// The values (git's, folded lines joined by spaces) of trailer `key` in `message`.
pub fn values(message: &str, key: &str) -> Vec<String> {
    parse(message)
        .into_iter()
        .filter(|t| t.key.eq_ignore_ascii_case(key))
        .map(|t| t.value)
        .collect()
}

/// The first trailer `key` of `message`, if any.
pub fn first(message: &str, key: &str) -> Option<Trailer> {
    parse(message)
        .into_iter()
        .find(|t| t.key.eq_ignore_ascii_case(key))
}

/// Whether `message` already ends in a trailer block (by git's rules).
pub fn has_block(message: &str) -> bool {
    let msg = gix::objs::commit::MessageRef::from_bytes(message.as_bytes());
    msg.body().is_some_and(|b| b.trailers().next().is_some())
}

/// Append `trailers` to `message`, joining its trailer block if it has one, else starting a new paragraph.
pub fn add(message: &str, trailers: &[(&str, &str)]) -> String {
    let body = message.trim_end();
    let mut out = String::with_capacity(body.len() + 128);
    out.push_str(body);
    out.push_str(if has_block(body) { "\n" } else { "\n\n" });
    for (k, v) in trailers {
        out.push_str(k);
        out.push_str(": ");
        out.push_str(v);
        out.push('\n');
    }
    out
}

/// `key: value` as one trailer of several lines, folded as git folds them: each continuation line starts with
/// one space. Blank lines cannot live inside a trailer; they are dropped. Ends with `\n`.
pub fn fold(key: &str, value: &str) -> Option<String> {
    let lines: Vec<&str> = value
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let (first, rest) = lines.split_first()?;
    let mut out = format!("{key}: {}\n", first.trim_start());
    for line in rest {
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_paragraph_and_only_a_trailer_block() {
        let m = "fix\n\nPersona: not-this-one\n\nbody text\nmore\n\nPersona: visionary\nWoven-id: abc\n";
        assert_eq!(values(m, "persona"), ["visionary"]);
        assert_eq!(values(m, "Woven-id"), ["abc"]);
        // A last paragraph of prose is not a block, even with a colon in it.
        let prose = "fix\n\nthis: is prose, not a trailer block really\nreally\n";
        assert!(parse(prose).is_empty());
        assert!(!has_block(prose));
        // Subject only: no trailers.
        assert!(parse("Persona: x\n").is_empty());
    }

    #[test]
    fn folded_values_unfold_as_git_and_keep_their_lines() {
        let m = format!(
            "Add thing\n\n{}",
            fold("Rationale", "Because A.\n\nAnd B,\n  indented C.\n").unwrap()
        );
        assert_eq!(
            m,
            "Add thing\n\nRationale: Because A.\n And B,\n   indented C.\n"
        );
        let t = first(&m, "rationale").unwrap();
        assert_eq!(t.value, "Because A. And B, indented C.");
        assert_eq!(t.lines, "Because A.\nAnd B,\n  indented C.");
    }

    #[test]
    fn joins_or_starts_a_block() {
        assert_eq!(
            add("fix\n", &[("Woven-from", "x")]),
            "fix\n\nWoven-from: x\n"
        );
        assert_eq!(
            add(
                "fix\n\nbody\n\nSigned-off-by: A <a@x>\n",
                &[("Woven-id", "1")]
            ),
            "fix\n\nbody\n\nSigned-off-by: A <a@x>\nWoven-id: 1\n"
        );
        assert_eq!(
            add(
                "fix\n\nthis: is prose, not a trailer block really\nreally\n",
                &[("K", "v")]
            ),
            "fix\n\nthis: is prose, not a trailer block really\nreally\n\nK: v\n"
        );
        let m = add(
            "a\n\nb\n",
            &[("Woven-from", "jules/c/x"), ("Woven-id", "abc")],
        );
        assert_eq!(values(&m, "woven-id"), ["abc"]);
        assert_eq!(values(&m, "Woven-from"), ["jules/c/x"]);
    }

    /// The same answers as `git interpret-trailers --parse`, on messages where naive readers disagree.
    #[test]
    fn agrees_with_git_interpret_trailers() {
        let cases = [
            "s\n\nbody\n\nSigned-off-by: A <a@x>\nsome prose line\nPersona: p\n",
            "s\n\nKey : spaced\nOther:\tx\n",
            "s\n\nRationale: one\n two\n\tthree\n",
            "s\n\nnot: a block\nbecause this line is prose\n",
        ];
        for m in cases {
            let out = std::process::Command::new("git")
                .args(["interpret-trailers", "--parse"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut c| {
                    use std::io::Write;
                    c.stdin.take().unwrap().write_all(m.as_bytes())?;
                    c.wait_with_output()
                })
                .expect("git interpret-trailers runs");
            let git: Vec<String> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect();
            let ours: Vec<String> = parse(m)
                .iter()
                .map(|t| format!("{}: {}", t.key, t.value))
                .collect();
            assert_eq!(ours, git, "{m:?}");
        }
    }
}
