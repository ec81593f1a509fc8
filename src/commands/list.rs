//! `signorini list`: solvers (with their knobs and defaults) and cases (with their variants).

/// The listing, as printed.
pub(crate) fn list() -> String {
    let reg = signorini::registry();
    let mut s = String::from("solvers:\n");
    for e in &reg.solvers {
        s += &format!("  {:<16} {}\n", e.name, e.summary);
        s += &format!("  {:<16} capabilities: {:?}\n", "", e.capabilities);
        let model = match e.model {
            api::AnsweredModel::RigidCoulomb => "the rigid Coulomb NCP".to_string(),
            api::AnsweredModel::Regularised { residual_columns } => {
                format!("a regularised model (own residual: {})", residual_columns.join(", "))
            }
            api::AnsweredModel::Relaxed { residual_columns } => {
                format!("Anitescu's convex relaxation, the CCP (own residual: {})", residual_columns.join(", "))
            }
            api::AnsweredModel::Pyramid { facets, residual_columns } => {
                format!("the pyramid LCP, facets in solver.{facets} (own residual: {})", residual_columns.join(", "))
            }
            api::AnsweredModel::ConeProgram { residual_columns } => {
                format!("a cone program over the contact law (own residual: {})", residual_columns.join(", "))
            }
        };
        s += &format!("  {:<16} budget: solver.{}, tolerance: solver.{}, answers {model}\n", "", e.budget, e.tolerance);
        for (k, v) in &(e.defaults)().0 {
            s += &format!("  {:<16}   solver.{k} = {v}\n", "");
        }
    }
    s += "cases:\n";
    for c in &reg.cases {
        s += &format!("  {:<16} {}\n", c.name(), c.summary());
        for (k, v) in &c.defaults().0 {
            s += &format!("  {:<16}   {k} = {v}\n", "");
        }
        for v in c.variants() {
            let set = v.set.replace('\n', "; ");
            s += &format!("  {:<16}   variant {} ({set}): {}\n", "", v.label(c.name()), v.why);
        }
    }
    s
}
