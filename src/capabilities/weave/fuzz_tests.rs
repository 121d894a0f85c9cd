//! A bounded fuzz pass over weave's parsers that runs in every `cargo test`: seeded mutations of real mails
//! and diffs go through the mbox reader, the header decoder, the diff parser and the hunk applier; none may
//! panic or take long. The inputs that once crashed a parser live in `fuzz/regressions/` and are replayed
//! first; the cargo-fuzz targets in `fuzz/` explore further (`cargo +nightly fuzz run mbox`).

use std::time::{Duration, Instant};

use super::{apply, mbox, patch};
use crate::kit::mutation::{mutate, Rng};

const SEEDS: &[&[u8]] = &[
    b"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n\
From: =?UTF-8?q?Ren=C3=A9e?= <r@x.org>\nDate: Sat, 9 Mar 2024 16:00:00 +0100\n\
Subject: [PATCH 1/2] tidy\n\nBody.\n---\ndiff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n\
--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n-- \n2.47.3\n",
    b"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n\
From: A <a@b>\nSubject: x\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n\
--XX\nContent-Type: text/plain; charset=ISO-8859-1; format=flowed; delsp=yes\n\
Content-Transfer-Encoding: quoted-printable\n\nCaf=E9 \nsoft=\n break\n---\n--XX\n\
Content-Type: text/x-patch\nContent-Transfer-Encoding: base64\n\n\
ZGlmZiAtLWdpdCBhL3ggYi94Ci0tLSBhL3gKKysrIGIveApAQCAtMSArMSBAQAotYQorYgo=\n--XX--\n",
    b"--- a.c.orig\t2024-03-09 16:00:00.000000000 +0100\n+++ a.c\t2024-03-09 16:05:00 +0100\n\
@@ -1,3 +1,3 @@\n x\n-y\n+z\n w\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n",
    b"diff --git \"a/sp ace\\303\\251\" \"b/sp ace\\303\\251\"\nnew file mode 100755\n\
GIT binary patch\nliteral 5\nMcmZ?wbaHS200IC2\n\nliteral 0\nHcmV?d00001\n\n\
diff --git i/x w/y\nsimilarity index 90%\nrename from x\nrename to y\n",
];

/// Pieces that steer the parsers into their branches.
const TOKENS: &[&[u8]] = &[
    b"\n",
    b"=?",
    b"?=",
    b"=?utf-8?b?",
    b"=?iso-2022-jp?q?",
    b"=\n",
    b"=C3",
    b"--XX",
    b"--XX--\n",
    b"boundary=",
    b"\n\n",
    b"From: ",
    b"Subject: ",
    b"Date: ",
    b"[PATCH]",
    b"-- >8 --\n",
    b"---\n",
    b"diff --git ",
    b"--- ",
    b"+++ ",
    b"@@ -",
    b"@@ -0,0 +1 @@\n",
    b",99999999999999999999",
    b" +",
    b"\\ No newline",
    b"GIT binary patch\n",
    b"literal ",
    b"delta ",
    b"\"\\377\\",
    b"\t1970-01-01 00:00:00 +0000",
    "Изменён".as_bytes(),
    b"\xff\xfe",
    b"\r\n",
    b"\0",
];

/// Every parser on `data`; panics propagate to the test, which names the input. Returns how many times
/// the hunk applier was reached (a parse that fails never gets there), so the pass can require that it
/// was, often enough.
fn exercise(data: &[u8]) -> usize {
    let mut applied = 0;
    for scissors in [false, true] {
        if let Ok(mails) = mbox::read_with(
            data,
            mbox::ReadOptions {
                scissors,
                strip: scissors.then_some(0),
            },
        ) {
            for m in mails {
                if let mbox::Mail::Patch(p) = m {
                    for f in &p.files {
                        let _ = apply::apply(b"a\nb\nc\nx\ny\n", &f.hunks);
                        applied += 1;
                    }
                }
            }
        }
    }
    let _ = mbox::decode_words(&String::from_utf8_lossy(data));
    if let Ok(files) = patch::parse(data) {
        for f in &files {
            let _ = apply::apply(b"a\nb\nc\n", &f.hunks);
            applied += 1;
        }
    }
    applied
}

/// How long one input may take before the pass calls it a hang: far beyond any slow machine. The target
/// (each input well under 2 s) is a measurement, bench/fuzz.sh, which reads the slowest input that
/// `seeded_mutations_never_panic_or_hang` prints.
const HANG: Duration = Duration::from_secs(120);

/// Run `exercise` on `data`; panic (keeping the input) if it panics or hangs; return how long it took and
/// how many times the applier was reached.
fn check(data: &[u8], what: &str) -> (Duration, usize) {
    let started = Instant::now();
    let result = std::panic::catch_unwind(|| exercise(data));
    let Ok(applied) = result else {
        let keep = std::env::temp_dir().join(format!(
            "weave-fuzz-crash-{}.bin",
            &mbox::fingerprint_text(&String::from_utf8_lossy(data))[..12]
        ));
        let _ = std::fs::write(&keep, data);
        panic!(
            "{what} panicked; the input is in {} (copy it to fuzz/regressions/)",
            keep.display()
        );
    };
    let took = started.elapsed();
    assert!(
        took < HANG,
        "{what} took {took:?}: {:?}",
        String::from_utf8_lossy(data)
    );
    (took, applied)
}

#[test]
fn regressions_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("fuzz/regressions exists") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "bin") {
            let _ = check(&std::fs::read(&p).unwrap(), &p.display().to_string());
            n += 1;
        }
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}

#[test]
fn seeded_mutations_never_panic_or_hang() {
    // A longer or different pass: WEAVE_FUZZ_ITERATIONS=1000000 WEAVE_FUZZ_SEED=7 cargo test --lib fuzz
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut rng = Rng(env("WEAVE_FUZZ_SEED").unwrap_or(0x005e_ed0f_3a7e) | 1);
    let mut times = Vec::new();
    for seed in SEEDS {
        times.push(check(seed, "a seed").0);
    }
    let iterations = env("WEAVE_FUZZ_ITERATIONS").unwrap_or(12_000);
    // Mutated inputs that still parse far enough to reach the applier: without a floor, a parser that
    // refused every mutation would leave the applier unfuzzed and the pass would still say ok.
    let (mut reached, mut applied) = (0u64, 0usize);
    for i in 0..iterations {
        let base = SEEDS[rng.below(SEEDS.len())];
        let data = mutate(&mut rng, SEEDS, TOKENS, base);
        let (took, n) = check(&data, &format!("mutation {i}"));
        times.push(took);
        reached += u64::from(n > 0);
        applied += n;
    }
    times.sort();
    // Read by bench/fuzz.sh (with --nocapture).
    eprintln!(
        "weave fuzz: {} inputs, median {:?}, slowest {:?}",
        times.len(),
        times[times.len() / 2],
        times[times.len() - 1]
    );
    eprintln!("weave fuzz: the applier reached by {reached} mutations ({applied} files)");
    assert!(
        reached * 100 >= iterations * APPLY_FLOOR_PERCENT,
        "the applier was reached by {reached} of {iterations} mutations, under {APPLY_FLOOR_PERCENT}%"
    );
}

/// The share of mutations (in percent) that must reach `apply::apply`.
const APPLY_FLOOR_PERCENT: u64 = 20;
