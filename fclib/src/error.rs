//! [`FclibError`]: a bad or unreadable FCLIB file, naming the file and the field.

use std::path::Path;

/// A bad or unreadable FCLIB file: which file, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {field}: {why}")]
pub struct FclibError {
    /// The file.
    pub file: String,
    /// The HDF5 path of the field (e.g. `/fclib_global/vectors/mu`).
    pub field: String,
    /// What is wrong.
    pub why: String,
}

/// The error at `field` of the file at `path`.
pub(crate) fn hdf5_err(path: &Path, field: &str, e: impl std::fmt::Display) -> FclibError {
    FclibError { file: path.display().to_string(), field: field.into(), why: e.to_string() }
}
