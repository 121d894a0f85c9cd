//! Validation of names that come from users: personas, groups, logs, attachment names.
//!
//! Names end up in ref names, file names and commit messages, so they are checked at the edge and rejected
//! with a message that says what is allowed.

use crate::error::{Error, Result};

/// The longest persona, group, tag or series name.
pub const MAX_NAME_LEN: usize = 64;

/// A persona, group, tag or series name: ASCII letters, digits, `-`, `_` and `.`, not starting with `-` or
/// `.`, not ending with `.` or `.lock`, no `..`, at most [`MAX_NAME_LEN`] bytes (within what
/// `git check-ref-format` allows for one component, so gix never sees a name it refuses). `__broadcast` is allowed as the one reserved name.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::usage(format!("invalid {what} name {name:?}: {why}")));
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
            "invalid attachment name {name:?}: {why}"
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

#[cfg(test)]
mod tests {
    use super::*;

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
