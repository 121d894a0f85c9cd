//! `--stat`, `--shortstat` and `--summary`: the lines git puts between `---` and the diff of a mail.

use gix::bstr::{BStr, ByteSlice};
use gix::objs::tree::EntryMode;

use super::{FileDiff, PatchDiff, Status};

/// `N files changed, I insertions(+), D deletions(-)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShortStat {
    pub files: usize,
    pub insertions: u64,
    pub deletions: u64,
}

impl ShortStat {
    /// git's wording, with the leading space: ` 2 files changed, 3 insertions(+), 1 deletion(-)`.
    pub fn text(&self) -> String {
        let mut s = format!(
            " {} file{} changed",
            self.files,
            if self.files == 1 { "" } else { "s" }
        );
        if self.files == 0 {
            return s;
        }
        if self.insertions > 0 || self.deletions == 0 {
            s.push_str(&format!(
                ", {} insertion{}(+)",
                self.insertions,
                if self.insertions == 1 { "" } else { "s" }
            ));
        }
        if self.deletions > 0 || self.insertions == 0 {
            s.push_str(&format!(
                ", {} deletion{}(-)",
                self.deletions,
                if self.deletions == 1 { "" } else { "s" }
            ));
        }
        s
    }

    pub fn add(&mut self, other: ShortStat) {
        self.files += other.files;
        self.insertions += other.insertions;
        self.deletions += other.deletions;
    }
}

impl PatchDiff {
    pub fn shortstat(&self) -> ShortStat {
        ShortStat {
            files: self.files.len(),
            insertions: self.files.iter().map(|f| u64::from(f.insertions)).sum(),
            deletions: self.files.iter().map(|f| u64::from(f.deletions)).sum(),
        }
    }

    /// The `--stat` block git puts between `---` and the diff of a mail: one line per file, the shortstat,
    /// and the `--summary` lines (created, deleted, renamed files and mode changes). The graph is scaled to
    /// `width` columns like git's, though not guaranteed to the column.
    pub fn stat(&self, width: usize) -> String {
        let names: Vec<String> = self.files.iter().map(stat_name).collect();
        let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let max_change = self
            .files
            .iter()
            .filter(|f| !f.binary)
            .map(|f| f.insertions + f.deletions)
            .max()
            .unwrap_or(0);
        let count_width = self
            .files
            .iter()
            .map(|f| {
                if f.binary {
                    3
                } else {
                    (f.insertions + f.deletions).to_string().len()
                }
            })
            .max()
            .unwrap_or(1);
        // " name | count graph"
        let graph_width = width
            .saturating_sub(name_width + count_width + 4)
            .clamp(8, 40) as u32;
        let mut out = String::new();
        for (f, name) in self.files.iter().zip(&names) {
            if f.binary {
                out.push_str(&format!(
                    " {name:<name_width$} | Bin {} -> {} bytes\n",
                    f.old_size, f.new_size
                ));
                continue;
            }
            let total = f.insertions + f.deletions;
            let (plus, minus) = if max_change <= graph_width || max_change == 0 {
                (f.insertions, f.deletions)
            } else {
                let scale = |n: u32| -> u32 {
                    if n == 0 {
                        0
                    } else {
                        ((u64::from(n) * u64::from(graph_width)) / u64::from(max_change)).max(1)
                            as u32
                    }
                };
                (scale(f.insertions), scale(f.deletions))
            };
            let row = format!(
                " {name:<name_width$} | {total:>count_width$} {}{}",
                "+".repeat(plus as usize),
                "-".repeat(minus as usize)
            );
            out.push_str(row.trim_end());
            out.push('\n');
        }
        out.push_str(&self.shortstat().text());
        out.push('\n');
        for f in &self.files {
            let mode =
                |m: Option<EntryMode>| m.map(|m| format!("{:06o}", m.value())).unwrap_or_default();
            match f.status {
                Status::Added => out.push_str(&format!(
                    " create mode {} {}\n",
                    mode(f.new_mode),
                    display_path(f.new_path.as_ref())
                )),
                Status::Deleted => out.push_str(&format!(
                    " delete mode {} {}\n",
                    mode(f.old_mode),
                    display_path(f.old_path.as_ref())
                )),
                Status::Renamed { similarity } => {
                    out.push_str(&format!(
                        " rename {} ({similarity}%)\n",
                        rename_display(f.old_path.as_ref(), f.new_path.as_ref())
                    ));
                    if f.old_mode != f.new_mode {
                        out.push_str(&format!(
                            " mode change {} => {}\n",
                            mode(f.old_mode),
                            mode(f.new_mode)
                        ));
                    }
                }
                Status::Modified if f.old_mode != f.new_mode => out.push_str(&format!(
                    " mode change {} => {} {}\n",
                    mode(f.old_mode),
                    mode(f.new_mode),
                    display_path(f.new_path.as_ref())
                )),
                Status::Modified => {}
            }
        }
        out
    }
}

/// The stat column's name: the path, or `old => new` with common leading directories and trailing parts
/// folded as git does (`dir/{a => b}/f`).
fn stat_name(f: &FileDiff) -> String {
    match f.status {
        Status::Renamed { .. } => rename_display(f.old_path.as_ref(), f.new_path.as_ref()),
        Status::Deleted => display_path(f.old_path.as_ref()),
        _ => display_path(f.new_path.as_ref()),
    }
}

/// A path as git prints it in `--stat` and `--summary`: C-quoted when it has special bytes
/// (`core.quotePath`, on by default), as in the diff's headers.
fn display_path(path: &BStr) -> String {
    super::quote_path("", path)
}

fn rename_display(old: &BStr, new: &BStr) -> String {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    // Common prefix up to and including a '/', common suffix from a '/'.
    let mut pfx = 0;
    for i in 0..a.len().min(b.len()) {
        if a[i] != b[i] {
            break;
        }
        if a[i] == b'/' {
            pfx = i + 1;
        }
    }
    let mut sfx = 0;
    let max_sfx = a.len().min(b.len()) - pfx;
    for i in 1..=max_sfx {
        if a[a.len() - i] != b[b.len() - i] {
            break;
        }
        if a[a.len() - i] == b'/' {
            sfx = i;
        }
    }
    if pfx == 0 && sfx == 0 {
        return format!("{old} => {new}");
    }
    let (ma, mb) = (&a[pfx..a.len() - sfx], &b[pfx..b.len() - sfx]);
    format!(
        "{}{{{} => {}}}{}",
        a[..pfx].as_bstr(),
        ma.as_bstr(),
        mb.as_bstr(),
        a[a.len() - sfx..].as_bstr()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortstat_wording() {
        let s = |files, insertions, deletions| {
            ShortStat {
                files,
                insertions,
                deletions,
            }
            .text()
        };
        assert_eq!(s(1, 1, 0), " 1 file changed, 1 insertion(+)");
        assert_eq!(s(2, 0, 3), " 2 files changed, 3 deletions(-)");
        assert_eq!(
            s(1, 0, 0),
            " 1 file changed, 0 insertions(+), 0 deletions(-)"
        );
        assert_eq!(
            s(3, 2, 1),
            " 3 files changed, 2 insertions(+), 1 deletion(-)"
        );
    }

    #[test]
    fn renames_fold_common_parts() {
        assert_eq!(
            rename_display("a.txt".into(), "z.txt".into()),
            "a.txt => z.txt"
        );
        assert_eq!(
            rename_display("src/a/f.rs".into(), "src/b/f.rs".into()),
            "src/{a => b}/f.rs"
        );
    }
}
