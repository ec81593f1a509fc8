//! The subcommands, one module per group; `parse_sets` is shared by those that take `--set`.

pub(crate) mod fclib;
pub(crate) mod list;
pub(crate) mod records;
pub(crate) mod reference;
pub(crate) mod run;

/// `KEY=VALUE` pairs of `--set`, trimmed; a pair without `=` or with an empty key is refused.
pub(crate) fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>, String> {
    set.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("--set '{kv}': expected KEY=VALUE"))
        })
        .collect()
}
