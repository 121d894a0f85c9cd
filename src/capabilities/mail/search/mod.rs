//! Full-text search over the mail: [`search`] takes a typed [`SearchInput`] and gives a serialisable
//! [`SearchOutput`], for every frontend alike (`git jules mail search`, the MCP tool `mail_search`, the web
//! view).
//!
//! - [`query`]: the query language (words, `"phrases"`, `prefix*`, `s:`/`f:`/`t:`/`b:` fields, `OR`, `-`,
//!   parentheses) and its errors with positions.
//! - [`index`]: the index, derived data under `.git/jules/cache/mail/search/` (tantivy), refreshed from the
//!   log before every search.
//! - [`snippet`]: excerpts with the matched words marked, safe to print.
//!
//! Ranking: BM25 (a subject match weighs twice a body match), then newest (higher Lamport clock) first.
//! With a persona, only what it received counts, in the folders `mail inbox` shows (the inbox; every
//! folder with `all_folders`), filtered by its own marks and tags as `inbox` filters them; without one,
//! every message on the log.

pub mod index;
pub mod query;
pub mod snippet;

use std::collections::{HashMap, HashSet};

use chrono::Utc;
use serde::{Deserialize, Serialize};
use tantivy::collector::{Count, FilterCollector, TopDocs};
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, Occur, PhrasePrefixQuery, PhraseQuery, Query, RangeQuery,
    RegexQuery, TermQuery,
};
use tantivy::schema::{IndexRecordOption, Value as _};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, DocId, Score, Searcher, SegmentReader, TantivyDocument};

use crate::capabilities::mail::view::{Filter, Folder, Item, MailView};
use crate::capabilities::mail::{message, ops, when};
use crate::kit::error::{Error, Result};
use crate::store::eventlog::EventId;

use index::Fields;
use query::{Field, Node, Term};
pub use snippet::Snippet;

/// The default number of results.
pub const DEFAULT_LIMIT: usize = 20;
/// The most results one search hands out.
pub const MAX_LIMIT: usize = 1000;

/// A search: the query and the filters `mail inbox` knows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchInput {
    pub query: String,
    /// Search as this persona: what it received, with its folders and states.
    #[serde(default)]
    pub persona: Option<String>,
    /// Only messages from this sender.
    #[serde(default)]
    pub from: Option<String>,
    /// Only messages of this type.
    #[serde(default, rename = "type")]
    pub msg_type: Option<String>,
    /// Only messages with this tag (the sender's, and with a persona its own too).
    #[serde(default)]
    pub tag: Option<String>,
    /// Sent at or after: a duration ago (`2h`, `3d`) or a time.
    #[serde(default)]
    pub since: Option<String>,
    /// Sent at or before: a duration ago or a time.
    #[serde(default)]
    pub until: Option<String>,
    /// At most this many results (default 20, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// With a persona: archived, trashed, expired and claimed messages too.
    #[serde(default)]
    pub all_folders: bool,
}

/// The persona's state of a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitState {
    pub unread: bool,
    pub archived: bool,
    pub trashed: bool,
    pub tags: Vec<String>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub id: String,
    pub thread: String,
    pub from: String,
    pub to: Vec<String>,
    pub subject: String,
    #[serde(rename = "type")]
    pub msg_type: String,
    pub time: String,
    pub lamport: u64,
    /// BM25 relevance; higher is better. Held as f64 so that every frontend prints the same digits (the MCP
    /// server's JSON values are f64; an f32 printed directly has fewer).
    pub score: f64,
    pub snippet: Snippet,
    /// With a persona: its state of the message.
    pub state: Option<HitState>,
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutput {
    pub query: String,
    pub persona: Option<String>,
    /// Matches after the filters, of which `hits` are the best `limit`.
    pub total: u64,
    pub hits: Vec<Hit>,
    /// What bringing the index up to date took.
    pub index: index::Refresh,
}

/// Search the mail of `repo`: check the input, bring the index up to date, run the query with the filters,
/// and read the best hits from the log, within the persona's mailbox when there is one.
pub fn search(repo: &gix::Repository, input: &SearchInput) -> Result<SearchOutput> {
    let asked = Asked::check(input)?;
    let log = ops::log(repo)?;
    let lock = log.lock_cache(index::NAME);
    let opened = index::open(&log, &lock)?;
    let f = opened.fields;
    let mut analyzer = index::analyzer();
    let q = filtered(compile(&asked.node, &f)?, &f, input, &asked);
    let patterns = patterns(&asked.node, &mut analyzer);
    let reader = opened
        .index
        .reader()
        .map_err(|e| Error::wrap("search index: reader", e))?;
    let searcher = reader.searcher();

    // Under requireSigned the view holds only verified mail; the index holds every message.
    let require_signed = crate::store::sign::verdict::require_signed(repo);
    let hits_and_total = ops::with_view(&log, |view| {
        let allowed = mailbox(view, input, &asked)?;
        let keys = countable(view, &allowed, require_signed)?;
        let (top, total) = top_docs(&searcher, &*q, keys, asked.limit)?;
        let reading = Reading {
            repo,
            log: &log,
            searcher: &searcher,
            f: &f,
            patterns: &patterns,
            require_signed,
            allowed: &allowed,
        };
        let mut hits = Vec::with_capacity(top.len());
        for ((score, lamport), addr) in top {
            if let Some(hit) = reading.hit(view, &mut analyzer, score, lamport, addr)? {
                hits.push(hit);
            }
        }
        Ok((hits, total as u64))
    })?;
    let (hits, total) = hits_and_total;
    Ok(SearchOutput {
        query: input.query.clone(),
        persona: input.persona.clone(),
        total,
        hits,
        index: opened.refresh,
    })
}

/// A search's input, checked: the parsed query, the limit, and the time bounds read at `now`.
struct Asked {
    node: Node,
    limit: usize,
    now: chrono::DateTime<Utc>,
    since: Option<chrono::DateTime<Utc>>,
    until: Option<chrono::DateTime<Utc>>,
}

impl Asked {
    fn check(input: &SearchInput) -> Result<Asked> {
        let node = query::parse(&input.query)?;
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(Error::usage(format!(
                "limit {limit} is out of range: give 1 to {MAX_LIMIT}"
            )));
        }
        if let Some(p) = &input.persona {
            message::validate_persona(p)?;
        }
        if input.all_folders && input.persona.is_none() {
            return Err(Error::usage(
                "all folders needs a persona: without one every message is searched already",
            ));
        }
        let now = Utc::now();
        let since = input
            .since
            .as_deref()
            .map(|s| when::parse_when(s, now, when::Direction::Past))
            .transpose()?;
        let until = input
            .until
            .as_deref()
            .map(|s| when::parse_when(s, now, when::Direction::Past))
            .transpose()?;
        Ok(Asked {
            node,
            limit,
            now,
            since,
            until,
        })
    }
}

/// The query `q` with the index's filters: the time range, and without a persona sender, type and tag
/// (with a persona those are the mailbox filter's, where its own tags count).
fn filtered(
    mut q: Box<dyn Query>,
    f: &Fields,
    input: &SearchInput,
    asked: &Asked,
) -> Box<dyn Query> {
    let (since, until) = (asked.since, asked.until);
    let mut filters: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    if since.is_some() || until.is_some() {
        use std::ops::Bound;
        let bound = |t: Option<chrono::DateTime<Utc>>| match t {
            Some(t) => Bound::Included(tantivy::Term::from_field_i64(f.ts, t.timestamp_millis())),
            None => Bound::Unbounded,
        };
        filters.push((
            Occur::Must,
            Box::new(RangeQuery::new(bound(since), bound(until))),
        ));
    }
    // With a persona, sender, type and tag are the mailbox filter's (its tags count there).
    if input.persona.is_none() {
        for (field, value) in [
            (f.from, input.from.as_ref().map(|s| s.to_lowercase())),
            (f.msg_type, input.msg_type.clone()),
            (f.tag, input.tag.clone()),
        ] {
            if let Some(v) = value {
                filters.push((
                    Occur::Must,
                    Box::new(TermQuery::new(
                        tantivy::Term::from_field_text(field, &v),
                        IndexRecordOption::Basic,
                    )),
                ));
            }
        }
    }
    if !filters.is_empty() {
        filters.insert(0, (Occur::Must, q));
        q = Box::new(BooleanQuery::new(filters));
    }
    q
}

/// The persona's mailbox, as `inbox` lists it, keyed as the index's `key` field; `None` without a persona.
fn mailbox(
    view: &mut MailView,
    input: &SearchInput,
    asked: &Asked,
) -> Result<Option<HashMap<u64, Item>>> {
    let Some(p) = &input.persona else {
        return Ok(None);
    };
    let filter = Filter {
        folder: if input.all_folders {
            Folder::All
        } else {
            Folder::Inbox
        },
        msg_type: input.msg_type.clone(),
        tag: input.tag.clone(),
        from: input.from.clone(),
        since: asked.since,
        ..Filter::default()
    };
    let items = view.inbox(p, &filter, asked.now)?;
    Ok(Some(
        items
            .into_iter()
            .filter_map(|i| EventId::from_hex(&i.header.id).map(|id| (index::key_of(&id.0), i)))
            .collect(),
    ))
}

/// What the collector may count: the persona's mailbox; under requireSigned without a persona, the
/// verified messages (the view holds only those, the index every message). The total is counted
/// over the same set the hits are taken from, so it says how many a listing can page through.
fn countable(
    view: &mut MailView,
    allowed: &Option<HashMap<u64, Item>>,
    require_signed: bool,
) -> Result<Option<HashSet<u64>>> {
    Ok(match allowed {
        Some(a) => Some(a.keys().copied().collect()),
        None if require_signed => Some(
            view.all_headers()?
                .iter()
                .filter_map(|h| EventId::from_hex(&h.id).map(|id| index::key_of(&id.0)))
                .collect(),
        ),
        None => None,
    })
}

/// Documents as ranked: (score, Lamport clock) and where the document is.
type Ranked = Vec<((Score, u64), DocAddress)>;

/// The best `limit` documents for `q` among the `keys` (all with `None`), by score then newest first, and
/// how many match in all.
fn top_docs(
    searcher: &Searcher,
    q: &dyn Query,
    keys: Option<HashSet<u64>>,
    limit: usize,
) -> Result<(Ranked, usize)> {
    let keys = std::sync::Arc::new(keys);
    let ranked = TopDocs::with_limit(limit).tweak_score(move |seg: &SegmentReader| {
        let lamport = seg
            .fast_fields()
            .u64("lamport")
            .map(|c| c.first_or_default_col(0))
            .ok();
        move |doc: DocId, score: Score| (score, lamport.as_ref().map_or(0, |c| c.get_val(doc)))
    });
    let collector = FilterCollector::new(
        "key".to_owned(),
        move |k: u64| keys.as_ref().as_ref().is_none_or(|set| set.contains(&k)),
        (ranked, Count),
    );
    searcher
        .search(q, &collector)
        .map_err(|e| Error::wrap("search index", e))
}

/// What reading the hits of one search needs.
struct Reading<'a> {
    repo: &'a gix::Repository,
    log: &'a crate::store::eventlog::Log<'a>,
    searcher: &'a Searcher,
    f: &'a Fields,
    patterns: &'a [snippet::Pattern],
    require_signed: bool,
    allowed: &'a Option<HashMap<u64, Item>>,
}

impl Reading<'_> {
    /// The hit for the document at `addr`, read from the log; `None` when it is not one the search may show
    /// (another persona's message sharing its key, or unverified mail under requireSigned).
    fn hit(
        &self,
        view: &mut MailView,
        analyzer: &mut TextAnalyzer,
        score: Score,
        lamport: u64,
        addr: DocAddress,
    ) -> Result<Option<Hit>> {
        let f = self.f;
        let doc: TantivyDocument = self
            .searcher
            .doc(addr)
            .map_err(|e| Error::wrap("search index", e))?;
        let id = doc
            .get_first(f.id)
            .and_then(|v| v.as_str())
            .and_then(EventId::from_hex);
        let commit = doc
            .get_first(f.commit)
            .and_then(|v| v.as_bytes())
            .and_then(|b| gix::ObjectId::try_from(b).ok());
        let (Some(id), Some(commit)) = (id, commit) else {
            return Err(Error::Corrupt {
                path: index::dir(self.log),
                message: "a document without id or commit".into(),
            });
        };
        let item = match self.allowed {
            Some(a) => match a.get(&index::key_of(&id.0)) {
                Some(item) if item.header.id == id.to_hex() => Some(item),
                // Another message sharing the first 8 bytes of the id: not the persona's.
                _ => return Ok(None),
            },
            None if self.require_signed && view.commit_of(&id)?.is_none() => return Ok(None),
            None => None,
        };
        let msg = ops::load_message(self.repo, commit)?;
        let hex = id.to_hex();
        let thread = match item {
            Some(i) => i.header.thread().to_owned(),
            None => view.thread_of(&hex)?,
        };
        Ok(Some(Hit {
            id: hex,
            thread,
            from: msg.event.actor.clone(),
            to: msg.data.to.clone(),
            subject: msg.data.subject.clone(),
            msg_type: msg.data.msg_type.clone(),
            time: msg.event.time.clone(),
            lamport,
            score: f64::from(score),
            snippet: snippet::make(analyzer, &msg.data.body, self.patterns),
            state: item.map(|i| HitState {
                unread: i.marks.read.is_none(),
                archived: i.marks.archived.is_some(),
                trashed: i.marks.trashed,
                tags: i.marks.tags.iter().cloned().collect(),
            }),
        }))
    }
}

/// Parse `query` and make its index query and snippet patterns, without an index: the fuzz target
/// `search_query` (src/fuzzing.rs).
#[doc(hidden)]
pub fn compile_only(query: &str) -> Result<()> {
    let node = query::parse(query)?;
    let (_, f) = index::schema();
    compile(&node, &f)?;
    patterns(&node, &mut index::analyzer());
    Ok(())
}

fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        out.push(t.text.clone());
    }
    out
}

/// The snippet patterns of the positive subject/body terms.
fn patterns(node: &Node, analyzer: &mut TextAnalyzer) -> Vec<snippet::Pattern> {
    node.positive_terms()
        .into_iter()
        .filter(|(field, _)| matches!(field, Field::Text | Field::Body))
        .map(|(_, term)| match term {
            Term::Word(w) | Term::Phrase(w) => snippet::Pattern {
                tokens: tokens(analyzer, &w),
                last_is_prefix: false,
            },
            Term::Prefix(p) => snippet::Pattern {
                tokens: tokens(analyzer, &p),
                last_is_prefix: true,
            },
        })
        .filter(|p| !p.tokens.is_empty())
        .collect()
}

/// The tantivy query of a parsed query.
fn compile(node: &Node, f: &Fields) -> Result<Box<dyn Query>> {
    Ok(match node {
        Node::Term { field, term, at } => compile_term(*field, term, *at, f)?,
        Node::And(parts) => {
            let mut clauses = Vec::new();
            let mut positive = false;
            for p in parts {
                match p {
                    Node::Not(inner) => clauses.push((Occur::MustNot, compile(inner, f)?)),
                    other => {
                        positive = true;
                        clauses.push((Occur::Must, compile(other, f)?))
                    }
                }
            }
            if !positive {
                clauses.push((Occur::Must, Box::new(AllQuery)));
            }
            Box::new(BooleanQuery::new(clauses))
        }
        Node::Or(parts) => {
            let mut clauses = Vec::new();
            for p in parts {
                clauses.push((Occur::Should, compile(p, f)?));
            }
            Box::new(BooleanQuery::new(clauses))
        }
        Node::Not(inner) => Box::new(BooleanQuery::new(vec![
            (Occur::Must, Box::new(AllQuery)),
            (Occur::MustNot, compile(inner, f)?),
        ])),
    })
}

fn compile_term(field: Field, term: &Term, at: usize, f: &Fields) -> Result<Box<dyn Query>> {
    let text = match term {
        Term::Word(w) | Term::Prefix(w) | Term::Phrase(w) => w,
    };
    if !field.is_text() {
        // Names are matched whole (lowercased), or by their start.
        let tf = if field == Field::From { f.from } else { f.to };
        let name = text.trim().to_lowercase();
        return Ok(match term {
            Term::Prefix(_) => Box::new(
                RegexQuery::from_pattern(&format!("{}.*", regex_escape(&name)), tf)
                    .map_err(|e| regex_error(at, e))?,
            ),
            _ => Box::new(TermQuery::new(
                tantivy::Term::from_field_text(tf, &name),
                IndexRecordOption::Basic,
            )),
        });
    }
    let words = index::words(text);
    let toks: Vec<index::Word> = words.iter().filter(|w| w.indexed).cloned().collect();
    let last_dropped = words.last().is_some_and(|w| !w.indexed);
    if toks.is_empty() || (matches!(term, Term::Prefix(_)) && last_dropped) {
        return Err(Error::usage(if words.is_empty() {
            format!(
                "cannot search for {} (at character {at}): it has no letters or digits",
                query::quote(text)
            )
        } else {
            format!(
                "cannot search for {} (at character {at}): words over {} bytes are not indexed",
                query::quote(text),
                index::MAX_WORD_BYTES
            )
        }));
    }
    let on = |tf: tantivy::schema::Field| -> Result<Box<dyn Query>> {
        // Positions as the index holds them: a word too long to index leaves its gap in a phrase.
        let first = toks[0].position;
        let terms: Vec<(usize, tantivy::Term)> = toks
            .iter()
            .map(|t| {
                (
                    t.position - first,
                    tantivy::Term::from_field_text(tf, &t.text),
                )
            })
            .collect();
        Ok(match (term, terms.len()) {
            (Term::Prefix(_), 1) => Box::new(
                RegexQuery::from_pattern(&format!("{}.*", regex_escape(&toks[0].text)), tf)
                    .map_err(|e| regex_error(at, e))?,
            ),
            (Term::Prefix(_), _) => Box::new(PhrasePrefixQuery::new_with_offset(terms)),
            (_, 1) => Box::new(TermQuery::new(
                terms.into_iter().next().expect("one").1,
                IndexRecordOption::WithFreqs,
            )),
            _ => Box::new(PhraseQuery::new_with_offset(terms)),
        })
    };
    Ok(match field {
        Field::Subject => on(f.subject)?,
        Field::Body => on(f.body)?,
        _ => Box::new(BooleanQuery::new(vec![
            (
                Occur::Should,
                Box::new(BoostQuery::new(on(f.subject)?, 2.0)) as Box<dyn Query>,
            ),
            (Occur::Should, on(f.body)?),
        ])),
    })
}

/// A pattern the regex engine refused (too large an automaton): its message may hold the whole pattern,
/// so it is cut like every quote of the input.
fn regex_error(at: usize, e: impl std::fmt::Display) -> Error {
    let message = e.to_string();
    let cut: String = message.chars().take(query::QUOTE_CHARS).collect();
    let more = if cut.len() < message.len() { "…" } else { "" };
    Error::usage(format!(
        "cannot search for the prefix at character {at}: {cut}{more}"
    ))
}

/// Every character that is not a letter or digit escaped, so that a regex reads none as syntax (names
/// hold `-`, `_`, `.`).
fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let esc = (!c.is_alphanumeric()).then_some('\\');
            esc.into_iter().chain(std::iter::once(c))
        })
        .collect()
}
