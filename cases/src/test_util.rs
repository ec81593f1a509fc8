//! Helpers shared by the cases' unit tests (compiled for tests only).

use harness::{Case, CaseDef, CaseError, OracleCheck, Params, Scenario, Trace};

/// The case's defaults with `overrides` applied as `--set key=value` would (panics on a refused value).
pub(crate) fn params(case: &(impl Case + ?Sized), overrides: &[(&str, &str)]) -> Params {
    let mut p = case.defaults();
    for (k, v) in overrides {
        p.set(k, v, case.name()).unwrap();
    }
    p
}

/// The scene `Case::prepare` builds from `params` (errors as `prepare` reports them).
pub(crate) fn build(case: &impl Case, params: &Params) -> Result<Scenario, CaseError> {
    case.prepare(params).map(|c| c.scenario().clone())
}

/// The case's oracle on `trace`, with `params` decoded as `Case::prepare` decodes them (panics on
/// invalid parameters) and `scenario` given (it need not be the one `params` build).
pub(crate) fn oracle<D: CaseDef>(case: &D, params: &Params, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
    let p: D::Params = params.decode(D::NAME).unwrap();
    case.grade(&p, scenario, trace)
}

/// The names of `checks`, in order: a test that asserts "every check passes" (or fails) over a
/// list must also assert the list, or an empty one passes it.
pub(crate) fn names(checks: &[OracleCheck]) -> Vec<&str> {
    checks.iter().map(|c| c.name.as_str()).collect()
}

/// Asserts that the check `weight_ratio` that `grade` gives is the mean total normal impulse of
/// the steps `n/2 ..` of a run over the weight it should carry: `tr` carries it on every step;
/// without any impulse before step `n/2` the ratio is still 1, and with none at step `n/2`
/// either it is `1 − 1/(n − n/2)`.
pub(crate) fn assert_weight_from_the_second_half(mut tr: Trace, grade: impl Fn(&Trace) -> Vec<OracleCheck>) {
    let n = tr.metrics.len();
    let ratio = |tr: &Trace| check(&grade(tr), "weight_ratio").measured;
    assert!((ratio(&tr) - 1.0).abs() < 1e-12, "{}", ratio(&tr));
    tr.metrics[..n / 2].iter_mut().for_each(|m| m.normal_impulse_total = 0.0);
    assert!((ratio(&tr) - 1.0).abs() < 1e-12, "{}", ratio(&tr));
    tr.metrics[n / 2].normal_impulse_total = 0.0;
    let want = 1.0 - 1.0 / (n - n / 2) as f64;
    assert!((ratio(&tr) - want).abs() < 1e-12, "{} vs {want}", ratio(&tr));
}

/// The oracle check called `name` (panics, listing the checks, if there is none).
pub(crate) fn check<'a>(checks: &'a [OracleCheck], name: &str) -> &'a OracleCheck {
    checks.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no check {name} in {checks:?}"))
}

/// Asserts that the case's TOML defaults name exactly the fields of its parameter struct
/// (`D::Params::default()`) with the same values, that the decoded defaults give back the TOML
/// defaults exactly (so run records and their hashes are the TOML's), and that setting every
/// default back through `--set` parsing leaves the parameters unchanged (so every parameter is
/// overridable with its own printed value).
pub(crate) fn assert_every_parameter_is_in_the_toml_and_overridable<D: CaseDef>(case: &D) {
    let defaults = case.defaults();
    let from_struct = Params::from_settings(&D::Params::default());
    let mut a: Vec<_> = defaults.0.keys().collect();
    let mut b: Vec<_> = from_struct.0.keys().collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(from_struct, defaults);
    let prepared = case.prepare(&defaults).unwrap();
    assert_eq!(prepared.params_json(), defaults);
    assert_eq!(prepared.params_json().hash(), defaults.hash());
    for (k, v) in &defaults.0 {
        let raw = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
        let mut p = defaults.clone();
        p.set(k, &raw, case.name()).unwrap();
        assert_eq!(p, defaults, "{k}");
    }
}
