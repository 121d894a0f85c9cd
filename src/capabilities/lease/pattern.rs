//! Lease patterns and the one overlap rule: pure code, no repository.
//!
//! A pattern is a path relative to the top of the work tree, `/`-separated, read as git reads a
//! `:(glob)` pathspec: `*`, `?` and `[...]` match within one path component, `**` as a whole component
//! matches any number of components (none included), `\` escapes the next character. A pattern covers what
//! it matches *and everything under it* (a directory leases its contents, as a git pathspec does), so
//! `src` and `src/` both cover `src/a/b.rs`.
//!
//! Overlap is decided on those sets: two patterns overlap when some path may be covered by both. For globs
//! against globs that is the intersection of two regular languages, decided exactly over the pattern
//! syntax (a small dynamic programme), except that a negated character class is assumed to share a
//! character with anything but a positive class it excludes entirely: "may overlap" counts as overlap.
//!
//! Malformed patterns are refused with the reason, never matched loosely: empty, absolute, `.`/`..` or
//! empty components, an unclosed `[`, a trailing `\`, `**` mixed with other characters in a component,
//! pathspec magic (`:(…)`, `:!`), POSIX classes (`[:alpha:]`).

use std::collections::HashMap;

use crate::kit::error::{Error, Result};

/// One character position of a component glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `?`
    Any,
    /// `*` within a component.
    Star,
    /// `[...]`: inclusive ranges; `negated` for `[!...]`/`[^...]`.
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Comp {
    /// `**`: any number of components.
    Deep,
    /// One component: literal text when every token is `Lit`.
    Seg(Vec<Tok>),
}

/// A checked pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    comps: Vec<Comp>,
    ignore_case: bool,
    /// A file git named (a changed path): it covers itself only, not a subtree.
    file: bool,
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn bad(p: &str, why: &str) -> Error {
    Error::usage(format!("malformed lease pattern {p:?}: {why}"))
}

impl Pattern {
    /// Parse a pattern; `ignore_case` as `core.ignoreCase` says (ASCII letters only, as git folds them).
    pub fn parse(text: &str, ignore_case: bool) -> Result<Pattern> {
        if text.is_empty() {
            return Err(bad(text, "empty"));
        }
        if text.starts_with(':') {
            return Err(bad(
                text,
                "pathspec magic is not supported; write the path or glob",
            ));
        }
        if text.starts_with('/') {
            return Err(bad(
                text,
                "absolute; patterns are relative to the top of the work tree",
            ));
        }
        let trimmed = text.strip_prefix("./").unwrap_or(text);
        let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
        if trimmed.is_empty() {
            return Err(bad(text, "names no path"));
        }
        let mut comps = Vec::new();
        for c in trimmed.split('/') {
            match c {
                "" => return Err(bad(text, "empty path component")),
                "." | ".." => return Err(bad(text, "`.` and `..` components are not allowed")),
                "**" => {
                    // `a/**/**/b` is `a/**/b`.
                    if comps.last() != Some(&Comp::Deep) {
                        comps.push(Comp::Deep);
                    }
                }
                _ => comps.push(Comp::Seg(parse_component(text, c, ignore_case)?)),
            }
        }
        Ok(Pattern {
            text: text.to_owned(),
            comps,
            ignore_case,
            file: false,
        })
    }

    /// A file git named (a changed path): every character literal, and nothing under it (a file has no
    /// contents a lease could name, so `**/*.rs` does not reach `README.md`).
    pub fn literal(path: &str, ignore_case: bool) -> Pattern {
        let comps = path
            .split('/')
            .filter(|c| !c.is_empty())
            .map(|c| {
                Comp::Seg(
                    c.chars()
                        .map(|ch| Tok::Lit(fold(ch, ignore_case)))
                        .collect(),
                )
            })
            .collect();
        Pattern {
            text: path.to_owned(),
            comps,
            ignore_case,
            file: true,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether some path may be covered by both patterns.
    pub fn overlaps(&self, other: &Pattern) -> bool {
        // Patterns cover everything under what they match: append `**` to each but files.
        let mut a = self.comps.clone();
        let mut b = other.comps.clone();
        if !self.file {
            a.push(Comp::Deep);
        }
        if !other.file {
            b.push(Comp::Deep);
        }
        let ic = self.ignore_case || other.ignore_case;
        let mut memo = HashMap::new();
        comps_meet(&a, &b, 0, 0, ic, &mut memo)
    }

    /// The first component when it is literal text (the index key), folded when case is ignored.
    fn head(&self) -> Option<String> {
        match self.comps.first()? {
            Comp::Seg(toks) => toks
                .iter()
                .map(|t| match t {
                    Tok::Lit(c) => Some(fold(*c, self.ignore_case)),
                    _ => None,
                })
                .collect(),
            Comp::Deep => None,
        }
    }
}

fn fold(c: char, ignore_case: bool) -> char {
    if ignore_case {
        c.to_ascii_lowercase()
    } else {
        c
    }
}

fn parse_component(whole: &str, c: &str, ignore_case: bool) -> Result<Vec<Tok>> {
    if c.contains("**") {
        return Err(bad(whole, "`**` must be a whole path component (`a/**/b`)"));
    }
    let chars: Vec<char> = c.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        match ch {
            '\\' => {
                let Some(&next) = chars.get(i + 1) else {
                    return Err(bad(whole, "trailing `\\`"));
                };
                toks.push(Tok::Lit(fold(next, ignore_case)));
                i += 2;
            }
            '*' => {
                if toks.last() != Some(&Tok::Star) {
                    toks.push(Tok::Star);
                }
                i += 1;
            }
            '?' => {
                toks.push(Tok::Any);
                i += 1;
            }
            '[' => {
                let (tok, next) = parse_class(whole, &chars, i, ignore_case)?;
                toks.push(tok);
                i = next;
            }
            _ => {
                toks.push(Tok::Lit(fold(ch, ignore_case)));
                i += 1;
            }
        }
    }
    Ok(toks)
}

/// `chars[start] == '['`; returns the class and the index after its `]`.
fn parse_class(
    whole: &str,
    chars: &[char],
    start: usize,
    ignore_case: bool,
) -> Result<(Tok, usize)> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err(bad(whole, "unclosed `[`"));
        };
        if c == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        if c == '[' && chars.get(i + 1) == Some(&':') {
            return Err(bad(
                whole,
                "character class names such as [:alpha:] are not supported",
            ));
        }
        let lo = if c == '\\' {
            i += 1;
            *chars.get(i).ok_or_else(|| bad(whole, "trailing `\\`"))?
        } else {
            c
        };
        i += 1;
        let hi = if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&n| n != ']') {
            let mut h = chars[i + 1];
            i += 2;
            if h == '\\' {
                h = *chars.get(i).ok_or_else(|| bad(whole, "trailing `\\`"))?;
                i += 1;
            }
            h
        } else {
            lo
        };
        if hi < lo {
            return Err(bad(whole, &format!("empty range {lo}-{hi}")));
        }
        ranges.push((lo, hi));
    }
    if ignore_case {
        // Add the other case of every ASCII letter a range holds, so that folding needs no special case.
        let mut extra = Vec::new();
        for &(lo, hi) in &ranges {
            for (a, z, delta) in [('a', 'z', -32i32), ('A', 'Z', 32)] {
                let l = lo.max(a);
                let h = hi.min(z);
                if l <= h {
                    let sh = |c: char| char::from_u32((c as i32 + delta) as u32).unwrap_or(c);
                    extra.push((sh(l), sh(h)));
                }
            }
        }
        ranges.extend(extra);
    }
    Ok((Tok::Class { ranges, negated }, i))
}

fn in_ranges(c: char, ranges: &[(char, char)]) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

/// Whether every character of `inner` lies in the union of `outer`.
fn ranges_cover(outer: &[(char, char)], inner: &[(char, char)]) -> bool {
    let mut o = outer.to_vec();
    o.sort();
    inner.iter().all(|&(lo, hi)| {
        let mut next = lo as u32;
        for &(ol, oh) in &o {
            if (ol as u32) <= next && (oh as u32) >= next {
                next = oh as u32 + 1;
                if next > hi as u32 {
                    return true;
                }
            }
        }
        next > hi as u32
    })
}

/// Whether some one character matches both tokens (neither is `Star`).
fn chars_meet(a: &Tok, b: &Tok, ic: bool) -> bool {
    use Tok::*;
    match (a, b) {
        (Lit(x), Lit(y)) => fold(*x, ic) == fold(*y, ic),
        (Any, _) | (_, Any) => true,
        (Lit(x), Class { ranges, negated }) | (Class { ranges, negated }, Lit(x)) => {
            let hit = in_ranges(*x, ranges) || (ic && in_ranges(x.to_ascii_uppercase(), ranges));
            hit != *negated
        }
        (
            Class {
                ranges: r1,
                negated: false,
            },
            Class {
                ranges: r2,
                negated: false,
            },
        ) => r1
            .iter()
            .any(|&(l1, h1)| r2.iter().any(|&(l2, h2)| l1 <= h2 && l2 <= h1)),
        (
            Class {
                ranges: pos,
                negated: false,
            },
            Class {
                ranges: neg,
                negated: true,
            },
        )
        | (
            Class {
                ranges: neg,
                negated: true,
            },
            Class {
                ranges: pos,
                negated: false,
            },
        ) => !ranges_cover(neg, pos),
        // Two complements of finite sets always share a character.
        (Class { .. }, Class { .. }) => true,
        (Star, _) | (_, Star) => true,
    }
}

/// Whether some string matches both component globs.
fn toks_meet(a: &[Tok], b: &[Tok], ic: bool) -> bool {
    let mut memo = vec![vec![None; b.len() + 1]; a.len() + 1];
    fn go(
        a: &[Tok],
        b: &[Tok],
        i: usize,
        j: usize,
        ic: bool,
        memo: &mut Vec<Vec<Option<bool>>>,
    ) -> bool {
        if let Some(v) = memo[i][j] {
            return v;
        }
        let v = match (a.get(i), b.get(j)) {
            (None, None) => true,
            (Some(Tok::Star), _) => {
                go(a, b, i + 1, j, ic, memo) || (j < b.len() && go(a, b, i, j + 1, ic, memo))
            }
            (_, Some(Tok::Star)) => {
                go(a, b, i, j + 1, ic, memo) || (i < a.len() && go(a, b, i + 1, j, ic, memo))
            }
            (Some(x), Some(y)) => chars_meet(x, y, ic) && go(a, b, i + 1, j + 1, ic, memo),
            _ => false,
        };
        memo[i][j] = Some(v);
        v
    }
    go(a, b, 0, 0, ic, &mut memo)
}

fn comps_meet(
    a: &[Comp],
    b: &[Comp],
    i: usize,
    j: usize,
    ic: bool,
    memo: &mut HashMap<(usize, usize), bool>,
) -> bool {
    if let Some(&v) = memo.get(&(i, j)) {
        return v;
    }
    let v = match (a.get(i), b.get(j)) {
        (None, None) => true,
        (Some(Comp::Deep), _) => {
            comps_meet(a, b, i + 1, j, ic, memo)
                || (j < b.len() && comps_meet(a, b, i, j + 1, ic, memo))
        }
        (_, Some(Comp::Deep)) => {
            comps_meet(a, b, i, j + 1, ic, memo)
                || (i < a.len() && comps_meet(a, b, i + 1, j, ic, memo))
        }
        (Some(Comp::Seg(x)), Some(Comp::Seg(y))) => {
            toks_meet(x, y, ic) && comps_meet(a, b, i + 1, j + 1, ic, memo)
        }
        _ => false,
    };
    memo.insert((i, j), v);
    v
}

/// Whether any pattern of `a` overlaps any pattern of `b`.
pub fn any_overlap(a: &[Pattern], b: &[Pattern]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.overlaps(y)))
}

/// Patterns indexed by their first literal component, so that checking a thousand paths against thousands
/// of leases compares each path only with the patterns that can reach it.
#[derive(Debug, Default)]
pub struct Index<T> {
    by_head: HashMap<String, Vec<(Pattern, T)>>,
    wild: Vec<(Pattern, T)>,
}

impl<T> Index<T> {
    pub fn insert(&mut self, p: Pattern, value: T) {
        match p.head() {
            Some(h) => self.by_head.entry(h).or_default().push((p, value)),
            None => self.wild.push((p, value)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_head.is_empty() && self.wild.is_empty()
    }

    /// Every entry whose pattern overlaps `p`.
    pub fn overlapping<'s>(&'s self, p: &'s Pattern) -> impl Iterator<Item = &'s T> + 's {
        let bucket: &[(Pattern, T)] = match p.head() {
            Some(h) => self.by_head.get(&h).map(Vec::as_slice).unwrap_or(&[]),
            None => &[],
        };
        // A glob head meets every bucket.
        let all: Box<dyn Iterator<Item = &(Pattern, T)>> = if p.head().is_none() {
            Box::new(self.by_head.values().flatten())
        } else {
            Box::new(bucket.iter())
        };
        all.chain(self.wild.iter())
            .filter(move |(q, _)| q.overlaps(p))
            .map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `=path` is a file git named ([`Pattern::literal`]); anything else a pattern.
    fn p(s: &str) -> Pattern {
        match s.strip_prefix('=') {
            Some(f) => Pattern::literal(f, false),
            None => Pattern::parse(s, false).unwrap(),
        }
    }

    /// (a, b, overlap?) — symmetric, so each pair is checked both ways.
    const TABLE: &[(&str, &str, bool)] = &[
        // exact paths
        ("src/a.rs", "src/a.rs", true),
        ("src/a.rs", "src/b.rs", false),
        ("./src/a.rs", "src/a.rs", true),
        // directory vs what is under it
        ("src", "src/a.rs", true),
        ("src/", "src/deep/er/x.rs", true),
        ("src", "srcx/a.rs", false),
        ("src/lease", "src/lea", false),
        // globs against paths
        ("src/*.rs", "src/a.rs", true),
        ("src/*.rs", "src/a.txt", false),
        ("src/*.rs", "src/sub/a.rs", false),
        ("src/*.rs", "docs/a.rs", false),
        ("src/?.rs", "src/ab.rs", false),
        ("src/?.rs", "src/a.rs", true),
        ("*.md", "README.md", true),
        ("*.md", "docs/x.md", false),
        // `**`
        ("**/*.rs", "src/a/b/c.rs", true),
        ("**/*.rs", "a.rs", true),
        ("**/*.rs", "=README.md", false),
        // a pattern naming README.md also leases what would be under a directory of that name
        ("**/*.rs", "README.md", true),
        ("src/*.rs", "=src/a.rs", true),
        ("src", "=src/deep/a.rs", true),
        ("src/a.rs", "=src/a.rs/b", true),
        ("=src/a.rs", "=src/a.rs", true),
        ("=src/a.rs", "=src/a.rs/b", false),
        ("src/**/mod.rs", "src/mod.rs", true),
        ("src/**/mod.rs", "src/x/y/mod.rs", true),
        ("src/**/mod.rs", "tests/mod.rs", false),
        ("**", "anything/at/all", true),
        // character classes
        ("src/[abc].rs", "src/b.rs", true),
        ("src/[abc].rs", "src/d.rs", false),
        ("src/[a-c].rs", "src/[d-f].rs", false),
        ("src/[a-c].rs", "src/[c-f].rs", true),
        ("src/[!a].rs", "src/a.rs", false),
        ("src/[!a].rs", "src/b.rs", true),
        ("src/[!a-z].rs", "src/[b-c].rs", false),
        ("src/[!a].rs", "src/[a-b].rs", true),
        ("src/[!a].rs", "src/[!b].rs", true),
        // a negated class meets a positive one unless it excludes all of it, over several of its ranges
        ("src/[!a-cd-f].rs", "src/[b-e].rs", false),
        ("src/[!d-fa-c].rs", "src/[b-e].rs", false),
        ("src/[!a-ce-f].rs", "src/[b-e].rs", true),
        ("src/[!a-c].rs", "src/[x-z].rs", true),
        ("src/[!b-c].rs", "src/[a-c].rs", true),
        ("src/[!a-c].rs", "src/[bc].rs", false),
        ("src/[!a-c].rs", "src/[bd].rs", true),
        ("src/[!ab].rs", "src/[a-c].rs", true),
        ("src/\\*.rs", "src/a.rs", false),
        ("src/\\*.rs", "src/*.rs", true),
        // globs against globs
        ("src/*.rs", "src/a*", true),
        ("src/*.rs", "src/*.md", false),
        ("src/a*b", "src/*c", false),
        ("src/a*b", "src/*b", true),
        ("**/x.rs", "src/**", true),
        ("src/*/a.rs", "src/b/*", true),
        ("src/*/a.rs", "docs/**", false),
        // case: git is case-sensitive unless core.ignoreCase
        ("Src/A.rs", "src/a.rs", false),
    ];

    #[test]
    fn the_overlap_table() {
        for &(a, b, want) in TABLE {
            assert_eq!(p(a).overlaps(&p(b)), want, "{a} vs {b}");
            assert_eq!(p(b).overlaps(&p(a)), want, "{b} vs {a}");
        }
    }

    #[test]
    fn a_directory_named_like_a_file_glob_leases_its_contents() {
        assert!(p("src/*.rs").overlaps(&p("src/weird.rs/inner.txt")));
    }

    #[test]
    fn case_folds_only_when_asked() {
        let a = Pattern::parse("Src/A.rs", true).unwrap();
        let b = Pattern::parse("src/a.rs", true).unwrap();
        assert!(a.overlaps(&b));
        let c = Pattern::parse("src/[A-C].rs", true).unwrap();
        assert!(c.overlaps(&Pattern::literal("SRC/b.rs", true)));
        assert!(!c.overlaps(&Pattern::literal("src/d.rs", true)));
    }

    #[test]
    fn literal_paths_take_glob_characters_literally() {
        let file = Pattern::literal("src/[x].rs", false);
        assert!(!file.overlaps(&p("src/x.rs")));
        assert!(file.overlaps(&p("src/\\[x\\].rs")));
        assert!(file.overlaps(&p("src/*.rs")));
    }

    #[test]
    fn malformed_patterns_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "src//a",
            "../x",
            "src/./a",
            "src/[abc",
            "src/a\\",
            "src/a**b",
            "src/**x",
            ":(exclude)src",
            ":!src",
            "src/[[:alpha:]]",
            "src/[z-a]",
            "/",
        ] {
            let e = Pattern::parse(bad, false).unwrap_err();
            assert!(
                e.to_string().contains("malformed lease pattern"),
                "{bad}: {e}"
            );
        }
    }

    /// A pattern shows as it was written (lease listings and refusals quote it).
    #[test]
    fn a_pattern_shows_as_written() {
        for text in ["./src/*.rs", "src/", "docs/**/[!a]?.md"] {
            assert_eq!(Pattern::parse(text, false).unwrap().to_string(), text);
        }
        assert_eq!(
            Pattern::literal("src/[x].rs", false).to_string(),
            "src/[x].rs"
        );
    }

    /// Case is folded when either side asks: a lease taken with `core.ignoreCase` meets a path named by a
    /// clone without it, both ways.
    #[test]
    fn case_folds_when_either_side_ignores_it() {
        let folding = Pattern::parse("Src/A.rs", true).unwrap();
        let exact = Pattern::literal("src/a.rs", false);
        assert!(folding.overlaps(&exact));
        assert!(exact.overlaps(&folding));
        assert!(!Pattern::parse("Src/A.rs", false).unwrap().overlaps(&exact));
        // The folding side folded its own letters when parsed; the other side's are folded in the match.
        let folding = Pattern::parse("src/a.rs", true).unwrap();
        let exact = Pattern::literal("Src/A.rs", false);
        assert!(folding.overlaps(&exact));
        assert!(exact.overlaps(&folding));
    }

    /// The characters a class takes literally: `!` or `^` after the first (only the first negates), `[`
    /// and `:` unless they open `[:name:]`, an escaped `]`, and `-` at the end.
    #[test]
    fn class_syntax_git_takes_literally() {
        let meets = |pattern: &str, path: &str| p(pattern).overlaps(&Pattern::literal(path, false));
        // negation, and the negating character itself not in the class
        assert!(meets("src/[!a].rs", "src/!.rs"));
        assert!(meets("src/[!a].rs", "src/[.rs"));
        assert!(!meets("src/[!a].rs", "src/a.rs"));
        assert!(meets("src/[^a].rs", "src/^.rs"));
        assert!(meets("src/[a!].rs", "src/!.rs"));
        assert!(!meets("src/[a!].rs", "src/b.rs"));
        // `[` and `:` are ordinary class members
        assert!(meets("src/[[x].rs", "src/[.rs"));
        assert!(meets("src/[a:].rs", "src/:.rs"));
        assert!(!meets("src/[a:].rs", "src/b.rs"));
        // `\]` is a member, the class goes on to the real `]`
        assert!(meets("src/[\\]a].rs", "src/].rs"));
        assert!(meets("src/[\\]a].rs", "src/a.rs"));
        assert!(!meets("src/[\\]a].rs", "src/b.rs"));
        // a trailing `-` is a member, not a range
        assert!(meets("src/[a-].rs", "src/-.rs"));
        assert!(meets("src/[a-].rs", "src/a.rs"));
        assert!(!meets("src/[a-].rs", "src/b.rs"));
        // an escaped range end, and what follows it read once
        assert!(meets("src/[a-\\c].rs", "src/b.rs"));
        assert!(!meets("src/[a-\\c].rs", "src/d.rs"));
        assert!(meets("src/[a-\\c-e].rs", "src/-.rs"));
        assert!(meets("src/[a-\\c-e].rs", "src/e.rs"));
        assert!(!meets("src/[a-\\c-e].rs", "src/d.rs"));
    }

    /// With `core.ignoreCase` a class holds both cases of its letters, also against letters of a side that
    /// does not fold them, and against another class.
    #[test]
    fn an_ignore_case_class_holds_both_cases() {
        let lower = Pattern::parse("src/[a-c].rs", true).unwrap();
        assert!(lower.overlaps(&Pattern::literal("src/B.rs", false)));
        assert!(!lower.overlaps(&Pattern::literal("src/D.rs", false)));
        assert!(lower.overlaps(&p("src/[B].rs")));
        let upper = Pattern::parse("src/[X-Z].rs", true).unwrap();
        assert!(upper.overlaps(&p("src/[y].rs")));
        assert!(!upper.overlaps(&p("src/[w].rs")));
        // only letters change case
        let digits = Pattern::parse("src/[0-9].rs", true).unwrap();
        assert!(!digits.overlaps(&p("src/[P].rs")));
    }

    /// Two lists overlap when any pattern of one overlaps any of the other.
    #[test]
    fn lists_overlap_when_any_pair_does() {
        let list = |v: &[&str]| v.iter().map(|s| p(s)).collect::<Vec<_>>();
        assert!(any_overlap(
            &list(&["docs", "src/*.rs"]),
            &list(&["tests", "=src/a.rs"])
        ));
        assert!(!any_overlap(
            &list(&["docs", "src/*.rs"]),
            &list(&["tests", "src/a.md"])
        ));
        assert!(!any_overlap(&list(&[]), &list(&["**"])));
    }

    /// The index keys a pattern by its first component when that is literal text (folded when case is
    /// ignored) and keeps the others apart, so a probe compares only with its own bucket and the globs.
    #[test]
    fn the_index_buckets_by_literal_first_component() {
        let mut idx = Index::default();
        assert!(idx.is_empty());
        idx.insert(p("**/x"), 9);
        assert!(!idx.is_empty());
        let mut idx = Index::default();
        idx.insert(p("src/a.rs"), 0);
        assert!(!idx.is_empty());
        idx.insert(p("src/*"), 1);
        idx.insert(p("docs"), 2);
        idx.insert(Pattern::parse("Tests/x", true).unwrap(), 3);
        idx.insert(p("**/x"), 4);
        idx.insert(p("[st]*/q"), 5);
        let mut heads: Vec<(&str, Vec<i32>)> = idx
            .by_head
            .iter()
            .map(|(h, v)| (h.as_str(), v.iter().map(|(_, n)| *n).collect()))
            .collect();
        heads.sort();
        assert_eq!(
            heads,
            [("docs", vec![2]), ("src", vec![0, 1]), ("tests", vec![3])]
        );
        assert_eq!(idx.wild.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [4, 5]);
    }

    #[test]
    fn the_index_finds_what_a_scan_finds() {
        let pats = [
            "src/a.rs",
            "src/*",
            "**/x",
            "docs",
            "[st]*/q",
            "tests/it/*.rs",
        ];
        let mut idx = Index::default();
        for (n, s) in pats.iter().enumerate() {
            idx.insert(p(s), n);
        }
        for probe in [
            "src/a.rs",
            "src/q",
            "tests/it/a.rs",
            "docs/x",
            "zz/x",
            "zz/y",
            "*",
        ] {
            let q = Pattern::parse(probe, false).unwrap();
            let mut got: Vec<usize> = idx.overlapping(&q).copied().collect();
            got.sort();
            let want: Vec<usize> = (0..pats.len())
                .filter(|&n| p(pats[n]).overlaps(&q))
                .collect();
            assert_eq!(got, want, "{probe}");
        }
    }
}
