//! The repository stands alone: no source, documentation or configuration file cites a document
//! that is not in the repository (private notes, design or style documents, files outside the
//! checkout). Papers are cited by their own section, equation, table and figure numbers; derived
//! facts live in the solvers' READMEs and in `docs/`.
//!
//! The test walks the files git knows about (tracked, plus untracked files that are not ignored),
//! or, without git, the directory tree minus `target/`, `runs/` and `.git/`, and fails naming
//! `file:line` for every line that contains one of [`FORBIDDEN`] (case-insensitive).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Phrases that cite documents outside the repository. Matched case-insensitively.
const FORBIDDEN: &[&str] =
    &["notes §", "seed-00", "anchors.md", "design.md", "style.md", "rust-ecosystem", "../shared", "research notes"];

/// This file names the phrases itself.
const SELF: &str = "tests/standalone.rs";

/// Directories never scanned in the fallback walk (build output, run records, git metadata).
const SKIP_DIRS: &[&str] = &["target", "runs", ".git"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Repository-relative paths from git, or `None` if git is not usable here.
fn git_files(root: &Path) -> Option<Vec<String>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.split('\0').filter(|s| !s.is_empty()).map(str::to_owned).collect())
}

/// Repository-relative paths of every file under `root`, minus [`SKIP_DIRS`].
fn walk_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                let name = entry.file_name();
                if !SKIP_DIRS.iter().any(|s| name == *s) {
                    stack.push(path);
                }
            } else if kind.is_file() {
                if let Ok(rel) = path.strip_prefix(root) {
                    files.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    files
}

/// `file:line: text` for every line of `text` holding a forbidden phrase.
fn offences(rel: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        if let Some(p) = FORBIDDEN.iter().find(|p| lower.contains(&p.to_lowercase())) {
            found.push(format!("{rel}:{}: cites {p:?}: {}", i + 1, line.trim()));
        }
    }
    found
}

#[test]
fn no_file_cites_a_document_outside_the_repository() {
    let root = root();
    let files = git_files(&root).unwrap_or_else(|| walk_files(&root));
    assert!(!files.is_empty(), "no files found under {}", root.display());
    let mut found = Vec::new();
    for rel in &files {
        let top = rel.split('/').next().unwrap_or("");
        if rel == SELF || SKIP_DIRS.contains(&top) {
            continue;
        }
        // Binary files and files listed by git but deleted from the work tree are skipped.
        let Ok(bytes) = std::fs::read(root.join(rel)) else { continue };
        let Ok(text) = String::from_utf8(bytes) else { continue };
        found.extend(offences(rel, &text));
    }
    assert!(
        found.is_empty(),
        "{} line(s) cite documents outside the repository; cite the paper's own section/equation/\
         figure numbers or an in-repo page (solver README, docs/) instead:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_checker_catches_each_phrase() {
    for p in FORBIDDEN {
        let line = format!("see {} for details", p.to_uppercase());
        assert_eq!(offences("x.rs", &format!("ok\n{line}\n")).len(), 1, "{p}");
    }
    assert!(offences("x.rs", "Castro et al. Eq. (31); see solvers/src/sap/README.md §9\n").is_empty());
}
