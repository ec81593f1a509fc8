//! A case's parameters for `signorini.cases()`: each one's default, kind, documentation (the
//! comment above it in the case's defaults TOML), choices and numeric range. The range is the
//! case's own validation asked, not restated: with every other parameter at its default,
//! [`Case::decode`] is bisected for the smallest and largest accepted value (on the order of
//! `f64` bit patterns for a real, of `i64` for an integer; 64 decodes a bound, no scene built).

use harness::Case;
use serde_json::{json, Map, Value};

/// Whether `case` accepts its defaults with `key` set to `value`; the validation's message if not.
fn accepts(case: &dyn Case, defaults: &api::Params, key: &str, value: Value) -> Result<(), String> {
    let mut p = defaults.clone();
    p.0.insert(key.to_string(), value);
    case.decode(&p).map(|_| ()).map_err(|e| e.to_string())
}

/// `x`'s position in the total order of finite `f64` (monotone: `a < b` iff `ord(a) < ord(b)`,
/// with `-0.0` just below `0.0`).
fn ord(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    if b < 0 {
        i64::MIN - b
    } else {
        b
    }
}

/// The inverse of [`ord`].
fn unord(o: i64) -> f64 {
    f64::from_bits(if o < 0 { (i64::MIN - o) as u64 } else { o as u64 })
}

/// The boundary between `bad` (rejected) and `good` (accepted) positions, by bisection:
/// `(last rejected, first accepted)` in the direction from `bad` to `good`.
fn bisect(mut bad: i64, mut good: i64, ok: &dyn Fn(i64) -> bool) -> (i64, i64) {
    while bad.abs_diff(good) > 1 {
        let mid = ((bad as i128 + good as i128) / 2) as i64;
        if ok(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    (bad, good)
}

/// One end of a real range from its boundary `(rejected, accepted)`: the rounder of the two
/// numbers (shorter to print) is the bound, exclusive when it is the rejected one (`> 0` gives
/// `(0, 5e-324)`: the bound 0, exclusive).
fn real_end(rejected: f64, accepted: f64) -> (f64, bool) {
    let (r, a) = (format!("{rejected:e}"), format!("{accepted:e}"));
    let (x, inclusive) = if r.len() < a.len() { (rejected, false) } else { (accepted, true) };
    (if x == 0.0 { 0.0 } else { x }, inclusive)
}

/// The numeric range of `key` (default `default`): `{min, min_inclusive, max, max_inclusive}`,
/// `null` for an unbounded end; `None` when the default itself is refused.
fn range(case: &dyn Case, defaults: &api::Params, key: &str, default: &serde_json::Number) -> Option<Value> {
    if let Some(d) = default.as_i64() {
        let ok = |x: i64| accepts(case, defaults, key, json!(x)).is_ok();
        ok(d).then_some(())?;
        let min = (!ok(i64::MIN)).then(|| bisect(i64::MIN, d, &ok).1);
        let max = (!ok(i64::MAX)).then(|| bisect(i64::MAX, d, &ok).1);
        return Some(
            json!({"min": min, "min_inclusive": min.map(|_| true), "max": max, "max_inclusive": max.map(|_| true)}),
        );
    }
    let d = default.as_f64()?;
    let ok = |o: i64| accepts(case, defaults, key, json!(unord(o))).is_ok();
    ok(ord(d)).then_some(())?;
    let end = |far: f64| {
        (!ok(ord(far))).then(|| {
            let (bad, good) = bisect(ord(far), ord(d), &ok);
            real_end(unord(bad), unord(good))
        })
    };
    let (min, max) = (end(f64::MIN), end(f64::MAX));
    Some(json!({
        "min": min.map(|m| m.0), "min_inclusive": min.map(|m| m.1),
        "max": max.map(|m| m.0), "max_inclusive": max.map(|m| m.1),
    }))
}

/// The spellings a string parameter accepts, from the decoder's message on one it does not
/// (`unknown variant `x`, expected `a` or `b``); `None` for a free string.
fn choices(case: &dyn Case, defaults: &api::Params, key: &str) -> Option<Vec<String>> {
    const PROBE: &str = "\u{1}not-a-choice";
    let why = accepts(case, defaults, key, json!(PROBE)).err()?;
    let (_, expected) = why.split_once("expected")?;
    let names: Vec<String> = expected.split('`').skip(1).step_by(2).map(String::from).collect();
    (!names.is_empty()).then_some(names)
}

/// Each key's documentation in a defaults TOML text: the comment lines right above it (one
/// comment over consecutive keys documents each of them; a blank line ends it).
fn docs(text: &str) -> Map<String, Value> {
    let (mut out, mut pending, mut after_key) = (Map::new(), String::new(), false);
    for line in text.lines().map(str::trim) {
        if let Some(c) = line.strip_prefix('#') {
            if after_key {
                pending.clear();
                after_key = false;
            }
            if !pending.is_empty() {
                pending.push(' ');
            }
            pending.push_str(c.trim());
        } else if line.is_empty() {
            pending.clear();
            after_key = false;
        } else if let Some((key, _)) = line.split_once('=') {
            if !pending.is_empty() {
                out.insert(key.trim().to_string(), Value::String(pending.clone()));
            }
            after_key = true;
        }
    }
    out
}

/// `case`'s parameters, in the order of its defaults: `{name: {default, kind, doc, choices,
/// range}}` (`kind`: `real`, `integer`, `bool`, `choice`, `string` or `other`).
pub(crate) fn case_parameters(case: &dyn Case) -> Value {
    let defaults = case.defaults();
    let docs = docs(case.defaults_text());
    let mut out = Map::new();
    for (key, default) in &defaults.0 {
        let mut p = json!({"default": default, "doc": docs.get(key)});
        let (kind, extra) = match default {
            Value::Number(n) => {
                (if n.is_f64() { "real" } else { "integer" }, ("range", json!(range(case, &defaults, key, n))))
            }
            Value::Bool(_) => ("bool", ("choices", Value::Null)),
            Value::String(_) => match choices(case, &defaults, key) {
                Some(c) => ("choice", ("choices", json!(c))),
                None => ("string", ("choices", Value::Null)),
            },
            _ => ("other", ("choices", Value::Null)),
        };
        p["kind"] = json!(kind);
        p[extra.0] = extra.1;
        out.insert(key.clone(), p);
    }
    Value::Object(out)
}
