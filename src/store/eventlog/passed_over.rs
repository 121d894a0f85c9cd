//! What a reader under `jules.requireSigned` says when it passes over a checkpoint it may not use: the
//! [`Ignored`] checkpoint, and the [`PassedOver`] record its caller owns. Below both `checkpoint` (which
//! finds them) and `cache` (whose loads carry them), so that neither names the other for it.

/// A checkpoint a reader under `jules.requireSigned` did not use, so it replayed the log instead.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Ignored {
    pub log: String,
    /// The anchor of the newest checkpoint passed over.
    pub commit: String,
    pub reason: String,
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checkpoint of {} at {} not used under jules.requireSigned: {}; replaying the log",
            self.log,
            &self.commit[..self.commit.len().min(12)],
            self.reason
        )
    }
}

/// The checkpoints one caller's reads passed over, each log once however many projections or reads pass
/// over its checkpoints: owned by the caller (a `Workspace`, the CLI's command), handed to the logs it
/// opens (`Log::with_passed_over`), emptied by its frontend to say so. Nothing in the process is shared:
/// two callers, two of these.
#[derive(Debug, Default)]
pub struct PassedOver(std::sync::Mutex<(Vec<String>, Vec<Ignored>)>);

impl PassedOver {
    /// Remember `i` unless its log was already said.
    pub fn record(&self, i: Ignored) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !g.0.contains(&i.log) {
            g.0.push(i.log.clone());
            g.1.push(i);
        }
    }

    /// What was recorded since the last call (a log already said is not said again).
    pub fn take(&self) -> Vec<Ignored> {
        std::mem::take(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()).1)
    }
}
