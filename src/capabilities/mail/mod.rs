//! Mail: the personas' mailboxes, stored as events on `refs/jules/mail`.
//!
//! A message is a `mail.send` event; its id is that event's id. Everything that happens to a message
//! afterwards (read, unread, tags, trash, archive, claims) is another event naming the message, made by the
//! persona it concerns. The mailboxes are a projection folded over the log's total order, so every replica
//! holding the same events shows the same mailboxes. `docs/mail.md` is the normative description.
//!
//! - [`kinds`]: the event kinds and their data.
//! - [`message`]: types, priorities, limits and the validation of what a sender gives.
//! - [`when`]: times given by people (`2h`, `2026-01-28T15:30:00Z`) and times stored in events.
//! - [`recipients`]: personas, groups (`.jules/schedules.toml`, `jules.group.<name>.member`), `__broadcast`.
//! - [`api`]: the use cases, one typed call each: mail's one way in for the CLI, the MCP server and the web
//!   view (and, crate-internal, for the capabilities that mail or count).
//! - [`view`]: the projection, cached per persona for fast warm reads.
//! - `ops` (private): the log, the view under its lock, sending, marking, looking messages up.
//! - `out` (private): the JSON shapes (messages, listings), filled from the view; [`api`] re-exports them.
//! - [`search`]: full-text search over every message, with a persona's folders and states.
//! - [`claim`]: who handles a group message, with the remote ref as the lock.
//! - [`frontmatter`], [`import`], [`export`]: the seed-000 JSONL log and the seed-003 Markdown maildir.

pub mod api;
pub mod claim;
pub mod frontmatter;
pub mod import;
pub mod jsonl;
pub mod kinds;
pub mod maildir;
pub mod message;
// The implementation behind `api`: no frontend or other capability names these (`tests/it/ways_in.rs`).
pub(crate) mod ops;
pub(crate) mod out;
pub mod recipients;
pub mod search;
pub mod view;
pub mod when;

/// The log mail lives on, below `refs/jules/`.
pub const LOG: &str = "mail";

pub use message::{Priority, SendRequest};
pub use view::MailView;
