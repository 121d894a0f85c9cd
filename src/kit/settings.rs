//! Every documented `jules.*` configuration key with its type, and the one strict reader of each type.
//!
//! A value of the wrong type is an error that names the key and the value, as git's own
//! `bad boolean config value 'maybe' for 'jules.requiresigned'` does: read leniently, a typo in
//! `jules.requireSigned` turned signature checks off without a word. [`validate`] checks the whole table
//! when the repository is opened (`repo::open_with`, below every frontend), so every frontend (CLI, MCP, web, a library caller)
//! gets the same typed error before any use case runs, whatever keys that use case reads; it only looks at
//! values already in memory (and resolves `jules.trust.ref` when one is set), so the pre-commit hook pays
//! nothing measurable for it. The readers below are strict too, for handles opened some other way.
//!
//! `git -c KEY=VALUE jules …` reaches git-jules as `GIT_CONFIG_PARAMETERS` (and `GIT_CONFIG_COUNT`/
//! `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`); gix reads the latter itself but not the former, so the
//! frontend hands the variable's text to [`git_c_overrides`] (git's `config.c` quoting) and the pairs ride
//! on `repo::Overrides::git_c`, which `repo::open_with` gives gix as command-line overrides: after the files
//! and after `GIT_CONFIG_COUNT`, as git orders them.

use crate::kit::error::{Error, Result};

/// The type of a key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// git's booleans: `true`/`yes`/`on`/`1`, `false`/`no`/`off`/`0`/empty, or the key alone.
    Bool,
    /// A duration: whole seconds, or a number and a unit (`90s`, `15m`, `2h`, `3d`, `1w`), at most
    /// [`MAX_DURATION`].
    Duration,
    /// git's integers (`k`, `m`, `g` suffixes), at least `min`.
    Integer { min: i64 },
    /// A path, interpolated as git's `--type=path` does (`~/`, `~user/`).
    Path,
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// Any text (a revision, a remote, a command, a member name).
    Text,
}

/// One key: `name` is `section.sub.key`, with `*` standing for a name chosen by the user
/// (`jules.persona.*.signingKey`).
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    pub ty: Type,
}

/// `jules.requireSigned`
pub const REQUIRE_SIGNED: &str = "jules.requireSigned";
/// `jules.strictPersonas`
pub const STRICT_PERSONAS: &str = "jules.strictPersonas";
/// `jules.trust.ref`
pub const TRUST_REF: &str = "jules.trust.ref";
/// `jules.lease.maxTtl`
pub const LEASE_MAX_TTL: &str = "jules.lease.maxTtl";
/// `jules.fullReplay` (`repo::Overrides::full_replay`)
pub const FULL_REPLAY: &str = "jules.fullReplay";
/// `jules.sessionSigningKey` (`repo::Overrides::signing_key`)
pub const SESSION_SIGNING_KEY: &str = "jules.sessionSigningKey";

/// Every documented key (docs/cli.md, "Configuration"; docs/series.md for `jules.verify.*`; docs/agents.md
/// for `jules.agent.guard`).
pub const KEYS: &[Key] = &[
    Key {
        name: REQUIRE_SIGNED,
        ty: Type::Bool,
    },
    Key {
        name: STRICT_PERSONAS,
        ty: Type::Bool,
    },
    Key {
        name: FULL_REPLAY,
        ty: Type::Bool,
    },
    Key {
        name: SESSION_SIGNING_KEY,
        ty: Type::Path,
    },
    Key {
        name: "jules.signingKey",
        ty: Type::Path,
    },
    Key {
        name: "jules.persona.*.signingKey",
        ty: Type::Path,
    },
    Key {
        name: TRUST_REF,
        ty: Type::Text,
    },
    Key {
        name: "jules.remote",
        ty: Type::Text,
    },
    Key {
        name: "jules.group.*.member",
        ty: Type::Text,
    },
    Key {
        name: "jules.maxRetries",
        ty: Type::Integer { min: 0 },
    },
    Key {
        name: "jules.sync.minPushInterval",
        ty: Type::Duration,
    },
    Key {
        name: "jules.verify.cmd",
        ty: Type::Text,
    },
    Key {
        name: "jules.verify.jobs",
        ty: Type::Integer { min: 1 },
    },
    Key {
        name: "jules.verify.worktreeDir",
        ty: Type::Path,
    },
    // Read by the shipped pre-push hook through `git config`, which honours `git -c` itself.
    Key {
        name: "jules.verify.prePush",
        ty: Type::Text,
    },
    Key {
        name: "jules.lease.prePush",
        ty: Type::Text,
    },
    Key {
        name: "jules.lease.ttl",
        ty: Type::Duration,
    },
    Key {
        name: LEASE_MAX_TTL,
        ty: Type::Duration,
    },
    Key {
        name: "jules.lease.remindBefore",
        ty: Type::Duration,
    },
    Key {
        name: "jules.lease.remind",
        ty: Type::Bool,
    },
    Key {
        name: "jules.lease.releaseOnFinalize",
        ty: Type::Bool,
    },
    Key {
        name: "jules.lease.releaseOnDone",
        ty: Type::Bool,
    },
    // Read by `agent hook pre-edit` only when the guard cannot decide: any value other than `open` is
    // `closed` (docs/agents.md), so no value is refused here.
    Key {
        name: "jules.agent.guard",
        ty: Type::Text,
    },
    Key {
        name: "jules.lease.preCommit",
        ty: Type::Choice(&["refuse", "warn", "off", "false", "no", "0"]),
    },
];

/// The longest duration any setting or option accepts: a century. Longer is a typo or an attempt to make
/// something last forever, and `now` plus it must still be a time RFC 3339 can write.
pub const MAX_DURATION: i64 = 36_500 * 86_400;

/// Check every key of [`KEYS`] present in `repo`'s configuration (see the module doc), and that
/// `jules.trust.ref`, when set, names a revision under `jules.requireSigned`.
pub fn validate(repo: &gix::Repository) -> Result<()> {
    let config = repo.config_snapshot();
    for key in KEYS {
        for name in instances(&config, key.name) {
            check(&config, &name, key.ty)?;
        }
    }
    if let Some(value) = trust_ref_names_nothing(repo) {
        if require_signed(repo)? {
            return Err(bad(
                TRUST_REF,
                &value,
                "revision",
                Some(format!(
                    "it names no commit, so no event could be verified under {REQUIRE_SIGNED}"
                )),
            ));
        }
    }
    Ok(())
}

/// What a frontend should tell its user about the configuration: problems that do not stop a command.
pub fn warnings(repo: &gix::Repository) -> Vec<String> {
    match trust_ref_names_nothing(repo) {
        Some(value) => vec![format!(
            "{TRUST_REF} is '{value}', which names no commit: there are no trust roots, so no mail is \
             marked NOT VERIFIED"
        )],
        None => Vec::new(),
    }
}

/// The configured `jules.trust.ref` when it resolves to nothing. Unset, it is not asked (the default
/// may well not exist yet: a repository without trust roots verifies nothing, as documented).
fn trust_ref_names_nothing(repo: &gix::Repository) -> Option<String> {
    let value = repo.config_snapshot().string(TRUST_REF)?.to_string();
    if value.is_empty() {
        return None;
    }
    repo.rev_parse_single(value.as_str())
        .is_err()
        .then_some(value)
}

/// The full names of `pattern` present in the configuration: itself, or one per subsection matching its
/// `*`.
fn instances(config: &gix::config::Snapshot<'_>, pattern: &str) -> Vec<String> {
    let Some((prefix, key)) = pattern.split_once(".*.") else {
        return vec![pattern.to_owned()];
    };
    let (section, sub_prefix) = prefix.split_once('.').unwrap_or((prefix, ""));
    let Some(sections) = config.plumbing().sections_by_name(section) else {
        return Vec::new();
    };
    let mut names: Vec<String> = sections
        .filter_map(|s| {
            let sub = s.header().subsection_name()?.to_string();
            let name = sub.strip_prefix(sub_prefix)?.strip_prefix('.')?;
            s.value(key)
                .is_some()
                .then(|| format!("{prefix}.{name}.{key}"))
        })
        .collect();
    names.dedup();
    names
}

fn check(config: &gix::config::Snapshot<'_>, name: &str, ty: Type) -> Result<()> {
    match ty {
        Type::Bool => boolean_of(config, name).map(drop),
        Type::Duration => duration_of(config, name).map(drop),
        Type::Integer { min } => integer_of(config, name, min).map(drop),
        Type::Path => path_of(config, name).map(drop),
        Type::Choice(words) => choice_of(config, name, words).map(drop),
        Type::Text => Ok(()),
    }
}

/// The error for `value` at `key`: git's wording, and why when there is more to say.
pub fn bad(key: &str, value: &str, expected: &'static str, why: Option<String>) -> Error {
    Error::Config {
        key: key.to_owned(),
        value: value.to_owned(),
        expected,
        why,
    }
}

fn raw(config: &gix::config::Snapshot<'_>, key: &str) -> String {
    config
        .string(key)
        .map(|v| v.to_string())
        .unwrap_or_default()
}

fn boolean_of(config: &gix::config::Snapshot<'_>, key: &str) -> Result<Option<bool>> {
    config
        .try_boolean(key)
        .map_err(|_| bad(key, &raw(config, key), "boolean", None))
}

fn integer_of(config: &gix::config::Snapshot<'_>, key: &str, min: i64) -> Result<Option<i64>> {
    match config.try_integer(key) {
        Ok(Some(n)) if n < min => Err(bad(
            key,
            &raw(config, key),
            "numeric",
            Some(format!("it must be at least {min}")),
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(bad(key, &raw(config, key), "numeric", None)),
    }
}

fn duration_of(config: &gix::config::Snapshot<'_>, key: &str) -> Result<Option<i64>> {
    let Some(value) = config.string(key).map(|v| v.to_string()) else {
        return Ok(None);
    };
    let text = value.trim();
    let parsed = match text.parse::<i64>() {
        Ok(n) if (0..=MAX_DURATION).contains(&n) => Ok(n),
        Ok(n) if n > MAX_DURATION => Err(DurationError::TooLong),
        _ => parse_duration(text),
    };
    parsed
        .map(Some)
        .map_err(|e| bad(key, &value, "duration", Some(e.to_string())))
}

fn path_of(config: &gix::config::Snapshot<'_>, key: &str) -> Result<Option<std::path::PathBuf>> {
    config
        .trusted_path(key)
        .map_err(|e| bad(key, &raw(config, key), "path", Some(format!("{e}"))))
}

fn choice_of(
    config: &gix::config::Snapshot<'_>,
    key: &str,
    words: &[&str],
) -> Result<Option<String>> {
    let Some(value) = config.string(key).map(|v| v.to_string()) else {
        return Ok(None);
    };
    if words.iter().any(|w| w.eq_ignore_ascii_case(value.trim())) {
        return Ok(Some(value.trim().to_ascii_lowercase()));
    }
    Err(bad(
        key,
        &value,
        "choice",
        Some(format!("use one of {}", words.join(", "))),
    ))
}

/// The boolean at `key`, `default` when unset; a value that is not a boolean is an error.
pub fn boolean(repo: &gix::Repository, key: &str, default: bool) -> Result<bool> {
    Ok(boolean_of(&repo.config_snapshot(), key)?.unwrap_or(default))
}

/// The integer at `key` (at least `min`), `None` when unset.
pub fn integer(repo: &gix::Repository, key: &str, min: i64) -> Result<Option<i64>> {
    integer_of(&repo.config_snapshot(), key, min)
}

/// The duration at `key` in seconds, `None` when unset.
pub fn duration(repo: &gix::Repository, key: &str) -> Result<Option<i64>> {
    duration_of(&repo.config_snapshot(), key)
}

/// The word at `key` among `words` (lowercase), `None` when unset.
pub fn choice(repo: &gix::Repository, key: &str, words: &[&str]) -> Result<Option<String>> {
    choice_of(&repo.config_snapshot(), key, words)
}

/// `jules.requireSigned`, default false.
pub fn require_signed(repo: &gix::Repository) -> Result<bool> {
    boolean(repo, REQUIRE_SIGNED, false)
}

/// Why a duration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("use a number and a unit, such as 90s, 30m, 2h, 1d, 1w")]
    Syntax,
    #[error("it is too long: at most {}", format_duration(MAX_DURATION))]
    TooLong,
}

/// `90s`, `15m`, `2h`, `3d`, `1w`, in seconds, at most [`MAX_DURATION`] (so no product overflows and
/// `now` plus it stays a time RFC 3339 can write). The one duration parser of options and settings.
pub fn parse_duration(s: &str) -> std::result::Result<i64, DurationError> {
    let unit = s.chars().last().ok_or(DurationError::Syntax)?;
    let digits = &s[..s.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DurationError::Syntax);
    }
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return Err(DurationError::Syntax),
    };
    // Digits that do not fit an i64 are a number far too long, not a typo of syntax.
    let n: i64 = digits.parse().map_err(|_| DurationError::TooLong)?;
    match n.checked_mul(secs) {
        Some(total) if total <= MAX_DURATION => Ok(total),
        _ => Err(DurationError::TooLong),
    }
}

/// Seconds in the largest unit up to days that divides them (`7d`, `90m`, `45s`): how limits are named.
pub fn format_duration(secs: i64) -> String {
    for (unit, n) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs != 0 && secs % n == 0 {
            return format!("{}{unit}", secs / n);
        }
    }
    format!("{secs}s")
}

/// The `KEY=VALUE` pairs of git's `GIT_CONFIG_PARAMETERS` (what `git -c` and `--config-env` pass to
/// subcommands), in order: `'key'='value'`, the older `'key=value'`, or `'key'` alone (a boolean set
/// to true), separated by blanks, each word single-quoted as git's `sq_quote` writes it (a quote inside
/// is `'\''`, a `!` may be `'\!'`). `None` for text git itself would refuse (`bogus format in
/// GIT_CONFIG_PARAMETERS`).
pub fn git_config_parameters(text: &str) -> Option<Vec<(String, Option<String>)>> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == bytes.len() {
            return Some(out);
        }
        let word = sq_dequote_step(bytes, &mut i)?;
        if bytes.get(i) == Some(&b'=') {
            i += 1;
            // `'key'=` followed by a blank or the end is an empty value, as git reads it.
            let value = if bytes.get(i) == Some(&b'\'') {
                sq_dequote_step(bytes, &mut i)?
            } else {
                String::new()
            };
            out.push((word, Some(value)));
        } else {
            match word.split_once('=') {
                Some((k, v)) => out.push((k.to_owned(), Some(v.to_owned()))),
                None => out.push((word, None)),
            }
        }
        if i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            return None;
        }
    }
}

/// One single-quoted word at `*i` (git's `sq_dequote_step`), leaving `*i` after it.
fn sq_dequote_step(bytes: &[u8], i: &mut usize) -> Option<String> {
    if bytes.get(*i) != Some(&b'\'') {
        return None;
    }
    *i += 1;
    let mut word = Vec::new();
    loop {
        match bytes.get(*i)? {
            b'\'' => {
                *i += 1;
                // `'\''` and `'\!'`: a quoted quote or bang, and the word goes on.
                if bytes.get(*i) == Some(&b'\\')
                    && matches!(bytes.get(*i + 1), Some(b'\'' | b'!'))
                    && bytes.get(*i + 2) == Some(&b'\'')
                {
                    word.push(bytes[*i + 1]);
                    *i += 3;
                    continue;
                }
                return String::from_utf8(word).ok();
            }
            b => {
                word.push(*b);
                *i += 1;
            }
        }
    }
}

/// The overrides in `text`, the value of `GIT_CONFIG_PARAMETERS` (which the frontend reads: the library
/// reads no environment), as gix takes them: `key=value`, or `key` alone for true. Text git would refuse is
/// ignored: git refuses it itself before it runs a subcommand.
pub fn git_c_overrides(text: &str) -> Vec<String> {
    git_config_parameters(text)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v}"),
            None => k,
        })
        .collect()
}

/// The last value `GIT_CONFIG_PARAMETERS` (`text`) gives `key` (case-insensitive), for a reader that needs
/// one key before any repository is open (the CLI's `color.ui`).
pub fn git_c_value(text: &str, key: &str) -> Option<String> {
    git_config_parameters(text)?
        .into_iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.unwrap_or_else(|| "true".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_config_parameters_reads_git_quoting() {
        let p = |s: &str| git_config_parameters(s);
        assert_eq!(
            p("'jules.requiresigned'='true' 'color.ui=never' 'core.bare'").unwrap(),
            [
                ("jules.requiresigned".to_owned(), Some("true".to_owned())),
                ("color.ui".to_owned(), Some("never".to_owned())),
                ("core.bare".to_owned(), None),
            ]
        );
        // A quote and a bang inside a value, and blanks, as git's sq_quote writes them.
        assert_eq!(
            p(r"'jules.verify.cmd'='echo '\''a b'\''; echo hi'\!''").unwrap(),
            [(
                "jules.verify.cmd".to_owned(),
                Some("echo 'a b'; echo hi!".to_owned())
            )]
        );
        assert_eq!(
            p("'a.b'= 'c.d'='x=y'").unwrap(),
            [
                ("a.b".to_owned(), Some(String::new())),
                ("c.d".to_owned(), Some("x=y".to_owned()))
            ]
        );
        assert_eq!(p("").unwrap(), []);
        assert!(p("unquoted").is_none());
        assert!(p("'open").is_none());
        assert!(p("'a.b'x").is_none());
        assert_eq!(
            git_c_overrides("'jules.fullreplay'='true' 'core.bare'"),
            ["jules.fullreplay=true", "core.bare"]
        );
        assert_eq!(
            git_c_value("'color.ui'='never' 'COLOR.UI=always'", "color.ui").as_deref(),
            Some("always")
        );
        assert_eq!(git_c_value("'user.name'='x'", "color.ui"), None);
    }

    #[test]
    fn durations_are_bounded() {
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("2h"), Ok(7200));
        assert_eq!(parse_duration("36500d"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("36501d"), Err(DurationError::TooLong));
        assert_eq!(parse_duration("106751991167d"), Err(DurationError::TooLong));
        assert_eq!(
            parse_duration("99999999999999999999999w"),
            Err(DurationError::TooLong)
        );
        for bad in ["", "h", "-2h", "+2h", "2", "2x", "2 h", "1.5h"] {
            assert_eq!(parse_duration(bad), Err(DurationError::Syntax), "{bad:?}");
        }
        assert_eq!(format_duration(7 * 86_400), "7d");
        assert_eq!(format_duration(2 * 86_400), "2d");
        assert_eq!(format_duration(5400), "90m");
        assert_eq!(format_duration(61), "61s");
    }
}
