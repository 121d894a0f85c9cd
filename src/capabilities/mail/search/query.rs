//! The query language of `mail search`: what people know from public-inbox and most search boxes.
//!
//! ```text
//! query   = or
//! or      = and { "OR" and }
//! and     = unary { unary }            (AND by default; "AND" between two terms is allowed and changes nothing)
//! unary   = [ "-" ] atom
//! atom    = "(" or ")" | [ field ":" ] ( word | word "*" | '"' phrase '"' )
//! field   = s | subject | f | from | t | to | b | body
//! ```
//!
//! Without a field a term matches the subject or the body. Errors name the position (in characters, from 1)
//! and what was expected there, so that a person or a model can fix the query. The parser only builds the
//! tree; `index` turns it into an index query, so the grammar can be tested without an index.
//!
//! The input is outside input (a command line, a web form, an MCP call): a query is at most
//! [`MAX_QUERY_BYTES`] long and nests brackets at most [`MAX_DEPTH`] deep. The nesting bound is what keeps
//! every recursive walk of the tree (this parser, [`Node::positive_terms`], the conversion to an index
//! query, tantivy's own scoring of nested boolean queries, and dropping the tree) on a small stack: a stack
//! overflow cannot be caught, so ten thousand brackets must never become ten thousand frames. Errors quote
//! at most [`QUOTE_CHARS`] characters of the input.

use crate::kit::error::{Error, Result};

/// The deepest nesting of brackets a query may have: far beyond what a person writes, and a few kilobytes
/// of stack for each walk of the tree.
pub const MAX_DEPTH: usize = 64;
/// The longest query, in bytes: a long pasted phrase fits.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;
/// The most characters of the input an error quotes (then an ellipsis).
pub const QUOTE_CHARS: usize = crate::kit::text::EXCERPT_CHARS;

/// `s` quoted for an error: [`crate::kit::text::excerpt`], at most [`QUOTE_CHARS`] characters.
pub fn quote(s: &str) -> String {
    crate::kit::text::excerpt(s)
}

/// Where a term looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// Subject or body (no field prefix).
    Text,
    Subject,
    Body,
    /// The sender.
    From,
    /// The recipients as written (personas, groups, `__broadcast`) and the members of the groups.
    To,
}

impl Field {
    fn from_prefix(p: &str) -> Option<Field> {
        Some(match p {
            "s" | "subject" => Field::Subject,
            "b" | "body" => Field::Body,
            "f" | "from" => Field::From,
            "t" | "to" => Field::To,
            _ => return None,
        })
    }

    /// Whether the field holds free text (words) rather than names.
    pub fn is_text(self) -> bool {
        matches!(self, Field::Text | Field::Subject | Field::Body)
    }
}

/// What one term asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A word as the user wrote it (it may analyse into several tokens, which then must be adjacent).
    Word(String),
    /// Words starting with this.
    Prefix(String),
    /// The words in this order, next to each other.
    Phrase(String),
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Term {
        field: Field,
        term: Term,
        /// Character position (from 1) of the term, for errors found later (a word with nothing searchable).
        at: usize,
    },
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
}

impl Node {
    /// The positive terms (not under a `-`): what a snippet marks.
    pub fn positive_terms(&self) -> Vec<(Field, Term)> {
        let mut out = Vec::new();
        self.collect(&mut out, false);
        out
    }

    fn collect(&self, out: &mut Vec<(Field, Term)>, negated: bool) {
        match self {
            Node::Term { field, term, .. } if !negated => out.push((*field, term.clone())),
            Node::Term { .. } => {}
            Node::And(v) | Node::Or(v) => v.iter().for_each(|n| n.collect(out, negated)),
            Node::Not(n) => n.collect(out, !negated),
        }
    }
}

/// Parse a query; an empty one (nothing but spaces) is refused.
pub fn parse(input: &str) -> Result<Node> {
    if input.len() > MAX_QUERY_BYTES {
        return Err(Error::usage(format!(
            "the search query is {} bytes long: at most {MAX_QUERY_BYTES} are searched",
            input.len()
        )));
    }
    let chars: Vec<char> = input.chars().collect();
    if chars.iter().all(|c| c.is_whitespace()) {
        return Err(Error::usage("empty search query: give at least one word"));
    }
    let mut p = Parser {
        chars,
        pos: 0,
        depth: 0,
    };
    let node = p.or()?;
    p.skip_space();
    if p.pos < p.chars.len() {
        // Only a stray `)` can stop the top level early.
        return Err(p.error("a word, a phrase or the end of the query"));
    }
    Ok(node)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Brackets open at the cursor.
    depth: usize,
}

impl Parser {
    fn error(&self, expected: &str) -> Error {
        let found = match self.chars.get(self.pos) {
            None => "the end of the query".to_owned(),
            Some(c) => format!("{:?}", c),
        };
        Error::usage(format!(
            "cannot parse the search query at character {}: expected {expected}, found {found}",
            self.pos + 1
        ))
    }

    fn skip_space(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// Whether the bare word at the cursor is `kw` (followed by a space, a bracket, a quote or the end).
    fn at_keyword(&self, kw: &str) -> bool {
        let n = kw.chars().count();
        let here: String = self.chars.iter().skip(self.pos).take(n).collect();
        here == kw
            && self
                .chars
                .get(self.pos + n)
                .is_none_or(|c| c.is_whitespace() || *c == '(' || *c == '"' || *c == '-')
    }

    fn or(&mut self) -> Result<Node> {
        let mut parts = vec![self.and()?];
        loop {
            self.skip_space();
            if self.at_keyword("OR") {
                self.pos += 2;
                self.skip_space();
                parts.push(self.and()?);
            } else {
                break;
            }
        }
        Ok(if parts.len() == 1 {
            parts.pop().expect("one")
        } else {
            Node::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Node> {
        let mut parts = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None | Some(')') => break,
                _ if self.at_keyword("OR") => {
                    if parts.is_empty() {
                        return Err(self.error("a word or a phrase before OR"));
                    }
                    break;
                }
                _ if self.at_keyword("AND") => {
                    if parts.is_empty() {
                        return Err(self.error("a word or a phrase before AND"));
                    }
                    self.pos += 3;
                    self.skip_space();
                    if self.peek().is_none() || self.peek() == Some(')') || self.at_keyword("OR") {
                        return Err(self.error("a word or a phrase after AND"));
                    }
                }
                _ => parts.push(self.unary()?),
            }
        }
        match parts.len() {
            0 => Err(self.error("a word, a phrase or \"(\"")),
            1 => Ok(parts.pop().expect("one")),
            _ => Ok(Node::And(parts)),
        }
    }

    fn unary(&mut self) -> Result<Node> {
        if self.peek() == Some('-') {
            self.pos += 1;
            match self.peek() {
                None => return Err(self.error("a word or a phrase after \"-\"")),
                Some(c) if c.is_whitespace() || c == ')' => {
                    return Err(self.error("a word or a phrase right after \"-\""))
                }
                _ => {}
            }
            return Ok(Node::Not(Box::new(self.atom()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Node> {
        if self.peek() == Some('(') {
            if self.depth == MAX_DEPTH {
                return Err(Error::usage(format!(
                    "cannot parse the search query at character {}: brackets nested deeper than \
                     {MAX_DEPTH}",
                    self.pos + 1
                )));
            }
            self.depth += 1;
            self.pos += 1;
            self.skip_space();
            let inner = self.or()?;
            self.skip_space();
            if self.peek() != Some(')') {
                return Err(self.error("\")\""));
            }
            self.pos += 1;
            self.depth -= 1;
            return Ok(inner);
        }
        let start = self.pos;
        // A field prefix: letters then ':' directly followed by the term.
        let mut field = Field::Text;
        let mut end = self.pos;
        while self.chars.get(end).is_some_and(|c| c.is_ascii_alphabetic()) {
            end += 1;
        }
        if end > self.pos && self.chars.get(end) == Some(&':') {
            let name: String = self.chars[self.pos..end].iter().collect();
            if let Some(f) = Field::from_prefix(&name.to_ascii_lowercase()) {
                field = f;
                self.pos = end + 1;
                match self.peek() {
                    None => {
                        return Err(self.error(&format!("a word or a phrase after \"{name}:\"")))
                    }
                    Some(c) if c.is_whitespace() || c == ')' || c == '(' => {
                        return Err(self.error(&format!("a word or a phrase after \"{name}:\"")))
                    }
                    _ => {}
                }
            }
        }
        let at = self.pos + 1;
        if self.peek() == Some('"') {
            self.pos += 1;
            let from = self.pos;
            while self.peek().is_some_and(|c| c != '"') {
                self.pos += 1;
            }
            if self.peek().is_none() {
                return Err(Error::usage(format!(
                    "cannot parse the search query at character {}: the phrase opened there has no \
                     closing '\"'",
                    from
                )));
            }
            let phrase: String = self.chars[from..self.pos].iter().collect();
            self.pos += 1;
            if phrase.trim().is_empty() {
                return Err(Error::usage(format!(
                    "cannot parse the search query at character {from}: expected words between the \
                     quotes, found an empty phrase"
                )));
            }
            return Ok(Node::Term {
                field,
                term: Term::Phrase(phrase),
                at,
            });
        }
        let from = self.pos;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && c != '(' && c != ')' && c != '"')
        {
            self.pos += 1;
        }
        let word: String = self.chars[from..self.pos].iter().collect();
        if word.is_empty() {
            self.pos = start.max(self.pos);
            return Err(self.error("a word, a phrase or \"(\""));
        }
        let term = match word.strip_suffix('*') {
            Some(stem) if stem.is_empty() || stem.ends_with('*') => {
                self.pos = from;
                return Err(self.error("a word before \"*\" (at least one letter or digit)"));
            }
            Some(stem) => Term::Prefix(stem.to_owned()),
            None => Term::Word(word),
        };
        Ok(Node::Term { field, term, at })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(field: Field, w: &str, at: usize) -> Node {
        Node::Term {
            field,
            term: Term::Word(w.into()),
            at,
        }
    }

    fn err(q: &str) -> String {
        parse(q).unwrap_err().to_string()
    }

    #[test]
    fn words_are_anded_or_binds_looser_and_minus_negates() {
        assert_eq!(
            parse("flaky test OR quokka -parser").unwrap(),
            Node::Or(vec![
                Node::And(vec![
                    word(Field::Text, "flaky", 1),
                    word(Field::Text, "test", 7)
                ]),
                Node::And(vec![
                    word(Field::Text, "quokka", 15),
                    Node::Not(Box::new(word(Field::Text, "parser", 23))),
                ]),
            ])
        );
        // AND is the default and may be written.
        assert_eq!(
            parse("a AND b").unwrap(),
            Node::And(vec![word(Field::Text, "a", 1), word(Field::Text, "b", 7)])
        );
    }

    #[test]
    fn fields_phrases_prefixes_and_groups() {
        assert_eq!(
            parse("s:\"flaky test\" f:quokka refact* (x OR y)").unwrap(),
            Node::And(vec![
                Node::Term {
                    field: Field::Subject,
                    term: Term::Phrase("flaky test".into()),
                    at: 3
                },
                word(Field::From, "quokka", 18),
                Node::Term {
                    field: Field::Text,
                    term: Term::Prefix("refact".into()),
                    at: 25
                },
                Node::Or(vec![word(Field::Text, "x", 34), word(Field::Text, "y", 39)]),
            ])
        );
        // An unknown prefix is part of the word (URLs, "re:").
        assert_eq!(parse("http://x").unwrap(), word(Field::Text, "http://x", 1));
        // Lowercase `or` is a word.
        assert_eq!(
            parse("a or").unwrap(),
            Node::And(vec![word(Field::Text, "a", 1), word(Field::Text, "or", 3)])
        );
    }

    #[test]
    fn errors_name_the_position_and_what_was_expected() {
        assert!(err("   ").contains("empty search query"));
        assert_eq!(
            err("flaky \"test"),
            "cannot parse the search query at character 7: the phrase opened there has no closing '\"'"
        );
        assert_eq!(
            err("(a b"),
            "cannot parse the search query at character 5: expected \")\", found the end of the query"
        );
        assert_eq!(
            err("a )"),
            "cannot parse the search query at character 3: expected a word, a phrase or the end of \
             the query, found ')'"
        );
        assert!(err("OR a").contains("at character 1: expected a word or a phrase before OR"));
        assert!(err("a OR").contains("at character 5: expected a word, a phrase"));
        assert!(err("a -").contains("at character 4: expected a word or a phrase after \"-\""));
        assert!(err("s: x").contains("at character 3: expected a word or a phrase after \"s:\""));
        assert!(err("*").contains("at character 1: expected a word before \"*\""));
        assert!(err("\"\"").contains("empty phrase"));
    }

    /// Issue 40, finding 1: ten thousand nested brackets overflowed the stack (the process aborted). The
    /// nesting is bounded, and the error names where the bound was crossed.
    #[test]
    fn deep_nesting_is_refused_at_the_bracket_that_crosses_the_bound() {
        let ok = format!("{}x{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(parse(&ok).unwrap(), word(Field::Text, "x", MAX_DEPTH + 1));
        let deep = format!(
            "{}x{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(
            err(&deep),
            format!(
                "cannot parse the search query at character {}: brackets nested deeper than {MAX_DEPTH}",
                MAX_DEPTH + 1
            )
        );
        let huge = format!("{}x{}", "(".repeat(4_000), ")".repeat(4_000));
        assert!(
            err(&huge).contains("brackets nested deeper"),
            "{}",
            err(&huge)
        );
        // Negation inside brackets counts the brackets only.
        let negated = format!(
            "{}x{}",
            "-(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert!(err(&negated).contains("nested deeper"));
    }

    /// Issue 40, finding 1: the input is bounded before it is parsed.
    #[test]
    fn an_overlong_query_is_refused_before_parsing() {
        let long = "a ".repeat(MAX_QUERY_BYTES / 2 + 1);
        assert_eq!(
            err(&long),
            format!(
                "the search query is {} bytes long: at most {MAX_QUERY_BYTES} are searched",
                long.len()
            )
        );
        let fits = "a ".repeat(MAX_QUERY_BYTES / 2);
        assert!(parse(&fits).is_ok());
    }

    /// Issue 40, finding 6: a 100,000-character word came back whole in the error. Every error quotes at
    /// most `QUOTE_CHARS` characters of the input.
    #[test]
    fn errors_quote_a_bounded_excerpt_of_the_input() {
        let long = "y".repeat(5_000);
        for q in [
            format!("\"{long}"),
            format!("s:\"{long}"),
            format!("({long}"),
            format!("{long} )"),
            format!("{long}**"),
        ] {
            let e = err(&q);
            assert!(e.len() < 200, "{} bytes: {e}", e.len());
        }
        assert_eq!(
            quote(&"z".repeat(200)),
            format!("\"{}…\"", "z".repeat(QUOTE_CHARS))
        );
        assert_eq!(quote("short"), "\"short\"");
        // Found by `cargo fuzz run -s none search_query`: 80 control characters quoted as `\u{11}` each
        // made an error of 402 characters. Escapes count as they show.
        let controls = quote(&"\u{11}".repeat(100));
        assert_eq!(controls, format!("\"{}…\"", "\\u{11}".repeat(13)));
        let e =
            crate::capabilities::mail::search::compile_only(&format!("%{}", "\u{11}".repeat(60)))
                .unwrap_err()
                .to_string();
        assert!(e.chars().count() < 200, "{e}");
    }

    #[test]
    fn positive_terms_skip_negated_ones() {
        let n = parse("a -b -(c OR -d)").unwrap();
        let words: Vec<String> = n
            .positive_terms()
            .into_iter()
            .map(|(_, t)| match t {
                Term::Word(w) | Term::Prefix(w) | Term::Phrase(w) => w,
            })
            .collect();
        assert_eq!(words, ["a", "d"]);
    }
}
