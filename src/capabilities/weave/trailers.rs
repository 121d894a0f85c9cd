//! The trailers weave adds to every commit it writes, and reading them back (with [`crate::kit::trailers`]).
//!
//! `Woven-from: <input>` names the input as it was given (a branch, a range, a patch file); `Woven-id: <key>`
//! names the exact change: the source commit id for commits, `patch-<first 40 hex of the fingerprint>` for
//! patches. A later weave onto the same integration branch skips every change whose `Woven-id` is already
//! there, which is what makes reruns idempotent. They are real git trailers: `git interpret-trailers
//! --parse` and `git log --format=%(trailers)` read them.

pub use crate::kit::trailers::{add, values};

pub const FROM: &str = "Woven-from";
pub const ID: &str = "Woven-id";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weave_trailers_round_trip() {
        let m = add("a\n\nb\n", &[(FROM, "jules/c/x"), (ID, "abc")]);
        assert_eq!(values(&m, ID), vec!["abc"]);
        assert_eq!(values(&m, FROM), vec!["jules/c/x"]);
    }
}
