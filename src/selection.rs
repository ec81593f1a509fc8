//! The pairs a run asks for: a suite file or the default suite, narrowed by case and solver
//! names, with `--set` overrides. `signorini run` and the Python package (`signorini.run`,
//! `signorini.run_suite`) select through [`select`], so both check the same things and refuse with
//! the same one-line messages.

use harness::runner::Suite;
use harness::Registry;
use std::path::Path;

/// `KEY=VALUE` pairs of `--set`, trimmed; a pair without `=` or with an empty key is refused,
/// and so is a parameter set twice (`--set case.mu=0.2 --set mu=0.3`: `KEY` and `case.KEY` name
/// the same case parameter; only one of the values would apply).
pub fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>, String> {
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

/// What to run: `suite` is a suite file's path or `"default"` (every registered solver on every
/// case's defaults and variants); `cases` and `solvers` narrow it (empty: all); `set` holds
/// `KEY=VALUE` overrides; more than `max_pairs` pairs are refused.
pub struct Selection<'a> {
    /// A suite file, or `"default"`.
    pub suite: &'a str,
    /// Case names or labels to keep (empty: all).
    pub cases: &'a [String],
    /// Solver names to keep (empty: all).
    pub solvers: &'a [String],
    /// `KEY=VALUE` overrides (`solver.KEY` for a solver setting).
    pub set: &'a [String],
    /// Most pairs the selection may hold.
    pub max_pairs: usize,
}

/// The suite `sel` asks for, every name and override checked against `reg`; `Err` is the one
/// line the CLI prints after `error: `.
pub fn select(reg: &Registry, sel: &Selection<'_>) -> Result<Suite, String> {
    let Selection { suite, cases: case, solvers: solver, set, max_pairs } = *sel;
    for s in solver {
        reg.find_solver(s).map_err(|e| e.to_string())?;
    }
    let mut suite = if suite == "default" {
        let mut all = Suite::default_suite(reg);
        for c in case {
            if !all.pairs.iter().any(|p| &p.label == c) {
                reg.find_case(c).map_err(|e| e.to_string())?;
            }
        }
        // a case name selects its defaults (label = name), a variant its label
        if !case.is_empty() {
            all.pairs.retain(|p| case.contains(&p.label));
        }
        if !solver.is_empty() {
            all.pairs.retain(|p| solver.contains(&p.solver));
        }
        if !(case.is_empty() && solver.is_empty()) {
            all.name = "selection".into();
        }
        all
    } else {
        let text = records::input::read_text(Path::new(suite)).map_err(|e| {
            let e = e.to_string();
            let why = e.strip_prefix(&format!("{suite}: ")).unwrap_or(&e);
            format!("suite '{suite}': {why}")
        })?;
        let narrowed = (!solver.is_empty()).then_some(solver);
        let s = Suite::from_toml_limited(&text, suite, reg, narrowed, max_pairs)?;
        // the file's `name` becomes a folder (runs/NAME): the rules of case labels, which name
        // files (a suite without one is named by its path, as before)
        if let Some(why) = records::input::label_error(&s.name).filter(|_| s.name != suite) {
            return Err(format!(
                "suite '{suite}': name {:?} {why}; a suite name follows the rules of case labels (it names the \
                 output folder runs/NAME)",
                s.name
            ));
        }
        s
    };
    suite.select_cases(case)?;
    suite.apply_overrides(reg, &parse_sets(set)?)?;
    if suite.pairs.is_empty() {
        return Err("nothing to run: the selection matches no (case, solver) pair".into());
    }
    if suite.pairs.len() > max_pairs {
        return Err(format!(
            "suite '{}': {} pairs, more than --max-pairs {max_pairs}; select fewer or raise --max-pairs",
            suite.name,
            suite.pairs.len()
        ));
    }
    Ok(suite)
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
