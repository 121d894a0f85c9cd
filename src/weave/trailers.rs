//! The trailers weave adds to every commit it writes, and reading them back.
//!
//! `Woven-from: <input>` names the input as it was given (a branch, a range, a patch file); `Woven-id: <key>`
//! names the exact change: the source commit id for commits, `patch-<first 40 hex of the fingerprint>` for
//! patches. A later weave onto the same integration branch skips every change whose `Woven-id` is already
//! there, which is what makes reruns idempotent. They are real git trailers: `git interpret-trailers
//! --parse` and `git log --format=%(trailers)` read them.

/// Append trailers to `message`, joining an existing trailer block (e.g. `Signed-off-by:`) if there is one.
pub fn add(message: &str, trailers: &[(&str, &str)]) -> String {
    let body = message.trim_end();
    let mut out = String::with_capacity(body.len() + 128);
    out.push_str(body);
    let last_paragraph = body.rsplit("\n\n").next().unwrap_or_default();
    let has_block = body.contains("\n\n")
        && !last_paragraph.trim().is_empty()
        && last_paragraph.lines().all(is_trailer_line);
    out.push_str(if has_block { "\n" } else { "\n\n" });
    for (k, v) in trailers {
        out.push_str(k);
        out.push_str(": ");
        out.push_str(v);
        out.push('\n');
    }
    out
}

fn is_trailer_line(line: &str) -> bool {
    if line.starts_with(' ') || line.starts_with('\t') {
        return true; // continuation
    }
    match line.split_once(':') {
        Some((k, _)) => !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
        None => false,
    }
}

/// The values of trailer `key` in the message's last paragraph.
pub fn values<'a>(message: &'a str, key: &str) -> Vec<&'a str> {
    let last = message.trim_end().rsplit("\n\n").next().unwrap_or_default();
    last.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(key).then(|| v.trim())
        })
        .collect()
}

pub const FROM: &str = "Woven-from";
pub const ID: &str = "Woven-id";

#[cfg(test)]
mod tests {
    use super::*;

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
        let m = add("a\n\nb\n", &[(FROM, "jules/c/x"), (ID, "abc")]);
        assert_eq!(values(&m, ID), vec!["abc"]);
        assert_eq!(values(&m, FROM), vec!["jules/c/x"]);
    }
}
