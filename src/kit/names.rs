//! Validation of names that come from users: personas, groups, logs, attachment names.
//!
//! Names end up in ref names, file names and commit messages, so they are checked at the edge and rejected
//! with a message that says what is allowed.

use crate::kit::error::{Error, Result};

/// The longest persona, group, tag or series name.
pub const MAX_NAME_LEN: usize = 64;

/// A persona, group, tag or series name: ASCII letters, digits, `-`, `_` and `.`, not starting with `-` or
/// `.`, not ending with `.` or `.lock`, no `..`, at most [`MAX_NAME_LEN`] bytes (within what
/// `git check-ref-format` allows for one component, so gix never sees a name it refuses). `__broadcast` is allowed as the one reserved name.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::usage(format!(
            "invalid {what} name {}: {why}",
            quoted(name)
        )))
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad(&format!("longer than {MAX_NAME_LEN} bytes"));
    }
    if name.starts_with('-') || name.starts_with('.') {
        return bad("it may not start with '-' or '.'");
    }
    if name.contains("..") {
        return bad("it may not contain '..'");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return bad(&format!(
            "{c:?} is not allowed (use letters, digits, '-', '_' and '.')"
        ));
    }
    if name.ends_with(".lock") {
        return bad("it may not end with '.lock'");
    }
    if name.ends_with('.') {
        // git check-ref-format: a ref name cannot end with a dot, and names end up as the last component.
        return bad("it may not end with '.'");
    }
    Ok(())
}

/// One or more `/`-separated name components, for refs such as `refs/jules/<log>`.
pub fn validate_ref_component(path: &str) -> Result<()> {
    if path.is_empty() {
        return Err(Error::usage("empty log name"));
    }
    for part in path.split('/') {
        validate_name("log", part)?;
    }
    Ok(())
}

/// A file name for an attachment: no path separators, no control characters, no `..`.
pub fn validate_file_name(name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::usage(format!(
            "invalid attachment name {}: {why}",
            quoted(name)
        )))
    };
    if name.is_empty() || name == "." || name == ".." {
        return bad("it is empty or a directory name");
    }
    if name.len() > 255 {
        return bad("longer than 255 bytes");
    }
    if name.contains('/') || name.contains('\\') {
        return bad("it may not contain a path separator");
    }
    if name.contains("..") {
        return bad("it may not contain '..'");
    }
    if name.chars().any(|c| c.is_control()) {
        return bad("it may not contain control characters");
    }
    Ok(())
}

/// The characters of a refused name an error quotes: enough to recognise it, never the whole of a
/// hostile 100 KB argument.
const QUOTED_CHARS: usize = 80;

/// `name` quoted (Rust's escapes, so controls show) for an error, cut after [`QUOTED_CHARS`] characters
/// with `…` and the full length.
fn quoted(name: &str) -> String {
    match name.char_indices().nth(QUOTED_CHARS) {
        None => format!("{name:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &name[..cut], name.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_name_is_quoted_in_at_most_eighty_characters() {
        let long = "é".repeat(100_000);
        let e = validate_name("persona", &long).unwrap_err().to_string();
        assert!(e.len() < 400, "{} bytes: {e:.200}", e.len());
        assert!(e.contains("… (200000 bytes)"), "{e}");
        let e = validate_file_name(&format!("{}/x", "a".repeat(10_000)))
            .unwrap_err()
            .to_string();
        assert!(e.len() < 400, "{e:.200}");
        // Short names are quoted whole, escaped.
        let e = validate_name("persona", "a\u{1b}b")
            .unwrap_err()
            .to_string();
        assert!(e.contains(r#""a\u{1b}b""#), "{e}");
    }

    #[test]
    fn names() {
        for ok in ["curator", "worker-feat-104", "a.b_c", "__broadcast"] {
            validate_name("persona", ok).unwrap();
        }
        for bad in [
            "", "a..b", "-x", ".x", "a/b", "a b", "x\u{7}", "é", "a.lock", "a.",
        ] {
            assert!(validate_name("persona", bad).is_err(), "{bad:?}");
        }
        validate_file_name("fix.patch").unwrap();
        for bad in ["../x", "a/b", "..", "x\ny"] {
            assert!(validate_file_name(bad).is_err(), "{bad:?}");
        }
    }
}
