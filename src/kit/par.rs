//! Mapping a slice on every core, the results kept in the slice's order.
//!
//! For work whose pieces are independent and uneven (mails of a few bytes beside mails carrying megabytes
//! of binary patches; objects to compress from 40 bytes to 8 MB): each thread takes the next unclaimed item,
//! so one large item does not leave the other cores idle behind a fixed share.
//! For many items of equal and tiny cost (a `stat` each), [`map_in_chunks`] gives each thread one fixed run instead.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most threads used: the machines this runs on have 2 to 8 cores, and the work is memory-bound beyond.
const MAX_THREADS: usize = 8;

/// `f(i, &items[i])` for every item, on up to as many threads as there are cores, in the items' order.
/// Runs on the calling thread alone when there is one item or one core. A panic in `f` propagates.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> R + Sync) -> Vec<R> {
    map_with(items, || (), |(), i, t| f(i, t))
}

/// [`map`] with a state each thread makes once with `init` and hands to every call (a compressor, a
/// scratch buffer: what costs more to set up than one small item's work).
pub fn map_with<T: Sync, S, R: Send>(
    items: &[T],
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize, &T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
        .min(items.len());
    if threads <= 1 {
        let mut state = init();
        return items
            .iter()
            .enumerate()
            .map(|(i, t)| f(&mut state, i, t))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut state = init();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(&mut state, i, item)));
        }
    };
    let parts: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        let others: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut parts = vec![work()];
        for h in others {
            parts.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        parts
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item is claimed by exactly one thread"))
        .collect()
}

/// `f` of every item, in order, for items of equal and tiny cost (a system call of a few µs): each thread
/// takes one fixed run of at least `min_per_thread` items, rather than claiming items one at a time as [`map`]
/// does, whose shared counter would cost as much as such an item. One thread for fewer items. A panic in `f`
/// propagates.
pub fn map_in_chunks<T: Sync, R: Send>(
    items: &[T],
    min_per_thread: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
        .min(items.len() / min_per_thread.max(1))
        .max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let rest: Vec<_> = items
            .chunks(chunk)
            .skip(1)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
            .collect();
        let mut out: Vec<R> = items[..chunk].iter().map(f).collect();
        for part in rest {
            out.extend(part.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_whatever_the_threads_finish_first() {
        let items: Vec<u64> = (0..1000).collect();
        let out = map(&items, |i, &x| {
            // Uneven work: early items take longest, so later ones finish first.
            if i < 4 {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            (i, x * 3)
        });
        assert_eq!(out.len(), items.len());
        for (i, (j, y)) in out.into_iter().enumerate() {
            assert_eq!((i, y), (j, i as u64 * 3));
        }
        assert!(map(&[] as &[u8], |_, _| 0).is_empty());
        assert_eq!(map(&[7], |i, x| (i, *x)), vec![(0, 7)]);
    }

    #[test]
    fn chunks_keep_the_order_and_small_inputs_stay_on_one_thread() {
        let items: Vec<u64> = (0..2000).collect();
        let here = std::thread::current().id();
        let out = map_in_chunks(&items, 500, |&x| (x * 3, std::thread::current().id()));
        assert_eq!(
            out.iter().map(|r| r.0).collect::<Vec<_>>(),
            (0..2000).map(|x| x * 3).collect::<Vec<_>>()
        );
        let few = map_in_chunks(&items[..499], 500, |_| std::thread::current().id());
        assert!(few.iter().all(|&t| t == here));
        assert!(map_in_chunks(&[] as &[u8], 500, |&b| b).is_empty());
    }
}
