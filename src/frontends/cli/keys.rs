//! `git jules keys new|check`: a persona's signing key (see `git_jules::store::sign`).

use std::path::PathBuf;

use clap::Subcommand;
use git_jules::store::sign::{self, keys};
use serde_json::json;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make an ed25519 key for PERSONA (mode 0600) and print its allowed_signers line
    New(NewArgs),
    /// Check that PERSONA's key is found, usable, and allowed by the trust roots (exit 1 if not)
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    pub persona: String,
    /// Where to write the private key (the public key goes beside it as PATH.pub); default
    /// .git/jules-keys/PERSONA: not in the work tree, never pushed, and not under .git/jules/, which holds
    /// only derived data that may be deleted
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Also record the key for PERSONA in this repository's config (jules.persona.PERSONA.signingKey)
    #[arg(long)]
    pub configure: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The persona (default $JULES_PERSONA)
    #[arg(env = "JULES_PERSONA")]
    pub persona: String,
}

pub fn run(ctx: &Context, cmd: KeysCommand) -> anyhow::Result<i32> {
    match cmd {
        KeysCommand::New(a) => new(ctx, a),
        KeysCommand::Check(a) => check(ctx, a),
    }
}

fn new(ctx: &Context, a: NewArgs) -> anyhow::Result<i32> {
    git_jules::kit::names::validate_ref_component(&a.persona)?;
    let repo = ctx.open()?;
    let path = match a.out {
        Some(p) => p,
        None => repo.common_dir().join("jules-keys").join(&a.persona),
    };
    let made = keys::generate(&a.persona, &path)?;
    let path = std::path::absolute(&made.path).unwrap_or(made.path.clone());
    if a.configure {
        let var = format!("jules.persona.{}.signingKey", a.persona);
        let value = path.to_string_lossy().into_owned();
        git_jules::kit::gitcli::run(
            git_jules::kit::gitcli::dir_of(&repo),
            ["config", var.as_str(), value.as_str()],
        )?;
        ctx.ui.status(format!("set {var}"));
    }
    ctx.ui.print(&Made {
        allowed_signers: made.allowed_signers,
        fingerprint: made.fingerprint,
        path,
        persona: a.persona,
        public: made.public,
    });
    Ok(0)
}

/// `keys new`: where the key went and the line for the trust file; in JSON the same, keys sorted.
#[derive(serde::Serialize)]
struct Made {
    allowed_signers: String,
    fingerprint: String,
    path: PathBuf,
    persona: String,
    public: String,
}

impl Print for Made {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "{}", self.allowed_signers)
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        vec![format!(
            "wrote {} ({}); add this line to {} on the base branch:",
            self.path.display(),
            self.fingerprint,
            sign::TRUST_FILE
        )]
    }
}

fn check(ctx: &Context, a: CheckArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let mut problems = Vec::new();
    let source = keys::key_for(&repo, &a.persona);
    let mut fingerprint = None;
    let mut key_data = None;
    match &source {
        None => problems.push(format!(
            "no signing key for {}: set JULES_SIGNING_KEY, jules.persona.{}.signingKey or jules.signingKey",
            a.persona, a.persona
        )),
        Some(s) => match keys::load(s.path()) {
            Ok(k) => {
                fingerprint = Some(
                    k.public_key()
                        .fingerprint(ssh_key::HashAlg::Sha256)
                        .to_string(),
                );
                key_data = Some(k.public_key().key_data().clone());
            }
            Err(e) => problems.push(e.to_string()),
        },
    }
    let trust = git_jules::store::sign::verdict::load_trust(&repo)?;
    let trust_ref = git_jules::store::sign::verdict::trust_ref(&repo);
    let allowed = match (&trust, &key_data) {
        (None, _) => {
            problems.push(format!(
                "no trust roots: {trust_ref}:{} does not exist",
                sign::TRUST_FILE
            ));
            false
        }
        (Some((t, _)), Some(k)) => {
            let now = chrono::Utc::now();
            match t.allows(k, &a.persona, sign::NAMESPACE, Some(now)) {
                Ok(()) => true,
                Err(why) => {
                    problems.push(format!(
                        "{trust_ref}:{} does not allow this key for {} now ({why:?})",
                        sign::TRUST_FILE,
                        a.persona
                    ));
                    false
                }
            }
        }
        (Some(_), None) => false,
    };
    let failed = !problems.is_empty();
    ctx.ui.print(&Checked {
        doc: json!({
            "persona": a.persona,
            "key": source.as_ref().map(|s| s.describe()),
            "fingerprint": fingerprint,
            "trust_ref": trust_ref,
            "allowed": allowed,
            "require_signed": git_jules::store::sign::verdict::require_signed(&repo),
            "problems": problems,
        }),
        key: source.as_ref().map(|s| s.describe()),
        fingerprint,
        trust_ref,
        allowed,
        problems,
    });
    // A failed check is an answer, not an error: the document above says why (exit 1).
    Ok(if failed {
        crate::frontends::context::EXIT_CHECK_FAILED
    } else {
        0
    })
}

/// `keys check`: the key, its fingerprint and whether the trust roots allow it; each problem a warning
/// for a person, a field (`problems`) of the JSON document (its keys sorted, as it always was).
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Checked {
    doc: serde_json::Value,
    #[serde(skip)]
    key: Option<String>,
    #[serde(skip)]
    fingerprint: Option<String>,
    #[serde(skip)]
    trust_ref: String,
    #[serde(skip)]
    allowed: bool,
    #[serde(skip)]
    problems: Vec<String>,
}

impl Print for Checked {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        if let Some(k) = &self.key {
            writeln!(out, "key: {k}")?;
        }
        if let Some(f) = &self.fingerprint {
            writeln!(out, "fingerprint: {f}")?;
        }
        writeln!(
            out,
            "allowed by {}:{}: {}",
            self.trust_ref,
            sign::TRUST_FILE,
            if self.allowed { "yes" } else { "no" }
        )
    }

    fn human_warnings(&self) -> Vec<String> {
        self.problems.clone()
    }
}
