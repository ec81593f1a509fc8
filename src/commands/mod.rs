//! The subcommands, one module per group; `parse_sets` (the library's, shared with the
//! Python package) serves those that take `--set`.

pub(crate) mod fclib;
pub(crate) mod list;
pub(crate) mod records;
pub(crate) mod reference;
pub(crate) mod run;

pub(crate) use signorini::selection::parse_sets;
