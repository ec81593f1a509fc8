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

/// Implemented by settings structs: serde with `#[serde(default, deny_unknown_fields)]`, plus
/// semantic validation.
pub trait Settings: Serialize + DeserializeOwned + Default {
    /// Checks ranges and consistency; the message names the field.
    fn validate(&self) -> Result<(), String>;
}

impl Params {
    /// Parses TOML text (top-level keys only) as parameters.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Params, ParamError> {
        let v: toml::Table = toml::from_str(text).map_err(|e| ParamError::Toml {
            source_name: source_name.into(),
            why: e.to_string().trim().replace('\n', " "),
        })?;
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

    /// Decodes into a typed settings struct and validates it.
    pub fn decode<S: Settings>(&self, owner: &str) -> Result<S, ParamError> {
        let s: S = serde_json::from_value(Value::Object(self.0.clone())).map_err(|e| ParamError::BadValue {
            key: "?".into(),
            owner: owner.into(),
            why: e.to_string(),
        })?;
        s.validate().map_err(|why| ParamError::BadValue {
            key: why.split(':').next().unwrap_or("?").trim().into(),
            owner: owner.into(),
            why,
        })?;
        Ok(s)
    }

    /// Whether `key` exists.
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Applies `key=value` given as text, typed after the existing default. Rejects unknown keys,
    /// unparsable values and non-finite numbers.
    pub fn set(&mut self, key: &str, raw: &str, owner: &str) -> Result<(), ParamError> {
        let bad = |why: String| ParamError::BadValue { key: key.into(), owner: owner.into(), why };
        let current = self.0.get(key).ok_or_else(|| ParamError::UnknownKey {
            key: key.into(),
            owner: owner.into(),
            known: self.0.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
        let new = match current {
            Value::Bool(_) => {
                Value::Bool(raw.parse().map_err(|_| bad(format!("expected true or false, got '{raw}'")))?)
            }
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                Value::from(raw.parse::<i64>().map_err(|_| bad(format!("expected an integer, got '{raw}'")))?)
            }
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

    /// Applies every entry of `other` (already typed, e.g. from a suite file) with the same
    /// checks as [`Params::set`].
    pub fn merge(&mut self, other: &Params, owner: &str) -> Result<(), ParamError> {
        for (k, v) in &other.0 {
            let raw = match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            self.set(k, &raw, owner)?;
        }
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

    #[derive(Debug, Default, Serialize, serde::Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct S {
        mu: f64,
        iters: i64,
    }
    impl Settings for S {
        fn validate(&self) -> Result<(), String> {
            if self.mu < 0.0 {
                return Err(format!("mu: must be >= 0, got {}", self.mu));
            }
            Ok(())
        }
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
    fn hash_is_stable_and_sensitive() {
        let a = Params::from_toml("a = 1\nb = 2.5", "t").unwrap();
        let b = Params::from_toml("b = 2.5\na = 1", "t").unwrap();
        assert_eq!(a.hash(), b.hash());
        let mut c = a.clone();
        c.set("b", "2.6", "t").unwrap();
        assert_ne!(a.hash(), c.hash());
    }
}
