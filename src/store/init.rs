//! `git jules init`: teach plain `git fetch` and `git push` to carry the jules refs.
//!
//! Fetch lands the remote's logs and notes in remote-tracking refs (`refs/remotes/<r>/jules/*`,
//! `refs/remotes/<r>/notes/jules/*`), never over the local ones, so a fetch can not lose a local event; readers
//! union local and remote-tracking logs. Push sends the local logs and notes without force, so a push that
//! would drop the remote's events is refused by git; `git jules sync` joins and pushes in that case.

use serde::Serialize;

use crate::kit::error::{Error, Result, ResultExt};

/// The refspecs `init` writes for remote `remote`, as (key, value).
pub fn refspecs(remote: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "fetch",
            format!("+refs/jules/*:refs/remotes/{remote}/jules/*"),
        ),
        (
            "fetch",
            format!("+refs/notes/jules/*:refs/remotes/{remote}/notes/jules/*"),
        ),
        ("push", "refs/jules/*:refs/jules/*".to_string()),
        ("push", "^refs/jules/backup/*".to_string()),
        ("push", "refs/notes/jules/*:refs/notes/jules/*".to_string()),
    ]
}

#[derive(Debug, Serialize)]
pub struct InitReport {
    pub remote: String,
    /// Lines added to the remote's section, as `key = value`.
    pub added: Vec<String>,
}

/// Make `remote` the coordination remote: the logs and notes live there, not on the code's remote (issue 29:
/// their traffic then never counts against the code repository's push budget or runs its CI). Sets
/// `jules.remote`, which every command that syncs or fetches uses by default, and configures only that remote.
pub fn init_coordination(repo: &mut gix::Repository, remote: &str) -> Result<Vec<InitReport>> {
    let reports = init(repo, &[remote.to_owned()])?;
    let path = repo
        .config_path(gix::config::Source::Local)
        .context(|| "finding the repository's config file".into())?;
    {
        let mut tx = repo
            .config_file_mut(&path)
            .context(|| format!("locking {}", path.display()))?;
        tx.set_raw_value("jules.remote", remote)
            .map_err(|e| Error::wrap("setting jules.remote", e))?;
        tx.commit()
            .context(|| format!("writing {}", path.display()))?;
    }
    repo.reload()?;
    Ok(reports)
}

/// Add the refspecs to each named remote (all remotes when `remotes` is empty; only the coordination remote
/// when `jules.remote` is set, so that plain pushes to the code's remote carry no jules refs). Idempotent: a value already
/// present is not added again. When the remote had no push refspec, `HEAD` is added first so that a plain
/// `git push` still pushes the current branch (a configured push refspec otherwise replaces that default).
pub fn init(repo: &mut gix::Repository, remotes: &[String]) -> Result<Vec<InitReport>> {
    let coordination = repo
        .config_snapshot()
        .string("jules.remote")
        .map(|v| v.to_string());
    let names: Vec<String> = if remotes.is_empty() {
        match coordination {
            Some(c) => vec![c],
            None => repo.remote_names().iter().map(|n| n.to_string()).collect(),
        }
    } else {
        remotes.to_vec()
    };
    let known: Vec<String> = repo.remote_names().iter().map(|n| n.to_string()).collect();
    for n in &names {
        if !known.contains(n) {
            return Err(Error::not_found(
                crate::kit::error::Thing::Remote,
                n.clone(),
            ));
        }
    }
    let path = repo
        .config_path(gix::config::Source::Local)
        .context(|| "finding the repository's config file".into())?;
    let mut reports = Vec::new();
    {
        let mut tx = repo
            .config_file_mut(&path)
            .context(|| format!("locking {}", path.display()))?;
        for remote in &names {
            let mut added = Vec::new();
            let existing = |key: &str| -> Vec<String> {
                tx.strings_by("remote", Some(remote.as_str().into()), key)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| v.to_string())
                    .collect()
            };
            let had_push = !existing("push").is_empty();
            let mut wanted = refspecs(remote);
            if !had_push {
                wanted.insert(2, ("push", "HEAD".to_string()));
            }
            let mut pending = Vec::new();
            for (key, value) in wanted {
                if !existing(key).contains(&value) {
                    pending.push((key, value));
                }
            }
            for (key, value) in pending {
                let mut section = tx
                    .section_mut_or_create_new("remote", Some(remote.as_str().into()))
                    .map_err(|e| Error::wrap(format!("editing remote.{remote}"), e))?;
                section
                    .push(key, Some(value.as_str().into()))
                    .map_err(|e| Error::wrap(format!("config key {key}"), e))?;
                added.push(format!("{key} = {value}"));
            }
            reports.push(InitReport {
                remote: remote.clone(),
                added,
            });
        }
        tx.commit()
            .context(|| format!("writing {}", path.display()))?;
    }
    repo.reload()?;
    Ok(reports)
}
