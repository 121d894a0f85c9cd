//! Abbreviated ids, as git shows object names: the shortest unique prefix of at least 7 hex digits,
//! and resolution of user-given prefixes that rejects ambiguous ones.

use crate::kit::error::{Error, Result};

/// The minimum number of hex digits shown and accepted.
pub const MIN_ABBREV: usize = 4;
pub const DEFAULT_ABBREV: usize = 7;

/// For a sorted list of full hex ids, the length at which every id is unique (at least 7).
pub fn unique_len(sorted: &[String]) -> usize {
    let mut len = DEFAULT_ABBREV;
    for pair in sorted.windows(2) {
        let common = pair[0]
            .bytes()
            .zip(pair[1].bytes())
            .take_while(|(a, b)| a == b)
            .count();
        len = len.max(common + 1);
    }
    len
}

/// Resolve `prefix` against `sorted` full hex ids: exactly one match, else a clear error.
pub fn resolve<'a>(
    what: crate::kit::error::Thing,
    prefix: &str,
    sorted: &'a [String],
) -> Result<&'a str> {
    let p = prefix.to_ascii_lowercase();
    if !p.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::usage(format!(
            "{what} id {prefix:?} is not hexadecimal (ids are written with 0-9 and a-f)"
        )));
    }
    if p.len() < MIN_ABBREV {
        return Err(Error::usage(format!(
            "{what} id {prefix:?} is too short: give at least {MIN_ABBREV} hex digits"
        )));
    }
    let start = sorted.partition_point(|id| id.as_str() < p.as_str());
    let matches: Vec<&String> = sorted[start..]
        .iter()
        .take_while(|id| id.starts_with(&p))
        .collect();
    match matches.as_slice() {
        [] => Err(Error::not_found(what, prefix)),
        [one] => Ok(one.as_str()),
        many => Err(Error::Ambiguous {
            what,
            prefix: prefix.to_owned(),
            candidates: many.iter().take(8).map(|c| c[..12].to_owned()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_unique_and_rejects_ambiguous() {
        let ids: Vec<String> = vec![
            "abcdef0000000000".into(),
            "abcdef1111111111".into(),
            "bbbbbbbbbbbbbbbb".into(),
        ];
        assert_eq!(unique_len(&ids), 7);
        assert_eq!(
            resolve(crate::kit::error::Thing::Message, "bbbb", &ids).unwrap(),
            "bbbbbbbbbbbbbbbb"
        );
        assert!(matches!(
            resolve(crate::kit::error::Thing::Message, "abcdef", &ids),
            Err(Error::Ambiguous { .. })
        ));
        assert_eq!(
            resolve(crate::kit::error::Thing::Message, "ABCDEF1", &ids).unwrap(),
            "abcdef1111111111"
        );
        assert!(matches!(
            resolve(crate::kit::error::Thing::Message, "cccc", &ids),
            Err(Error::NotFound { .. })
        ));
        assert!(matches!(
            resolve(crate::kit::error::Thing::Message, "ab", &ids),
            Err(Error::Usage(_))
        ));
    }
}
