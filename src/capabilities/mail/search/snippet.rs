//! Snippets: a short, safe excerpt of a body around the first match, with the matched words marked.
//!
//! The body is cut into tokens with the index's own analyzer, so a word is marked exactly when the index
//! matched it. The text handed out is safe to print: control characters and bidirectional overrides
//! become spaces or U+FFFD, runs of white space fold into one space, and the excerpt is bounded whatever
//! the body's size.

use serde::{Deserialize, Serialize};
use tantivy::tokenizer::TextAnalyzer;

/// At most this many characters of text around the first match.
const WIDTH: usize = 160;
/// Characters kept before the first match.
const LEAD: usize = 40;

/// An excerpt and where the matched words are in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    pub text: String,
    /// `[start, end)` of each marked word, in characters (Unicode scalar values) of `text`.
    pub marks: Vec<[usize; 2]>,
}

/// What a query's positive terms look for: tokens in a row, the last one perhaps a prefix.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub tokens: Vec<String>,
    pub last_is_prefix: bool,
}

impl Pattern {
    fn matches_at(&self, toks: &[(String, usize, usize)], i: usize) -> bool {
        let n = self.tokens.len();
        if n == 0 || i + n > toks.len() {
            return false;
        }
        self.tokens.iter().enumerate().all(|(k, want)| {
            let have = &toks[i + k].0;
            if k + 1 == n && self.last_is_prefix {
                have.starts_with(want.as_str())
            } else {
                have == want
            }
        })
    }
}

/// The snippet of `body` for `patterns`: from a little before the first match, or the body's start when
/// nothing in it matched (the match was in the subject or a name).
pub fn make(analyzer: &mut TextAnalyzer, body: &str, patterns: &[Pattern]) -> Snippet {
    let mut toks: Vec<(String, usize, usize)> = Vec::new();
    let mut stream = analyzer.token_stream(body);
    while let Some(t) = stream.next() {
        toks.push((t.text.clone(), t.offset_from, t.offset_to));
    }
    // Byte ranges of the matches, in order, not overlapping.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let hit = patterns
            .iter()
            .filter(|p| p.matches_at(&toks, i))
            .map(|p| p.tokens.len())
            .max();
        match hit {
            Some(n) => {
                spans.push((toks[i].1, toks[i + n - 1].2));
                i += n;
            }
            None => i += 1,
        }
    }
    let start_byte = spans.first().map_or(0, |&(s, _)| {
        // LEAD characters back, then forward to the start of a word so the excerpt does not open mid-word.
        let mut b = s;
        for (n, (idx, _)) in body[..s].char_indices().rev().enumerate() {
            b = idx;
            if n + 1 >= LEAD {
                break;
            }
        }
        if b > 0 {
            if let Some(ws) = body[b..s].find(char::is_whitespace) {
                b += ws;
            }
        }
        b
    });
    let mut text = String::new();
    let mut marks = Vec::new();
    let mut chars = 0usize;
    let mut open: Option<usize> = None;
    let mut span = spans.iter().peekable();
    let mut last_space = true;
    if start_byte > 0 {
        text.push('…');
        chars += 1;
        last_space = false;
    }
    for (idx, c) in body[start_byte..].char_indices() {
        let idx = idx + start_byte;
        while span.peek().is_some_and(|&&(_, e)| e <= idx) {
            if let Some(s) = open.take() {
                marks.push([s, chars]);
            }
            span.next();
        }
        if open.is_none() && span.peek().is_some_and(|&&(s, _)| s == idx) {
            open = Some(chars);
        }
        if chars >= WIDTH && open.is_none() {
            text.push('…');
            break;
        }
        let shown = safe_char(c);
        if shown == ' ' {
            if last_space {
                continue;
            }
            last_space = true;
        } else {
            last_space = false;
        }
        text.push(shown);
        chars += 1;
    }
    if let Some(s) = open {
        marks.push([s, chars]);
    }
    // Trailing white space carries no meaning; marks never end inside it (a word does not end in a space).
    while text.ends_with(' ') {
        text.pop();
    }
    Snippet { text, marks }
}

/// A character as it may be shown: white space and control characters as a space, the bidirectional
/// controls (which reorder what a terminal shows) and other invisible format characters as U+FFFD.
pub fn safe_char(c: char) -> char {
    match c {
        c if c.is_whitespace() || c.is_control() => ' ',
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{FEFF}' => '\u{FFFD}',
        c => c,
    }
}

/// A one-line, safe form of a subject or name.
pub fn safe_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = safe_char(c);
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(words: &[&str], prefix: bool) -> Pattern {
        Pattern {
            tokens: words.iter().map(|w| w.to_string()).collect(),
            last_is_prefix: prefix,
        }
    }

    fn marked(s: &Snippet) -> Vec<String> {
        let chars: Vec<char> = s.text.chars().collect();
        s.marks
            .iter()
            .map(|[a, b]| chars[*a..*b].iter().collect())
            .collect()
    }

    #[test]
    fn marks_words_phrases_and_prefixes() {
        let mut a = super::super::index::analyzer();
        let s = make(
            &mut a,
            "The Flaky test in quokka\nis flaky again; refactoring the parser.",
            &[pat(&["flaky", "test"], false), pat(&["refact"], true)],
        );
        assert_eq!(
            s.text,
            "The Flaky test in quokka is flaky again; refactoring the parser."
        );
        assert_eq!(marked(&s), ["Flaky test", "refactoring"]);
    }

    #[test]
    fn hostile_text_is_bounded_and_safe() {
        let mut a = super::super::index::analyzer();
        let body = format!(
            "{}needle\u{1b}[31m red \u{202e}evil\u{0} 🦀 日本語 {}",
            "x ".repeat(100_000),
            "y".repeat(200_000)
        );
        let s = make(&mut a, &body, &[pat(&["needle"], false)]);
        assert!(s.text.chars().count() <= WIDTH + 2, "{}", s.text.len());
        assert!(!s.text.chars().any(|c| c.is_control() || c == '\u{202e}'));
        assert!(s.text.starts_with('…'));
        assert_eq!(marked(&s), ["needle"]);
        assert!(s.text.contains("🦀 日本語"));
        // Nothing matched in the body: its start.
        let s = make(&mut a, "plain words", &[pat(&["absent"], false)]);
        assert_eq!((s.text.as_str(), s.marks.len()), ("plain words", 0));
    }
}
