//! The subcommands, one module per group; `parse_sets` is shared by those that take `--set`.

pub(crate) mod fclib;
pub(crate) mod list;
pub(crate) mod records;
pub(crate) mod reference;
pub(crate) mod run;

/// `KEY=VALUE` pairs of `--set`, trimmed; a pair without `=` or with an empty key is refused,
/// and so is a parameter set twice (`--set case.mu=0.2 --set mu=0.3`: `KEY` and `case.KEY` name
/// the same case parameter; only one of the values would apply).
pub(crate) fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>, String> {
    let pairs: Vec<(String, String)> = set
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("--set '{kv}': expected KEY=VALUE"))
        })
        .collect::<Result<_, _>>()?;
    let canonical = |k: &str| k.strip_prefix("case.").unwrap_or(k).to_string();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if let Some((k0, v0)) = pairs[..i].iter().find(|(k0, _)| canonical(k0) == canonical(k)) {
            return Err(format!(
                "--set {k0}={v0} and --set {k}={v} set the parameter '{}' twice; give it once",
                canonical(k)
            ));
        }
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::parse_sets;

    #[test]
    fn a_parameter_set_twice_is_refused() {
        let sets = |v: &[&str]| parse_sets(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let e = sets(&["case.mu=0.2", "mu=0.3"]).unwrap_err();
        assert_eq!(e, "--set case.mu=0.2 and --set mu=0.3 set the parameter 'mu' twice; give it once");
        assert!(sets(&["mu=0.2", "mu=0.3"]).is_err());
        // a case parameter and a solver setting of one name are two parameters
        assert_eq!(sets(&["mu=0.2", "solver.mu=0.3"]).unwrap().len(), 2);
    }
}
