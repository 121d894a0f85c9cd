//! One way into each capability (issue 42, point 3), checked against the source.
//!
//! Mail: the frontends (`src/frontends/cli/`, the MCP server in `src/frontends/mcp/`, `src/frontends/web/`) and every other
//! capability reach mail through its use cases (`mail::api`) and its view (`mail::view`), never through
//! the implementation behind them (`mail::ops`, `mail::out`). Those two are `pub(crate)` in the library,
//! which already keeps the binary out; this test also keeps the library's other modules out, and names the
//! file when one slips.

/// The mail modules no file outside `src/capabilities/mail/` may name.
const PRIVATE: [&str; 2] = ["ops", "out"];

/// The private mail modules `code` names: `mail::ops…` and `mail::out…`, and inside a use tree
/// `mail::{ops, …}` (`self` aside), comments and strings included (a doc that points a reader at them
/// is as stale as a call).
fn named(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("mail::") {
        let after = &rest[i + "mail::".len()..];
        let heads: Vec<&str> = match after.strip_prefix('{') {
            // The first segment of each item of the tree (nested trees go one level deep here, which is
            // all a `use` of mail's modules needs).
            Some(tree) => tree
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .map(|item| item.trim().split("::").next().unwrap_or_default().trim())
                .collect(),
            None => vec![after],
        };
        for head in heads {
            let ident: String = head
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if PRIVATE.contains(&ident.as_str()) {
                found.push(format!("mail::{ident}"));
            }
        }
        rest = after;
    }
    found
}

/// `path: mail::x` for each file under `src/` outside `src/capabilities/mail/` that names a private mail module.
fn violations(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, code) in files {
        if rel.starts_with("src/capabilities/mail/") {
            continue;
        }
        for n in named(code) {
            out.push(format!("{rel}: {n}"));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn sources() -> Vec<(String, String)> {
    crate::sources::files()
}

/// Catches a frontend or another capability that goes around the mail use cases (issue 42: the web
/// called `mail::ops`/`mail::out` and rebuilt what `mail::api` does).
#[test]
fn only_mail_itself_names_mail_ops_or_out() {
    let files = sources();
    assert!(
        files
            .iter()
            .any(|(rel, _)| rel == "src/capabilities/mail/api.rs"),
        "the walk found the sources"
    );
    assert_eq!(violations(&files), Vec::<String>::new());
}

/// The rule above fails on planted uses: a web page importing `ops`, a command naming `out` inline, a
/// capability's use tree, and the binary's `git_jules::` path; mail's own files and `mail::api` pass.
#[test]
fn a_planted_way_around_mail_api_is_caught() {
    let plant = |rel: &str, code: &str| (rel.to_owned(), code.to_owned());
    let files = vec![
        plant(
            "src/frontends/web/planted.rs",
            "use crate::mail::ops::{self, Mark};\n",
        ),
        plant(
            "src/frontends/cli/mail/planted.rs",
            "fn f() { let _ = git_jules::capabilities::mail::out::JSON_VERSION; }\n",
        ),
        plant(
            "src/capabilities/lease/planted.rs",
            "use crate::mail::{recipients::Groups, ops, SendRequest};\n",
        ),
        plant(
            "src/frontends/mcp/planted.rs",
            "use git_jules::capabilities::mail::{self, out};\n",
        ),
        plant(
            "src/capabilities/mail/planted.rs",
            "use crate::mail::ops;\n",
        ),
        plant(
            "src/capabilities/fleet.rs",
            "use crate::mail::{api, view::Filter};\nfn f() { crate::mail::outbox(); }\n",
        ),
    ];
    assert_eq!(
        violations(&files),
        [
            "src/capabilities/lease/planted.rs: mail::ops",
            "src/frontends/cli/mail/planted.rs: mail::out",
            "src/frontends/mcp/planted.rs: mail::out",
            "src/frontends/web/planted.rs: mail::ops",
        ]
    );
}
