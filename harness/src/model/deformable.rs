//! Deformable bodies: linear tetrahedral finite elements with lumped mass, three hyperelastic
//! materials and prescribed-motion (Dirichlet) boundary conditions on node sets.
//!
//! # Generalized coordinates
//! A deformable body contributes 3 velocity DOFs per node (`v` = node velocities, world frame)
//! and 3 position coordinates per node (`q` = node positions), in node order; its block in the
//! layout is [`super::BlockKind::Deformable`], after all rigid bodies.
//!
//! # Elasticity
//! Per tetrahedron `e` with rest edge matrix `D_m = [X1 − X0, X2 − X0, X3 − X0]` and rest volume
//! `V_e = |det D_m| / 6`, the deformation gradient is `F = D_s D_m⁻¹` (constant strain), and the
//! elastic energy is `U = Σ_e V_e Ψ(F_e)`. With the Lamé parameters `μ = E / (2(1 + ν))`,
//! `λ = E ν / ((1 + ν)(1 − 2ν))` and the polar decomposition `F = R S`:
//!
//! | [`ElasticModel`] | `Ψ(F)` | `P = ∂Ψ/∂F` |
//! |---|---|---|
//! | `arap` | `μ ‖F − R‖²` | `2μ (F − R)` |
//! | `co_rotational` | `μ ‖F − R‖² + λ/2 tr(Rᵀ F − I)²` | `2μ (F − R) + λ tr(S − I) R` |
//! | `stable_neo_hookean` | `C₁ (I_C − 3) + D₁ ((J − α)² − (1 − α)²)` (Macklin et al. 2019 Eq. 107) | `2C₁ F + 2D₁ (J − α) cof F` |
//!
//! with `I_C = ‖F‖²`, `J = det F`, `C₁ = μ/2`, `D₁ = λ/2`, `α = 1 + μ/λ` (zero stress at `F = I`;
//! Macklin App. B leaves this mapping open; its gradient prints `J − 1`, we use `J − α` consistently). The Hessian
//! `∂²Ψ/∂F²` is exact, including the rotation derivative `∂R/∂F` (from the SVD: with
//! `F = U Σ Vᵀ`, `M = Uᵀ δF V`, `δR = U Y Vᵀ`, `Y_ij = (M_ij − M_ji)/(σ_i + σ_j)`); Newton
//! solvers take the per-element PSD projection ([`DeformableBody::hessian_triplets`] with
//! `projected = true`).
//!
//! # Projective form (local-global solvers)
//! [`DeformableBody::projective_terms`] gives, per element, the constraint projections `P_k(F)`
//! and weights `w_k` of the projective-dynamics energy `Σ_k w_k/2 ‖F − P_k(F)‖²`: the nearest
//! rotation `R` with `w = 2μV_e` (ARAP exactly; the deviatoric part of the other two), and for
//! the co-rotational and Neo-Hookean models a volume term `U diag(σ / (σ₁σ₂σ₃)^{1/3}) Vᵀ` with
//! `w = λ V_e`. [`DeformableBody::gradient_operator`] is the constant `9 × 12` map
//! `vec(F) = G x_e` that assembles the global matrix `Σ w Gᵀ G`.
//!
//! # Boundary conditions
//! [`PrescribedMotion`] moves a node set rigidly: over a step of length `dt` each node goes to
//! `c + Rot(ω dt)(x − c) + v dt` (rotation about the fixed point `c`, then translation), which
//! is exact for any `dt` and needs no clock. Prescribed DOFs are listed by
//! [`crate::model::World::prescribed_velocities`]; solvers that handle deformable bodies must
//! give them exactly that end-of-step velocity.

use super::Material;
use nalgebra::{Matrix3, SMatrix, SVector, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

pub use api::eval::GradientOperator;
type Mat9 = SMatrix<f64, 9, 9>;
type Mat12 = SMatrix<f64, 12, 12>;
type Vec9 = SVector<f64, 9>;

/// Constitutive model of a deformable body (see the module doc for `Ψ`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElasticModel {
    /// Linear co-rotational elasticity.
    CoRotational,
    /// As-rigid-as-possible (`μ ‖F − R‖²`).
    Arap,
    /// Stable Neo-Hookean without the log term (Macklin et al. 2019 Eq. 107).
    StableNeoHookean,
}

impl ElasticModel {
    /// The accepted names (`"co_rotational"`, `"arap"`, `"stable_neo_hookean"`).
    pub const NAMES: [&'static str; 3] = ["co_rotational", "arap", "stable_neo_hookean"];
    /// Parses one of [`Self::NAMES`].
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "co_rotational" => Some(Self::CoRotational),
            "arap" => Some(Self::Arap),
            "stable_neo_hookean" => Some(Self::StableNeoHookean),
            _ => None,
        }
    }
}

/// Bulk material: model, Young's modulus `E` (Pa) and Poisson ratio `ν` (in (−1, 0.5)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ElasticMaterial {
    /// Constitutive model.
    pub model: ElasticModel,
    /// Young's modulus `E` (Pa, > 0).
    pub youngs_modulus: f64,
    /// Poisson ratio `ν` (dimensionless, in (−1, 0.5)).
    pub poisson_ratio: f64,
}

impl ElasticMaterial {
    /// Lamé parameters `(μ, λ)` (Pa).
    pub fn lame(&self) -> (f64, f64) {
        let (e, nu) = (self.youngs_modulus, self.poisson_ratio);
        (e / (2.0 * (1.0 + nu)), e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)))
    }

    /// Energy density `Ψ(F)` (J/m³).
    pub fn energy_density(&self, f: &Matrix3<f64>) -> f64 {
        let (mu, la) = self.lame();
        match self.model {
            ElasticModel::Arap => {
                let p = Polar::of(f);
                mu * (f - p.r).norm_squared()
            }
            ElasticModel::CoRotational => {
                let p = Polar::of(f);
                let t = (p.r.transpose() * f).trace() - 3.0;
                mu * (f - p.r).norm_squared() + 0.5 * la * t * t
            }
            ElasticModel::StableNeoHookean => {
                let (c1, d1, alpha) = snh_params(mu, la);
                // minus the rest value D₁(1 − α)², so that Ψ(I) = 0 (a constant shift)
                c1 * (f.norm_squared() - 3.0) + d1 * ((f.determinant() - alpha).powi(2) - (1.0 - alpha).powi(2))
            }
        }
    }

    /// First Piola–Kirchhoff stress `P = ∂Ψ/∂F` (Pa).
    pub fn stress(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        let (mu, la) = self.lame();
        match self.model {
            ElasticModel::Arap => 2.0 * mu * (f - Polar::of(f).r),
            ElasticModel::CoRotational => {
                let p = Polar::of(f);
                let t = (p.r.transpose() * f).trace() - 3.0;
                2.0 * mu * (f - p.r) + la * t * p.r
            }
            ElasticModel::StableNeoHookean => {
                let (c1, d1, alpha) = snh_params(mu, la);
                2.0 * c1 * f + 2.0 * d1 * (f.determinant() - alpha) * cofactor(f)
            }
        }
    }

    /// `∂²Ψ/∂F²` as a 9 × 9 matrix on `vec(F)` (column-major) (Pa).
    pub fn stress_derivative(&self, f: &Matrix3<f64>) -> Mat9 {
        let (mu, la) = self.lame();
        match self.model {
            ElasticModel::Arap => 2.0 * mu * (Mat9::identity() - Polar::of(f).derivative()),
            ElasticModel::CoRotational => {
                let p = Polar::of(f);
                let dr = p.derivative();
                let t = (p.r.transpose() * f).trace() - 3.0;
                let r = vec9(&p.r);
                2.0 * mu * (Mat9::identity() - dr) + la * r * r.transpose() + la * t * dr
            }
            ElasticModel::StableNeoHookean => {
                let (c1, d1, alpha) = snh_params(mu, la);
                let g = vec9(&cofactor(f));
                2.0 * c1 * Mat9::identity()
                    + 2.0 * d1 * g * g.transpose()
                    + 2.0 * d1 * (f.determinant() - alpha) * det_hessian(f)
            }
        }
    }
}

/// `(C₁, D₁, α)` of the Stable Neo-Hookean energy from the Lamé parameters (zero stress at `F = I`).
fn snh_params(mu: f64, la: f64) -> (f64, f64, f64) {
    (0.5 * mu, 0.5 * la, 1.0 + mu / la)
}

/// Column-major `vec(A)`.
fn vec9(a: &Matrix3<f64>) -> Vec9 {
    Vec9::from_column_slice(a.as_slice())
}

/// `cof F = ∂ det F / ∂F = [f1 × f2, f2 × f0, f0 × f1]` (columns `f_i` of `F`).
fn cofactor(f: &Matrix3<f64>) -> Matrix3<f64> {
    let (f0, f1, f2) = (f.column(0).into_owned(), f.column(1).into_owned(), f.column(2).into_owned());
    Matrix3::from_columns(&[f1.cross(&f2), f2.cross(&f0), f0.cross(&f1)])
}

/// `∂² det F / ∂F²` on `vec(F)`: block `(i, j)` is `∂(cof F)_i / ∂f_j`.
fn det_hessian(f: &Matrix3<f64>) -> Mat9 {
    let c = |i: usize| f.column(i).into_owned().cross_matrix();
    let mut h = Mat9::zeros();
    // d(f1 x f2) = -[f2]x df1 + [f1]x df2, etc.
    let blocks = [(0, 1, -c(2)), (0, 2, c(1)), (1, 0, c(2)), (1, 2, -c(0)), (2, 0, -c(1)), (2, 1, c(0))];
    for (i, j, b) in blocks {
        h.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(&b);
    }
    h
}

/// Polar decomposition `F = R S` through a rotation-variant SVD `F = U Σ Vᵀ` (`det U = det V = 1`;
/// an inversion shows as a negative smallest singular value).
struct Polar {
    u: Matrix3<f64>,
    s: Vector3<f64>,
    v: Matrix3<f64>,
    r: Matrix3<f64>,
}

impl Polar {
    fn of(f: &Matrix3<f64>) -> Self {
        let svd = f.svd(true, true);
        let (mut u, mut s, mut vt) = (svd.u.unwrap_or_default(), svd.singular_values, svd.v_t.unwrap_or_default());
        // sort descending is nalgebra's convention; fix reflections on the smallest value
        let k = s.imin();
        if u.determinant() < 0.0 {
            u.column_mut(k).neg_mut();
            s[k] = -s[k];
        }
        if vt.determinant() < 0.0 {
            vt.row_mut(k).neg_mut();
            s[k] = -s[k];
        }
        let v = vt.transpose();
        Polar { r: u * vt, u, s, v }
    }

    /// `∂R/∂F` on `vec(F)` (9 × 9).
    fn derivative(&self) -> Mat9 {
        let mut d = Mat9::zeros();
        for col in 0..9 {
            let mut df = Matrix3::zeros();
            df[(col % 3, col / 3)] = 1.0;
            let m = self.u.transpose() * df * self.v;
            let mut y = Matrix3::zeros();
            for i in 0..3 {
                for j in 0..3 {
                    if i != j {
                        let den = self.s[i] + self.s[j];
                        let den = if den.abs() < 1e-12 { 1e-12f64.copysign(den) } else { den };
                        y[(i, j)] = (m[(i, j)] - m[(j, i)]) / den;
                    }
                }
            }
            let dr = self.u * y * self.v.transpose();
            d.set_column(col, &vec9(&dr));
        }
        d
    }
}

/// Prescribed rigid motion of a node set (a Dirichlet condition on positions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrescribedMotion {
    /// Node indices it applies to.
    pub nodes: Vec<usize>,
    /// Fixed rotation centre `c` (m).
    pub center: Vector3<f64>,
    /// Angular velocity `ω` about `c` (rad/s, world frame).
    pub angular_velocity: Vector3<f64>,
    /// Translation velocity `v` (m/s).
    pub linear_velocity: Vector3<f64>,
}

impl PrescribedMotion {
    /// Nodes held fixed.
    pub fn fixed(nodes: Vec<usize>) -> Self {
        Self { nodes, center: Vector3::zeros(), angular_velocity: Vector3::zeros(), linear_velocity: Vector3::zeros() }
    }

    /// Where a node now at `x` is after `dt`: `c + Rot(ω dt)(x − c) + v dt`.
    pub fn target(&self, x: &Vector3<f64>, dt: f64) -> Vector3<f64> {
        let rot = UnitQuaternion::from_scaled_axis(self.angular_velocity * dt);
        self.center + rot * (x - self.center) + self.linear_velocity * dt
    }
}

/// A deformable body meshed with linear tetrahedra.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeformableBody {
    /// Name for reports.
    pub name: String,
    /// Rest positions of the nodes (m).
    pub rest: Vec<Vector3<f64>>,
    /// Current node positions (m).
    pub positions: Vec<Vector3<f64>>,
    /// Current node velocities (m/s).
    pub velocities: Vec<Vector3<f64>>,
    /// Tetrahedra (node indices, positive rest orientation).
    pub tets: Vec<[usize; 4]>,
    /// Mass density (kg/m³).
    pub density: f64,
    /// Bulk material.
    pub elastic: ElasticMaterial,
    /// Surface material (friction, contact model) of every node.
    pub material: Material,
    /// Prescribed-motion boundary conditions (a node in at most one).
    #[serde(default)]
    pub boundary: Vec<PrescribedMotion>,
    /// Nodes on the boundary surface (the only ones tested for contact).
    #[serde(default)]
    pub surface_nodes: Vec<usize>,
}

impl DeformableBody {
    /// A box `[0, size]` (then translated by `origin`) cut into `cells` cubes, each split into 6
    /// tetrahedra along its main diagonal (Kuhn/Freudenthal split: conforming across cubes).
    /// A bar is a long box, a plate a box with one cell across its thickness.
    pub fn box_mesh(
        name: impl Into<String>,
        origin: Vector3<f64>,
        size: Vector3<f64>,
        cells: [usize; 3],
        density: f64,
        elastic: ElasticMaterial,
        material: Material,
    ) -> Self {
        let [nx, ny, nz] = cells.map(|c| c.max(1));
        let id = |i: usize, j: usize, k: usize| i + (nx + 1) * (j + (ny + 1) * k);
        let mut rest = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
        let mut surface_nodes = Vec::new();
        for k in 0..=nz {
            for j in 0..=ny {
                for i in 0..=nx {
                    let p = Vector3::new(
                        size.x * i as f64 / nx as f64,
                        size.y * j as f64 / ny as f64,
                        size.z * k as f64 / nz as f64,
                    );
                    if i == 0 || j == 0 || k == 0 || i == nx || j == ny || k == nz {
                        surface_nodes.push(rest.len());
                    }
                    rest.push(origin + p);
                }
            }
        }
        const PERMS: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let mut tets = Vec::with_capacity(6 * nx * ny * nz);
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    for perm in PERMS {
                        let mut c = [i, j, k];
                        let mut t = [id(i, j, k), 0, 0, 0];
                        for (s, &axis) in perm.iter().enumerate() {
                            c[axis] += 1;
                            t[s + 1] = id(c[0], c[1], c[2]);
                        }
                        let d = Matrix3::from_columns(&[
                            rest[t[1]] - rest[t[0]],
                            rest[t[2]] - rest[t[0]],
                            rest[t[3]] - rest[t[0]],
                        ]);
                        if d.determinant() < 0.0 {
                            t.swap(2, 3);
                        }
                        tets.push(t);
                    }
                }
            }
        }
        let n = rest.len();
        Self {
            name: name.into(),
            positions: rest.clone(),
            rest,
            velocities: vec![Vector3::zeros(); n],
            tets,
            density,
            elastic,
            material,
            boundary: vec![],
            surface_nodes,
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.rest.len()
    }

    /// `D_m⁻¹` and rest volume of tetrahedron `e`.
    fn rest_shape(&self, e: usize) -> (Matrix3<f64>, f64) {
        let t = self.tets[e];
        let x = |a: usize| self.rest[t[a]];
        let dm = Matrix3::from_columns(&[x(1) - x(0), x(2) - x(0), x(3) - x(0)]);
        let vol = dm.determinant().abs() / 6.0;
        (dm.try_inverse().unwrap_or_else(Matrix3::zeros), vol)
    }

    /// Rest volume of tetrahedron `e` (m³).
    pub fn rest_volume(&self, e: usize) -> f64 {
        self.rest_shape(e).1
    }

    /// The constant map `vec(F_e) = G x_e` of tetrahedron `e` (`x_e` = its 4 node positions,
    /// stacked): `F = Σ_a x_a b_aᵀ` with `b_a` the rows of `D_m⁻¹` and `b_0 = −b_1 − b_2 − b_3`.
    pub fn gradient_operator(&self, e: usize) -> GradientOperator {
        let (dmi, _) = self.rest_shape(e);
        let b = |a: usize| -> Vector3<f64> {
            if a == 0 {
                -(dmi.row(0) + dmi.row(1) + dmi.row(2)).transpose()
            } else {
                dmi.row(a - 1).transpose()
            }
        };
        let mut g = GradientOperator::zeros();
        for a in 0..4 {
            let ba = b(a);
            for i in 0..3 {
                for j in 0..3 {
                    g[(i + 3 * j, 3 * a + i)] = ba[j];
                }
            }
        }
        g
    }

    /// Deformation gradient `F_e = D_s D_m⁻¹` at the current positions.
    pub fn deformation_gradient(&self, e: usize) -> Matrix3<f64> {
        let t = self.tets[e];
        let x = |a: usize| self.positions[t[a]];
        let ds = Matrix3::from_columns(&[x(1) - x(0), x(2) - x(0), x(3) - x(0)]);
        ds * self.rest_shape(e).0
    }

    /// Lumped node masses: each tetrahedron gives `ρ V_e / 4` to each of its nodes (kg).
    pub fn node_masses(&self) -> Vec<f64> {
        let mut m = vec![0.0; self.num_nodes()];
        for (e, t) in self.tets.iter().enumerate() {
            let share = self.density * self.rest_volume(e) / 4.0;
            for &a in t {
                m[a] += share;
            }
        }
        m
    }

    /// Total mass (kg).
    pub fn total_mass(&self) -> f64 {
        self.node_masses().iter().sum()
    }

    /// Elastic energy `U = Σ_e V_e Ψ(F_e)` (J).
    pub fn elastic_energy(&self) -> f64 {
        (0..self.tets.len())
            .map(|e| self.rest_volume(e) * self.elastic.energy_density(&self.deformation_gradient(e)))
            .sum()
    }

    /// `∂U/∂x`, 3 entries per node (N; the elastic force is its negative).
    pub fn elastic_gradient(&self) -> Vec<f64> {
        let mut g = vec![0.0; 3 * self.num_nodes()];
        for (e, t) in self.tets.iter().enumerate() {
            let ge = self.gradient_operator(e);
            let p = vec9(&self.elastic.stress(&self.deformation_gradient(e)));
            let fe = self.rest_volume(e) * ge.transpose() * p;
            for (a, &node) in t.iter().enumerate() {
                for i in 0..3 {
                    g[3 * node + i] += fe[3 * a + i];
                }
            }
        }
        g
    }

    /// Triplets `(row, col, value)` of `∂²U/∂x²` (N/m), node DOFs shifted by `offset`. With
    /// `projected`, each element's 12 × 12 block has its negative eigenvalues clamped to zero,
    /// which makes the sum positive semi-definite (what a Newton solver needs).
    pub fn hessian_triplets(&self, offset: usize, projected: bool, out: &mut Vec<(usize, usize, f64)>) {
        for (e, t) in self.tets.iter().enumerate() {
            let ge = self.gradient_operator(e);
            let mut he: Mat12 = self.rest_volume(e)
                * ge.transpose()
                * self.elastic.stress_derivative(&self.deformation_gradient(e))
                * ge;
            he = 0.5 * (he + he.transpose());
            if projected {
                let eig = he.symmetric_eigen();
                let d = eig.eigenvalues.map(|l| l.max(0.0));
                he = eig.eigenvectors * Mat12::from_diagonal(&d) * eig.eigenvectors.transpose();
            }
            for (a, &na) in t.iter().enumerate() {
                for (b, &nb) in t.iter().enumerate() {
                    for i in 0..3 {
                        for j in 0..3 {
                            out.push((offset + 3 * na + i, offset + 3 * nb + j, he[(3 * a + i, 3 * b + j)]));
                        }
                    }
                }
            }
        }
    }

    /// The projective form of element `e` at the current positions: `(w_k, P_k(F))` pairs (see
    /// the module doc), energy `Σ_k w_k/2 ‖F − P_k(F)‖²`.
    pub fn projective_terms(&self, e: usize) -> Vec<(f64, Matrix3<f64>)> {
        self.projective_terms_at(e, &self.deformation_gradient(e))
    }

    /// [`Self::projective_terms`] of element `e` at a given deformation gradient `f` (a local-global
    /// solver's local step at an iterate that is not the body's current state).
    pub fn projective_terms_at(&self, e: usize, f: &Matrix3<f64>) -> Vec<(f64, Matrix3<f64>)> {
        let (mu, la) = self.elastic.lame();
        let vol = self.rest_volume(e);
        let p = Polar::of(f);
        let mut out = vec![(2.0 * mu * vol, p.r)];
        if self.elastic.model != ElasticModel::Arap {
            let det = p.s.x * p.s.y * p.s.z;
            let scale = if det > 0.0 { det.cbrt().recip() } else { 1.0 };
            let target = p.u * Matrix3::from_diagonal(&(p.s * scale)) * p.v.transpose();
            out.push((la * vol, target));
        }
        out
    }

    /// Kinetic energy `Σ 1/2 m_a |v_a|²` (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.node_masses().iter().zip(&self.velocities).map(|(m, v)| 0.5 * m * v.norm_squared()).sum()
    }

    /// Linear momentum `Σ m_a v_a` (kg m/s).
    pub fn linear_momentum(&self) -> Vector3<f64> {
        self.node_masses().iter().zip(&self.velocities).map(|(m, v)| *m * v).sum()
    }

    /// Angular momentum about the origin `Σ x_a × m_a v_a` (kg m²/s).
    pub fn angular_momentum(&self) -> Vector3<f64> {
        self.node_masses()
            .iter()
            .zip(self.positions.iter().zip(&self.velocities))
            .map(|(m, (x, v))| x.cross(&(*m * v)))
            .sum()
    }

    /// Gravitational energy `−Σ m_a g · x_a` (J).
    pub fn gravity_energy(&self, g: &Vector3<f64>) -> f64 {
        self.node_masses().iter().zip(&self.positions).map(|(m, x)| -m * g.dot(x)).sum()
    }

    /// Checks sizes, indices, finiteness and ranges; the error names the problem.
    pub fn validate(&self) -> Result<(), DeformableError> {
        let n = self.num_nodes();
        if self.positions.len() != n || self.velocities.len() != n {
            return Err(DeformableError::StateLength { nodes: n });
        }
        let finite = |v: &[Vector3<f64>]| v.iter().all(|x| x.iter().all(|c| c.is_finite()));
        if !finite(&self.rest) || !finite(&self.positions) || !finite(&self.velocities) {
            return Err(DeformableError::StateNotFinite);
        }
        if !(self.density.is_finite() && self.density > 0.0) {
            return Err(DeformableError::Density { value: self.density });
        }
        let (e, nu) = (self.elastic.youngs_modulus, self.elastic.poisson_ratio);
        if !(e.is_finite() && e > 0.0) {
            return Err(DeformableError::YoungsModulus { value: e });
        }
        if !(nu > -1.0 && nu < 0.5) {
            return Err(DeformableError::PoissonRatio { value: nu });
        }
        if self.tets.is_empty() {
            return Err(DeformableError::NoTetrahedra);
        }
        for (k, t) in self.tets.iter().enumerate() {
            if t.iter().any(|&a| a >= n) {
                return Err(DeformableError::TetrahedronNode { tetrahedron: k, nodes: n });
            }
            if self.rest_volume(k) <= 0.0 {
                return Err(DeformableError::ZeroVolume { tetrahedron: k });
            }
        }
        let mut seen = vec![false; n];
        for b in &self.boundary {
            for &a in &b.nodes {
                if a >= n {
                    return Err(DeformableError::BoundaryNode { node: a, nodes: n });
                }
                if std::mem::replace(&mut seen[a], true) {
                    return Err(DeformableError::TwoBoundaryConditions { node: a });
                }
            }
        }
        if self.surface_nodes.iter().any(|&a| a >= n) {
            return Err(DeformableError::SurfaceNode);
        }
        Ok(())
    }
}

/// A malformed deformable body, found by [`DeformableBody::validate`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeformableError {
    /// The positions or velocities are not one per node.
    #[error("positions/velocities must have {nodes} entries")]
    StateLength {
        /// The number of nodes.
        nodes: usize,
    },
    /// A rest position, position or velocity is not finite.
    #[error("node state not finite")]
    StateNotFinite,
    /// The density is not finite and positive.
    #[error("density must be > 0, got {value}")]
    Density {
        /// The density given (kg/m³).
        value: f64,
    },
    /// Young's modulus is not finite and positive.
    #[error("Young's modulus must be > 0, got {value}")]
    YoungsModulus {
        /// The modulus given (Pa).
        value: f64,
    },
    /// The Poisson ratio is outside `(-1, 0.5)`.
    #[error("Poisson ratio must be in (-1, 0.5), got {value}")]
    PoissonRatio {
        /// The ratio given.
        value: f64,
    },
    /// The mesh has no tetrahedron.
    #[error("no tetrahedra")]
    NoTetrahedra,
    /// A tetrahedron refers to a node that does not exist.
    #[error("tetrahedron {tetrahedron} refers to a node >= {nodes}")]
    TetrahedronNode {
        /// The tetrahedron's index.
        tetrahedron: usize,
        /// The number of nodes.
        nodes: usize,
    },
    /// A tetrahedron has no positive rest volume.
    #[error("tetrahedron {tetrahedron} has zero rest volume")]
    ZeroVolume {
        /// The tetrahedron's index.
        tetrahedron: usize,
    },
    /// A boundary condition names a node that does not exist.
    #[error("boundary node {node} >= {nodes}")]
    BoundaryNode {
        /// The node given.
        node: usize,
        /// The number of nodes.
        nodes: usize,
    },
    /// A node is in two boundary conditions.
    #[error("node {node} is in two boundary conditions")]
    TwoBoundaryConditions {
        /// The node.
        node: usize,
    },
    /// A surface node does not exist.
    #[error("surface node out of range")]
    SurfaceNode,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(model: ElasticModel) -> ElasticMaterial {
        ElasticMaterial { model, youngs_modulus: 1e5, poisson_ratio: 0.3 }
    }

    fn deformed(model: ElasticModel) -> DeformableBody {
        let mut b = DeformableBody::box_mesh(
            "b",
            Vector3::zeros(),
            Vector3::new(1.0, 0.5, 0.5),
            [2, 1, 1],
            1000.0,
            mat(model),
            Material::rigid(0.5),
        );
        for (a, x) in b.positions.iter_mut().enumerate() {
            let s = a as f64;
            *x += Vector3::new(0.05 * (1.3 * s).sin(), 0.04 * (0.7 * s).cos(), 0.03 * (2.1 * s).sin());
            // plus a large rotation, so R matters
            *x = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.5, 0.8)) * *x;
        }
        b
    }

    #[test]
    fn mesh_volume_and_mass_are_exact() {
        let b = DeformableBody::box_mesh(
            "b",
            Vector3::zeros(),
            Vector3::new(2.0, 1.0, 0.5),
            [4, 2, 1],
            1000.0,
            mat(ElasticModel::Arap),
            Material::rigid(0.5),
        );
        assert_eq!(b.tets.len(), 6 * 8);
        let vol: f64 = (0..b.tets.len()).map(|e| b.rest_volume(e)).sum();
        assert!((vol - 1.0).abs() < 1e-12);
        assert!((b.total_mass() - 1000.0).abs() < 1e-9);
        assert!(b.validate().is_ok());
        // every node of a 5x3x2 grid is on the surface
        assert_eq!(b.surface_nodes.len(), b.num_nodes());
    }

    #[test]
    fn rest_state_has_zero_energy_and_stress() {
        for model in [ElasticModel::CoRotational, ElasticModel::Arap, ElasticModel::StableNeoHookean] {
            let m = mat(model);
            let rot = *UnitQuaternion::from_scaled_axis(Vector3::new(0.2, 0.4, -0.1)).to_rotation_matrix().matrix();
            assert!(m.energy_density(&rot).abs() < 1e-9, "{model:?}");
            assert!(m.stress(&rot).norm() < 1e-9, "{model:?}");
        }
    }

    /// Central differences: truncation O(h²) with h = 1e-6 relative, round-off ~1e-16 · E / h, so
    /// the relative tolerance is 1e-6.
    #[test]
    fn energy_gradient_hessian_match_finite_differences() {
        for model in [ElasticModel::CoRotational, ElasticModel::Arap, ElasticModel::StableNeoHookean] {
            let b = deformed(model);
            let g = b.elastic_gradient();
            let mut t = Vec::new();
            b.hessian_triplets(0, false, &mut t);
            let n = 3 * b.num_nodes();
            let mut h = vec![vec![0.0; n]; n];
            for (r, c, v) in t {
                h[r][c] += v;
            }
            let step = 1e-6;
            let gscale = g.iter().map(|x| x.abs()).fold(0.0, f64::max);
            let hscale = h.iter().flatten().map(|x| x.abs()).fold(0.0, f64::max);
            for k in 0..n {
                let mut bp = b.clone();
                bp.positions[k / 3][k % 3] += step;
                let mut bm = b.clone();
                bm.positions[k / 3][k % 3] -= step;
                let de = (bp.elastic_energy() - bm.elastic_energy()) / (2.0 * step);
                assert!((de - g[k]).abs() < 1e-6 * gscale, "{model:?} gradient {k}: {de} vs {}", g[k]);
                let (gp, gm) = (bp.elastic_gradient(), bm.elastic_gradient());
                for r in 0..n {
                    let dg = (gp[r] - gm[r]) / (2.0 * step);
                    assert!((dg - h[r][k]).abs() < 1e-5 * hscale, "{model:?} H[{r},{k}]: {dg} vs {}", h[r][k]);
                }
            }
        }
    }

    #[test]
    fn projected_hessian_is_psd_and_projective_terms_vanish_at_rest() {
        let b = deformed(ElasticModel::StableNeoHookean);
        let mut t = Vec::new();
        b.hessian_triplets(0, true, &mut t);
        let n = 3 * b.num_nodes();
        let mut h = nalgebra::DMatrix::<f64>::zeros(n, n);
        for (r, c, v) in t {
            h[(r, c)] += v;
        }
        let hn = h.norm();
        let min = h.symmetric_eigen().eigenvalues.min();
        assert!(min > -1e-9 * hn, "min eigenvalue {min}");
        let rest = DeformableBody { positions: b.rest.clone(), ..b.clone() };
        for e in 0..rest.tets.len() {
            for (w, p) in rest.projective_terms(e) {
                assert!(w > 0.0);
                assert!((rest.deformation_gradient(e) - p).norm() < 1e-12);
            }
        }
    }

    #[test]
    fn prescribed_rotation_is_exact() {
        let m = PrescribedMotion {
            nodes: vec![0],
            center: Vector3::new(1.0, 0.0, 0.0),
            angular_velocity: Vector3::new(std::f64::consts::PI, 0.0, 0.0),
            linear_velocity: Vector3::zeros(),
        };
        let x = m.target(&Vector3::new(1.0, 1.0, 0.0), 0.5);
        assert!((x - Vector3::new(1.0, 0.0, 1.0)).norm() < 1e-15);
    }
}
