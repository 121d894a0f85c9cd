//! Trust roots: which keys speak for which persona, read from an allowed-signers file in git's format
//! (`gpg.ssh.allowedSignersFile`, ssh-keygen(1) "ALLOWED SIGNERS").
//!
//! One line per key: `principals [options] keytype base64-key [comment]`. `principals` is a comma-separated
//! list of patterns (`*` and `?` wildcards, a leading `!` negates); the options we honour are
//! `namespaces="…"` (patterns of the SSHSIG namespaces the key may sign in), `valid-after="…"` and
//! `valid-before="…"` (`YYYYMMDD[HHMM[SS]]`, an optional `Z`; read as UTC: a sandbox's local zone means
//! nothing to another clone). Anything else (`cert-authority`, an unknown option, a key that does not parse)
//! refuses the whole file: a trust root we half understand is worse than none.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use ssh_key::public::KeyData;
use ssh_key::PublicKey;

use crate::kit::error::{Error, Result};

/// One allowed key.
#[derive(Debug, Clone)]
pub struct Entry {
    pub principals: Vec<String>,
    pub namespaces: Option<Vec<String>>,
    pub valid_after: Option<DateTime<Utc>>,
    pub valid_before: Option<DateTime<Utc>>,
    pub key: KeyData,
    /// 1-based line number in the file, for messages.
    pub line: usize,
}

/// A parsed allowed-signers file.
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    pub entries: Vec<Entry>,
}

/// Why a key does not speak for a persona at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// No line names this key for this persona (in this namespace).
    NotListed,
    /// A line does, but the time is outside its `valid-after`/`valid-before` window.
    OutsideValidity,
}

impl AllowedSigners {
    /// Parse the file's text; `what` names it in errors.
    pub fn parse(text: &str, what: &str) -> Result<Self> {
        let mut entries = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: String| Error::usage(format!("{what}:{}: {why}", n + 1));
            let mut rest = line;
            let principals = take_token(&mut rest).map_err(&bad)?;
            if principals.is_empty() {
                return Err(bad("no principals".into()));
            }
            let mut namespaces = None;
            let (mut valid_after, mut valid_before) = (None, None);
            let mut next = take_token(&mut rest).map_err(&bad)?;
            if !is_key_type(&next) {
                for opt in split_options(&next).map_err(&bad)? {
                    let (name, value) = match opt.split_once('=') {
                        Some((k, v)) => (k.to_ascii_lowercase(), Some(unquote(v))),
                        None => (opt.to_ascii_lowercase(), None),
                    };
                    match (name.as_str(), value) {
                        ("namespaces", Some(v)) => {
                            namespaces = Some(v.split(',').map(str::to_owned).collect())
                        }
                        ("valid-after", Some(v)) => {
                            valid_after = Some(parse_time(&v).map_err(&bad)?)
                        }
                        ("valid-before", Some(v)) => {
                            valid_before = Some(parse_time(&v).map_err(&bad)?)
                        }
                        (other, _) => {
                            return Err(bad(format!(
                                "option {other:?} is not supported (namespaces, valid-after, valid-before are)"
                            )))
                        }
                    }
                }
                next = take_token(&mut rest).map_err(&bad)?;
            }
            let blob = take_token(&mut rest).map_err(&bad)?;
            let key = PublicKey::from_openssh(&format!("{next} {blob}"))
                .map_err(|e| bad(format!("key does not parse: {e}")))?;
            entries.push(Entry {
                principals: principals.split(',').map(str::to_owned).collect(),
                namespaces,
                valid_after,
                valid_before,
                key: key.key_data().clone(),
                line: n + 1,
            });
        }
        Ok(AllowedSigners { entries })
    }

    /// Whether `key` may sign as `persona` in `namespace` at `at`, as ssh-keygen -Y verify decides it.
    pub fn allows(
        &self,
        key: &KeyData,
        persona: &str,
        namespace: &str,
        at: Option<DateTime<Utc>>,
    ) -> std::result::Result<(), Denied> {
        let mut outside = false;
        for e in &self.entries {
            if e.key != *key || !patterns_match(&e.principals, persona) {
                continue;
            }
            if let Some(ns) = &e.namespaces {
                if !patterns_match(ns, namespace) {
                    continue;
                }
            }
            // An event without a readable time is judged as of no time at all: only a line without a
            // validity window speaks for it.
            let inside = match at {
                Some(t) => e.valid_after.is_none_or(|a| t >= a) && not_after(t, e.valid_before),
                None => e.valid_after.is_none() && e.valid_before.is_none(),
            };
            if inside {
                return Ok(());
            }
            outside = true;
        }
        Err(if outside {
            Denied::OutsideValidity
        } else {
            Denied::NotListed
        })
    }
}

impl AllowedSigners {
    /// Whether some line lists a key for `persona` in `namespace` that existed at `at`: the line's
    /// `valid-after` is not after `at` (a line without `valid-after` has always existed; `valid-before` does
    /// not matter, a revoked key was still the persona's). An unsigned event or version from such a persona
    /// is what a forger without the key writes (`State::UnsignedWithKey`); `at` unknown counts as after.
    pub fn has_key_for(&self, persona: &str, namespace: &str, at: Option<DateTime<Utc>>) -> bool {
        self.entries.iter().any(|e| {
            patterns_match(&e.principals, persona)
                && e.namespaces
                    .as_ref()
                    .is_none_or(|ns| patterns_match(ns, namespace))
                && match (e.valid_after, at) {
                    (Some(after), Some(t)) => t >= after,
                    _ => true,
                }
        })
    }

    /// The principals of the lines that let `key` sign checkpoints at `now`: lines that name
    /// [`super::CHECKPOINT_NAMESPACE`] in `namespaces="…"` literally (no line without `namespaces=`, no
    /// wildcard: see [`super::CHECKPOINT_NAMESPACE`]), with `now` inside their validity window. A manifest
    /// has no time of its own, so the window is judged when it is read.
    pub fn allows_checkpoints(
        &self,
        key: &KeyData,
        now: DateTime<Utc>,
    ) -> std::result::Result<String, Denied> {
        let mut outside = false;
        for e in &self.entries {
            let named = e
                .namespaces
                .as_ref()
                .is_some_and(|ns| ns.iter().any(|n| n == super::CHECKPOINT_NAMESPACE));
            if e.key != *key || !named {
                continue;
            }
            if e.valid_after.is_none_or(|a| now >= a) && not_after(now, e.valid_before) {
                return Ok(e.principals.join(","));
            }
            outside = true;
        }
        Err(if outside {
            Denied::OutsideValidity
        } else {
            Denied::NotListed
        })
    }
}

/// Whether `t` is not after `valid_before`, as ssh-keygen -Y verify judges it: the window includes its
/// last second (sshsig.c refuses only `verify_time > valid_before`, in whole seconds), so an event signed
/// at 00:00:00.500 of a `valid-before="…000000"` day is still inside.
fn not_after(t: DateTime<Utc>, valid_before: Option<DateTime<Utc>>) -> bool {
    valid_before.is_none_or(|b| t.timestamp() <= b.timestamp())
}

fn is_key_type(token: &str) -> bool {
    token.starts_with("ssh-") || token.starts_with("ecdsa-") || token.starts_with("sk-")
}

/// The next whitespace-separated token; double quotes group (and are kept, for options).
fn take_token(rest: &mut &str) -> std::result::Result<String, String> {
    let s = rest.trim_start();
    if s.is_empty() {
        return Err("line ends early: want `principals [options] keytype key`".into());
    }
    let mut quoted = false;
    let mut end = s.len();
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    if quoted {
        return Err("unclosed quote".into());
    }
    let tok = &s[..end];
    *rest = &s[end..];
    // A quoted principals field: the quotes are not part of the names.
    Ok(
        if tok.starts_with('"') && tok.ends_with('"') && tok.len() >= 2 && !tok.contains('=') {
            tok[1..tok.len() - 1].to_owned()
        } else {
            tok.to_owned()
        },
    )
}

/// `a,b="x,y",c` → `a`, `b="x,y"`, `c`.
fn split_options(s: &str) -> std::result::Result<Vec<String>, String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in s.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    if out.iter().any(String::is_empty) {
        return Err(format!("empty option in {s:?}"));
    }
    Ok(out)
}

fn unquote(v: &str) -> String {
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(v)
        .to_owned()
}

/// `YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS`, optionally followed by `Z`; always UTC.
fn parse_time(v: &str) -> std::result::Result<DateTime<Utc>, String> {
    let digits = v.strip_suffix(['Z', 'z']).unwrap_or(v);
    let bad = || format!("time {v:?} is not YYYYMMDD[HHMM[SS]][Z]");
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let naive = match digits.len() {
        8 => NaiveDate::parse_from_str(digits, "%Y%m%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0)),
        12 => NaiveDateTime::parse_from_str(digits, "%Y%m%d%H%M").ok(),
        14 => NaiveDateTime::parse_from_str(digits, "%Y%m%d%H%M%S").ok(),
        _ => None,
    }
    .ok_or_else(bad)?;
    Ok(naive.and_utc())
}

/// ssh's pattern lists: any positive match and no negated match.
fn patterns_match(patterns: &[String], name: &str) -> bool {
    let mut hit = false;
    for p in patterns {
        if let Some(neg) = p.strip_prefix('!') {
            if glob(neg.as_bytes(), name.as_bytes()) {
                return false;
            }
        } else if glob(p.as_bytes(), name.as_bytes()) {
            hit = true;
        }
    }
    hit
}

/// `*` and `?` wildcards, as ssh's match_pattern.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDgLsVFv1tu9aeoUqP9w+QQHvpZnNBXxSsgyAXy8O5oz";

    #[test]
    fn parses_what_git_documents() {
        let text = format!(
            "# comment\n\n\
             alice,bob* {KEY} alice@host\n\
             \"carol\" namespaces=\"git,git-jules-event\",valid-after=\"20260101\",valid-before=\"20261231235959Z\" {KEY}\n"
        );
        let a = AllowedSigners::parse(&text, "f").unwrap();
        assert_eq!(a.entries.len(), 2);
        let key = &a.entries[0].key;
        assert_eq!(a.allows(key, "bobby", "git-jules-event", None), Ok(()));
        assert_eq!(
            a.allows(key, "dave", "git-jules-event", None),
            Err(Denied::NotListed)
        );
        let t = |s: &str| Some(s.parse::<DateTime<Utc>>().unwrap());
        assert_eq!(
            a.allows(key, "carol", "git-jules-event", t("2026-06-01T00:00:00Z")),
            Ok(())
        );
        assert_eq!(
            a.allows(key, "carol", "git-jules-event", t("2027-01-01T00:00:00Z")),
            Err(Denied::OutsideValidity)
        );
        assert_eq!(
            a.allows(key, "carol", "other", t("2026-06-01T00:00:00Z")),
            Err(Denied::NotListed)
        );
    }

    #[test]
    fn refuses_what_it_cannot_honour() {
        for bad in [
            format!("alice cert-authority {KEY}"),
            format!("alice valid-after=\"yesterday\" {KEY}"),
            "alice ssh-ed25519 notbase64".to_owned(),
            "alice".to_owned(),
            format!("alice foo=\"x\" {KEY}"),
        ] {
            assert!(AllowedSigners::parse(&bad, "f").is_err(), "{bad}");
        }
    }

    /// Three more keys: a second and third ed25519 (made with ssh-keygen), and an sk-ed25519 (a security
    /// key's public half; its 32 bytes are 0..32).
    const KEY_B: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHqP5bROrc1PzhZmCoupJBglLQ+n1WsjAz1Uy77mZG+a";
    const KEY_C: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID/qNYfpuabj0F/YS1zW6PVQNu113nFx4+uDqf5eoHd6";
    const KEY_SK: &str = "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fAAAABHNzaDo=";
    const KEY_ECDSA: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBAnipKOkEsgaqsYtnqtaha9VLY6LuDnJNUKUi9RYXLpaZ7DH8be4O7M3hLVCK5dfdPWVJh+B8ba9TeRCWAiDJEk=";

    fn key(text: &str) -> KeyData {
        PublicKey::from_openssh(text).unwrap().key_data().clone()
    }

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn entries_carry_their_line_in_the_file() {
        let text = format!("# trust roots\n\nalice {KEY}\n  \n# bob\nbob {KEY_B}\n");
        let a = AllowedSigners::parse(&text, "f").unwrap();
        let lines: Vec<usize> = a.entries.iter().map(|e| e.line).collect();
        assert_eq!(lines, [3, 6]);
    }

    #[test]
    fn every_key_type_ssh_keygen_writes_starts_the_key_not_the_options() {
        // `ssh-…`, `ecdsa-…` and `sk-…` (security keys) are key types; were one read as options, the line
        // would be refused as naming an unknown option.
        let text = format!("alice {KEY}\ncarol {KEY_SK}\n");
        let a = AllowedSigners::parse(&text, "f").unwrap();
        let names: Vec<&str> = a.entries.iter().map(|e| e.principals[0].as_str()).collect();
        assert_eq!(names, ["alice", "carol"]);
        // This build reads no ECDSA key (ssh-key without its `ecdsa` feature), so such a line refuses the
        // file; the refusal must say that the key is the trouble, not an option.
        let err = AllowedSigners::parse(&format!("bob {KEY_ECDSA}"), "f").unwrap_err();
        assert!(err.to_string().contains("f:1: key does not parse"), "{err}");
        assert_eq!(
            a.allows(&key(KEY_SK), "carol", "git-jules-event", None),
            Ok(())
        );
        assert_eq!(
            a.allows(&key(KEY_SK), "alice", "git-jules-event", None),
            Err(Denied::NotListed)
        );
    }

    #[test]
    fn quotes_group_the_principals_as_ssh_keygen_reads_them() {
        // ssh-keygen(1): the principals field may be quoted; a quoted field may hold spaces.
        let a = AllowedSigners::parse(&format!("\"dev one,ci\" {KEY}"), "f").unwrap();
        assert_eq!(a.entries[0].principals, ["dev one", "ci"]);
        assert_eq!(a.allows(&key(KEY), "ci", "git-jules-event", None), Ok(()));
        // Text after the closing quote is not a principals field ssh-keygen reads (it refuses the line):
        // here it grants nobody, least of all the names inside the quotes.
        let a = AllowedSigners::parse(&format!("\"alice,bob\"x {KEY}"), "f").unwrap();
        for who in ["alice", "bob"] {
            assert_eq!(
                a.allows(&key(KEY), who, "git-jules-event", None),
                Err(Denied::NotListed),
                "{who}"
            );
        }
        // A quote that never closes refuses the file.
        assert!(AllowedSigners::parse(&format!("\"alice {KEY}"), "f").is_err());
    }

    #[test]
    fn times_read_at_every_length_ssh_keygen_takes() {
        let text = format!(
            "a valid-after=\"20260102\",valid-before=\"202601021230\" {KEY}\n\
             b valid-after=\"20260102123045Z\" {KEY}\n"
        );
        let a = AllowedSigners::parse(&text, "f").unwrap();
        assert_eq!(a.entries[0].valid_after, Some(utc("2026-01-02T00:00:00Z")));
        assert_eq!(a.entries[0].valid_before, Some(utc("2026-01-02T12:30:00Z")));
        assert_eq!(a.entries[1].valid_after, Some(utc("2026-01-02T12:30:45Z")));
        for bad in ["2026010", "202601021", "2026010212304", "20261302"] {
            let line = format!("a valid-after=\"{bad}\" {KEY}");
            assert!(AllowedSigners::parse(&line, "f").is_err(), "{bad}");
        }
    }

    #[test]
    fn the_validity_window_includes_both_ends_as_ssh_keygen_verify_does() {
        // ssh-keygen -Y verify -O verify-time=T (OpenSSH 9.2) accepts T == valid-after and T ==
        // valid-before, and refuses a second either side; it counts whole seconds.
        let a = AllowedSigners::parse(
            &format!("alice valid-after=\"20260101\",valid-before=\"20260201\" {KEY}"),
            "f",
        )
        .unwrap();
        let at = |s: &str| a.allows(&key(KEY), "alice", "git-jules-event", Some(utc(s)));
        assert_eq!(at("2025-12-31T23:59:59Z"), Err(Denied::OutsideValidity));
        assert_eq!(at("2026-01-01T00:00:00Z"), Ok(()));
        assert_eq!(at("2026-01-15T00:00:00Z"), Ok(()));
        assert_eq!(at("2026-02-01T00:00:00Z"), Ok(()));
        assert_eq!(at("2026-02-01T00:00:00.999Z"), Ok(()));
        assert_eq!(at("2026-02-01T00:00:01Z"), Err(Denied::OutsideValidity));
    }

    #[test]
    fn an_event_without_a_time_is_spoken_for_only_by_a_line_without_a_window() {
        let text = format!(
            "alice valid-before=\"20260201\" {KEY}\nbob valid-after=\"20260101\" {KEY}\ncarol {KEY}\n"
        );
        let a = AllowedSigners::parse(&text, "f").unwrap();
        let k = key(KEY);
        assert_eq!(
            a.allows(&k, "alice", "git-jules-event", None),
            Err(Denied::OutsideValidity)
        );
        assert_eq!(
            a.allows(&k, "bob", "git-jules-event", None),
            Err(Denied::OutsideValidity)
        );
        assert_eq!(a.allows(&k, "carol", "git-jules-event", None), Ok(()));
    }

    #[test]
    fn checkpoints_need_a_line_naming_their_namespace_literally_inside_its_window() {
        let text = format!(
            "alice,ci namespaces=\"git,git-jules-checkpoint\" {KEY}\n\
             bob {KEY_B}\n\
             bob namespaces=\"git-jules-event\" {KEY_B}\n\
             bob namespaces=\"git-jules-*\" {KEY_B}\n\
             carol namespaces=\"git-jules-checkpoint\",valid-after=\"20260101\",valid-before=\"20260201\" {KEY_C}\n"
        );
        let a = AllowedSigners::parse(&text, "f").unwrap();
        let now = utc("2026-01-15T00:00:00Z");
        // The principals of the line, as the manifest's verdict names them.
        assert_eq!(
            a.allows_checkpoints(&key(KEY), now),
            Ok("alice,ci".to_owned())
        );
        // No `namespaces=`, another namespace, a wildcard: none of them lets a key sign checkpoints.
        assert_eq!(
            a.allows_checkpoints(&key(KEY_B), now),
            Err(Denied::NotListed)
        );
        assert_eq!(
            a.allows_checkpoints(&key(KEY_SK), now),
            Err(Denied::NotListed)
        );
        let at = |s: &str| a.allows_checkpoints(&key(KEY_C), utc(s));
        assert_eq!(at("2025-12-31T23:59:59Z"), Err(Denied::OutsideValidity));
        assert_eq!(at("2026-01-01T00:00:00Z"), Ok("carol".to_owned()));
        assert_eq!(at("2026-01-15T00:00:00Z"), Ok("carol".to_owned()));
        assert_eq!(at("2026-02-01T00:00:00Z"), Ok("carol".to_owned()));
        assert_eq!(at("2026-02-01T00:00:01Z"), Err(Denied::OutsideValidity));
        assert_eq!(at("2026-03-01T00:00:00Z"), Err(Denied::OutsideValidity));
    }

    #[test]
    fn a_star_matches_any_run_of_characters_and_nothing_else() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(patterns_match(&p(&["*-bot"]), "ci-bot"));
        assert!(patterns_match(&p(&["*-bot"]), "-bot"));
        assert!(!patterns_match(&p(&["*-bot"]), "ci-human"));
        assert!(!patterns_match(&p(&["a*z"]), "abc"));
        assert!(patterns_match(&p(&["a*"]), "a"));
        assert!(!patterns_match(&p(&["*a"]), ""));
    }

    #[test]
    fn negated_patterns() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(patterns_match(&p(&["*", "!orchestrator"]), "dev"));
        assert!(!patterns_match(&p(&["*", "!orchestrator"]), "orchestrator"));
        assert!(patterns_match(&p(&["d?v"]), "dev"));
    }
}
