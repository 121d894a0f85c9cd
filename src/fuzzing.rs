//! Fuzz targets for outside input, and a driver that runs them on stable Rust.
//!
//! The targets are plain functions of bytes: [`search_query`] (the search query language, through to the
//! index query) and [`config_value`] (the pure readers of configuration values: durations, times, booleans,
//! paths). The web view's request path is a frontend, so its target lives with it in the binary
//! (`src/frontends/web/fuzz.rs`), driven by the same [`drive`](crate::kit::mutation::drive). A target panics when a property
//! breaks; returning is a pass. The cargo-fuzz targets in `fuzz/` call the same functions under
//! libFuzzer (`cargo fuzz run -s none search_query` works on stable Rust: without a sanitizer cargo-fuzz
//! passes rustc no unstable option). [`run`] drives them without that separate, instrumented build, with
//! seeded mutations (the style of `weave::fuzz_tests`): `bench/fuzz.sh TARGET [N]` runs N executions and
//! prints the executions and crashes, and `cargo test` runs a bounded pass of each (docs/testing.md,
//! *Fuzzing*).
//!
//! Not part of the interface: only the driver, its tests and the fuzz crate use it.

use crate::kit::error::{Error, Result};
use crate::kit::mutation::drive;
pub use crate::kit::mutation::Stats;

/// The targets [`run`] knows.
pub const TARGETS: &[&str] = &["search_query", "config_value"];

/// The search query parser and its conversion to an index query. Properties: no panic; an accepted
/// query is within the size bound; every error quotes a bounded excerpt of the input (issue 40).
pub fn search_query(data: &[u8]) {
    let q = String::from_utf8_lossy(data);
    match crate::capabilities::mail::search::compile_only(&q) {
        Ok(()) => assert!(q.len() <= crate::capabilities::mail::search::query::MAX_QUERY_BYTES),
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.chars().count() <= 400,
                "an error of {} characters",
                message.chars().count()
            );
        }
    }
}

/// The pure readers of configuration values. Properties: no panic; a duration that reads reads back
/// the same from its seconds; a lease TTL is exactly a positive duration; a time reads the same in
/// either direction when it is absolute.
pub fn config_value(data: &[u8]) {
    use crate::capabilities::mail::when;
    use crate::kit::settings::{parse_duration, MAX_DURATION};
    let s = String::from_utf8_lossy(data);
    let d = parse_duration(&s).ok();
    if let Some(n) = d {
        assert!((0..=MAX_DURATION).contains(&n), "{n} out of bounds");
        assert_eq!(parse_duration(&format!("{n}s")).ok(), Some(n));
    }
    let ttl = crate::capabilities::lease::parse_ttl(&s).ok();
    assert_eq!(
        ttl,
        d.filter(|&n| n > 0),
        "parse_ttl is parse_duration, positive"
    );
    let now = chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("a time");
    let past = when::parse_when(&s, now, when::Direction::Past);
    let future = when::parse_when(&s, now, when::Direction::Future);
    if parse_duration(s.trim()).is_err() && s.trim() != "now" {
        assert_eq!(
            past.is_ok(),
            future.is_ok(),
            "an absolute time reads either way"
        );
    }
    let _ = when::parse_stored(&s);
    let b = gix::bstr::BStr::new(data);
    let _ = gix::config::Boolean::try_from(b);
    let _ = gix::config::Integer::try_from(b);
    let path = gix::config::Path::from(std::borrow::Cow::Borrowed(b));
    let _ = path.interpolate(gix::config::path::interpolate::Context {
        git_install_dir: Some(std::path::Path::new("/usr")),
        home_dir: Some(std::path::Path::new("/home/fuzz")),
        // No user database look-ups: `~name` is an error, as without one.
        home_for_user: None,
    });
}

const UNICODE_QUERY: &[u8] = "ελληνικά 日本語 🦀 foo-bar*".as_bytes();

/// Starting points, per target.
fn seeds(target: &str) -> &'static [&'static [u8]] {
    match target {
        "search_query" => &[
            b"flaky test OR quokka -parser",
            b"s:\"flaky test\" f:quokka refact* (x OR y)",
            b"-(a OR -\"b c\") t:review* b:x AND y",
            b"((((a OR b) c) -d) \"e f g\")",
            UNICODE_QUERY,
        ],
        "config_value" => &[
            b"90s",
            b"15m",
            b"2h",
            b"3d",
            b"1w",
            b"0s",
            b"now",
            b"2026-01-28T15:30:00Z",
            b"2026-01-28",
            b"true",
            b"no",
            b"on",
            b"1",
            b"~/x",
            b"%(prefix)/share",
            b"~user/y",
            b"-12",
            b"1k",
            b"99999999999999999999w",
            b"1000000000000000s",
        ],
        _ => &[],
    }
}

/// Pieces that steer each target into its branches.
fn tokens(target: &str) -> &'static [&'static [u8]] {
    match target {
        "search_query" => &[
            b"(",
            b")",
            b"\"",
            b"*",
            b"-",
            b" OR ",
            b" AND ",
            b"s:",
            b"f:",
            b"t:",
            b"b:",
            b"subject:",
            b" ",
            b"\t",
            b"\xc3\xa9",
            b"\xf0\x9f\xa6\x80",
            b"((((((((((",
            b"))))))))))",
        ],
        "config_value" => &[
            b"s",
            b"m",
            b"h",
            b"d",
            b"w",
            b"-",
            b"+",
            b"9223372036854775807",
            b"T",
            b"Z",
            b":",
            b"~",
            b"/",
            b"%(prefix)",
            b"yes",
            b"off",
            b"\xc3\xa9",
            b" ",
        ],
        _ => &[],
    }
}

/// Run `target` on its seeds, then on `execs` mutations (each of a seed or of an earlier input that was
/// kept), catching panics; `seed` makes the run reproducible.
pub fn run(target: &str, execs: u64, seed: u64) -> Result<Stats> {
    if !TARGETS.contains(&target) {
        return Err(Error::usage(format!(
            "no fuzz target {target:?}: one of {}",
            TARGETS.join(", ")
        )));
    }
    let mut exec = |data: &[u8]| match target {
        "search_query" => search_query(data),
        _ => config_value(data),
    };
    Ok(drive(
        target,
        seeds(target),
        tokens(target),
        execs,
        seed,
        &mut exec,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bounded pass: a crash names its input (escaped) and the panic's message.
    fn pass(target: &str, execs: u64) {
        let stats = run(target, execs, 0x005e_ed0f_f022).unwrap();
        if let Some(crashed) = stats.crashed() {
            panic!("{crashed}");
        }
        assert!(stats.execs > execs);
    }

    #[test]
    fn search_query_bounded_pass() {
        pass("search_query", 4_000);
    }

    #[test]
    fn config_value_bounded_pass() {
        pass("config_value", 4_000);
    }

    #[test]
    fn an_unknown_target_is_refused() {
        assert!(run("nope", 1, 1).is_err());
    }

    /// `bench/fuzz.sh TARGET [N]`: `JULES_FUZZ_TARGET`, `JULES_FUZZ_EXECS` (default 1,000,000),
    /// `JULES_FUZZ_SEED`; prints one line of figures.
    #[test]
    #[ignore = "run by bench/fuzz.sh"]
    fn drive() {
        let env = |k: &str| std::env::var(k).ok();
        let target = env("JULES_FUZZ_TARGET").expect("JULES_FUZZ_TARGET");
        let execs = env("JULES_FUZZ_EXECS").map_or(1_000_000, |v| v.parse().expect("a number"));
        let seed =
            env("JULES_FUZZ_SEED").map_or(0x005e_ed0f_f022, |v| v.parse().expect("a number"));
        let stats = run(&target, execs, seed).unwrap();
        println!("{stats} seed {seed}");
        if let Some(crashed) = stats.crashed() {
            println!("first crash: {crashed}");
            panic!("{} crashes", stats.crashes);
        }
    }
}
