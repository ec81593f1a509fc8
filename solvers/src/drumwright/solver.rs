//! [`Drumwright`]: one step = one collision set, one linear solve (joints only) or one convex
//! cone program (contacts), then the explicit update `v+`, `q+ = q0 + h N v+` (Eqs. 36–37).

use super::model::{delassus_bilateral, dynamics_solve, Model};
use super::settings::{DrumwrightSettings, Form, FrictionSolve};
use super::{lifted, reduced, Outcome, Stage};
use api::{IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use nalgebra::DVector;
use toolkit::cone_program::{worse, Stats};
use toolkit::implicit::ImplicitElastic;

/// Drumwright's unconditionally stable first-order constraint solver.
#[derive(Debug)]
pub struct Drumwright {
    settings: DrumwrightSettings,
    /// The deformable bodies' linearised implicit step (README §2), its symbolic factorization
    /// kept across the steps of a run.
    elastic: ImplicitElastic,
}

impl Drumwright {
    /// A solver with validated settings.
    pub fn new(settings: DrumwrightSettings) -> Self {
        Self { settings, elastic: ImplicitElastic::default() }
    }

    /// Symbolic analyses of the deformable bodies' `A = M + δt² K` so far (one per run while the
    /// mesh and the prescribed DOFs stay).
    pub fn symbolic_analyses(&self) -> usize {
        self.elastic.symbolic_analyses()
    }

    /// Joints only (§4, Eqs. 59–62 in the C-form of README §10.3): one dense linear solve
    /// `scale (G_b M⁻¹ G_bᵀ + R_b) γ_b = scale (v̂_b - G_b v*)`, then `v+ = v* + M⁻¹ G_bᵀ γ_b`
    /// (`A'⁻¹` for `M⁻¹` on deformable DOFs).
    fn bilateral_only(
        p: &StepProblem<'_>,
        m: &Model,
        mut elastic: Option<&mut ImplicitElastic>,
        log: &mut IterationLog,
    ) -> Result<Outcome, SolveError> {
        let nb = p.nb();
        let mut a = delassus_bilateral(p, elastic.as_deref_mut());
        let mut rhs = DVector::zeros(nb);
        for k in 0..nb {
            let l = m.bilateral[k];
            a[(k, k)] += l.r;
            rhs[k] = l.vhat - p.bilateral.rows[k].velocity(&m.v_star);
            for j in 0..nb {
                a[(k, j)] *= l.scale;
            }
            rhs[k] *= l.scale;
        }
        let lu = a.clone().full_piv_lu();
        let g = lu.solve(&rhs).ok_or_else(|| SolveError::Factorization {
            what: "joint matrix G_b M⁻¹ G_bᵀ + R_b is singular (redundant rigid joint rows)".into(),
        })?;
        let res = (&a * &g - &rhs).amax() / rhs.amax().max(f64::MIN_POSITIVE);
        log.record(&[("linear_rel_residual_linf", res)]);
        let gb: Vec<f64> = g.iter().copied().collect();
        let mut dv = p.bilateral.transpose_mul(&gb, p.nv());
        dynamics_solve(p, elastic, &mut dv);
        let v = m.v_star.iter().zip(&dv).map(|(a, b)| a + b).collect();
        Ok(Outcome { v, gn: vec![], gt: vec![], gb, status: SolveStatus::Solved, iterations: 1 })
    }

    fn cone_program(
        &mut self,
        p: &StepProblem<'_>,
        m: &Model,
        deformable: bool,
        stage: Stage<'_>,
        stats: &mut Vec<Stats>,
    ) -> Result<Outcome, SolveError> {
        let elastic = deformable.then_some(&mut self.elastic);
        if self.settings.form == Form::Reduced {
            reduced::solve(p, m, &self.settings, elastic, stage, stats)
        } else {
            lifted::solve(p, m, &self.settings, elastic, stage, stats)
        }
    }
}

impl Solver for Drumwright {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        // deformable bodies: A' = M + δt² K and v* of the linearised implicit step (README §2)
        let deformable = self.elastic.assemble(p)?;
        let m = Model::new(p, &self.settings, deformable.then_some(&mut self.elastic))?;
        let mut stats = Vec::new();
        let mut out = if m.na() == 0 {
            if p.nb() == 0 {
                let v = m.v_star.clone();
                Outcome { v, gn: vec![], gt: vec![], gb: vec![], status: SolveStatus::Solved, iterations: 0 }
            } else {
                Self::bilateral_only(p, &m, deformable.then_some(&mut self.elastic), log)?
            }
        } else if self.settings.friction_solve == FrictionSolve::TwoStage {
            let first = self.cone_program(p, &m, deformable, Stage::NormalOnly, &mut stats)?;
            let mut second = self.cone_program(p, &m, deformable, Stage::FrictionGiven(&first.gn), &mut stats)?;
            second.status = worse(first.status, second.status);
            second.iterations += first.iterations;
            second
        } else {
            self.cone_program(p, &m, deformable, Stage::Joint, &mut stats)?
        };
        // prescribed DOFs: their rows are decoupled (`v_P = v̄_P`, no impulse acts on them); the
        // interior point meets them to its tolerance, the exact value is returned
        for &(k, vk) in &p.prescribed {
            out.v[k] = vk;
        }
        // diagnostics (README §5): by how much the normal impulse exceeds its spring law (P1/P2)
        let mut excess = 0.0f64;
        for (a, &ci) in m.active.iter().enumerate() {
            let l = m.normal[a];
            if l.r > 0.0 {
                let u = p.contacts.contacts[ci].velocity(&out.v)[0];
                let lower = ((l.vhat - u) / l.r).max(0.0);
                excess = excess.max(out.gn[a] - lower);
            }
        }
        // one row per cone program, every row with the same columns
        for st in &stats {
            log.record(&[
                ("ipm_iterations", st.iterations as f64),
                ("r_prim", st.r_prim),
                ("r_dual", st.r_dual),
                ("solve_time_s", st.solve_time),
                ("clarabel_status", st.status_code as f64),
                ("normal_excess_max", excess),
            ]);
        }

        let mut impulses = vec![[0.0; 3]; p.nc()];
        for (a, &ci) in m.active.iter().enumerate() {
            impulses[ci] = [out.gn[a], out.gt[a][0], out.gt[a][1]];
        }
        if let Some(k) = out.v.iter().chain(&out.gb).position(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite { what: format!("velocity or joint impulse entry {k}") });
        }
        // the interior-point iterates stay inside clarabel: the yardstick sees each program's
        // answer (the last row)
        log.iterate(&out.v, &impulses, &out.gb);
        Ok(StepSolution {
            v: out.v,
            q: None,
            impulses,
            bilateral: out.gb,
            iterations: out.iterations,
            status: out.status,
        })
    }
}
