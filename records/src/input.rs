//! Reading what a user hands the CLI, defensively: every file is checked to be a regular file
//! below a size limit before a byte is read (a FIFO would block forever, `/dev/zero` never ends, a
//! 10 GB file would be read into memory), and directory listings never follow a symbolic link to a
//! directory (two links to the parent would make a recursive walk exponential; a link out of the
//! tree would read someone else's files). Every refusal is one line naming the path.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why an input could not be read, or an output directory not used; every message is one line
/// naming the path (or the setting) and the reason.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The operating system refused (missing file, no permission, ...).
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The path is a FIFO, a device, a socket or a directory where a regular file was expected.
    #[error("{}: {kind}, not a regular file; refusing to read it", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is ("a FIFO", "a character device", ...).
        kind: &'static str,
    },
    /// The path is not a directory where one was expected.
    #[error("{}: {kind}, not a directory", path.display())]
    NotDirectory {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file is larger than the input limit.
    #[error("{}: {size} bytes, more than the {limit}-byte input limit (SIGNORINI_MAX_INPUT_BYTES raises it)", path.display())]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size (bytes).
        size: u64,
        /// The limit (bytes).
        limit: u64,
    },
    /// The file grew past the limit while it was read.
    #[error("{}: grew beyond the {limit}-byte input limit while being read", path.display())]
    Grew {
        /// The path.
        path: PathBuf,
        /// The limit (bytes).
        limit: u64,
    },
    /// A text file is not UTF-8.
    #[error("{}: not UTF-8 text ({source})", path.display())]
    NotUtf8 {
        /// The path.
        path: PathBuf,
        /// The decoding error.
        source: std::string::FromUtf8Error,
    },
    /// [`LIMIT_VAR`] is set to something other than a positive whole number.
    #[error("{LIMIT_VAR}={value:?}: expected a positive whole number of bytes (e.g. 1073741824)")]
    BadLimit {
        /// The value as set.
        value: String,
    },
    /// An output directory (`--out`) cannot be used.
    #[error("--out {}: {why}", path.display())]
    Output {
        /// The directory.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

impl From<InputError> for String {
    fn from(e: InputError) -> String {
        e.to_string()
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> InputError + '_ {
    move |source| InputError::Io { path: path.to_path_buf(), source }
}

/// Largest text input (suite, gates, run record, criterion estimate, trajectory) read by default:
/// 256 MiB. A run record of a long run with full iteration logs is a few MiB.
pub const MAX_TEXT_BYTES: u64 = 256 << 20;

/// The environment variable that replaces the input limits ([`MAX_TEXT_BYTES`],
/// [`MAX_BINARY_BYTES`]): a positive whole number of bytes.
pub const LIMIT_VAR: &str = "SIGNORINI_MAX_INPUT_BYTES";

/// The input limit [`LIMIT_VAR`] sets: `Ok(None)` when unset, `Ok(Some(bytes))` for a positive
/// whole number of bytes, else the one-line reason (`abc`, `-5`, `0`, `1.5`). The CLI checks it
/// before any command, so that a mistyped value is refused instead of silently replaced by the
/// default; [`text_limit`] and [`binary_limit`] fall back to the defaults on an invalid value.
pub fn env_limit() -> Result<Option<u64>, InputError> {
    let Some(v) = std::env::var_os(LIMIT_VAR) else { return Ok(None) };
    let text = v.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(InputError::BadLimit { value: text.into_owned() }),
    }
}

/// The limit on text inputs: [`MAX_TEXT_BYTES`], or `SIGNORINI_MAX_INPUT_BYTES` when set.
pub fn text_limit() -> u64 {
    env_limit().ok().flatten().unwrap_or(MAX_TEXT_BYTES)
}

/// Largest binary input (an FCLIB HDF5 file, read whole into memory) read by default: 2 GiB.
pub const MAX_BINARY_BYTES: u64 = 2 << 30;

/// The limit on binary inputs: [`MAX_BINARY_BYTES`], or `SIGNORINI_MAX_INPUT_BYTES` when set.
pub fn binary_limit() -> u64 {
    env_limit().ok().flatten().unwrap_or(MAX_BINARY_BYTES)
}

/// What kind of file system object `path` is, for refusals.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Checks that `path` (after following symbolic links) is a regular file of at most `limit`
/// bytes; returns its size.
pub fn check_file(path: &Path, limit: u64) -> Result<u64, InputError> {
    let meta = std::fs::metadata(path).map_err(io(path))?;
    if !meta.is_file() {
        return Err(InputError::NotRegular { path: path.to_path_buf(), kind: kind(&meta) });
    }
    if meta.len() > limit {
        return Err(InputError::TooLarge { path: path.to_path_buf(), size: meta.len(), limit });
    }
    Ok(meta.len())
}

/// Why an output file may not be written at `path` by a rename over it, if it may not: `path`
/// exists (after following links) and is not a regular file. Renaming a new file over a FIFO, a
/// character device (`/dev/null`) or a socket would replace it; a directory cannot be replaced.
/// A missing path, a regular file or a link to one is fine (`None`).
pub fn not_replaceable(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_file()).then(|| format!("exists and is {}, not a regular file; refusing to replace it", kind(&meta)))
}

/// Reads a regular file of at most `limit` bytes (checked before reading, and again while reading,
/// in case the file grows).
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let size = check_file(path, limit)?;
    let file = std::fs::File::open(path).map_err(io(path))?;
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io(path))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::Grew { path: path.to_path_buf(), limit });
    }
    Ok(bytes)
}

/// Reads a UTF-8 text file of at most [`text_limit`] bytes.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = read_bytes(path, text_limit())?;
    String::from_utf8(bytes).map_err(|source| InputError::NotUtf8 { path: path.to_path_buf(), source })
}

/// The entries of one directory, sorted, leaving out hidden names (a leading `.`: temporary files
/// of atomic writes, editor files): `(files, directories)`. A symbolic link to a directory is
/// neither followed nor listed; a `*.json` entry that is not a regular file (a FIFO, a device, a
/// link to one) is an error naming it, so that a reader never blocks on it.
pub fn list_dir(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), InputError> {
    let meta = std::fs::metadata(dir).map_err(io(dir))?;
    if !meta.is_dir() {
        return Err(InputError::NotDirectory { path: dir.to_path_buf(), kind: kind(&meta) });
    }
    let rd = std::fs::read_dir(dir).map_err(io(dir))?;
    let (mut files, mut dirs) = (vec![], vec![]);
    for entry in rd {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(false);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue; // a dangling link
        };
        if meta.is_dir() {
            if !link {
                dirs.push(path);
            }
        } else if meta.is_file() {
            files.push(path);
        } else if path.extension().is_some_and(|x| x == "json") {
            return Err(InputError::NotRegular { path, kind: kind(&meta) });
        }
    }
    files.sort();
    dirs.sort();
    Ok((files, dirs))
}

/// The `*.json` files of `dir` (see [`list_dir`]).
pub fn json_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    Ok(list_dir(dir)?.0.into_iter().filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
}

/// Every directory below `root` (root included), depth first in name order, without following
/// symbolic links (so no cycle and no walk out of the tree), at most `max_depth` levels deep.
pub fn walk_dirs(root: &Path, max_depth: usize) -> Result<Vec<PathBuf>, InputError> {
    let mut out = vec![];
    fn go(d: &Path, depth: usize, max_depth: usize, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
        out.push(d.to_path_buf());
        if depth == max_depth {
            return Ok(());
        }
        for sub in list_dir(d)?.1 {
            go(&sub, depth + 1, max_depth, out)?;
        }
        Ok(())
    }
    go(root, 0, max_depth, &mut out)?;
    Ok(out)
}

/// Why `label` cannot name a record file, if it cannot: labels become file names
/// (`LABEL__SOLVER.json`), so they must be non-empty, at most [`MAX_LABEL_LEN`] characters of
/// `A-Z a-z 0-9 _ - . + =`, and not start with a dot (hidden files are skipped by every reader).
pub fn label_error(label: &str) -> Option<String> {
    if label.is_empty() {
        return Some("is empty".into());
    }
    if label.chars().count() > MAX_LABEL_LEN {
        return Some(format!("is {} characters long (at most {MAX_LABEL_LEN})", label.chars().count()));
    }
    if label.starts_with('.') {
        return Some("starts with '.' (its record would be a hidden file that readers skip)".into());
    }
    if let Some(c) = label.chars().find(|c| !(c.is_ascii_alphanumeric() || "_-.+=".contains(*c))) {
        return Some(format!("contains {c:?} (allowed: letters, digits and _ - . + =)"));
    }
    None
}

/// Longest case label (record file names stay well below the 255-byte limit of file systems).
pub const MAX_LABEL_LEN: usize = 100;

/// A fresh temporary file name of this process, `.tmp.PID.N` (`N` counts up): short, so that it
/// fits wherever the final name fits; hidden, so that no reader lists it.
pub fn tmp_name() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(".tmp.{}.{n}", std::process::id())
}

/// Removes the temporary files (`.tmp.PID.N`, [`tmp_name`], or the older `.NAME.PID.tmp`) that
/// an earlier process, killed mid-write, left in `dir`; files of a process still running on this
/// machine are kept. Returns how many were removed.
pub fn remove_stale_tmp(dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = tmp_owner(&name) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            removed += usize::from(std::fs::remove_file(entry.path()).is_ok());
        }
    }
    removed
}

/// The process id in a temporary file name `.tmp.PID.N` or `.NAME.PID.tmp`.
fn tmp_owner(name: &str) -> Option<u32> {
    if let Some((pid, n)) = name.strip_prefix(".tmp.").and_then(|rest| rest.split_once('.')) {
        if n.parse::<u64>().is_ok() {
            return pid.parse().ok();
        }
    }
    let stem = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    stem.rsplit_once('.')?.1.parse().ok()
}

/// Checks that `dir` can be created and written (a probe file is written and removed), before
/// any work whose results would go there.
pub fn check_writable_dir(dir: &Path) -> Result<(), InputError> {
    let out = |why: String| InputError::Output { path: dir.to_path_buf(), why };
    if let Ok(meta) = std::fs::metadata(dir) {
        if !meta.is_dir() {
            return Err(out(format!("exists and is {}, not a directory", kind(&meta))));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| out(e.to_string()))?;
    let probe = dir.join(format!(".write-probe.{}.tmp", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| out(format!("not writable: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_fifos_directories_and_big_files() {
        let e = read_bytes(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(matches!(e, InputError::NotRegular { kind: "a character device", .. }), "{e}");
        assert_eq!(e.to_string(), "/dev/zero: a character device, not a regular file; refusing to read it");
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(read_text(dir.path()).unwrap_err(), InputError::NotRegular { kind: "a directory", .. }));
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; 2048]).unwrap();
        let e = read_bytes(&big, 1024).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { size: 2048, limit: 1024, .. }), "{e}");
        assert!(e.to_string().contains("2048 bytes, more than the 1024-byte input limit"), "{e}");
        assert_eq!(read_bytes(&big, 4096).unwrap().len(), 2048);
        let fifo = dir.path().join("f.json");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let e = json_files(dir.path()).unwrap_err();
        assert!(matches!(&e, InputError::NotRegular { path, kind: "a FIFO" } if *path == fifo), "{e}");
        assert!(matches!(check_file(&fifo, 10).unwrap_err(), InputError::NotRegular { kind: "a FIFO", .. }));
        // an output path that is a FIFO or a directory is not replaced; a file or nothing is fine
        assert!(not_replaceable(&fifo).unwrap().contains("FIFO"));
        assert!(not_replaceable(dir.path()).unwrap().contains("a directory"));
        assert_eq!(not_replaceable(&big), None);
        assert_eq!(not_replaceable(&dir.path().join("absent")), None);
    }

    #[test]
    fn walks_do_not_follow_links_to_directories() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::create_dir_all(a.join("b")).unwrap();
        std::os::unix::fs::symlink(dir.path(), a.join("up1")).unwrap();
        std::os::unix::fs::symlink(dir.path(), a.join("b/up2")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", a.join("zzz.txt")).unwrap();
        let dirs = walk_dirs(dir.path(), 16).unwrap();
        assert_eq!(dirs, vec![dir.path().to_path_buf(), a.clone(), a.join("b")]);
    }

    #[test]
    fn labels_that_cannot_name_a_file_are_refused() {
        for ok in ["slope-10-slip", "clutter_40", "dt=0.01+mu=0.2", "a.b"] {
            assert_eq!(label_error(ok), None, "{ok}");
        }
        for bad in ["", "../../X", ".hidden", "a/b", "a b", "é"] {
            assert!(label_error(bad).is_some(), "{bad}");
        }
        assert!(label_error(&"x".repeat(MAX_LABEL_LEN + 1)).unwrap().contains("characters long"));
    }

    #[test]
    fn stale_temporary_files_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // PID 0x7fffffff is never a live process; our own PID is.
        let stale = dir.path().join(".x__pgs.json.2147483647.tmp");
        let live = dir.path().join(format!(".y__pgs.json.{}.tmp", std::process::id()));
        let other = dir.path().join("keep.json");
        let stale_short = dir.path().join(".tmp.2147483647.3");
        let live_short = dir.path().join(tmp_name());
        for p in [&stale, &live, &other, &stale_short, &live_short] {
            std::fs::write(p, b"{").unwrap();
        }
        assert_eq!(remove_stale_tmp(dir.path()), 2);
        assert!(!stale.exists() && live.exists() && other.exists());
        assert!(!stale_short.exists() && live_short.exists());
    }
}
