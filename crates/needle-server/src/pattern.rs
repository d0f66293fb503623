//! `*` wildcards as Elasticsearch reads them in index names, field names,
//! `_source` filters and `filter_path`: `*` matches any run of characters.

/// The keys of `all` that `names` names (comma-separated names and `*`
/// patterns), in the order named, each once; a plain name naming none is
/// the error `missing` makes of it.
pub fn named<V>(
    all: &std::collections::BTreeMap<String, V>,
    names: &str,
    missing: impl Fn(&str) -> crate::error::ApiError,
) -> crate::error::ApiResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for name in names.split(',').filter(|n| !n.is_empty()) {
        let found: Vec<String> =
            all.keys().filter(|k| matches(name, k) && !out.contains(*k)).cloned().collect();
        if found.is_empty() && !name.contains('*') && !out.iter().any(|k| k == name) {
            return Err(missing(name));
        }
        out.extend(found);
    }
    Ok(out)
}

pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == name;
    }
    if name.len() < first.len() + last.len() || !name.starts_with(first) || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards() {
        for (p, n) in
            [("logs", "logs"), ("lo*", "logs"), ("*s", "logs"), ("l*g*", "logs"), ("*", ""), ("a*a", "aa")]
        {
            assert!(matches(p, n), "{p} {n}");
        }
        for (p, n) in [("log", "logs"), ("x*", "logs"), ("a*a", "a"), ("l*x*", "logs")] {
            assert!(!matches(p, n), "{p} {n}");
        }
    }
}
