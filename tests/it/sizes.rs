//! Function lengths in `src/`: one idea per function (issue 42, point 5).
//!
//! A function's length is its lines from the `fn` keyword to its closing brace, found by matching braces in
//! the code with comments, strings and character literals blanked (so a `"{"` in a message or a `'}'` never
//! counts). Items under `#[cfg(test)]` and test-only files (`…tests.rs`) are left out: they are not the
//! library or the binary as shipped. The folders the issue split (`src/store/sync/`, `src/capabilities/state/tick.rs`,
//! `src/capabilities/mail/search/`) must keep every function at most [`LIMIT`] lines; the five longest functions of the
//! whole crate are printed for the closing note (`cargo test --test it sizes:: -- --nocapture`).

/// The most lines a function of a split file may have.
const LIMIT: usize = 100;

/// Where the limit holds: a folder (ending in `/`) or a file, relative to the crate root.
const CHECKED: [&str; 3] = [
    "src/store/sync/",
    "src/capabilities/state/tick.rs",
    "src/capabilities/mail/search/",
];

/// One function: where it is, its name, its first line and its length in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    file: String,
    name: String,
    line: usize,
    lines: usize,
}

/// `code` with comments, string literals and character literals replaced by spaces (newlines kept, so
/// line numbers stay true).
fn blank(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let clear = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let word_before = i > 0 && is_word(b[i - 1]);
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = code[i..].find('\n').map_or(b.len(), |n| i + n);
                clear(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // Block comments nest in Rust.
                let (mut depth, mut j) = (0usize, i);
                while j < b.len() {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                clear(&mut out, i, j);
                i = j;
            }
            // Raw strings: r"…", r#"…"#, br#"…"#.
            b'r' if (!word_before || (b[i - 1] == b'b' && !(i > 1 && is_word(b[i - 2]))))
                && matches!(b.get(i + 1), Some(b'"') | Some(b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = code[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
                clear(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                clear(&mut out, i, j + 1);
                i = j + 1;
            }
            // A character literal ('x', '\n', '\u{7f}'), not a lifetime ('a).
            b'\'' => {
                let end = if b.get(i + 1) == Some(&b'\\') {
                    // The escaped character is skipped: `'\''` ends at its third quote.
                    code.get(i + 3..)
                        .and_then(|rest| rest.find('\''))
                        .map(|n| i + 3 + n + 1)
                } else {
                    let len = code[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 2 + len)
                };
                match end {
                    Some(end) => {
                        clear(&mut out, i, end);
                        i = end;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// The index of the brace that closes the one at `open`, in blanked code.
fn closing(code: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Blanked code without the items under `#[cfg(test)]` (a test module, a test helper).
fn without_tests(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(n) = code[from..].find("#[cfg(test)]") {
        let at = from + n;
        // The item ends at its first `;` (`mod tests;`) or at the brace closing its body.
        let rest = &code[at..];
        let end = match (rest.find(';'), rest.find('{')) {
            (Some(semi), Some(brace)) if semi < brace => at + semi,
            (_, Some(brace)) => closing(code.as_bytes(), at + brace).unwrap_or(code.len() - 1),
            (Some(semi), None) => at + semi,
            (None, None) => code.len() - 1,
        };
        for c in &mut out[at..=end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end + 1;
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// Every function with a body in `text` (the source of `file`), outside test items.
fn functions(file: &str, text: &str) -> Vec<Function> {
    let code = without_tests(&blank(text));
    let b = code.as_bytes();
    let line_of = |i: usize| code[..i].bytes().filter(|c| *c == b'\n').count() + 1;
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(n) = code[from..].find("fn") {
        let at = from + n;
        from = at + 2;
        let before = at.checked_sub(1).map(|i| b[i]);
        let after = b.get(at + 2).copied();
        let is_word = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_');
        if is_word(before) || !after.is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let rest = code[at + 2..].trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(…)`, a function pointer type
        }
        let tail = &code[at..];
        let open = match (tail.find(';'), tail.find('{')) {
            (Some(semi), Some(brace)) if semi < brace => continue, // a declaration without a body
            (_, Some(brace)) => at + brace,
            _ => continue,
        };
        let Some(close) = closing(b, open) else {
            continue;
        };
        let (first, last) = (line_of(at), line_of(close));
        out.push(Function {
            file: file.to_owned(),
            name,
            line: first,
            lines: last - first + 1,
        });
    }
    out
}

/// Every function of the crate's `src/`, test-only files left out.
fn crate_functions() -> Vec<Function> {
    crate::sources::files()
        .into_iter()
        .filter(|(rel, _)| !rel.ends_with("tests.rs"))
        .flat_map(|(rel, text)| functions(&rel, &text))
        .collect()
}

/// The functions of `all` in the checked places that are longer than [`LIMIT`], described.
fn too_long(all: &[Function]) -> Vec<String> {
    all.iter()
        .filter(|f| {
            CHECKED.iter().any(|c| match c.strip_suffix('/') {
                Some(dir) => f.file.starts_with(&format!("{dir}/")),
                None => f.file == *c,
            })
        })
        .filter(|f| f.lines > LIMIT)
        .map(|f| {
            format!(
                "{}:{} fn {} is {} lines (at most {LIMIT})",
                f.file, f.line, f.name, f.lines
            )
        })
        .collect()
}

/// Catches a function in `src/store/sync/`, `src/capabilities/state/tick.rs` or `src/capabilities/mail/search/` that grew past the limit
/// again (before the split: `sync_logs` 397 lines, `tick::plan` 234, `search::search` 199).
#[test]
fn split_files_have_no_function_over_the_limit() {
    let mut all = crate_functions();
    assert!(
        all.len() > 500,
        "the scan found only {} functions in src/",
        all.len()
    );
    let errors = too_long(&all);
    all.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.name.cmp(&b.name)));
    println!("the five longest functions of src/:");
    for f in all.iter().take(5) {
        println!(
            "  {:>4} lines  {}:{} fn {}",
            f.lines, f.file, f.line, f.name
        );
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The scan itself: a planted 101-line function fails the limit and a 100-line one passes; braces and `fn`
/// inside strings, characters and comments, lifetimes, declarations without bodies and test items are not
/// counted.
#[test]
fn the_scan_measures_what_it_must() {
    let body = |n: usize| -> String {
        (0..n - 2)
            .map(|i| format!("    let _x{i} = 1;\n"))
            .collect()
    };
    let planted = format!(
        "/// Doc.\npub fn planted() {{\n{}}}\n\nfn fits() {{\n{}}}\n",
        body(101),
        body(100)
    );
    let found = functions("src/store/sync/planted.rs", &planted);
    let lengths: Vec<(&str, usize)> = found.iter().map(|f| (f.name.as_str(), f.lines)).collect();
    assert_eq!(lengths, [("planted", 101), ("fits", 100)]);
    let errors = too_long(&found);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("fn planted is 101 lines"), "{errors:?}");
    // The same function outside the checked places is listed, not refused.
    assert!(too_long(&functions("src/other.rs", &planted)).is_empty());

    let tricky = r####"
trait T {
    fn declared(&self) -> u32;
}
fn tricky<'a>(s: &'a str) -> char {
    let _ = "} fn not_a_function() {";
    let _ = r#"}"#;
    // }
    /* } /* nested } */ } */
    let _f: fn(u32) -> u32 = |x| x;
    if s.is_empty() { '}' } else { '\'' }
}
#[cfg(test)]
mod tests {
    fn helper() {
    }
}
"####;
    let found = functions("src/store/sync/tricky.rs", tricky);
    let lengths: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(lengths, [("tricky", 5, 8)]);
}
