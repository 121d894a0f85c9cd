//! Turning untrusted text into inert HTML: the page templates (minijinja, autoescaped because their names
//! end in `.html`), Markdown bodies (pulldown-cmark, then ammonia), and names and subjects made visible
//! (control characters and bidirectional overrides shown as escapes, long ones cut).

use minijinja::{Environment, Value};

/// Longest body rendered in a page; the rest is behind the raw link.
pub const MAX_BODY: usize = 64 * 1024;
/// Longest subject shown in a page.
pub const MAX_SUBJECT: usize = 200;
/// Longest name (persona, tag, file) shown in a page.
pub const MAX_NAME: usize = 80;

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("assets/base.html")),
    ("fleet.html", include_str!("assets/fleet.html")),
    ("mailbox.html", include_str!("assets/mailbox.html")),
    ("thread.html", include_str!("assets/thread.html")),
    ("series.html", include_str!("assets/series.html")),
    ("weave.html", include_str!("assets/weave.html")),
    ("search.html", include_str!("assets/search.html")),
    ("error.html", include_str!("assets/error.html")),
    ("done.html", include_str!("assets/done.html")),
];

pub const APP_JS: &str = include_str!("assets/app.js");
pub const STYLE_CSS: &str = include_str!("assets/style.css");

/// The template environment, built once per server.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    for (name, src) in TEMPLATES {
        env.add_template(name, src)
            .expect("the embedded templates parse (a unit test renders each)");
    }
    env.add_filter("name", |s: String| visible(&s, MAX_NAME));
    env.add_filter("subject", |s: String| visible(&s, MAX_SUBJECT));
    env.add_filter("markdown", |s: String| {
        Value::from_safe_string(markdown(&s))
    });
    // Persona and file names in paths and queries.
    env.add_filter("urlencode", |s: String| {
        form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
    });
    env.add_filter("short", |s: String| s.chars().take(12).collect::<String>());
    // A use case's warning about a name, in the words the CLI and the MCP server use.
    env.add_filter(
        "unknown_persona",
        |name: String, suggestion: Option<String>| {
            visible(
                &crate::mail::api::UnknownName { name, suggestion }.to_string(),
                MAX_SUBJECT,
            )
        },
    );
    env.add_filter("left", left);
    env
}

/// Seconds left as the largest units that say it (`1h 05m`, `4m 10s`, `9s`).
pub fn left(secs: i64) -> String {
    let s = secs.max(0);
    match (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60) {
        (d, h, _, _) if d > 0 => format!("{d}d {h:02}h"),
        (_, h, m, _) if h > 0 => format!("{h}h {m:02}m"),
        (_, _, m, sec) if m > 0 => format!("{m}m {sec:02}s"),
        (_, _, _, sec) => format!("{sec}s"),
    }
}

/// `s` with every control character and bidirectional formatting character shown as its escape
/// ([`crate::text`], the rule the CLI applies on a terminal), cut to `max` characters with an ellipsis.
/// Escaping for HTML is left to the template's autoescape.
pub fn visible(s: &str, max: usize) -> String {
    // Most names and subjects need nothing done: one copy (a page lists a thousand of them).
    if s.len() <= max && !s.chars().any(crate::text::needs_escape) {
        return s.to_owned();
    }
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        if crate::text::needs_escape(c) {
            crate::text::push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Markdown to sanitised HTML: no script, no event handlers, no `javascript:` or `data:` links, no styles,
/// links that open nothing on their own.
pub fn markdown(text: &str) -> String {
    use pulldown_cmark::{html, Options, Parser};
    let text = &text[..floor_char_boundary(text, MAX_BODY)];
    let mut raw = String::with_capacity(text.len() * 3 / 2);
    html::push_html(
        &mut raw,
        Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH),
    );
    ammonia::Builder::default()
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("noopener noreferrer nofollow"))
        .clean(&raw)
        .to_string()
}

/// The largest index ≤ `max` on a char boundary of `s`.
pub fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_markdown_is_inert() {
        let out = markdown(
            "<script>document.title='x'</script>\n\n<img src=x onerror=\"alert(1)\">\n\n\
             [click](javascript:alert(1)) <svg><script>alert(1)</script></svg> <a href=\"data:text/html,x\">d</a>",
        );
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("onerror"), "{out}");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(!out.contains("<svg"), "{out}");
        assert!(!out.contains("data:"), "{out}");
        assert!(markdown("**b** [l](https://e.x)").contains("<strong>b</strong>"));
    }

    #[test]
    fn names_show_controls_and_overrides() {
        assert_eq!(visible("ab\u{202e}cd\u{7}", 80), "ab<U+202E>cd^G");
        assert_eq!(visible("abcdef", 3), "abc…");
    }

    #[test]
    fn time_left_in_its_largest_units() {
        assert_eq!(left(9), "9s");
        assert_eq!(left(250), "4m 10s");
        assert_eq!(left(3900), "1h 05m");
        assert_eq!(left(90_000), "1d 01h");
        assert_eq!(left(-5), "0s");
    }

    #[test]
    fn templates_parse() {
        let env = environment();
        for (name, _) in TEMPLATES {
            env.get_template(name).unwrap();
        }
    }
}
