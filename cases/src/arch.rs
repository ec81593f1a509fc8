//! `arch`: Macklin et al.'s arch of 20 rigid blocks (§10.1.5 "rigid-body contact", Fig. 14,
//! Table 2), `mu = 0.6`, block masses 15 .. 110 kg. The paper's claim: direct or Krylov inner
//! solves hold the arch without drift; Jacobi / Gauss–Seidel relaxation eventually collapses it.
//!
//! # Deviation from the paper: a corbelled arch of boxes
//!
//! The paper's voussoirs are wedges cut along a parabola. The harness's rigid shapes are boxes,
//! spheres and cylinders, and two boxes turned against each other (as boxes set on a semicircle
//! would be) touch along one edge only: every joint becomes a free hinge and the ring is a
//! mechanism that folds under its own weight. So the arch is **corbelled**: two mirrored halves
//! of `n/2` axis-aligned boxes, each level's inner (intrados) face stepping `step` towards the
//! centre, the two crown blocks facing each other across `crown_gap`. Every joint is a horizontal
//! face-on-face contact (4 redundant corner contacts per pair, like the paper's redundant
//! contacts), each half stands by itself (validated: the centre of mass of every part above a
//! joint lies inside that joint's contact face, at least 10 % of its width from either edge) and
//! the crown contact is detected (gap below the margin) but carries nothing at rest. What remains
//! of the paper's test: 20 bodies of mass ratio 110/15 with off-centre (eccentric) loads on
//! redundant contacts, which a relaxation solver must carry without drift.
//!
//! # Scene
//!
//! * Level `k = 0 .. n/2 - 1` (0 = bottom): mass `m_k = mass_bottom + (mass_top − mass_bottom)
//!   k/(n/2 − 1)`, box of length `L_k = length_bottom m_k / mass_bottom` (x), `depth` (y),
//!   `height` (z), inner face at `|x| = crown_gap/2 + step (n/2 − 1 − k)`, centre height
//!   `z_k = height (k + 1/2)`, at rest. Blocks `0 .. n/2` are the right half (`x > 0`), the rest
//!   its mirror image. The ground half-space `z <= 0` is the static support.
//!
//! # Oracle checks
//!
//! Joint `j` (the ground for `j = 0`, else the face between levels `j − 1` and `j`, in each half)
//! carries `W_j = g sum_{k >= j} m_k`; its load factor is `L_j = (W_j / g)(1/m_{j−1} + 1/m_j)`
//! (`1/m_{−1} = 0`), as in `heavy_stack`.
//!
//! * `max_displacement` — `max_{k, i} |x_i(t_k) − x_i(0)|` over all blocks' centres (m);
//!   expected 0; tolerance `g dt² (PENETRATION_REL_TOL sum_j L_j + CREEP_REL_TOL N)`: the
//!   penetrations allowed at the joints below a block add up, and a sticking joint may creep at
//!   `CREEP_REL_TOL g dt` per step for the `N` steps (crate doc). At the defaults `6.6e-3 m` (3 % of a block height).
//! * `weight_ratio` — mean `StepMetrics.normal_impulse_total` over steps `N/2+1 .. N` divided by
//!   `2 dt sum_j W_j` (both halves); expected 1; tolerance `IMPULSE_REL_TOL`.

use crate::{check, default_struct, trace_is_whole, unmeasured, ContactModel};
use crate::{CREEP_REL_TOL, IMPULSE_REL_TOL, PENETRATION_REL_TOL};
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("arch.toml");
const SOURCE: &str = "cases/src/arch.toml";

/// Most blocks accepted.
pub const MAX_BLOCKS: i64 = 1000;
/// Smallest accepted distance of a part's centre of mass from the edges of the face that carries
/// it, as a fraction of the face's width.
pub const STABILITY_MARGIN: f64 = 0.1;

/// Parameters of the `arch` case (defaults in `cases/src/arch.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchParams {
    /// Number of blocks (even, 2 ..= `MAX_BLOCKS`).
    pub n: i64,
    /// Mass of a bottom block (kg, > 0).
    pub mass_bottom: f64,
    /// Mass of a crown block (kg, > 0).
    pub mass_top: f64,
    /// Length of a bottom block (m, > 0).
    pub length_bottom: f64,
    /// Block height (m, > 0).
    pub height: f64,
    /// Block depth (m, > 0).
    pub depth: f64,
    /// Inward step of the inner face per level (m, >= 0).
    pub step: f64,
    /// Gap between the crown blocks (m, >= 0, < margin).
    pub crown_gap: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for ArchParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for ArchParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(2..=MAX_BLOCKS).contains(&self.n) || self.n % 2 != 0 {
            return Err(harness::FieldError::new(
                "n",
                format!("must be even and in [2, {MAX_BLOCKS}], got {}", self.n),
            ));
        }
        for (name, v) in [
            ("mass_bottom", self.mass_bottom),
            ("mass_top", self.mass_top),
            ("length_bottom", self.length_bottom),
            ("height", self.height),
            ("depth", self.depth),
        ] {
            check::positive(name, v)?;
        }
        check::non_negative("step", self.step)?;
        check::non_negative("crown_gap", self.crown_gap)?;
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        if self.crown_gap >= self.margin {
            return Err(harness::FieldError::new(
                "crown_gap",
                format!("must be < margin ({}), got {}", self.margin, self.crown_gap),
            ));
        }
        let worst = self.stability();
        if worst < STABILITY_MARGIN {
            return Err(harness::FieldError::new(
                "step",
                format!(
                    "the corbelled halves are not safely stable (a centre of mass lies {worst:.3} of its \
                 face's width from an edge, need >= {STABILITY_MARGIN}); reduce step, got {}",
                    self.step
                ),
            ));
        }
        Ok(())
    }
}

impl ArchParams {
    /// Levels per half.
    pub fn levels(&self) -> usize {
        (self.n.max(2) / 2) as usize
    }
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Masses per level, from the bottom (kg).
    pub fn masses(&self) -> Vec<f64> {
        let l = self.levels();
        let d = if l > 1 { (l - 1) as f64 } else { 1.0 };
        (0..l).map(|k| self.mass_bottom + (self.mass_top - self.mass_bottom) * k as f64 / d).collect()
    }
    /// Block lengths per level (m).
    pub fn lengths(&self) -> Vec<f64> {
        self.masses().iter().map(|m| self.length_bottom * m / self.mass_bottom).collect()
    }
    /// Centre `x` of each level of the right half (m).
    pub fn centres_x(&self) -> Vec<f64> {
        let l = self.levels();
        self.lengths()
            .iter()
            .enumerate()
            .map(|(k, len)| 0.5 * self.crown_gap + self.step * (l - 1 - k) as f64 + 0.5 * len)
            .collect()
    }
    /// Smallest distance of a part's centre of mass from the edges of the face carrying it, as a
    /// fraction of that face's width (negative: the part topples), over the joints between levels.
    pub fn stability(&self) -> f64 {
        let (m, len, x) = (self.masses(), self.lengths(), self.centres_x());
        let mut worst = f64::INFINITY;
        for k in 1..m.len() {
            let mass: f64 = m[k..].iter().sum();
            let c = (k..m.len()).map(|i| m[i] * x[i]).sum::<f64>() / mass;
            let lo = (x[k - 1] - 0.5 * len[k - 1]).max(x[k] - 0.5 * len[k]);
            let hi = (x[k - 1] + 0.5 * len[k - 1]).min(x[k] + 0.5 * len[k]);
            if hi <= lo {
                return -1.0;
            }
            worst = worst.min((c - lo).min(hi - c) / (hi - lo));
        }
        worst
    }
    /// Loads `W_j = g sum_{k >= j} m_k` of one half (N).
    pub fn loads(&self) -> Vec<f64> {
        let m = self.masses();
        (0..m.len()).map(|j| self.gravity * m[j..].iter().sum::<f64>()).collect()
    }
    /// Tolerance of `max_displacement` for time step `dt` and `steps` steps (m).
    pub fn displacement_tolerance(&self, dt: f64, steps: usize) -> f64 {
        let m = self.masses();
        let factors: f64 = self
            .loads()
            .iter()
            .enumerate()
            .map(|(j, w)| w / self.gravity * (1.0 / m[j] + if j > 0 { 1.0 / m[j - 1] } else { 0.0 }))
            .sum();
        self.gravity * dt * dt * (PENETRATION_REL_TOL * factors + CREEP_REL_TOL * steps as f64)
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = ContactModel::Rigid.material(self.mu, 1.0, 0.0);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let (m, len, x) = (self.masses(), self.lengths(), self.centres_x());
        for (side, sign) in [("r", 1.0), ("l", -1.0)] {
            for k in 0..m.len() {
                let shape = Shape::Box { half_extents: [0.5 * len[k], 0.5 * self.depth, 0.5 * self.height] };
                let c = Vector3::new(sign * x[k], 0.0, self.height * (k as f64 + 0.5));
                w.bodies.push(RigidBody::new(format!("block_{side}{k}"), shape, m[k], c, material));
            }
        }
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let tol = self.displacement_tolerance(dt, n);
        if !trace_is_whole(scenario, trace) {
            return vec![unmeasured("max_displacement", 0.0, tol), unmeasured("weight_ratio", 1.0, IMPULSE_REL_TOL)];
        }
        let nb = scenario.world.bodies.len();
        let q0 = &trace.q[0];
        let mut disp = 0.0f64;
        for q in &trace.q {
            for i in 0..nb {
                let o = 7 * i;
                let d = Vector3::new(q[o] - q0[o], q[o + 1] - q0[o + 1], q[o + 2] - q0[o + 2]);
                disp = disp.max(if d.iter().all(|c| c.is_finite()) { d.norm() } else { f64::INFINITY });
            }
        }
        let k0 = n / 2;
        let impulse = trace.metrics[k0..].iter().map(|m| m.normal_impulse_total).sum::<f64>() / (n - k0) as f64;
        let ratio = impulse / (2.0 * dt * self.loads().iter().sum::<f64>());
        vec![
            OracleCheck::abs("max_displacement", disp, 0.0, tol),
            OracleCheck::abs("weight_ratio", ratio, 1.0, IMPULSE_REL_TOL),
        ]
    }
}

/// The `arch` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Arch;

impl CaseDef for Arch {
    type Params = ArchParams;
    const NAME: &'static str = "arch";
    const SUMMARY: &'static str =
        "corbelled arch of 20 boxes, 15 .. 110 kg, mu = 0.6 (Macklin Fig. 14, boxes for voussoirs): stands, weight carried";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &ArchParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: ContactModel::Rigid.needs() })
    }
    fn grade(&self, p: &ArchParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::StepMetrics;
    use harness::{Case, Params};
    use rstest::rstest;

    fn params(overrides: &[(&str, &str)]) -> Params {
        crate::test_util::params(&Arch, overrides)
    }

    #[test]
    fn defaults_match_the_paper_and_are_stable() {
        let p: ArchParams = Arch.defaults().decode("arch").unwrap();
        assert_eq!(p, ArchParams::default());
        let sc = crate::test_util::build(&Arch, &Arch.defaults()).unwrap();
        assert_eq!(sc.world.bodies.len(), 20);
        let m = p.masses();
        assert!((m[0] - 110.0).abs() < 1e-12 && (m[9] - 15.0).abs() < 1e-12, "{m:?}");
        assert!(p.stability() > 0.2, "{}", p.stability());
        let tol = p.displacement_tolerance(p.dt, p.steps());
        assert!(tol > 6e-3 && tol < 7e-3, "{tol}");
        // every joint is a face contact (4 corners), the crown contact detected but open
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), 2 * 4 * 10 + 4, "{}", cs.len());
        assert!(cs.contacts.iter().all(|c| c.gap.abs() < 1e-12 || (c.gap - p.crown_gap).abs() < 1e-12));
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&Arch);
    }

    #[rstest]
    #[case::odd("n", "7", "n:")]
    #[case::mass("mass_top", "0", "mass_top:")]
    #[case::height("height", "-1", "height:")]
    #[case::unstable("step", "0.1", "step:")]
    #[case::gap("crown_gap", "0.02", "crown_gap:")]
    #[case::mu("mu", "-1", "mu:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&Arch, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn resting_trace_passes_and_sagging_or_light_fails() {
        let prm = Arch.defaults();
        let p: ArchParams = prm.decode("arch").unwrap();
        let sc = crate::test_util::build(&Arch, &prm).unwrap();
        let (q, v) = (sc.world.positions(), sc.world.velocities());
        let total = 2.0 * sc.dt * p.loads().iter().sum::<f64>();
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            // the weight is averaged over the second half of the run only
            let normal_impulse_total = if k <= sc.steps / 2 { 0.0 } else { total };
            tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, normal_impulse_total, ..Default::default() });
        }
        let good = crate::test_util::oracle(&Arch, &prm, &sc, &tr);
        assert_eq!(crate::test_util::names(&good), ["max_displacement", "weight_ratio"]);
        assert!(good.iter().all(|c| c.pass), "{good:?}");
        assert_eq!(crate::test_util::check(&good, "max_displacement").measured, 0.0);
        assert!((crate::test_util::check(&good, "weight_ratio").measured - 1.0).abs() < 1e-12);
        // the same rest displaced as a whole sideways: the displacement is measured from q[0]
        let mut moved = tr.clone();
        moved.q.iter_mut().flat_map(|q| q.chunks_mut(7)).for_each(|b| b[1] += 0.3);
        assert_eq!(
            crate::test_util::check(&crate::test_util::oracle(&Arch, &prm, &sc, &moved), "max_displacement").measured,
            0.0
        );
        let mut bad = tr.clone();
        for (k, q) in bad.q.iter_mut().enumerate() {
            q[7 * 9 + 2] -= 1e-4 * k as f64;
        }
        for m in bad.metrics.iter_mut() {
            m.normal_impulse_total *= 0.99;
        }
        let c = crate::test_util::oracle(&Arch, &prm, &sc, &bad);
        assert_eq!(crate::test_util::names(&c), ["max_displacement", "weight_ratio"]);
        assert!(c.iter().all(|c| !c.pass));
        let sag = crate::test_util::check(&c, "max_displacement").measured;
        assert!((sag - 1e-4 * sc.steps as f64).abs() < 1e-12, "{sag}");
        assert!((crate::test_util::check(&c, "weight_ratio").measured - 0.99).abs() < 1e-12);
        bad.completed = false;
        assert!(crate::test_util::oracle(&Arch, &prm, &sc, &bad).iter().all(|c| c.measured.is_nan()));
    }

    /// `max_displacement`'s tolerance is its derivation, `g dt² (PENETRATION_REL_TOL Σ_j L_j +
    /// CREEP_REL_TOL N)`, here by hand on a two-level arch: masses 110 and 15 kg, so
    /// `L_0 = 125/110` (the ground joint carries both), `L_1 = 15 (1/15 + 1/110)` and
    /// `Σ_j L_j = 1 + 140/110 = 25/11`.
    #[test]
    fn displacement_tolerance_is_its_derivation() {
        let p = ArchParams { n: 4, ..ArchParams::default() };
        assert_eq!(p.masses(), [110.0, 15.0]);
        let (dt, steps) = (0.02, 50);
        let want = 9.81 * dt * dt * (PENETRATION_REL_TOL * 25.0 / 11.0 + CREEP_REL_TOL * 50.0);
        let got = p.displacement_tolerance(dt, steps);
        assert!((got - want).abs() < 1e-14 * want, "{got} vs {want}");
    }
}
