//! Links from a report to the *claims tables* of the solvers' READMEs.
//!
//! Each solver that implements a paper keeps, in `solvers/src/<name>/README.md`, a section headed
//! "Claims of the paper": every headline claim of the paper (with its table or figure), the test
//! that checks it, the tolerance and where it comes from, and the measured value, or "not
//! reproduced" with the measured value and the reason. A report that ranks solvers links to those
//! tables, so a reader sees which of a method's claims this build reproduces next to the verdicts.
//! Solvers without such a section (baselines, reference engines, a researcher's new solver) get
//! no link.

use records::RunRecord;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The heading words that mark a README's claims section.
pub const CLAIMS_HEADING: &str = "Claims of the paper";

/// One solver's claims table.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimsLink {
    /// The solver's name, as in the records.
    pub solver: String,
    /// The section's heading text (without the `#`s).
    pub heading: String,
    /// The README's path relative to the source tree (`solvers/src/<name>/README.md`).
    pub readme: String,
    /// The link from the report's directory: a relative path to the README plus the heading's
    /// anchor (GitHub's slug); an absolute path when the two share no root.
    pub href: String,
    /// The number of claim rows in the section's table (the rows after the header and rule).
    pub rows: usize,
}

/// The source tree this binary was built from (the workspace root).
pub fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The claims links of the solvers that ran in `records`, looked up under `root`, in solver
/// order; `out_dir` is where the report's pages are written.
pub fn links(records: &[RunRecord], root: &Path, out_dir: &Path) -> Vec<ClaimsLink> {
    let solvers: BTreeSet<&str> = records.iter().map(|r| r.solver.name.as_str()).collect();
    solvers.into_iter().filter_map(|s| link(s, root, out_dir)).collect()
}

fn link(solver: &str, root: &Path, out_dir: &Path) -> Option<ClaimsLink> {
    // a solver name is a plain identifier; anything else is not a folder of solvers/src
    if solver.is_empty() || !solver.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let readme = format!("solvers/src/{solver}/README.md");
    let text = std::fs::read_to_string(root.join(&readme)).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with('#') && l.contains(CLAIMS_HEADING))?;
    let heading = lines[at].trim_start_matches('#').trim().to_string();
    let rows = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with('|'))
        .count()
        .saturating_sub(2);
    let target = absolute(&root.join(&readme));
    let href = format!("{}#{}", relative(&absolute(out_dir), &target).display(), slug(&heading));
    Some(ClaimsLink { solver: solver.to_string(), heading, readme, href, rows })
}

/// GitHub's anchor of a heading: lower case, spaces to `-`, punctuation other than `-`/`_` dropped.
pub fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// `to` relative to the directory `from` (both absolute and normalised).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let (f, t): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return to.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use records::RunStatus;

    fn record(label: &str, solver: &str) -> RunRecord {
        crate::test_records::record(label, solver, RunStatus::Ok, 1.0, &[])
    }

    #[test]
    fn every_paper_solver_links_its_claims_table_and_the_link_resolves() {
        let root = source_root();
        let out = root.join("runs/some-suite/report");
        let names = ["canal", "drumwright", "local_global", "nsn", "sap", "subadmm", "pgs", "mujoco"];
        let recs: Vec<RunRecord> = names.iter().map(|s| record("slope", s)).collect();
        let got = links(&recs, &root, &out);
        let solvers: Vec<&str> = got.iter().map(|l| l.solver.as_str()).collect();
        // the six solvers of the five papers have a claims section; the baseline and a reference
        // engine do not
        assert_eq!(solvers, ["canal", "drumwright", "local_global", "nsn", "sap", "subadmm"]);
        for l in &got {
            assert!(l.rows >= 3, "{}: a claims table of {} rows", l.solver, l.rows);
            let (path, anchor) = l.href.split_once('#').expect("an anchor");
            assert!(path.starts_with("../../../solvers/src/"), "{}", l.href);
            assert!(absolute(&out.join(path)).is_file(), "{} does not resolve from the report directory", l.href);
            assert!(anchor.contains("claims-of-the-paper"), "{anchor}");
        }
    }

    #[test]
    fn a_name_that_is_not_a_solver_folder_gets_no_link() {
        let root = source_root();
        for s in ["../sap", "sap/..", "", "no_such_solver"] {
            assert_eq!(links(&[record("slope", s)], &root, &root), vec![], "{s:?}");
        }
    }

    #[test]
    fn slug_and_relative_paths() {
        assert_eq!(slug("10. Claims of the paper: what is asserted"), "10-claims-of-the-paper-what-is-asserted");
        assert_eq!(relative(Path::new("/a/b/c"), Path::new("/a/x/y.md")), PathBuf::from("../../x/y.md"));
        assert_eq!(relative(Path::new("/a"), Path::new("/a/y.md")), PathBuf::from("y.md"));
    }
}
