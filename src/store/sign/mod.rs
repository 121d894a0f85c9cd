//! Persona keys and signed events (docs/format.md, "Signed events"; docs/cli.md, `keys`).
//!
//! A persona signs the canonical JSON of each event it writes with its SSH ed25519 key, as an SSHSIG in
//! the namespace [`NAMESPACE`] (what `ssh-keygen -Y sign -n git-jules-event` writes). The signature rides
//! in the event commit as the trailer `Jules-Signature:`, outside the hashed event: the event id does not
//! change, and a compare-and-swap retry that rebuilds the commit, a join or a sync keep it.
//!
//! - [`keys`]: finding a persona's key (configuration, or the key the frontend was handed), making one.
//! - [`trust`]: the allowed-signers file that says which key speaks for which persona.
//! - [`verify`]: the verification state of a signature, the trust roots of a repository.
//!
//! Series versions are signed the same way in [`SERIES_NAMESPACE`] by the persona's key
//! ([`keys::sign_series`], [`verify::check_in`]).
//!
//! Checkpoint manifests are signed the same way in [`CHECKPOINT_NAMESPACE`], by keys whose trust line names
//! that namespace ([`keys::sign_checkpoint`], [`verify::check_checkpoint`]).
//!
//! Below the event log (`eventlog::signed` verifies event commits with it): this module knows keys, trust
//! files and SSHSIG, not commits.

pub mod keys;
pub mod trust;
pub mod verdict;

pub use keys::{sign_event, KeySource};
pub use trust::AllowedSigners;
pub use verdict::State;

/// The SSHSIG namespace of event signatures.
pub const NAMESPACE: &str = "git-jules-event";

/// The SSHSIG namespace of checkpoint manifest signatures (docs/format.md, "Checkpoints"). A key signs
/// checkpoints only where its allowed-signers line names this namespace in `namespaces="…"` (stricter than
/// ssh-keygen, for which a line without `namespaces=` allows every namespace: a persona's key must not
/// vouch for the state of every other persona by default).
pub const CHECKPOINT_NAMESPACE: &str = "git-jules-checkpoint";

/// The SSHSIG namespace of series version signatures (docs/format.md, "Series versions"): a version commit
/// on `refs/jules/series/<persona>/<name>` is signed by the persona's key over
/// [`crate::store::version_refs::signed_payload`], so that a clone without the key cannot publish versions in a
/// persona's name.
pub const SERIES_NAMESPACE: &str = "git-jules-series";

/// Where the trust roots live in the base branch's tree.
pub const TRUST_FILE: &str = ".jules/allowed_signers";

/// The trailer that carries an event's signature.
pub const SIGNATURE_TRAILER: &str = "Jules-Signature: ";

/// The base64 body of an armored SSHSIG, on one line (what the trailer holds).
pub fn compact(pem: &str) -> String {
    pem.lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::trim)
        .collect()
}

/// The armored SSHSIG (`-----BEGIN SSH SIGNATURE-----`, 70-column lines) of a trailer's value: what
/// `ssh-keygen -Y verify -s` reads.
pub fn armor(compact: &str) -> String {
    let mut out = String::from("-----BEGIN SSH SIGNATURE-----\n");
    for chunk in compact.as_bytes().chunks(70) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END SSH SIGNATURE-----\n");
    out
}

/// For tests: commit `text` as the trust file ([`TRUST_FILE`]) on `refs/heads/main` of `repo`, as a root commit;
/// returns the file's blob id.
#[cfg(test)]
pub(crate) fn commit_trust_on_main(repo: &gix::Repository, text: &str) -> gix::ObjectId {
    use gix::objs::{tree, Tree};
    use gix::ObjectId;
    let tree_of = |name: &str, mode: tree::EntryKind, oid: ObjectId| {
        let t = Tree {
            entries: vec![tree::Entry {
                mode: mode.into(),
                filename: name.into(),
                oid,
            }],
        };
        repo.write_object(&t).unwrap().detach()
    };
    let file = repo.write_blob(text.as_bytes()).unwrap().detach();
    let root = tree_of(
        ".jules",
        tree::EntryKind::Tree,
        tree_of("allowed_signers", tree::EntryKind::Blob, file),
    );
    let who = crate::kit::repo::committer(repo);
    repo.commit_as(
        who.to_ref(&mut Default::default()),
        who.to_ref(&mut Default::default()),
        "refs/heads/main",
        "trust",
        root,
        None::<ObjectId>,
    )
    .unwrap();
    file
}
