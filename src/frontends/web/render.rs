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
    (
        "series_versions.html",
        include_str!("assets/series_versions.html"),
    ),
    ("range_diff.html", include_str!("assets/range_diff.html")),
    ("leases.html", include_str!("assets/leases.html")),
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
                &git_jules::capabilities::mail::api::UnknownName { name, suggestion }.to_string(),
                MAX_SUBJECT,
            )
        },
    );
    env.add_filter("left", left);
    // Multi-line untrusted text shown as it is (a cover letter, range-diff lines): controls and bidi
    // overrides made visible, newlines and tabs kept, cut at the body's bound.
    env.add_filter("body", |s: String| {
        git_jules::kit::text::visible_lines(&s[..floor_char_boundary(&s, MAX_BODY)]).into_owned()
    });
    // Against the clock, or against the page's own `now` (the lease clock, which tests pin).
    env.add_filter("ago", |s: String, now: Option<String>| {
        let now = now
            .and_then(|n| chrono::DateTime::parse_from_rfc3339(&n).ok())
            .map_or_else(chrono::Utc::now, |n| n.to_utc());
        Value::from_safe_string(ago_html(&s, now))
    });
    env.add_filter("trust", |v: Value| Value::from_safe_string(trust_html(&v)));
    env.add_filter("trust_why", |v: Value| trust_why(&v));
    env
}

/// HTML's five special characters escaped: for the few filters that build markup themselves.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// How long before `now` the RFC 3339 time `t` was, in the largest unit that says it ("just now", "3 min
/// ago", "5 h ago", "2 days ago"; "in 4 min" for a time ahead), `None` when `t` is not a time.
pub fn ago(t: &str, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
    let then = chrono::DateTime::parse_from_rfc3339(t).ok()?;
    let secs = now.signed_duration_since(then).num_seconds();
    let (n, ahead) = (secs.unsigned_abs(), secs < 0);
    let span = match n {
        0..=9 => return Some("just now".into()),
        10..=59 => format!("{n} s"),
        60..=3599 => format!("{} min", n / 60),
        3600..=86_399 => format!("{} h", n / 3600),
        86_400..=172_799 => "1 day".into(),
        _ if n < 60 * 86_400 => format!("{} days", n / 86_400),
        _ if n < 730 * 86_400 => format!("{} months", n / (30 * 86_400)),
        _ => format!("{} years", n / (365 * 86_400)),
    };
    Some(if ahead {
        format!("in {span}")
    } else {
        format!("{span} ago")
    })
}

/// `<time>` with the relative time shown and the exact one in `datetime` and `title` (on hover); a value
/// that is not a time is shown as text, made visible and escaped.
pub fn ago_html(t: &str, now: chrono::DateTime<chrono::Utc>) -> String {
    let exact = escape(&visible(t, MAX_NAME));
    match ago(t, now) {
        Some(rel) => format!("<time datetime=\"{exact}\" title=\"{exact}\">{rel}</time>"),
        None => exact,
    }
}

/// A signature state (`git_jules::store::sign::State` as serialised) as a mark: verified quietly green, unsigned mail
/// from a persona with no key quietly grey (legacy mail, not an alarm), unsigned from a persona that has a
/// key (likely forged), a bad signature or a key not allowed in red.
pub fn trust_html(v: &Value) -> String {
    let Some((class, word, why)) = trust_parts(v) else {
        return String::new();
    };
    let tag = if class == "sig-forged" {
        "strong"
    } else {
        "span"
    };
    format!(
        "<{tag} class=\"sig {class}\" title=\"signature: {}\">{word}</{tag}>",
        escape(&why)
    )
}

/// The whole sentence of a signature's state (what the mark's `title` says), as text.
pub fn trust_why(v: &Value) -> String {
    trust_parts(v).map(|(_, _, why)| why).unwrap_or_default()
}

/// A signature state's class, its short word and its whole sentence; `None` for no state.
fn trust_parts(v: &Value) -> Option<(&'static str, &'static str, String)> {
    let state = v
        .get_attr("state")
        .ok()
        .and_then(|s| s.as_str().map(str::to_owned))
        .unwrap_or_default();
    // A short word on the page, the whole sentence on hover (`title`).
    Some(match state.as_str() {
        "verified" => ("sig-ok", "verified", "verified".to_owned()),
        "unsigned" => (
            "sig-quiet",
            "unsigned",
            "unsigned, from a persona with no key at the time (mail from before keys)".to_owned(),
        ),
        "unsigned_with_key" => (
            "sig-forged",
            "likely forged",
            "not verified: unsigned, yet its persona has a key".to_owned(),
        ),
        "bad_signature" => (
            "sig-forged",
            "bad signature",
            "not verified: the signature does not verify".to_owned(),
        ),
        "key_not_allowed" => (
            "sig-forged",
            "key not allowed",
            "not verified: signed by a key not allowed for it".to_owned(),
        ),
        "" => return None,
        other => (
            "sig-forged",
            "not verified",
            format!("not verified: {}", visible(other, MAX_NAME)),
        ),
    })
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
/// ([`git_jules::kit::text`], the rule the CLI applies on a terminal), cut to `max` characters with an ellipsis.
/// Escaping for HTML is left to the template's autoescape.
pub fn visible(s: &str, max: usize) -> String {
    // Most names and subjects need nothing done: one copy (a page lists a thousand of them).
    if s.len() <= max && !s.chars().any(git_jules::kit::text::needs_escape) {
        return s.to_owned();
    }
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        if git_jules::kit::text::needs_escape(c) {
            git_jules::kit::text::push_escape(&mut out, c);
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
    fn relative_times_say_the_largest_unit_and_keep_the_exact_one() {
        let now = chrono::DateTime::parse_from_rfc3339("2030-01-01T12:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(ago("2030-01-01T12:00:00Z", now).unwrap(), "just now");
        assert_eq!(ago("2030-01-01T11:57:00Z", now).unwrap(), "3 min ago");
        assert_eq!(ago("2030-01-01T07:00:00+00:00", now).unwrap(), "5 h ago");
        assert_eq!(ago("2029-12-30T12:00:00Z", now).unwrap(), "2 days ago");
        assert_eq!(ago("2030-01-01T12:04:00Z", now).unwrap(), "in 4 min");
        assert_eq!(ago("yesterday", now), None);
        assert_eq!(
            ago_html("2030-01-01T11:57:00Z", now),
            "<time datetime=\"2030-01-01T11:57:00Z\" title=\"2030-01-01T11:57:00Z\">3 min ago</time>"
        );
        // Not a time: the text, escaped, never markup.
        assert_eq!(ago_html("<b>\u{202e}", now), "&lt;b&gt;&lt;U+202E&gt;");
    }

    #[test]
    fn trust_marks_forgeries_loudly_and_legacy_mail_quietly() {
        let v = |j: serde_json::Value| trust_html(&Value::from_serialize(j));
        assert!(v(serde_json::json!({"state": "unsigned"})).contains("sig-quiet"));
        let forged = v(serde_json::json!({"state": "unsigned_with_key", "persona": "<b>x</b>"}));
        assert!(
            forged.starts_with("<strong class=\"sig sig-forged\""),
            "{forged}"
        );
        assert!(!forged.contains("<b>"), "{forged}");
        assert!(
            v(serde_json::json!({"state": "verified", "key": "k", "persona": "a"}))
                .contains("sig-ok")
        );
        assert_eq!(v(serde_json::json!(null)), "");
    }

    #[test]
    fn templates_parse() {
        let env = environment();
        for (name, _) in TEMPLATES {
            env.get_template(name).unwrap();
        }
    }
}
