//! The search index: derived data under `.git/jules/cache/mail/search/`, built from the log's `mail.send`
//! events and never needed for correctness.
//!
//! | file | holds |
//! |---|---|
//! | `idx/` | a tantivy index: one document per message (its id, send commit, words of subject and body, sender, recipients, type, sender's tags, time, clock) |
//! | `state.json` | sealed: the schema version, the log tips the index covers and its document count |
//!
//! Refresh: tips unchanged, search at once; tips moved forward (an append, a `git fetch`), walk only the
//! commits below the new tips and above the old ones and add their messages (a message seen twice is
//! replaced, not doubled); anything else (no state, another version, a tip that is no longer contained,
//! files failing their checksums, a document count that disagrees, tantivy refusing to open) throws the
//! index away and rebuilds it from the whole log. The holder of the search cache lock alone reads or
//! writes it; without the lock, or with `--full`, the index is built in memory for the one answer.
//!
//! The index keeps no text: result rows, snippets and headers are read from the send commits (only the
//! few shown), which keeps the index well under the size of the log's packed objects.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};
use tantivy::schema::{
    Field as TField, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
    STORED, STRING,
};
use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer};
use tantivy::{Index, IndexWriter, TantivyDocument};

use crate::capabilities::mail::kinds::{self, SendData};
use crate::capabilities::mail::recipients;
use crate::kit::error::{Error, Result};
use crate::store::eventlog::cache::{read_sealed, write_sealed, CacheLock, Stamp};
use crate::store::eventlog::{Log, LoggedEvent};

/// Bump when the schema or what goes into a document changes: an index of another version is rebuilt.
/// 2: words of exactly 64 bytes are indexed (version 1 left them out).
const VERSION: u32 = 2;
const STATE: &str = "state.json";
const IDX: &str = "idx";
/// The analyzer of subject and body: words are runs of letters and digits in any script, lowercased;
/// words over [`MAX_WORD_BYTES`] (base64 blobs, hashes pasted into a body) are dropped rather than indexed.
pub const ANALYZER: &str = "jules";
/// The longest word indexed, in bytes of UTF-8 as written (before lowercasing): docs/mail.md, *Search*.
pub const MAX_WORD_BYTES: usize = 64;
/// Memory for the writer: tantivy's floor per thread is 15 MB; one thread (the machine is shared).
const WRITER_BYTES: usize = 64 * 1024 * 1024;

/// The fields of a message document.
#[derive(Clone, Copy)]
pub struct Fields {
    pub id: TField,
    pub commit: TField,
    /// The first 8 bytes of the id, big-endian: what a persona's mailbox filter tests.
    pub key: TField,
    pub lamport: TField,
    /// Send time, milliseconds since the epoch.
    pub ts: TField,
    pub subject: TField,
    pub body: TField,
    pub from: TField,
    pub to: TField,
    pub msg_type: TField,
    pub tag: TField,
}

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        id: b.add_text_field("id", STRING | STORED),
        commit: b.add_bytes_field("commit", STORED),
        key: b.add_u64_field("key", FAST),
        lamport: b.add_u64_field("lamport", FAST),
        ts: b.add_i64_field("ts", INDEXED | FAST),
        subject: b.add_text_field("subject", text.clone()),
        body: b.add_text_field("body", text),
        from: b.add_text_field("from", STRING),
        to: b.add_text_field("to", STRING),
        msg_type: b.add_text_field("type", STRING),
        tag: b.add_text_field("tag", STRING),
    };
    (b.build(), fields)
}

pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        // tantivy keeps the tokens *shorter* than the limit: one more than the longest word indexed.
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES + 1))
        .filter(LowerCaser)
        .build()
}

/// One word of a query's text as the index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Its position among the words of the text (a word too long to index keeps its place).
    pub position: usize,
    /// Lowercased, as the index holds it.
    pub text: String,
    /// Whether the index holds words like it (at most [`MAX_WORD_BYTES`] bytes).
    pub indexed: bool,
}

/// The words of `text` with the analyzer's rules, the long ones kept and marked: a query can then say why
/// a word finds nothing instead of dropping it silently.
pub fn words(text: &str) -> Vec<Word> {
    use tantivy::tokenizer::{TokenStream as _, Tokenizer as _};
    let mut tokenizer = SimpleTokenizer::default();
    let mut stream = tokenizer.token_stream(text);
    let mut out = Vec::new();
    while let Some(t) = stream.next() {
        out.push(Word {
            position: t.position,
            // As tantivy's `LowerCaser` does it: char by char.
            text: t.text.chars().flat_map(char::to_lowercase).collect(),
            indexed: t.text.len() <= MAX_WORD_BYTES,
        });
    }
    out
}

/// The first 8 bytes of a message id as the `key` field holds them.
pub fn key_of(id: &[u8; 32]) -> u64 {
    u64::from_be_bytes(id[..8].try_into().expect("8 bytes"))
}

#[derive(Debug, Serialize, Deserialize)]
struct State {
    version: u32,
    tips: Vec<String>,
    docs: u64,
}

/// What bringing the index up to date did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refresh {
    /// Built from the whole log (no index, a damaged one, a rewritten log, or `--full`).
    pub rebuilt: bool,
    /// Messages added (or replaced) by this refresh.
    pub added: u64,
    /// Messages in the index.
    pub messages: u64,
    /// Milliseconds the refresh took (a benchmark's number; it changes from run to run).
    pub millis: u64,
}

/// An open, up-to-date index.
pub struct Opened {
    pub index: Index,
    pub fields: Fields,
    pub refresh: Refresh,
}

/// The directory of the index and its lock's name.
pub const NAME: &str = "search";

pub fn dir(log: &Log<'_>) -> PathBuf {
    log.cache_dir(NAME)
}

/// Whether the next refresh has to read the whole log (no usable index yet): lets a frontend say it is
/// building the index before a first search in a fresh clone.
pub fn needs_build(log: &Log<'_>) -> bool {
    let dir = dir(log);
    read_state(&dir).is_none() || !dir.join(IDX).join("meta.json").exists()
}

fn read_state(dir: &Path) -> Option<State> {
    let raw = read_sealed(dir, STATE).ok()?;
    let s: State = serde_json::from_slice(&raw).ok()?;
    (s.version == VERSION).then_some(s)
}

fn tantivy_err(
    context: &str,
    e: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
) -> Error {
    Error::wrap(format!("search index: {context}"), e)
}

fn register(index: &Index) {
    index.tokenizers().register(ANALYZER, analyzer());
}

/// Bring the index up to date with the log and open it. `lock` is the search cache lock; without it (or
/// under `--full`) the index is built in memory.
pub fn open(log: &Log<'_>, lock: &CacheLock) -> Result<Opened> {
    let started = std::time::Instant::now();
    let mut opened = open_untimed(log, lock)?;
    opened.refresh.millis = started.elapsed().as_millis() as u64;
    Ok(opened)
}

fn open_untimed(log: &Log<'_>, lock: &CacheLock) -> Result<Opened> {
    let tips = log.tips()?;
    if !lock.is_held() || log.full_replay() {
        return build_in_ram(log, &tips);
    }
    let dir = dir(log);
    // tantivy asserts on some damaged files (a truncated slice) instead of returning an error: a panic while
    // reading the stored index is one more way of finding it unusable, and the log rebuilds it. Nothing of
    // the stored index is used after a panic (it is dropped with the unwind).
    let stored = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        try_incremental(log, &dir, &tips)
    }));
    match stored {
        Ok(Ok(Some(opened))) => return Ok(opened),
        Ok(Ok(None)) => {}
        // A store we cannot use (damaged files, a tantivy error): rebuilt below; the log decides.
        Ok(Err(_)) | Err(_) => {}
    }
    match rebuild(log, &dir, &tips) {
        Ok(opened) => Ok(opened),
        // The directory cannot be written (full disk, permissions): answer from memory.
        Err(Error::Io { .. }) | Err(Error::Source(_)) | Err(Error::Other(_)) => {
            build_in_ram(log, &tips)
        }
        Err(e) => Err(e),
    }
}

fn open_dir(dir: &Path) -> Result<(Index, Fields)> {
    let index = Index::open_in_dir(dir.join(IDX)).map_err(|e| tantivy_err("open", e))?;
    let (expected, fields) = schema();
    if index.schema() != expected {
        return Err(tantivy_err("open", "another schema"));
    }
    register(&index);
    Ok((index, fields))
}

fn num_docs(index: &Index) -> Result<u64> {
    let reader = index.reader().map_err(|e| tantivy_err("reader", e))?;
    Ok(reader.searcher().num_docs())
}

/// `Some` when the stored index could be used (and was brought forward); `None` when it must be rebuilt.
fn try_incremental(log: &Log<'_>, dir: &Path, tips: &[ObjectId]) -> Result<Option<Opened>> {
    let Some(state) = read_state(dir) else {
        return Ok(None);
    };
    let Ok((index, fields)) = open_dir(dir) else {
        return Ok(None);
    };
    // tantivy's files end with a CRC-32 of their content; checking them all costs a few milliseconds at
    // 100,000 messages and turns a flipped bit into a rebuild instead of a wrong answer.
    match index.validate_checksum() {
        Ok(bad) if bad.is_empty() => {}
        _ => return Ok(None),
    }
    if num_docs(&index)? != state.docs {
        return Ok(None);
    }
    let old: Vec<ObjectId> = state
        .tips
        .iter()
        .filter_map(|t| ObjectId::from_hex(t.as_bytes()).ok())
        .collect();
    if old.len() != state.tips.len() {
        return Ok(None);
    }
    let mut sorted_old = old.clone();
    sorted_old.sort();
    let mut sorted_new = tips.to_vec();
    sorted_new.sort();
    if sorted_old == sorted_new {
        return Ok(Some(Opened {
            index,
            fields,
            refresh: Refresh {
                rebuilt: false,
                added: 0,
                messages: state.docs,
                millis: 0,
            },
        }));
    }
    // Forward only: every old tip must still be in the history of the new ones, or the index may hold
    // messages the log no longer has.
    for o in &old {
        let mut contained = tips.contains(o);
        for t in tips {
            if contained {
                break;
            }
            contained = crate::store::refs::is_ancestor(log.repo(), *o, *t).unwrap_or(false);
        }
        if !contained {
            return Ok(None);
        }
    }
    let scan = log.scan(tips, &old, false)?;
    let mut writer = writer(&index)?;
    let mut added = 0;
    for e in &scan.events {
        if add(&writer, &fields, e)? {
            added += 1;
        }
    }
    writer.commit().map_err(|e| tantivy_err("commit", e))?;
    let _ = writer.wait_merging_threads();
    let docs = num_docs(&index)?;
    write_state(dir, tips, docs)?;
    Ok(Some(Opened {
        index,
        fields,
        refresh: Refresh {
            rebuilt: false,
            added,
            messages: docs,
            millis: 0,
        },
    }))
}

fn writer(index: &Index) -> Result<IndexWriter> {
    index
        .writer_with_num_threads(1, WRITER_BYTES)
        .map_err(|e| tantivy_err("writer", e))
}

fn write_state(dir: &Path, tips: &[ObjectId], docs: u64) -> Result<()> {
    let mut hex: Vec<String> = tips.iter().map(|t| t.to_hex().to_string()).collect();
    hex.sort();
    let state = State {
        version: VERSION,
        tips: hex,
        docs,
    };
    let raw =
        serde_json::to_vec(&state).map_err(|e| Error::wrap("encoding the search state", e))?;
    write_sealed(dir, STATE, &raw, &Stamp::of(tips))
        .map_err(|e| Error::io("writing search state", e))
}

fn rebuild(log: &Log<'_>, dir: &Path, tips: &[ObjectId]) -> Result<Opened> {
    // The state goes first, so that a rebuild cut short is never mistaken for a finished index.
    match std::fs::remove_file(dir.join(STATE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io("removing the search state", e))
        }
        _ => {}
    }
    match std::fs::remove_dir_all(dir.join(IDX)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io("removing the search index", e))
        }
        _ => {}
    }
    std::fs::create_dir_all(dir.join(IDX))
        .map_err(|e| Error::io("creating the search index", e))?;
    let (schema, fields) = schema();
    let index =
        Index::create_in_dir(dir.join(IDX), schema).map_err(|e| tantivy_err("create", e))?;
    let opened = built(log, index, fields, tips)?;
    write_state(dir, tips, opened.refresh.messages)?;
    Ok(opened)
}

fn build_in_ram(log: &Log<'_>, tips: &[ObjectId]) -> Result<Opened> {
    let (schema, fields) = schema();
    built(log, Index::create_in_ram(schema), fields, tips)
}

/// A new, empty index filled with every message of the log.
fn built(log: &Log<'_>, index: Index, fields: Fields, tips: &[ObjectId]) -> Result<Opened> {
    register(&index);
    let added = fill(log, &index, &fields, tips)?;
    let messages = num_docs(&index)?;
    Ok(Opened {
        index,
        fields,
        refresh: Refresh {
            rebuilt: true,
            added,
            messages,
            millis: 0,
        },
    })
}

/// Index every message of the log (bounded memory: the log's replay spills to disk).
fn fill(log: &Log<'_>, index: &Index, fields: &Fields, tips: &[ObjectId]) -> Result<u64> {
    let mut writer = writer(index)?;
    let mut added = 0;
    let mut failed: Option<Error> = None;
    log.replay(tips, |e| {
        if failed.is_some() {
            return;
        }
        match add(&writer, fields, e) {
            Ok(true) => added += 1,
            Ok(false) => {}
            Err(err) => failed = Some(err),
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    writer.commit().map_err(|e| tantivy_err("commit", e))?;
    let _ = writer.wait_merging_threads();
    Ok(added)
}

/// Add a `mail.send` event (replacing an earlier copy of it); other events and sends whose data does not
/// decode (the views skip them too) add nothing.
fn add(writer: &IndexWriter, f: &Fields, e: &LoggedEvent) -> Result<bool> {
    if e.event.kind != kinds::SEND {
        return Ok(false);
    }
    let Ok(data) = SendData::deserialize(&e.event.data) else {
        return Ok(false);
    };
    if crate::capabilities::mail::message::validate_persona(&e.event.actor).is_err() {
        return Ok(false);
    }
    let id = e.id.to_hex();
    writer.delete_term(tantivy::Term::from_field_text(f.id, &id));
    let mut doc = TantivyDocument::default();
    doc.add_text(f.id, &id);
    doc.add_bytes(f.commit, e.commit.as_bytes());
    doc.add_u64(f.key, key_of(&e.id.0));
    doc.add_u64(f.lamport, e.lamport);
    let ts = crate::capabilities::mail::when::parse_stored(&e.event.time)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0);
    doc.add_i64(f.ts, ts);
    doc.add_text(f.subject, &data.subject);
    doc.add_text(f.body, &data.body);
    doc.add_text(f.from, e.event.actor.to_lowercase());
    let mut to: std::collections::BTreeSet<String> =
        data.to.iter().map(|t| t.to_lowercase()).collect();
    to.extend(recipients::personas(&data.to, &data.groups));
    for t in to {
        doc.add_text(f.to, t.to_lowercase());
    }
    doc.add_text(f.msg_type, &data.msg_type);
    for t in &data.tags {
        doc.add_text(f.tag, t);
    }
    writer
        .add_document(doc)
        .map_err(|e| tantivy_err("adding a message", e))?;
    Ok(true)
}
