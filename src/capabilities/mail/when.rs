//! Times: what people type (`--expires 2h`, `--since 2026-01-28`), what sources carry, and the one form
//! events store (RFC 3339, UTC, milliseconds: `2026-01-28T15:30:00.000Z`).

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, TimeZone, Utc};

use crate::kit::error::{Error, Result};

/// Which way a relative time (`2h`) points from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `--since 2h`: two hours ago.
    Past,
    /// `--expires 2h`: two hours from now.
    Future,
}

/// The stored form of a time.
pub fn format_event_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A stored time (any RFC 3339 form); `None` when it is not one.
pub fn parse_stored(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A time from an imported source: RFC 3339 with any offset, or a date and time without an offset
/// (taken as UTC, as the seed formats write them), or a date alone (midnight UTC), or the compact
/// `YYYYMMDDTHHMMSSZ` of maildir file names.
pub fn parse_source_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Some(t) = parse_stored(s) {
        return Some(t);
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y%m%dT%H%M%SZ",
        "%Y-%m-%d %H:%M:%S%.fZ",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(Utc.from_utc_datetime(&t));
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| Utc.from_utc_datetime(&t))
}

/// A time given on the command line: `now`, a duration relative to now (`90s`, `15m`, `2h`, `3d`, `1w`), or
/// an absolute time as [`parse_source_time`] reads it.
pub fn parse_when(s: &str, now: DateTime<Utc>, direction: Direction) -> Result<DateTime<Utc>> {
    let t = s.trim();
    if t == "now" {
        return Ok(now);
    }
    match crate::kit::settings::parse_duration(t) {
        Ok(secs) => {
            let d = chrono::Duration::seconds(secs);
            let moved = match direction {
                Direction::Past => now.checked_sub_signed(d),
                Direction::Future => now.checked_add_signed(d),
            };
            // Bounded durations keep any present time representable; a clock far off is still no panic.
            return moved.ok_or_else(|| {
                Error::usage(format!(
                    "the time {} is out of range",
                    crate::kit::text::excerpt(s)
                ))
            });
        }
        Err(e @ crate::kit::settings::DurationError::TooLong) => {
            return Err(Error::usage(format!(
                "cannot read the time {}: {e}",
                crate::kit::text::excerpt(s)
            )))
        }
        Err(crate::kit::settings::DurationError::Syntax) => {}
    }
    parse_source_time(t).ok_or_else(|| {
        Error::usage(format!(
            "cannot read the time {}: use a duration such as 30m, 2h, 3d, 1w or a time such as \
             2026-01-28T15:30:00Z or 2026-01-28",
            crate::kit::text::excerpt(s)
        ))
    })
}

/// `YYYYMMDDTHHMMSSZ`, the timestamp of maildir file names.
pub fn compact(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// The maildir frontmatter form: `2026-01-28T15:30:00Z`, with milliseconds only when there are some, so
/// that reading it back gives the stored time exactly.
pub fn frontmatter_time(t: DateTime<Utc>) -> String {
    if t.timestamp_subsec_millis() == 0 {
        t.to_rfc3339_opts(SecondsFormat::Secs, true)
    } else {
        t.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        parse_stored(s).unwrap()
    }

    #[test]
    fn relative_and_absolute() {
        let now = at("2026-01-28T12:00:00Z");
        assert_eq!(
            parse_when("2h", now, Direction::Past).unwrap(),
            at("2026-01-28T10:00:00Z")
        );
        assert_eq!(
            parse_when("1w", now, Direction::Future).unwrap(),
            at("2026-02-04T12:00:00Z")
        );
        assert_eq!(
            parse_when("2026-01-01", now, Direction::Past).unwrap(),
            at("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            parse_when("2026-01-28T15:30:00+01:00", now, Direction::Past).unwrap(),
            at("2026-01-28T14:30:00Z")
        );
        assert!(parse_when("soon", now, Direction::Future).is_err());
        assert!(parse_when("-2h", now, Direction::Future).is_err());
    }

    #[test]
    fn source_times_and_round_trips() {
        let t = parse_source_time("2026-01-28T15:30:00").unwrap();
        assert_eq!(format_event_time(t), "2026-01-28T15:30:00.000Z");
        assert_eq!(compact(t), "20260128T153000Z");
        assert_eq!(frontmatter_time(t), "2026-01-28T15:30:00Z");
        let m = parse_source_time("2026-01-28 15:30:00.250").unwrap();
        assert_eq!(frontmatter_time(m), "2026-01-28T15:30:00.250Z");
        assert_eq!(parse_source_time(&frontmatter_time(m)), Some(m));
        assert_eq!(parse_source_time("20260128T153000Z"), Some(t));
        assert_eq!(parse_source_time("yesterday"), None);
    }
}
