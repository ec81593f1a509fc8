//! One-dimensional root finding: `rtsafe` (Numerical Recipes §9.4), Newton–Raphson safeguarded by
//! bisection, for the exact line searches of Newton methods on convex objectives (the root of
//! `phi'(alpha)`, whose derivative `phi''` is available and positive).

/// Why [`rtsafe`] did not return a root.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum RootError {
    /// `f(lo)` and `f(hi)` have the same strict sign: no bracket.
    #[error("no sign change on [{lo}, {hi}]")]
    NotBracketed {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// A function value was NaN or infinite.
    #[error("non-finite function value at {at}")]
    NonFinite {
        /// Where.
        at: f64,
    },
}

/// The root of `f` in `[lo, hi]` with `f(lo) <= 0 <= f(hi)` (or the reverse), where `f(x)` returns
/// `(f, f')`. Newton steps are taken while they stay inside the current bracket and halve it at
/// least as fast as bisection would; otherwise the step bisects. Stops when `|f| <= ftol`, when the
/// step is below `xtol`, or after `max_iter` evaluations (returning the best iterate). Returns the
/// root and the number of evaluations.
pub fn rtsafe(
    mut f: impl FnMut(f64) -> (f64, f64),
    lo: f64,
    hi: f64,
    xtol: f64,
    ftol: f64,
    max_iter: usize,
) -> Result<(f64, usize), RootError> {
    let (fl, _) = f(lo);
    let (fh, _) = f(hi);
    if !fl.is_finite() {
        return Err(RootError::NonFinite { at: lo });
    }
    if !fh.is_finite() {
        return Err(RootError::NonFinite { at: hi });
    }
    if fl.abs() <= ftol {
        return Ok((lo, 2));
    }
    if fh.abs() <= ftol {
        return Ok((hi, 2));
    }
    if fl * fh > 0.0 {
        return Err(RootError::NotBracketed { lo, hi });
    }
    // orient so that f(xl) < 0 < f(xh)
    let (mut xl, mut xh) = if fl < 0.0 { (lo, hi) } else { (hi, lo) };
    let mut x = 0.5 * (lo + hi);
    let mut dx_old = (hi - lo).abs();
    let mut dx = dx_old;
    let (mut fx, mut dfx) = f(x);
    for it in 0..max_iter {
        if !fx.is_finite() {
            return Err(RootError::NonFinite { at: x });
        }
        if fx.abs() <= ftol {
            return Ok((x, it + 3));
        }
        let newton_out = ((x - xh) * dfx - fx) * ((x - xl) * dfx - fx) > 0.0;
        let too_slow = (2.0 * fx).abs() > (dx_old * dfx).abs();
        dx_old = dx;
        if newton_out || too_slow || dfx == 0.0 {
            dx = 0.5 * (xh - xl);
            x = xl + dx;
        } else {
            dx = fx / dfx;
            x -= dx;
        }
        if dx.abs() < xtol {
            return Ok((x, it + 3));
        }
        (fx, dfx) = f(x);
        if fx < 0.0 {
            xl = x;
        } else {
            xh = x;
        }
    }
    Ok((x, max_iter + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_roots_of_smooth_and_kinked_functions() {
        let (x, _) = rtsafe(|x| (x * x - 2.0, 2.0 * x), 0.0, 3.0, 1e-15, 0.0, 100).unwrap();
        assert!((x - 2f64.sqrt()).abs() < 1e-14);
        // a piecewise-linear derivative with a kink (the shape of phi' in a line search)
        let f = |x: f64| if x < 0.3 { (2.0 * x - 1.0, 2.0) } else { (5.0 * x - 1.9, 5.0) };
        let (x, _) = rtsafe(f, 0.0, 1.0, 1e-15, 1e-15, 100).unwrap();
        assert!((x - 0.38).abs() < 1e-13, "{x}");
        assert!(matches!(rtsafe(|x| (x + 1.0, 1.0), 0.0, 1.0, 1e-12, 0.0, 50), Err(RootError::NotBracketed { .. })));
    }
}
