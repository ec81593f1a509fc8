//! Parameters of cases and solvers: a flat JSON object with typed decoding, `key=value`
//! overrides, TOML defaults and a stable hash.
//!
//! Every case ships its defaults as a TOML file next to its code; every solver's defaults are its
//! settings struct's `Default`. A `--set key=value` override must name an existing key and parse
//! as the type of its default, so a typo or a wrong type fails before anything runs.

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{Map, Value};

/// A bad parameter.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// The key does not exist.
    #[error("unknown parameter '{key}' for {owner} (known: {known})")]
    UnknownKey {
        /// The key.
        key: String,
        /// Case or solver name.
        owner: String,
        /// Comma-separated known keys.
        known: String,
    },
    /// The value does not parse as the parameter's type, or is out of range.
    #[error("parameter '{key}' of {owner}: {why}")]
    BadValue {
        /// The key.
        key: String,
        /// Case or solver name.
        owner: String,
        /// What is wrong.
        why: String,
    },
    /// A TOML document could not be read or parsed.
    #[error("{source_name}: {why}")]
    Toml {
        /// File name or description.
        source_name: String,
        /// Parser message.
        why: String,
    },
}

/// A flat set of named parameters (numbers, booleans, strings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Params(pub Map<String, Value>);

/// A field of a settings or parameter struct that is out of range or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field (the key a user writes with `--set`).
    pub field: String,
    /// What is wrong, with the bad value as given (e.g. "must be in (0, 2), got 2.5").
    pub reason: String,
}

impl FieldError {
    /// `field` is invalid because of `reason`.
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { field: field.into(), reason: reason.into() }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for FieldError {}

/// The largest iteration budget a solver setting accepts (any loop: outer, inner, linear, line
/// search). Budgets never size buffers; this bound keeps a typo (`1e9`) from turning one step into
/// an unbounded computation, with the per-step wall-time limit of `signorini run` as the second
/// guard.
pub const MAX_ITERATION_BUDGET: usize = 1_000_000;

/// Checks an iteration budget: `1 <= value <= MAX_ITERATION_BUDGET`.
pub fn check_budget(field: &str, value: usize) -> Result<(), FieldError> {
    if !(1..=MAX_ITERATION_BUDGET).contains(&value) {
        return Err(FieldError::new(field, format!("must be in 1..={MAX_ITERATION_BUDGET}, got {value}")));
    }
    Ok(())
}

/// `Ok` when `value` is finite and `> 0`; else the field's error `must be finite and > 0, got V`.
pub fn check_positive(field: &str, value: f64) -> Result<(), FieldError> {
    check_in(field, value, Bound::Open(0.0), Bound::None)
}

/// `Ok` when `value` is finite and `>= 0`; else `must be finite and >= 0, got V`.
pub fn check_non_negative(field: &str, value: f64) -> Result<(), FieldError> {
    check_in(field, value, Bound::Closed(0.0), Bound::None)
}

/// One end of the interval a setting must lie in ([`check_in`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// The end itself is allowed.
    Closed(f64),
    /// The end itself is not allowed.
    Open(f64),
    /// No bound on this side (the value must still be finite).
    None,
}

/// `Ok` when `value` is finite and within `lo` and `hi`; else the field's error in the words every
/// setting uses: `must be finite and > 0, got V` with one bound, `must be in (0, 1], got V` with
/// two. A NaN is never inside.
pub fn check_in(field: &str, value: f64, lo: Bound, hi: Bound) -> Result<(), FieldError> {
    let above = match lo {
        Bound::Closed(a) => value >= a,
        Bound::Open(a) => value > a,
        Bound::None => true,
    };
    let below = match hi {
        Bound::Closed(b) => value <= b,
        Bound::Open(b) => value < b,
        Bound::None => true,
    };
    if value.is_finite() && above && below {
        return Ok(());
    }
    let why = match (lo, hi) {
        (Bound::Closed(a), Bound::None) => format!("must be finite and >= {}", short(a)),
        (Bound::Open(a), Bound::None) => format!("must be finite and > {}", short(a)),
        (Bound::None, Bound::Closed(b)) => format!("must be finite and <= {}", short(b)),
        (Bound::None, Bound::Open(b)) => format!("must be finite and < {}", short(b)),
        (Bound::None, Bound::None) => "must be finite".to_string(),
        (lo, hi) => {
            let l = match lo {
                Bound::Closed(a) => format!("[{}", short(a)),
                Bound::Open(a) => format!("({}", short(a)),
                Bound::None => "(-inf".into(),
            };
            let h = match hi {
                Bound::Closed(b) => format!("{}]", short(b)),
                Bound::Open(b) => format!("{})", short(b)),
                Bound::None => "inf)".into(),
            };
            format!("must be in {l}, {h}")
        }
    };
    Err(FieldError::new(field, format!("{why}, got {}", short(value))))
}

/// `x` as `Display` writes it, but in exponent form far from 1 (`1e308`, not 309 digits): how
/// error messages print a number a user gave.
pub fn short(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Implemented by settings structs: serde with `#[serde(default, deny_unknown_fields)]` (every
/// choice a serde enum, so an unknown spelling fails while decoding), plus semantic validation.
pub trait Settings: Serialize + DeserializeOwned + Default {
    /// Checks ranges and consistency; the error names the field.
    fn validate(&self) -> Result<(), FieldError>;
}

/// A choice of a settings enum from its TOML/CLI spelling (`choice::<Split>("none")`), through
/// the same serde mapping that decodes settings; `Err` names the accepted spellings.
pub fn choice<T: DeserializeOwned>(spelling: &str) -> Result<T, ChoiceError> {
    serde_json::from_value(Value::String(spelling.to_string()))
        .map_err(|e| ChoiceError { spelling: spelling.to_string(), why: e.to_string() })
}

/// A spelling that is none of a settings enum's choices ([`choice`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct ChoiceError {
    /// The spelling given.
    pub spelling: String,
    /// The decoder's message, naming the accepted spellings (e.g. "unknown variant `x`, expected
    /// `split` or `cone`").
    pub why: String,
}

/// Longest input line a TOML error message echoes (characters); the rest is counted, not shown.
pub const MAX_ECHOED_LINE: usize = 200;

/// A TOML parser error as one line: its lines joined by spaces, and each echoed input line cut
/// at [`MAX_ECHOED_LINE`] characters (a 200 KB line used to be echoed whole).
pub fn toml_message(e: &toml::de::Error) -> String {
    e.to_string()
        .trim()
        .lines()
        .map(|line| match line.char_indices().nth(MAX_ECHOED_LINE) {
            Some((cut, _)) => {
                format!("{}… ({} more characters)", &line[..cut], line[cut..].chars().count())
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Params {
    /// Parses TOML text (top-level keys only) as parameters.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Params, ParamError> {
        let v: toml::Table = toml::from_str(text)
            .map_err(|e| ParamError::Toml { source_name: source_name.into(), why: toml_message(&e) })?;
        let json = serde_json::to_value(v)
            .map_err(|e| ParamError::Toml { source_name: source_name.into(), why: e.to_string() })?;
        match json {
            Value::Object(m) => Ok(Params(m)),
            _ => unreachable!("a TOML table is an object"),
        }
    }

    /// The parameters of a settings value.
    pub fn from_settings<S: Serialize>(s: &S) -> Params {
        match serde_json::to_value(s).expect("settings serialize to JSON") {
            Value::Object(m) => Params(m),
            other => panic!("settings must serialize to an object, got {other}"),
        }
    }

    /// Decodes into a typed settings struct and validates it. Errors name the field: serde's
    /// path to the failing value for a wrong type or an unknown choice, [`FieldError::field`]
    /// for a range check. Where serde names no path (a flattened or top-level failure), the
    /// culprit is the first key that fails to decode when put alone into `S::default()`.
    pub fn decode<S: Settings>(&self, owner: &str) -> Result<S, ParamError> {
        let s: S = serde_path_to_error::deserialize(Value::Object(self.0.clone())).map_err(|e| {
            let path = e.path().to_string();
            let why = e.into_inner().to_string();
            let key = if path == "." { self.culprit::<S>().unwrap_or_else(|| "?".into()) } else { path };
            ParamError::BadValue { why: format!("{key}: {why}"), key, owner: owner.into() }
        })?;
        s.validate().map_err(|e| ParamError::BadValue {
            key: e.field.clone(),
            owner: owner.into(),
            why: e.to_string(),
        })?;
        Ok(s)
    }

    /// The first key whose value alone makes `S::default()` fail to decode.
    fn culprit<S: Settings>(&self) -> Option<String> {
        let defaults = Params::from_settings(&S::default());
        self.0
            .iter()
            .find(|(k, v)| {
                let mut one = defaults.clone();
                one.0.insert(k.to_string(), (*v).clone());
                serde_json::from_value::<S>(Value::Object(one.0)).is_err()
            })
            .map(|(k, _)| k.clone())
    }

    /// Whether `key` exists.
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The current value of `key`, or the error naming the known keys.
    fn existing(&self, key: &str, owner: &str) -> Result<&Value, ParamError> {
        self.0.get(key).ok_or_else(|| ParamError::UnknownKey {
            key: key.into(),
            owner: owner.into(),
            known: self.0.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }

    /// Applies `key=value` given as text, typed after the existing default. Rejects unknown keys,
    /// unparsable values and non-finite numbers.
    pub fn set(&mut self, key: &str, raw: &str, owner: &str) -> Result<(), ParamError> {
        let bad = |why: String| ParamError::BadValue { key: key.into(), owner: owner.into(), why };
        let current = self.existing(key, owner)?;
        let new = match current {
            Value::Bool(_) => {
                Value::Bool(raw.parse().map_err(|_| bad(format!("expected true or false, got '{raw}'")))?)
            }
            Value::Number(n) if n.is_i64() || n.is_u64() => Value::from(raw.parse::<i64>().map_err(|_| {
                let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
                if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                    // an integer, but not a 64-bit signed one (`seed=18446744073709551615`)
                    bad(format!("expected an integer in {}..={}, got '{raw}' (out of range)", i64::MIN, i64::MAX))
                } else {
                    bad(format!("expected an integer, got '{raw}'"))
                }
            })?),
            Value::Number(_) => {
                let x: f64 = raw.parse().map_err(|_| bad(format!("expected a number, got '{raw}'")))?;
                if !x.is_finite() {
                    return Err(bad(format!("must be finite, got '{raw}'")));
                }
                Value::from(x)
            }
            Value::String(_) => Value::String(raw.to_string()),
            other => return Err(bad(format!("cannot be set from the command line (it is {other})"))),
        };
        self.0.insert(key.to_string(), new);
        Ok(())
    }

    /// Applies `key = value` already typed (from a suite TOML file): the key must exist and the
    /// value must have the default's type (an integer is accepted where a number is expected);
    /// non-finite numbers are refused. Nothing goes through text.
    pub fn set_value(&mut self, key: &str, value: &Value, owner: &str) -> Result<(), ParamError> {
        let bad = |why: String| ParamError::BadValue { key: key.into(), owner: owner.into(), why };
        let current = self.existing(key, owner)?;
        let kind = |v: &Value| match v {
            Value::Bool(_) => "a boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Null => "NaN or null",
            Value::Array(_) => "an array",
            Value::Object(_) => "a table",
        };
        let ok = match (current, value) {
            (Value::Bool(_), Value::Bool(_)) | (Value::String(_), Value::String(_)) => true,
            (Value::Number(c), Value::Number(v)) if c.is_i64() || c.is_u64() => v.is_i64() || v.is_u64(),
            (Value::Number(_), Value::Number(v)) => v.as_f64().is_some_and(f64::is_finite),
            _ => false,
        };
        if !ok {
            return Err(bad(format!("expected {}, got {} ({value})", kind(current), kind(value))));
        }
        let value = match (current, value) {
            (Value::Number(c), Value::Number(v)) if !(c.is_i64() || c.is_u64()) => {
                Value::from(v.as_f64().expect("checked above"))
            }
            _ => value.clone(),
        };
        self.0.insert(key.to_string(), value);
        Ok(())
    }

    /// A number; integers are accepted.
    pub fn f64(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }

    /// Stable 64-bit FNV-1a hash of the canonical JSON text (keys sorted), as 16 hex digits.
    pub fn hash(&self) -> String {
        let text = serde_json::to_string(&self.0).expect("params serialize");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44.10: a TOML error echoed a 200 KB input line whole.
    #[test]
    fn toml_errors_echo_at_most_a_few_hundred_characters_of_a_line() {
        let text = format!("a = [{}", "1, ".repeat(70_000));
        let e = toml::from_str::<toml::Table>(&text).unwrap_err();
        let msg = toml_message(&e);
        assert!(!msg.contains('\n') && msg.len() < 1000, "{} bytes", msg.len());
        assert!(msg.contains("more characters)"), "{msg}");
        let e = Params::from_toml(&text, "s.toml").unwrap_err().to_string();
        assert!(e.len() < 1000, "{} bytes", e.len());
    }

    #[rstest::rstest]
    #[case(1.0, Bound::Open(0.0), Bound::None, None)]
    #[case(0.0, Bound::Open(0.0), Bound::None, Some("must be finite and > 0, got 0"))]
    #[case(0.0, Bound::Closed(0.0), Bound::None, None)]
    #[case(-1e-300, Bound::Closed(0.0), Bound::None, Some("must be finite and >= 0, got -1e-300"))]
    #[case(f64::INFINITY, Bound::Open(0.0), Bound::None, Some("must be finite and > 0, got inf"))]
    #[case(f64::NAN, Bound::None, Bound::None, Some("must be finite, got NaN"))]
    #[case(1.0, Bound::Open(0.0), Bound::Closed(1.0), None)]
    #[case(1.0, Bound::Open(0.0), Bound::Open(1.0), Some("must be in (0, 1), got 1"))]
    #[case(0.0, Bound::Open(0.0), Bound::Closed(1.0), Some("must be in (0, 1], got 0"))]
    #[case(f64::NAN, Bound::Closed(0.0), Bound::Closed(1.0), Some("must be in [0, 1], got NaN"))]
    #[case(1e308, Bound::Open(0.0), Bound::Open(2.0), Some("must be in (0, 2), got 1e308"))]
    fn interval_checks_accept_inside_and_name_the_interval(
        #[case] v: f64,
        #[case] lo: Bound,
        #[case] hi: Bound,
        #[case] why: Option<&str>,
    ) {
        let r = check_in("x", v, lo, hi);
        assert_eq!(r.as_ref().err().map(|e| e.reason.as_str()), why, "{v} in {lo:?}..{hi:?}");
        if let Err(e) = r {
            assert_eq!(e.field, "x");
        }
    }

    #[derive(Debug, Default, Serialize, serde::Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct S {
        mu: f64,
        iters: i64,
    }
    impl Settings for S {
        fn validate(&self) -> Result<(), FieldError> {
            if self.mu < 0.0 {
                return Err(FieldError::new("mu", format!("must be >= 0, got {}", self.mu)));
            }
            Ok(())
        }
    }

    #[derive(Debug, Default, Serialize, serde::Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Choice {
        #[default]
        First,
        SecondOne,
    }

    #[derive(Debug, Default, Serialize, serde::Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct WithChoice {
        choice: Choice,
        n: usize,
    }
    impl Settings for WithChoice {
        fn validate(&self) -> Result<(), FieldError> {
            Ok(())
        }
    }

    #[test]
    fn decode_errors_name_the_field() {
        let mut p = Params::from_settings(&WithChoice::default());
        assert_eq!(p.0["choice"], "first");
        p.set("choice", "second_one", "t").unwrap();
        assert_eq!(p.decode::<WithChoice>("t").unwrap().choice, Choice::SecondOne);
        p.set("choice", "bogus", "t").unwrap();
        match p.decode::<WithChoice>("t").unwrap_err() {
            ParamError::BadValue { key, why, .. } => {
                assert_eq!(key, "choice");
                assert!(why.contains("bogus") && why.contains("second_one"), "{why}");
            }
            e => panic!("{e:?}"),
        }
        let mut p = Params::from_settings(&WithChoice::default());
        p.0.insert("n".into(), Value::from(-3));
        match p.decode::<WithChoice>("t").unwrap_err() {
            ParamError::BadValue { key, .. } => assert_eq!(key, "n"),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn typed_values_keep_their_type_and_nan_is_named() {
        let mut p = Params::from_toml("mu = 0.5\niters = 10\nname = \"a\"", "test").unwrap();
        p.set_value("mu", &Value::from(1), "t").unwrap();
        assert_eq!(p.f64("mu"), Some(1.0));
        p.set_value("name", &Value::from("b"), "t").unwrap();
        assert_eq!(p.0["name"], "b");
        let e = p.set_value("iters", &Value::from(1.5), "t").unwrap_err().to_string();
        assert!(e.contains("iters") && e.contains("expected an integer"), "{e}");
        // an integer beyond i64 names the range instead of "expected an integer"
        let e = p.set("iters", "18446744073709551615", "solver 'x'").unwrap_err().to_string();
        assert!(e.contains("-9223372036854775808..=9223372036854775807") && e.contains("out of range"), "{e}");
        // TOML `nan` arrives as JSON null
        let e = p.set_value("mu", &Value::Null, "t").unwrap_err().to_string();
        assert!(e.contains("mu") && e.contains("NaN"), "{e}");
        assert!(matches!(p.set_value("nu", &Value::from(1), "t"), Err(ParamError::UnknownKey { .. })));
    }

    #[test]
    fn overrides_are_typed_and_checked() {
        let mut p = Params::from_toml("mu = 0.5\niters = 10\nname = \"a\"\nflag = false", "test").unwrap();
        p.set("mu", "0.25", "t").unwrap();
        p.set("iters", "7", "t").unwrap();
        p.set("flag", "true", "t").unwrap();
        assert_eq!(p.f64("mu"), Some(0.25));
        assert!(matches!(p.set("nu", "1", "t"), Err(ParamError::UnknownKey { .. })));
        assert!(p.set("mu", "nan", "t").unwrap_err().to_string().contains("finite"));
        assert!(p.set("mu", "abc", "t").unwrap_err().to_string().contains("expected a number"));
        assert!(p.set("iters", "1.5", "t").unwrap_err().to_string().contains("integer"));
    }

    #[test]
    fn decode_validates() {
        let mut p = Params::from_settings(&S { mu: 0.1, iters: 3 });
        assert_eq!(p.decode::<S>("t").unwrap(), S { mu: 0.1, iters: 3 });
        p.set("mu", "-1", "t").unwrap();
        let e = p.decode::<S>("t").unwrap_err().to_string();
        assert!(e.contains("mu") && e.contains(">= 0"), "{e}");
    }

    #[test]
    fn toml_errors_name_the_source() {
        let e = Params::from_toml("mu = = 1", "cases/slope.toml").unwrap_err().to_string();
        assert!(e.starts_with("cases/slope.toml:"), "{e}");
    }

    #[test]
    fn a_choice_is_decoded_by_its_spelling_or_names_the_accepted_ones() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Split {
            Body,
            None,
        }
        assert_eq!(choice::<Split>("body"), Ok(Split::Body));
        assert_eq!(choice::<Split>("none"), Ok(Split::None));
        let e = choice::<Split>("nope").unwrap_err();
        assert_eq!(e.spelling, "nope");
        assert_eq!(e.to_string(), "unknown variant `nope`, expected `body` or `none`");
    }

    #[test]
    fn hash_is_stable_and_sensitive() {
        let a = Params::from_toml("a = 1\nb = 2.5", "t").unwrap();
        let b = Params::from_toml("b = 2.5\na = 1", "t").unwrap();
        assert_eq!(a.hash(), b.hash());
        let mut c = a.clone();
        c.set("b", "2.6", "t").unwrap();
        assert_ne!(a.hash(), c.hash());
    }
}
