//! Untrusted text made safe to show to a person: the one rule every frontend applies (the CLI on a
//! terminal, the web view's names and subjects).
//!
//! Mail, names, tags, reasons and file names come from other personas and from patches; printed raw they
//! can drive the reader's terminal (ESC and OSC sequences clear the screen, set the window title, rewrite
//! what was printed with a carriage return) or reorder what is shown around them (a right-to-left override
//! makes `(NOT VERIFIED …)` read backwards: Trojan Source). The rule, as `less` and `gh` show such text:
//!
//! * a C0 control and DEL in caret notation: ESC is `^[`, BEL `^G`, CR `^M`, DEL `^?`;
//! * a C1 control (U+0080–U+009F) and a bidirectional formatting character (LRM, RLM, ALM, the embeddings
//!   and overrides U+202A–U+202E, the isolates U+2066–U+2069) as `<U+202E>`.
//!
//! [`visible`] escapes every one of them (a one-line field: a newline in a subject is shown as `^J`);
//! [`visible_lines`] keeps what a multi-line text needs (newline, tab and a CR right before a newline). The
//! escapes are plain printable text, so escaping twice changes nothing more.

use std::borrow::Cow;

/// Characters that reorder the text around them (Trojan Source): a name could show as another.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether the rule shows `c` as an escape (in a one-line field).
pub fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi(c)
}

/// `s` with every control and bidirectional formatting character shown as its escape; borrowed when
/// nothing needs it (a listing has thousands of such fields).
pub fn visible(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// [`visible`] for a multi-line text (a body, a cover letter, a patch): newlines, tabs and a carriage
/// return right before a newline (CRLF line ends, harmless on a terminal) are kept.
pub fn visible_lines(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

fn escape(s: &str, lines: bool) -> Cow<'_, str> {
    let keep = |c: char, next: Option<char>| {
        lines && (c == '\n' || c == '\t' || (c == '\r' && next == Some('\n')))
    };
    let mut chars = s.chars().peekable();
    let mut first = None;
    let mut at = 0;
    while let Some(c) = chars.next() {
        if needs_escape(c) && !keep(c, chars.peek().copied()) {
            first = Some(at);
            break;
        }
        at += c.len_utf8();
    }
    let Some(first) = first else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    let mut chars = s[first..].chars().peekable();
    while let Some(c) = chars.next() {
        if needs_escape(c) && !keep(c, chars.peek().copied()) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The escape of one character the rule does not show as itself.
pub fn push_escape(out: &mut String, c: char) {
    match c as u32 {
        n @ 0..=0x1f => {
            out.push('^');
            out.push(char::from(n as u8 ^ 0x40));
        }
        0x7f => out.push_str("^?"),
        n => out.push_str(&format!("<U+{n:04X}>")),
    }
}

/// The most characters of outside input an error quotes ([`excerpt`]).
pub const EXCERPT_CHARS: usize = 80;

/// `s` quoted for an error message: at most 80 characters between the quotes, escapes (Rust's, so controls
/// show) counted as they display, `…` where it is cut. Outside input is quoted, never echoed whole: a
/// 100 KB argument must not come back as a 100 KB error (issue 40).
pub fn excerpt(s: &str) -> String {
    let mut out = String::from("\"");
    let mut shown = 0;
    for c in s.chars() {
        let escaped: String = match c {
            // Inside double quotes a single quote needs no escape.
            '\'' => "'".into(),
            c => c.escape_debug().collect(),
        };
        let n = escaped.chars().count();
        if shown + n > EXCERPT_CHARS {
            out.push('…');
            break;
        }
        shown += n;
        out.push_str(&escaped);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_shows_at_most_eighty_characters() {
        assert_eq!(excerpt("a\tb"), r#""a\tb""#);
        let long = excerpt(&"\u{1b}".repeat(10_000));
        assert!(long.chars().count() <= 83, "{long}");
        assert!(long.ends_with("…\""), "{long}");
    }

    #[test]
    fn controls_in_caret_notation_c1_and_bidi_as_code_points() {
        assert_eq!(visible("a\x1b]0;pwned\x07b"), "a^[]0;pwned^Gb");
        assert_eq!(visible("\x1b[2J\x00\x7f"), "^[[2J^@^?");
        assert_eq!(
            visible("x\u{202e}y\u{85}z\u{2066}"),
            "x<U+202E>y<U+0085>z<U+2066>"
        );
        assert_eq!(visible("one\ntwo\tthree"), "one^Jtwo^Ithree");
        assert_eq!(visible("naïve ✓ 日本"), "naïve ✓ 日本");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_keep_newlines_tabs_and_crlf_but_not_a_lone_cr() {
        assert_eq!(visible_lines("a\r\nb\tc\n"), "a\r\nb\tc\n");
        assert_eq!(visible_lines("fake\rreal\x1b[8m"), "fake^Mreal^[[8m");
        assert_eq!(visible_lines("end\r"), "end^M");
    }

    #[test]
    fn escaping_twice_changes_nothing_more() {
        let once = visible("\x1b\u{202e}\u{9b}").into_owned();
        assert_eq!(visible(&once), once);
    }
}
