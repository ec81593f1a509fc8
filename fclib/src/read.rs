//! Reading FCLIB HDF5 files (triplet, CSC and CSR matrix storage; layout in the crate doc). Every
//! error names the file and the field.

use crate::error::{hdf5_err, FclibError};
use crate::matrix::{Csc, CscOps};
use crate::problem::{FclibProblem, Form, GlobalProblem, Info, LocalProblem, Solution};
use hdf5_pure::File;
use std::path::Path;

struct Reader<'a> {
    path: &'a Path,
    file: File,
}

impl<'a> Reader<'a> {
    /// The HDF5 file at `path`, read through the bounded reader (errors name the file).
    fn open(path: &'a Path) -> Result<Self, FclibError> {
        let bytes = records::input::read_bytes(path, records::input::binary_limit()).map_err(|e| {
            let (e, prefix) = (e.to_string(), format!("{}: ", path.display()));
            hdf5_err(path, "/", e.strip_prefix(&prefix).unwrap_or(&e))
        })?;
        let file =
            File::from_bytes(bytes).map_err(|e| hdf5_err(path, "/", format!("not a readable HDF5 file ({e})")))?;
        Ok(Reader { path, file })
    }
}

impl Reader<'_> {
    /// An error at `field` (an HDF5 path, shown absolute).
    fn err(&self, field: &str, why: impl std::fmt::Display) -> FclibError {
        if field.starts_with('/') {
            hdf5_err(self.path, field, why)
        } else {
            hdf5_err(self.path, &format!("/{field}"), why)
        }
    }
    fn exists(&self, field: &str) -> bool {
        self.file.dataset(field).is_ok() || self.file.group(field).is_ok()
    }
    fn f64s(&self, field: &str) -> Result<Vec<f64>, FclibError> {
        let ds = self.file.dataset(field).map_err(|e| self.err(field, format!("missing or unreadable ({e})")))?;
        let x = ds.read_f64().map_err(|e| self.err(field, format!("not readable as f64 ({e})")))?;
        if let Some((k, v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(self.err(field, format!("entry {k} is not finite ({v})")));
        }
        Ok(x)
    }
    /// An integer dataset. Integers some writer stored as floats are read as the numbers they are
    /// (`read_i64` reinterprets a float's bits: 3.0 read as 4613937818241073152); a float that
    /// is not a whole number, or a type that is not numeric, is refused naming the stored type.
    fn ints(&self, field: &str) -> Result<Vec<i64>, FclibError> {
        use hdf5_pure::DType;
        let ds = self.file.dataset(field).map_err(|e| self.err(field, format!("missing or unreadable ({e})")))?;
        let dtype = ds.dtype().map_err(|e| self.err(field, format!("unreadable type ({e})")))?;
        if matches!(dtype, DType::F32 | DType::F64) {
            let x = ds.read_f64().map_err(|e| self.err(field, format!("not readable ({dtype}: {e})")))?;
            // 2^53: every whole number up to it is exact in f64 and fits i64
            let exact = |v: f64| v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0;
            return match x.iter().enumerate().find(|(_, v)| !exact(**v)) {
                Some((k, v)) => Err(self.err(field, format!("stored as {dtype}, entry {k} ({v}) is not an integer"))),
                None => Ok(x.into_iter().map(|v| v as i64).collect()),
            };
        }
        ds.read_i64().map_err(|e| self.err(field, format!("not readable as integers (stored as {dtype}: {e})")))
    }
    fn int(&self, field: &str) -> Result<i64, FclibError> {
        let v = self.ints(field)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(field, format!("expected one integer, found {}", v.len()))),
        }
    }
    fn string(&self, field: &str) -> String {
        self.file
            .dataset(field)
            .and_then(|d| d.read_string())
            .ok()
            .and_then(|v| v.into_iter().next())
            .unwrap_or_default()
    }
    fn index(&self, field: &str, x: i64, bound: usize) -> Result<usize, FclibError> {
        usize::try_from(x)
            .ok()
            .filter(|&v| v < bound)
            .ok_or_else(|| self.err(field, format!("index {x} outside 0..{bound}")))
    }

    /// A CSparse matrix group, as CSC. `expected` is its number of rows and of columns, each with
    /// the stored vector that fixes it: a declared size that differs is refused before anything is
    /// allocated (a corrupted dimension field must not allocate gigabytes).
    fn matrix(&self, g: &str, expected: [(usize, String); 2]) -> Result<Csc, FclibError> {
        let f = |s: &str| format!("{g}/{s}");
        let dim = |s: &str| -> Result<usize, FclibError> {
            let v = self.int(&f(s))?;
            usize::try_from(v).map_err(|_| self.err(&f(s), format!("negative dimension {v}")))
        };
        let (m, n, nzmax) = (dim("m")?, dim("n")?, dim("nzmax")?);
        for ((field, what, got), (want, why)) in [("m", "rows", m), ("n", "columns", n)].into_iter().zip(expected) {
            if got != want {
                return Err(self.err(&f(field), format!("{got} {what}, expected {want} ({why})")));
            }
        }
        let nz = self.int(&f("nz"))?;
        let (p, i, x) = (self.ints(&f("p"))?, self.ints(&f("i"))?, self.f64s(&f("x"))?);
        let mut t = vec![];
        match nz {
            nz if nz >= 0 => {
                let nz = nz as usize;
                for (name, len) in [("p", p.len()), ("i", i.len()), ("x", x.len())] {
                    if len < nz {
                        return Err(self.err(&f(name), format!("{len} entries for nz = {nz} triplets")));
                    }
                }
                for k in 0..nz {
                    t.push((self.index(&f("i"), i[k], m)?, self.index(&f("p"), p[k], n)?, x[k]));
                }
            }
            -1 | -2 => {
                let (outer, inner) = if nz == -1 { (n, m) } else { (m, n) };
                if p.len() != outer + 1 {
                    return Err(self.err(&f("p"), format!("{} pointers, expected {}", p.len(), outer + 1)));
                }
                let end = p[outer];
                if end < 0 || end as usize > nzmax.min(i.len()).min(x.len()) || p.windows(2).any(|w| w[1] < w[0]) {
                    return Err(self.err(
                        &f("p"),
                        format!("pointers not non-decreasing within nzmax = {nzmax} (i: {}, x: {})", i.len(), x.len()),
                    ));
                }
                for o in 0..outer {
                    for k in p[o] as usize..p[o + 1] as usize {
                        let j = self.index(&f("i"), i[k], inner)?;
                        t.push(if nz == -1 { (j, o, x[k]) } else { (o, j, x[k]) });
                    }
                }
            }
            other => return Err(self.err(&f("nz"), format!("unknown storage {other} (>= 0 triplet, -1 CSC, -2 CSR)"))),
        }
        Ok(Csc::from_triplets(m, n, &t))
    }

    fn solution(&self, g: &str) -> Result<Solution, FclibError> {
        let opt = |s: &str| -> Result<Vec<f64>, FclibError> {
            let f = format!("{g}/{s}");
            if self.file.dataset(&f).is_ok() {
                self.f64s(&f)
            } else {
                Ok(vec![])
            }
        };
        Ok(Solution { v: opt("v")?, u: opt("u")?, r: opt("r")? })
    }
}

/// Finest contiguous block-diagonal split of `m` (square), or `None` if a nonzero lies below the
/// diagonal outside any contiguous block.
fn finest_blocks(m: &Csc) -> Vec<usize> {
    let n = m.cols();
    let mut reach = vec![0usize; n];
    for (r, c, _) in m.triplets() {
        let (lo, hi) = (r.min(c), r.max(c));
        reach[lo] = reach[lo].max(hi);
    }
    let (mut sizes, mut start, mut end) = (vec![], 0usize, 0usize);
    for (j, &rj) in reach.iter().enumerate() {
        end = end.max(j).max(rj);
        if j == end {
            sizes.push(end + 1 - start);
            start = end + 1;
        }
    }
    sizes
}

fn check_blocks(m: &Csc, sizes: &[usize]) -> bool {
    let mut owner = Vec::with_capacity(m.cols());
    for (k, &s) in sizes.iter().enumerate() {
        owner.extend(std::iter::repeat_n(k, s));
    }
    owner.len() == m.cols() && m.triplets().iter().all(|&(r, c, _)| owner[r] == owner[c])
}

/// Reads the `/solution` group of any HDF5 file (an answer written by `fclib solve
/// --write-solution`, by `fclib bench --write-solutions`, or by another code: `r` required, `u`
/// and `v` optional), checking `r`'s length against `nc` contacts.
pub fn read_solution(path: &Path, nc: usize) -> Result<Solution, FclibError> {
    let r = Reader::open(path)?;
    if !r.exists("solution") {
        return Err(r.err("/solution", "missing: no answer in this file"));
    }
    let s = r.solution("solution")?;
    if s.r.len() != 3 * nc {
        return Err(r.err("/solution/r", format!("length {} != {} (3 x {nc} contacts)", s.r.len(), 3 * nc)));
    }
    if let Some(i) = s.r.iter().position(|x| !x.is_finite()) {
        return Err(r.err("/solution/r", format!("entry {i} is not finite ({})", s.r[i])));
    }
    Ok(s)
}

/// Reads an FCLIB file: its global form when it has one, else its local form (as
/// [`read_as`]`(path, None)`). Every error names the file and the field.
pub fn read(path: &Path) -> Result<FclibProblem, FclibError> {
    read_as(path, None)
}

/// Reads an FCLIB file for the solvers in `form`: [`Form::Global`] needs `/fclib_global` (and
/// reads `/fclib_local` too when present), [`Form::Local`] reads `/fclib_local`, or condenses
/// the global form when the file has none ([`GlobalProblem::condense`], as Siconos does), and
/// `/fclib_global` too when present; `None` takes the global form when the file has one, else the
/// local form. Every error names the file and the field.
pub fn read_as(path: &Path, form: Option<Form>) -> Result<FclibProblem, FclibError> {
    let r = Reader::open(path)?;
    let (has_global, has_local) = (r.exists("fclib_global"), r.exists("fclib_local"));
    let form = match form {
        Some(Form::Global) if !has_global => {
            let why = if has_local {
                "missing: this file has the local form only (use --form local)"
            } else {
                "missing: not an FCLIB file (neither /fclib_global nor /fclib_local)"
            };
            return Err(r.err("/fclib_global", why));
        }
        Some(Form::Local) if !has_local && !has_global => {
            return Err(r.err("/fclib_local", "missing: this file has no local form (W, q, mu)"));
        }
        Some(f) => f,
        None if has_global => Form::Global,
        None if has_local => Form::Local,
        None => {
            return Err(r.err("/fclib_global", "missing: not an FCLIB file (neither /fclib_global nor /fclib_local)"))
        }
    };
    let global = if has_global { Some(r.global()?) } else { None };
    let nc = global.as_ref().map(|g| g.nc());
    let local = match (has_local, form, &global) {
        (true, _, _) => Some(r.local(nc)?),
        // the local form of a global-only file: condensed as Siconos does
        (false, Form::Local, Some(g)) => Some(g.condense().map_err(|e| r.err("/fclib_global", e))?),
        _ => None,
    };
    let info = if has_global { r.info("fclib_global/info") } else { r.info("fclib_local/info") };
    let nv = global.as_ref().map_or(0, |g| g.nv());
    let nc = global.as_ref().map(|g| g.nc()).or(local.as_ref().map(|l| l.nc())).unwrap_or(0);
    let check = |s: Solution, g: &str| -> Result<Solution, FclibError> {
        // a local-only file's stored v (if any) belongs to no velocity space of ours: dropped
        let s = if !has_global { Solution { v: vec![], ..s } } else { s };
        for (name, x, n) in [("v", &s.v, nv), ("u", &s.u, 3 * nc), ("r", &s.r, 3 * nc)] {
            if !x.is_empty() && x.len() != n {
                return Err(r.err(&format!("/{g}/{name}"), format!("length {} != {n}", x.len())));
            }
        }
        Ok(s)
    };
    let solution = if r.exists("solution") { Some(check(r.solution("solution")?, "solution")?) } else { None };
    let mut guesses = vec![];
    if r.exists("guesses") {
        let n = r.int("guesses/number_of_guesses")?;
        for k in 1..=n.max(0) {
            let g = format!("guesses/{k}");
            // every announced guess must be stored: a corrupted count stops at the first absent
            // group instead of collecting billions of empty guesses
            if !r.exists(&g) {
                return Err(r.err(&g, format!("missing, but number_of_guesses = {n}")));
            }
            guesses.push(check(r.solution(&g)?, &g)?);
        }
    }
    Ok(FclibProblem { form, info, global, local, solution, guesses })
}

impl Reader<'_> {
    fn info(&self, g: &str) -> Info {
        Info {
            title: self.string(&format!("{g}/title")),
            description: self.string(&format!("{g}/description")),
            math_info: self.string(&format!("{g}/math_info")),
        }
    }

    /// `/fclib_local`; `nc`: the number of contacts of the global form, when the file has one.
    fn local(&self, nc: Option<usize>) -> Result<LocalProblem, FclibError> {
        let spacedim = self.int("fclib_local/spacedim")?;
        if spacedim != 3 {
            return Err(self.err("/fclib_local/spacedim", format!("{spacedim}: only 3D problems are supported")));
        }
        let q = self.f64s("fclib_local/vectors/q")?;
        let mu = self.f64s("fclib_local/vectors/mu")?;
        let why = || format!("/fclib_local/vectors/mu has {} contacts", mu.len());
        let w = self.matrix("fclib_local/W", [(3 * mu.len(), why()), (3 * mu.len(), why())])?;
        if self.exists("fclib_local/R") {
            return Err(self.err("/fclib_local/R", "bilateral or equality rows (V, R, s) are not imported yet"));
        }
        let n = 3 * mu.len();
        if q.len() != n {
            return Err(self.err("/fclib_local/vectors/q", format!("length {} != {n} (3 x contacts)", q.len())));
        }
        if let Some((i, x)) = mu.iter().enumerate().find(|(_, x)| **x < 0.0) {
            return Err(self.err("/fclib_local/vectors/mu", format!("contact {i} has mu = {x} < 0")));
        }
        if let Some(nc) = nc.filter(|&nc| nc != mu.len()) {
            return Err(self.err("/fclib_local", format!("{} contacts, the global problem has {nc}", mu.len())));
        }
        Ok(LocalProblem { w, q, mu })
    }

    /// `/fclib_global`.
    fn global(&self) -> Result<GlobalProblem, FclibError> {
        let r = self;
        let spacedim = r.int("fclib_global/spacedim")?;
        if spacedim != 3 {
            return Err(r.err("/fclib_global/spacedim", format!("{spacedim}: only 3D problems are supported")));
        }
        if r.exists("fclib_global/G") {
            return Err(r.err("/fclib_global/G", "bilateral constraints (G, b) are not imported yet"));
        }
        let (f, w, mu) =
            (r.f64s("fclib_global/vectors/f")?, r.f64s("fclib_global/vectors/w")?, r.f64s("fclib_global/vectors/mu")?);
        let f_len = || (f.len(), format!("/fclib_global/vectors/f has length {}", f.len()));
        let m = r.matrix("fclib_global/M", [f_len(), f_len()])?;
        let h = r.matrix(
            "fclib_global/H",
            [f_len(), (w.len(), format!("/fclib_global/vectors/w has length {}", w.len()))],
        )?;
        // M is nv x nv and H nv x len(w) (checked by `matrix`)
        let nv = m.cols();
        if h.cols() % 3 != 0 {
            return Err(r.err("/fclib_global/H/n", format!("{} columns: not a multiple of 3", h.cols())));
        }
        let nc = h.cols() / 3;
        if mu.len() != nc {
            return Err(r.err("/fclib_global/vectors/mu", format!("length {} != {nc} contacts", mu.len())));
        }
        if let Some((i, x)) = mu.iter().enumerate().find(|(_, x)| **x < 0.0) {
            return Err(r.err("/fclib_global/vectors/mu", format!("contact {i} has mu = {x} < 0")));
        }
        let block_sizes = if r.file.dataset("fclib_global/M/block_sizes").is_ok() {
            let b = r.ints("fclib_global/M/block_sizes")?;
            let b: Vec<usize> = b.iter().map(|&x| usize::try_from(x).unwrap_or(0)).collect();
            if b.contains(&0) || !check_blocks(&m, &b) {
                return Err(r.err("/fclib_global/M/block_sizes", "block sizes do not match M's size or sparsity"));
            }
            b
        } else if nv % 6 == 0 && check_blocks(&m, &vec![6; nv / 6]) {
            vec![6; nv / 6]
        } else {
            finest_blocks(&m)
        };
        Ok(GlobalProblem { m, block_sizes, h, f, w, mu })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An FCLIB file with `/fclib_global/spacedim` stored as a float `x`.
    fn float_spacedim(path: &Path, x: f64) {
        let mut fb = hdf5_pure::FileBuilder::new();
        let mut g = fb.create_group("fclib_global");
        g.create_dataset("spacedim").with_f64_data(&[x]);
        fb.add_group(g.finish());
        std::fs::write(path, fb.finish().unwrap()).unwrap();
    }

    /// Integer fields stored as floats are read as their numbers, not their bits (issue 44.8:
    /// "4613937818241073152: only 3D problems are supported").
    #[test]
    fn integers_stored_as_floats_are_read_as_numbers() {
        let p = std::env::temp_dir().join(format!("fclib-ints-as-floats-{}.hdf5", std::process::id()));
        float_spacedim(&p, 2.0);
        let e = crate::read(&p).unwrap_err().to_string();
        assert!(e.contains("/fclib_global/spacedim") && e.contains("2: only 3D"), "{e}");
        // 3.0 is read as 3: the reader goes on to the next field
        float_spacedim(&p, 3.0);
        let e = crate::read(&p).unwrap_err().to_string();
        assert!(!e.contains("/fclib_global/spacedim"), "{e}");
        float_spacedim(&p, 2.5);
        let e = crate::read(&p).unwrap_err().to_string();
        assert!(e.contains("stored as f64") && e.contains("2.5") && e.contains("not an integer"), "{e}");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn blocks_from_sparsity() {
        let m =
            Csc::from_triplets(4, 4, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (3, 3, 1.0), (1, 2, 0.1), (2, 1, 0.1)]);
        assert_eq!(finest_blocks(&m), vec![1, 2, 1]);
        assert!(check_blocks(&m, &[1, 3]) && !check_blocks(&m, &[2, 2]));
    }
}
