//! Writing an [`FclibProblem`] as FCLIB HDF5 (layout in the crate doc), atomically.

use crate::error::{hdf5_err, FclibError};
use crate::matrix::Csc;
use crate::problem::{FclibProblem, GlobalProblem, Info, Solution};
use hdf5_pure::FileBuilder;
use std::path::Path;

fn i32s(path: &Path, field: &str, x: &[usize]) -> Result<Vec<i32>, FclibError> {
    x.iter()
        .map(|&v| {
            i32::try_from(v).map_err(|_| hdf5_err(path, field, format!("{v} does not fit FCLIB's 32-bit integers")))
        })
        .collect()
}

fn put_matrix(
    path: &Path,
    parent: &mut hdf5_pure::GroupBuilder,
    name: &str,
    a: &Csc,
    blocks: Option<&[usize]>,
) -> Result<(), FclibError> {
    let field = |s: &str| format!("{name}/{s}");
    let csc;
    let a = if a.is_csc() {
        a
    } else {
        csc = a.to_csc();
        &csc
    };
    let p = a.proper_indptr();
    let mut g = parent.create_group(name);
    let nnz = a.nnz();
    g.create_dataset("nzmax").with_i32_data(&i32s(path, &field("nzmax"), &[nnz])?);
    g.create_dataset("m").with_i32_data(&i32s(path, &field("m"), &[a.rows()])?);
    g.create_dataset("n").with_i32_data(&i32s(path, &field("n"), &[a.cols()])?);
    g.create_dataset("nz").with_i32_data(&[-1]);
    g.create_dataset("p").with_i32_data(&i32s(path, &field("p"), &p)?);
    g.create_dataset("i").with_i32_data(&i32s(path, &field("i"), a.indices())?);
    g.create_dataset("x").with_f64_data(a.data());
    if let Some(b) = blocks {
        g.create_dataset("block_sizes").with_i32_data(&i32s(path, &field("block_sizes"), b)?);
    }
    parent.add_group(g.finish());
    Ok(())
}

fn put_solution(g: &mut hdf5_pure::GroupBuilder, s: &Solution) {
    for (name, x) in [("v", &s.v), ("u", &s.u), ("r", &s.r)] {
        if !x.is_empty() {
            g.create_dataset(name).with_f64_data(x);
        }
    }
}

fn put_info(path: &Path, parent: &mut hdf5_pure::GroupBuilder, info: &Info) -> Result<(), FclibError> {
    let mut g = parent.create_group("info");
    for (name, s) in [("title", &info.title), ("description", &info.description), ("math_info", &info.math_info)] {
        if !s.is_empty() {
            g.create_dataset(name).with_ascii_strings(&[s.as_str()]).map_err(|e| hdf5_err(path, name, e))?;
        }
    }
    parent.add_group(g.finish());
    Ok(())
}

/// `/fclib_global` of `g`.
fn put_global(path: &Path, fb: &mut FileBuilder, g: &GlobalProblem, info: &Info) -> Result<(), FclibError> {
    let mut gg = fb.create_group("fclib_global");
    gg.create_dataset("spacedim").with_i32_data(&[3]);
    put_matrix(path, &mut gg, "M", &g.m, Some(&g.block_sizes))?;
    put_matrix(path, &mut gg, "H", &g.h, None)?;
    let mut vec = gg.create_group("vectors");
    vec.create_dataset("f").with_f64_data(&g.f);
    vec.create_dataset("w").with_f64_data(&g.w);
    vec.create_dataset("mu").with_f64_data(&g.mu);
    gg.add_group(vec.finish());
    put_info(path, &mut gg, info)?;
    fb.add_group(gg.finish());
    Ok(())
}

/// Writes `prob` to `path` (atomically: temporary file + rename). Matrices are written
/// compressed-column (`nz = -1`; a CSR `CsMat` is converted). Writes `/fclib_global` and
/// `/fclib_local` for the forms present; the descriptions go under `/fclib_global/info`, or under
/// `/fclib_local/info` in a local-only file. A `path` that exists and is not a regular file (a
/// FIFO, a device such as `/dev/null`, a directory) is refused, never renamed over.
pub fn write(path: &Path, prob: &FclibProblem) -> Result<(), FclibError> {
    if let Some(why) = records::input::not_replaceable(path) {
        return Err(hdf5_err(path, "/", why));
    }
    let mut fb = FileBuilder::new();
    if let Some(g) = &prob.global {
        put_global(path, &mut fb, g, &prob.info)?;
    }
    if let Some(l) = &prob.local {
        let mut lg = fb.create_group("fclib_local");
        lg.create_dataset("spacedim").with_i32_data(&[3]);
        put_matrix(path, &mut lg, "W", &l.w, None)?;
        let mut vec = lg.create_group("vectors");
        vec.create_dataset("q").with_f64_data(&l.q);
        vec.create_dataset("mu").with_f64_data(&l.mu);
        lg.add_group(vec.finish());
        if prob.global.is_none() {
            put_info(path, &mut lg, &prob.info)?;
        }
        fb.add_group(lg.finish());
    }
    if let Some(s) = &prob.solution {
        let mut sg = fb.create_group("solution");
        put_solution(&mut sg, s);
        fb.add_group(sg.finish());
    }
    if !prob.guesses.is_empty() {
        let mut gs = fb.create_group("guesses");
        gs.create_dataset("number_of_guesses").with_i32_data(&i32s(path, "number_of_guesses", &[prob.guesses.len()])?);
        for (k, s) in prob.guesses.iter().enumerate() {
            let mut one = gs.create_group(&(k + 1).to_string());
            put_solution(&mut one, s);
            gs.add_group(one.finish());
        }
        fb.add_group(gs.finish());
    }
    let bytes = fb.finish().map_err(|e| hdf5_err(path, "/", e))?;
    records::write_atomic(path, &bytes).map_err(|e| hdf5_err(path, "/", e))
}
