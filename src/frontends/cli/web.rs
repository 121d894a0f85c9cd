//! `git jules web`: parse the arguments, bind the server (`git_jules::web`), print its URL, serve.

use std::net::SocketAddr;

use crate::frontends::context::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address and port to listen on (port 0: any free port)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// The overseer persona the operator sends, replies and marks as
    #[arg(long = "as", value_name = "PERSONA")]
    pub as_persona: Option<String>,
    /// Serve pages only: refuse every send and mark
    #[arg(long)]
    pub read_only: bool,
    /// Open the URL in a browser (xdg-open)
    #[arg(long)]
    pub open: bool,
    /// Fetch the clone's jules remote in the background this often (30s, 5m; default: never), backing
    /// off on failure; every page shows the last fetch and its result
    #[arg(long, value_name = "INTERVAL")]
    pub fetch: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    if !args.listen.ip().is_loopback() {
        ctx.ui.warn(format!(
            "listening on {}, not loopback: anyone who can reach it and learns the token can read the mail",
            args.listen
        ));
    }
    // The configuration's warnings (a trust ref naming nothing), said once at start on stderr, the server's
    // log; its errors stop the server here as they would any command.
    drop(ctx.open()?);
    let fetch = args
        .fetch
        .as_deref()
        .map(|s| match git_jules::kit::settings::parse_duration(s) {
            Ok(n) if n > 0 => Ok(std::time::Duration::from_secs(n as u64)),
            Ok(_) => Err(git_jules::Error::usage(
                "--fetch needs an interval longer than nothing (30s, 5m)",
            )),
            Err(e) => Err(git_jules::Error::usage(format!(
                "cannot read the interval {}: {e}",
                git_jules::kit::text::excerpt(s)
            ))),
        })
        .transpose()?;
    let server = crate::frontends::web::Server::bind(
        ctx.dir.clone(),
        crate::frontends::web::Options {
            listen: args.listen,
            as_persona: args.as_persona,
            read_only: args.read_only,
            strict_personas: ctx.strict,
            overrides: ctx.overrides.clone(),
            fetch,
        },
    )?;
    super::mail::warn_unknown(&ctx.ui, server.warnings());
    let url = server.url();
    // The first line on stdout, like Jupyter's: scripts and tests read it.
    ctx.ui.out(&url);
    if args.open {
        if let Err(e) = std::process::Command::new("xdg-open").arg(&url).spawn() {
            ctx.ui.warn(format!("could not start xdg-open: {e}"));
        }
    }
    server.run();
    Ok(0)
}
