//! Who wrote an input: the persona a conflict mail goes to.
//!
//! In order, the first that gives a valid persona name wins:
//! 1. the persona map (`--persona-map FILE`), matched against the input as given, then the author's email,
//!    then the author's name;
//! 2. the branch name `jules/<persona>/…` (also `refs/heads/…`, `refs/remotes/<remote>/…` and
//!    `<remote>/…`; `integration` and `staging` are not personas);
//! 3. a `Persona:` trailer in the message (the first commit or mail that has one);
//! 4. the author (the patch's `From:`): the local part of the email if it is a valid persona name, else the
//!    name (display names like `Jane Doe` are not persona names; `curator@jules.invalid` is `curator`).
//!
//! Persona map format: UTF-8 text, one mapping a line, `PATTERN = PERSONA`; blank lines and lines starting
//! with `#` are ignored; surrounding whitespace is trimmed. PATTERN is a glob (`*` any run of characters,
//! `/` included; `?` one character) matched against the whole input label, author email or author name; the
//! first line that matches wins.

use serde::Serialize;

use crate::kit::error::{Error, Result};
use crate::kit::names;

/// Where an input's persona came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PersonaSource {
    Map,
    Branch,
    Trailer,
    Author,
}

#[derive(Debug, Clone, Default)]
pub struct PersonaMap {
    rules: Vec<(String, String)>,
}

impl PersonaMap {
    /// Parse the map; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<PersonaMap> {
        let mut rules = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((pattern, persona)) = line.rsplit_once('=') else {
                return Err(Error::usage(format!(
                    "{origin}:{}: expected `PATTERN = PERSONA`",
                    n + 1
                )));
            };
            let (pattern, persona) = (pattern.trim(), persona.trim());
            if pattern.is_empty() {
                return Err(Error::usage(format!("{origin}:{}: empty pattern", n + 1)));
            }
            names::validate_name("persona", persona)
                .map_err(|e| Error::usage(format!("{origin}:{}: {e}", n + 1)))?;
            rules.push((pattern.to_owned(), persona.to_owned()));
        }
        Ok(PersonaMap { rules })
    }

    pub fn lookup(&self, candidates: &[&str]) -> Option<&str> {
        for c in candidates.iter().filter(|c| !c.is_empty()) {
            if let Some((_, p)) = self.rules.iter().find(|(pat, _)| glob(pat, c)) {
                return Some(p);
            }
        }
        None
    }
}

/// `*` matches any run of characters (`/` included), `?` one character; everything else itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// The persona of a branch-like name, `jules/<persona>/…`.
pub fn from_branch(name: &str) -> Option<String> {
    let mut short = name.strip_prefix("refs/heads/").unwrap_or(name);
    if let Some(rest) = short.strip_prefix("refs/remotes/") {
        short = rest.split_once('/').map_or(rest, |(_, r)| r);
    } else if !short.starts_with("jules/") {
        // `origin/jules/curator/x`
        if let Some((_, r)) = short.split_once('/') {
            short = r;
        }
    }
    let rest = short.strip_prefix("jules/")?;
    let (persona, tail) = rest.split_once('/')?;
    if tail.is_empty() || matches!(persona, "integration" | "staging") {
        return None;
    }
    valid(persona)
}

/// The value of the first `Persona:` trailer of `message` (git's trailer rules: the last paragraph only).
pub fn from_trailer(message: &str) -> Option<String> {
    crate::kit::trailers::first(message, "Persona").and_then(|t| valid(&t.value))
}

/// The local part of the author's email if it is a persona name, else the name.
pub fn from_author(name: &str, email: &str) -> Option<String> {
    valid(email.split('@').next().unwrap_or_default()).or_else(|| valid(name))
}

fn valid(s: &str) -> Option<String> {
    (names::validate_name("persona", s).is_ok()
        && s != crate::capabilities::mail::message::BROADCAST)
        .then(|| s.to_owned())
}

/// What is known about an input, in the order of the rules above.
pub struct Clues<'a> {
    pub label: &'a str,
    /// A branch-like name (the input label for branches; absent for files and ranges of ids).
    pub branch: Option<&'a str>,
    /// Messages of the input's commits or mails, first first.
    pub messages: Vec<&'a str>,
    /// `(name, email)` of the first commit or mail.
    pub author: Option<(&'a str, &'a str)>,
}

pub fn resolve(map: Option<&PersonaMap>, c: &Clues<'_>) -> Option<(String, PersonaSource)> {
    if let Some(map) = map {
        let (name, email) = c.author.unwrap_or_default();
        if let Some(p) = map.lookup(&[c.label, email, name]) {
            return Some((p.to_owned(), PersonaSource::Map));
        }
    }
    if let Some(p) = c.branch.and_then(from_branch) {
        return Some((p, PersonaSource::Branch));
    }
    if let Some(p) = c.messages.iter().find_map(|m| from_trailer(m)) {
        return Some((p, PersonaSource::Trailer));
    }
    c.author
        .and_then(|(n, e)| from_author(n, e))
        .map(|p| (p, PersonaSource::Author))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_in_order() {
        assert_eq!(
            from_branch("jules/curator/tidy").as_deref(),
            Some("curator")
        );
        assert_eq!(
            from_branch("refs/remotes/origin/jules/refactor/x/y").as_deref(),
            Some("refactor")
        );
        assert_eq!(from_branch("origin/jules/a/b").as_deref(), Some("a"));
        assert_eq!(from_branch("jules/integration/sprint-1"), None);
        assert_eq!(from_branch("feature/x"), None);
        assert_eq!(
            from_trailer("fix\n\nbody\n\nPersona: visionary\n").as_deref(),
            Some("visionary")
        );
        assert_eq!(
            from_author("Jules Dev", "dev@x.org").as_deref(),
            Some("dev")
        );
        assert_eq!(
            from_author("curator", "not valid@x.org").as_deref(),
            Some("curator")
        );

        let map = PersonaMap::parse(
            "# comment\n0002-*.patch = refactor\n*@example.com = visionary\n",
            "map",
        )
        .unwrap();
        let clues = Clues {
            label: "0002-fix.patch",
            branch: None,
            messages: vec!["x\n\nPersona: curator\n"],
            author: Some(("A", "a@example.com")),
        };
        assert_eq!(
            resolve(Some(&map), &clues),
            Some(("refactor".into(), PersonaSource::Map))
        );
        assert_eq!(
            resolve(None, &clues),
            Some(("curator".into(), PersonaSource::Trailer))
        );
        assert!(PersonaMap::parse("nothing here\n", "m").is_err());
        assert!(PersonaMap::parse("x = bad name\n", "m").is_err());
    }

    #[test]
    fn globs() {
        assert!(glob("jules/*", "jules/a/b"));
        assert!(glob("*.patch", "dir/0001-x.patch"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(!glob("jules/*/x", "jules/a/y"));
    }
}
