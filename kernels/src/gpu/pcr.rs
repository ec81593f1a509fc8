//! The device-resident constraint solve of Zeng et al.: Jacobi-preconditioned CR on
//! `(Ω W Ω + E) x = b` with every vector on the device, run by the one PCR loop of the crate
//! ([`pcr_loop`]) over the device's [`VectorOps`](crate::backend::VectorOps): the same
//! recurrences, in the same order, as the host PCR (only the reductions sum in a different
//! order on the device). Inside the loop only the scalars of the recurrences come back to the
//! host ([`Device::transfers`] counts them apart from vector copies).

use super::device::Device;
use super::memory::{DBuf, DeviceDelassus};
use super::Real;
use crate::iterative::pcr::{pcr_loop, PcrInfo, PcrParams, PcrVectors};
use crate::iterative::KrylovError;

impl<T: Real> Device<T> {
    /// Jacobi-preconditioned CR on `(Ω W Ω + E) x = b` with every vector on the device. `x`
    /// holds the initial guess and receives the solution (the last good iterate on a breakdown).
    #[allow(clippy::too_many_arguments)]
    pub fn pcr_scaled_delassus(
        &self,
        w: &DeviceDelassus<T>,
        omega: &DBuf<T>,
        e: &DBuf<T>,
        pinv: &DBuf<T>,
        b: &DBuf<T>,
        x: &mut DBuf<T>,
        params: &PcrParams,
    ) -> Result<PcrInfo, KrylovError> {
        let n = w.dim();
        let (mut t1, mut t2) = (self.zeros(n), self.zeros(n));
        let [mut r, mut z, mut p, mut az, mut ap, mut pap] = std::array::from_fn(|_| self.zeros(n));
        let vectors = PcrVectors { r: &mut r, z: &mut z, p: &mut p, az: &mut az, ap: &mut ap, pap: &mut pap };
        let apply = |x: &DBuf<T>, y: &mut DBuf<T>| self.apply_scaled_delassus(w, omega, e, x, &mut t1, &mut t2, y);
        pcr_loop(self, apply, pinv, b, x, vectors, params)
    }
}
