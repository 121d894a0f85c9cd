//! What the library's error messages may say, checked against the source (issue 42):
//!
//! 1. no message the library builds into an error names a command-line flag (`--force`, `--base BRANCH`):
//!    the library serves the CLI, the MCP server and the web alike, so an MCP agent must not be told to
//!    "pass --force". What would fix a failure travels as data (`Error::Needs`, a `Remedy`); the CLI words it
//!    as flags in `src/frontends/error.rs`, the MCP server as argument fields in `src/frontends/mcp/mod.rs`;
//! 2. `Error::Other(format!…)`, an error that is only text, stays rare (at most [`MAX_OTHER_FORMAT`] in all of
//!    `src/`): an error from below is wrapped with its source (`Error::wrap`), so its causes are kept.
//!
//! Library code is `src/` outside `src/frontends/cli/` and `src/main.rs`. Only the arguments of `Error::…`
//! constructors are read (what a message says), not every string: the library runs git with real `--flags`.
//! Inside a message, git's own flags in a backticked git command (`` `git restore --staged` ``), a git diff
//! header (`diff --git`) and the arguments of `Error::GitCommand` are git's words, not ours.

/// The ceiling on `Error::Other(format!` in `src/` (docs/architecture.md, "Errors", gives today's count).
const MAX_OTHER_FORMAT: usize = 20;

fn src_files() -> Vec<(String, String)> {
    crate::sources::files()
}

fn is_library(rel: &str) -> bool {
    !rel.starts_with("src/frontends/") && rel != "src/main.rs"
}

/// The string literals of `code` (plain and raw), with the byte offset where each starts.
fn literals(code: &str) -> Vec<(usize, String)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            // A char literal such as '"' or '\'' is not the start of a string.
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 3,
            b'\'' if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') => i += 4,
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = j + 1;
                let end = code[start..].find(&close).map_or(b.len(), |k| start + k);
                out.push((i, code[start..end].to_owned()));
                i = end + close.len();
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                out.push((i, code[start..j.min(b.len())].to_owned()));
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The byte ranges of the arguments of every `Error::` constructor in `code` (`Error::usage(…)`,
/// `Error::Conflict(format!(…))`, `Error::Corrupt { … }`), except `Error::GitCommand`, whose arguments are
/// git's.
fn constructor_spans(code: &str) -> Vec<(usize, usize)> {
    let b = code.as_bytes();
    let lits = literals(code);
    let in_literal = |at: usize| lits.iter().any(|(s, t)| at > *s && at <= s + t.len() + 1);
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find("Error::") {
        let at = from + k;
        from = at + 7;
        if in_literal(at) || (at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_')) {
            continue;
        }
        let name_end = code[from..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(code.len(), |n| from + n);
        if &code[from..name_end] == "GitCommand" {
            continue;
        }
        let rest = code[name_end..].trim_start();
        let open = name_end + (code.len() - name_end - rest.len());
        let (o, c) = match b.get(open) {
            Some(b'(') => (b'(', b')'),
            Some(b'{') => (b'{', b'}'),
            _ => continue,
        };
        // Find the matching close, skipping string literals.
        let mut depth = 0usize;
        let mut i = open;
        while i < b.len() {
            if let Some((s, t)) = lits.iter().find(|(s, _)| *s == i) {
                i = s + t.len() + 2;
                continue;
            }
            if b[i] == o {
                depth += 1;
            } else if b[i] == c {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            i += 1;
        }
        spans.push((open, i.min(b.len())));
    }
    spans
}

/// The `--flag`s a message names, leaving out git's own words (see the module doc).
fn flags_in(message: &str) -> Vec<String> {
    // Blank out backticked git commands other than `git jules …`, and diff headers.
    let mut text = String::with_capacity(message.len());
    let mut inside = false;
    for part in message.split('`') {
        if inside && part.starts_with("git ") && !part.starts_with("git jules") {
            text.push(' ');
        } else {
            text.push_str(part);
        }
        text.push(' ');
        inside = !inside;
    }
    let text = text.replace("diff --git", "diff");
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("--") {
        let before_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-');
        let after_ok = b.get(i + 2).is_some_and(|c| c.is_ascii_lowercase());
        if before_ok && after_ok {
            let end = text[i + 2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(text.len(), |n| i + 2 + n);
            out.push(text[i..end].to_owned());
        }
    }
    out
}

/// Every `(line, flag)` where a message built in an `Error::` constructor of `code` names a flag.
fn flag_violations(code: &str) -> Vec<(usize, String)> {
    let lits = literals(code);
    let mut out = Vec::new();
    for (open, close) in constructor_spans(code) {
        for (at, text) in lits.iter().filter(|(s, _)| *s > open && *s < close) {
            for flag in flags_in(text) {
                let line = code[..*at].matches('\n').count() + 1;
                out.push((line, flag));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Rule 1: no library error message names a `--flag`.
#[test]
fn library_error_messages_name_no_cli_flags() {
    let mut found = Vec::new();
    for (rel, text) in src_files().iter().filter(|(rel, _)| is_library(rel)) {
        for (line, flag) in flag_violations(text) {
            found.push(format!("{rel}:{line}: {flag}"));
        }
    }
    assert!(
        found.is_empty(),
        "library error messages name CLI flags; say what is needed with a `Remedy` instead \
         (`Error::needs`), and let the frontends word it:\n{}",
        found.join("\n")
    );
}

/// The check sees a planted violation in each place a message is built, and lets git's own words pass.
#[test]
fn a_planted_flag_in_a_library_message_is_found() {
    let planted = r#"
fn f() -> Result<()> {
    return Err(Error::usage("a forced release needs --reason"));
    let e = crate::Error::Conflict(format!(
        "{x} moved; nothing was changed (use --rebase or --merge)"
    ));
    Err(Error::Corrupt { path: p, message: format!("{} (pass --base BRANCH)", y) })
}
"#;
    let flags: Vec<String> = flag_violations(planted)
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    assert_eq!(flags, ["--reason", "--merge", "--rebase", "--base"]);

    let allowed = r#"
fn g() -> Result<()> {
    run(["read-tree", "--reset", "-u", &new])?;
    let e = Error::io("running `git cat-file --batch`", e);
    let e = Error::GitCommand { args: format!("checkout -f --detach {hex}"), stderr };
    let e = Error::usage(format!("unstage them (`git restore --staged`) first"));
    let e = Error::Corrupt { path: p, message: format!("{h} on the diff --git line") };
    Err(Error::usage("a range such as a--b is not a flag; nor is '--'"))
}
"#;
    assert_eq!(flag_violations(allowed), Vec::<(usize, String)>::new());
}

/// Rule 2: `Error::Other(format!` stays at or under the ceiling in all of `src/`.
#[test]
fn error_other_format_stays_rare() {
    let mut sites = Vec::new();
    for (rel, text) in src_files() {
        for (i, line) in text.lines().enumerate() {
            if line.contains("Error::Other(format!") {
                sites.push(format!("{rel}:{}", i + 1));
            }
        }
    }
    assert!(
        sites.len() <= MAX_OTHER_FORMAT,
        "{} `Error::Other(format!` in src/, over {MAX_OTHER_FORMAT}: wrap an error from below with \
         `Error::wrap(context, source)` so its causes are kept:\n{}",
        sites.len(),
        sites.join("\n")
    );
}
