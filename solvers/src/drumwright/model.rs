//! The per-step model: which contacts take part, the spring law of every normal and joint row in
//! velocity form, and the objective weights. Built once per step from a [`StepProblem`].
//!
//! Every normal or joint row `k` is written as `G_k v+ + r_k γ_k ≥ v̂_k` (`=` for joints), the
//! time-discretised spring–damper law of Eqs. 51–53 / 84 divided by `h (hK + B)`:
//! `γ = hλ ≥ -hKφ₀ - (h²K + hB)(G v+ + hĠv₀) - hψ` with `ψ = M̂ Ġ v₀`, i.e.
//! `r = 1/(h(hK + B))`, `v̂ = -Kφ₀/(hK + B) - hĠv₀ - r hψ`. Rigid rows are the limit `K → ∞`:
//! `r = 0`, `v̂ = -φ₀/h - hĠv₀`. With `row_scaling = "paper"` a compliant row is multiplied back by
//! `scale = 1/r = h(hK + B)` (the force form of Eq. 84; README §10.3).
//!
//! Deformable (FEM) bodies (README §2, an extension beyond the paper): their DOFs take the
//! linearised backward-Euler step of `toolkit::implicit`, so wherever the paper has `M` (Eq. 37)
//! the deformable DOFs have `A' = M + δt² K'` ([`ImplicitElastic`]), `v*` there solves
//! `A v* = M v0 + δt f(q0)`, and `M⁻¹` becomes `A'⁻¹` (zero on prescribed DOFs)
//! ([`dynamics_solve`]).

use super::settings::{DrumwrightSettings, GdotTerm, NormalModel, RowScaling};
use api::ContactCompliance;
use api::{SolveError, StepProblem};
use nalgebra::DMatrix;
use toolkit::implicit::ImplicitElastic;

/// Spring law of one row in velocity form: `G v + r γ (≥ or =) v̂`, multiplied by `scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Law {
    pub vhat: f64,
    pub r: f64,
    pub scale: f64,
}

impl Law {
    fn new(vhat: f64, r: f64, paper_scaling: bool) -> Law {
        let scale = if paper_scaling && r > 0.0 { 1.0 / r } else { 1.0 };
        Law { vhat, r, scale }
    }
}

/// The per-step data shared by every formulation.
pub(crate) struct Model {
    /// Problem contacts that take part (indices into `problem.contacts`).
    pub active: Vec<usize>,
    /// Normal law of every active contact.
    pub normal: Vec<Law>,
    /// Friction coefficient of every active contact.
    pub mu: Vec<f64>,
    /// Law of every bilateral row.
    pub bilateral: Vec<Law>,
    /// Free velocity `v* = v0 + h M⁻¹ f` on the rigid DOFs, the implicit step's on the
    /// deformable ones (`A v* = M v0 + h f`, prescribed DOFs at `v̄_P`).
    pub v_star: Vec<f64>,
    /// `A' v*` (`M v*` on the rigid DOFs).
    pub a_v_star: Vec<f64>,
    /// `ζ` (Eq. 109).
    pub zeta: f64,
    /// `c_t = h B_r` (kg): the tangential law is `β = γ_t + c_t G_t v+` (Eqs. 139–140, `K_r = 0`).
    pub ct: f64,
}

impl Model {
    /// The model of `p`; `elastic`: the deformable bodies' implicit step, assembled for `p`
    /// (`None` without deformable bodies).
    pub fn new(
        p: &StepProblem<'_>,
        s: &DrumwrightSettings,
        elastic: Option<&mut ImplicitElastic>,
    ) -> Result<Model, SolveError> {
        let h = p.dt;
        let paper = s.row_scaling == RowScaling::Paper;
        let mut active = Vec::new();
        let mut normal = Vec::new();
        let mut mu = Vec::new();
        for (i, c) in p.contacts.contacts.iter().enumerate() {
            if !(s.speculative || c.gap <= 0.0) {
                continue;
            }
            let law = match s.normal_model {
                NormalModel::HertzPaper | NormalModel::HertzSecant => {
                    let d = (-c.gap).max(0.0);
                    let (k, phi0) = if s.normal_model == NormalModel::HertzPaper {
                        // Eqs. 121–123, sign-corrected: φ = -d^{3/2}, K = E* √r (N/m^{3/2})
                        (s.hertz_modulus * s.hertz_radius.sqrt(), if c.gap <= 0.0 { -d.powf(1.5) } else { c.gap })
                    } else {
                        // secant stiffness of f = E* √r d^{3/2} at d0 (README P5)
                        (s.hertz_modulus * (s.hertz_radius * d.max(s.hertz_d_min)).sqrt(), c.gap)
                    };
                    let w = h * k + s.hertz_damping;
                    Law::new(-k * phi0 / w, 1.0 / (h * w), paper)
                }
                NormalModel::Case => {
                    let (vhat, r) = p.normal_law(i);
                    match c.compliance {
                        ContactCompliance::Rigid => Law::new(vhat, 0.0, false),
                        ContactCompliance::Compliant { .. } => Law::new(vhat, r, paper),
                    }
                }
            };
            active.push(i);
            normal.push(law);
            mu.push(c.mu);
        }

        let mut v_star = p.free_velocity();
        let mut a_v_star = vec![0.0; p.nv()];
        if let Some(e) = elastic.as_deref() {
            e.write_free_velocity(&mut v_star);
        }
        p.mass.mul_into(&v_star, &mut a_v_star);
        if let Some(e) = elastic.as_deref() {
            e.add_stiffness_mul(&v_star, &mut a_v_star);
        }

        let mut bilateral: Vec<Law> = p
            .bilateral
            .rows
            .iter()
            .map(|row| {
                let (vhat, r) = row.law(h);
                Law::new(vhat, r, paper)
            })
            .collect();
        if s.gdot_term != GdotTerm::Off && !bilateral.is_empty() {
            let gdv: Vec<f64> = p.bilateral.rows.iter().map(|r| r.gdot_v).collect();
            let psi = psi_term(p, elastic, &gdv, s.gdot_term == GdotTerm::Exact)?;
            for ((law, g), ps) in bilateral.iter_mut().zip(&gdv).zip(&psi) {
                law.vhat -= h * g + law.r * h * ps;
            }
        }
        for (k, l) in normal.iter().chain(&bilateral).enumerate() {
            if !(l.vhat.is_finite() && l.r.is_finite() && l.scale.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("spring law of row {k}") });
            }
        }
        Ok(Model { active, normal, mu, bilateral, v_star, a_v_star, zeta: s.zeta_at(h), ct: s.tangential_damping_dt })
    }

    /// Number of active contacts.
    pub fn na(&self) -> usize {
        self.active.len()
    }
}

/// `ψ = M̂_b Ġ_b v0` with `M̂_b = (G_b M⁻¹ G_bᵀ)⁻¹` (Eq. 53), by Cholesky (`exact`) or by the
/// pseudo-inverse (SVD, relative cut-off 1e-12).
fn psi_term(
    p: &StepProblem<'_>,
    elastic: Option<&mut ImplicitElastic>,
    gdv: &[f64],
    exact: bool,
) -> Result<Vec<f64>, SolveError> {
    let s = delassus_bilateral(p, elastic);
    let b = nalgebra::DVector::from_column_slice(gdv);
    let x = if exact {
        let ch = s.clone().cholesky().ok_or_else(|| SolveError::Factorization {
            what: "G_b M⁻¹ G_bᵀ is singular (redundant joint rows): M̂ Ġ v needs its inverse (README P6); \
                   use gdot_term = \"pseudo_inverse\" or \"off\""
                .into(),
        })?;
        ch.solve(&b)
    } else {
        let svd = s.svd(true, true);
        let smax = svd.singular_values.max();
        svd.solve(&b, 1e-12 * smax).map_err(|e| SolveError::Numerical { what: format!("pseudo-inverse: {e}") })?
    };
    Ok(x.iter().copied().collect())
}

/// `x ← A'⁻¹ x` for a generalized impulse `x`: `M⁻¹ x` on the rigid DOFs and, with `elastic`
/// (assembled for `p`), `A_FF⁻¹ x_F` on the free deformable DOFs and 0 on the prescribed ones —
/// the velocity change the impulse causes in the step.
pub(crate) fn dynamics_solve(p: &StepProblem<'_>, elastic: Option<&mut ImplicitElastic>, x: &mut [f64]) {
    match elastic {
        None => p.mass.solve_in_place(x),
        Some(e) => {
            let deformable = x[e.start()..].to_vec();
            p.mass.solve_in_place(x);
            x[e.start()..].copy_from_slice(&deformable);
            e.solve_in_place(x);
        }
    }
}

/// `A'⁻¹ Xᵀ` ([`dynamics_solve`]; `M⁻¹ Xᵀ` without deformable bodies) for the rows of `X` given
/// as closures over a generalized impulse: returns the `nv × n` dense matrix whose column `k` is
/// `A'⁻¹ (row k)ᵀ`.
pub(crate) fn ainv_columns(
    p: &StepProblem<'_>,
    mut elastic: Option<&mut ImplicitElastic>,
    n: usize,
    add_row: impl Fn(usize, &mut [f64]),
) -> DMatrix<f64> {
    let nv = p.nv();
    let mut out = DMatrix::zeros(nv, n);
    let mut col = vec![0.0; nv];
    for k in 0..n {
        col.iter_mut().for_each(|x| *x = 0.0);
        add_row(k, &mut col);
        dynamics_solve(p, elastic.as_deref_mut(), &mut col);
        out.column_mut(k).copy_from_slice(&col);
    }
    out
}

/// The dense joint Delassus matrix `S_b = G_b A'⁻¹ G_bᵀ` (`G_b M⁻¹ G_bᵀ` on rigid bodies).
pub(crate) fn delassus_bilateral(p: &StepProblem<'_>, elastic: Option<&mut ImplicitElastic>) -> DMatrix<f64> {
    let nb = p.nb();
    let mg = ainv_columns(p, elastic, nb, |k, out| p.bilateral.rows[k].add_transpose(1.0, out));
    let mut s = DMatrix::zeros(nb, nb);
    for i in 0..nb {
        for j in 0..nb {
            s[(i, j)] = p.bilateral.rows[i].velocity(mg.column(j).as_slice());
        }
    }
    s
}
