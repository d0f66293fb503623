//! URL query parameters. Each handler takes the ones it knows; any left over
//! is an error naming it, as Elasticsearch answers (a misspelt `refrsh=true`
//! must not pass silently).

use std::cell::Cell;
use std::time::Duration;

use crate::error::{ApiError, ApiResult};

/// Parameters every endpoint accepts: `pretty` and `filter_path` are applied
/// to the response by the server; `human` and `error_trace` change nothing here.
const EVERYWHERE: [&str; 4] = ["pretty", "human", "error_trace", "filter_path"];

pub struct Params {
    pairs: Vec<(String, String)>,
    taken: Vec<Cell<bool>>,
}

impl Params {
    pub fn parse(query: Option<&str>) -> ApiResult<Params> {
        let pairs: Vec<(String, String)> = match query {
            Some(q) => serde_urlencoded::from_str(q)
                .map_err(|e| ApiError::illegal_argument(format!("malformed query string: {e}")))?,
            None => Vec::new(),
        };
        let taken = pairs.iter().map(|(k, _)| Cell::new(EVERYWHERE.contains(&k.as_str()))).collect();
        Ok(Params { pairs, taken })
    }

    /// The value of `name` (the last one when repeated), marking it used.
    pub fn get(&self, name: &str) -> Option<&str> {
        let mut found = None;
        for (i, (k, v)) in self.pairs.iter().enumerate() {
            if k == name {
                self.taken[i].set(true);
                found = Some(v.as_str());
            }
        }
        found
    }

    /// Every parameter as given, `name=value` joined by `&` (a cache key's part).
    pub fn text(&self) -> String {
        let pairs: Vec<String> = self.pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.join("&")
    }

    /// Marks parameters that are accepted and have nothing to do here
    /// (`timeout` of a single-node write, `routing`...).
    pub fn ignore(&self, names: &[&str]) {
        for name in names {
            self.get(name);
        }
    }

    /// A boolean parameter: absent is `default`, present without a value is true.
    pub fn flag(&self, name: &str, default: bool) -> ApiResult<bool> {
        match self.get(name) {
            None => Ok(default),
            Some("" | "true") => Ok(true),
            Some("false") => Ok(false),
            Some(other) => Err(ApiError::illegal_argument(format!(
                "Failed to parse value [{other}] as only [true] or [false] are allowed."
            ))),
        }
    }

    pub fn number<T: std::str::FromStr>(&self, name: &str) -> ApiResult<Option<T>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                ApiError::illegal_argument(format!("Failed to parse int parameter [{name}] with value [{v}]"))
            }),
        }
    }

    /// `refresh`: every acknowledged write is searchable at once, so each
    /// value is satisfied; a value Elasticsearch does not know is an error.
    /// Returns whether a refresh was asked for (`true` or empty).
    pub fn refresh(&self) -> ApiResult<bool> {
        match self.get("refresh") {
            None | Some("false") | Some("wait_for") => Ok(false),
            Some("" | "true") => Ok(true),
            Some(other) => Err(ApiError::illegal_argument(format!("Unknown value for refresh: [{other}]."))),
        }
    }

    /// Fails on the first parameter no one took.
    pub fn finish(&self, path: &str) -> ApiResult<()> {
        let unused: Vec<&str> = self
            .pairs
            .iter()
            .zip(&self.taken)
            .filter(|(_, t)| !t.get())
            .map(|((k, _), _)| k.as_str())
            .collect();
        match unused.as_slice() {
            [] => Ok(()),
            [one] => Err(ApiError::illegal_argument(format!(
                "request [{path}] contains unrecognized parameter: [{one}]"
            ))),
            many => Err(ApiError::illegal_argument(format!(
                "request [{path}] contains unrecognized parameters: [{}]",
                many.join("], [")
            ))),
        }
    }
}

/// A time value of setting `name`: `30s`, `1m`, `500ms`, `2h`, `1d`,
/// `nanos`, `micros` (Elasticsearch's units).
pub fn time_value(name: &str, text: &str) -> ApiResult<Duration> {
    let bad =
        || ApiError::parsing(format!("failed to parse setting [{name}] with value [{text}] as a time value"));
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let per_unit = match unit {
        "nanos" => Duration::from_nanos(1),
        "micros" => Duration::from_micros(1),
        "ms" => Duration::from_millis(1),
        "s" => Duration::from_secs(1),
        "m" => Duration::from_secs(60),
        "h" => Duration::from_secs(3600),
        "d" => Duration::from_secs(24 * 3600),
        _ => return Err(bad()),
    };
    per_unit.checked_mul(u32::try_from(n).map_err(|_| bad())?).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_parameters_are_named() {
        let p = Params::parse(Some("refresh=true&pretty&refrsh=1&size=3")).unwrap();
        assert!(p.refresh().unwrap());
        assert_eq!(p.number::<usize>("size").unwrap(), Some(3));
        let err = p.finish("/i/_doc/1").unwrap_err();
        assert_eq!(err.reason, "request [/i/_doc/1] contains unrecognized parameter: [refrsh]");
    }

    #[test]
    fn values_are_checked() {
        let p = Params::parse(Some("refresh=maybe&size=x&version=yes")).unwrap();
        assert!(p.refresh().is_err());
        assert!(p.number::<usize>("size").is_err());
        assert!(p.flag("version", false).is_err());
        assert!(Params::parse(Some("a=%zz")).is_ok(), "a bad escape is kept as is");
    }
}
